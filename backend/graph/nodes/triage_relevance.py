"""triage_relevance: is the question about this knowledge base?

Contract: reads `question`, `mode`, `triage`; writes a `triage` log line; with RAG_OFF_TOPIC=decline, a
question far from every document (and not in chat mode) is answered with the scope text (route "off_topic").
"""

from langgraph.runtime import Runtime

from backend.graph.deps import GraphDeps
from backend.graph.report import report
from backend.graph.state import ChatState
from backend.graph.triage import decided, log, short_circuit

NODE = "triage_relevance"
OFF_TOPIC_REPLY = "I can help with {scope}. That question seems to be outside them; try asking about your documents."


async def triage_relevance(state: ChatState, runtime: Runtime[GraphDeps]) -> dict:
    """Decline off-topic questions when configured to; otherwise only record the verdict."""
    if decided(state):
        return {}
    settings = runtime.context.settings
    if settings.off_topic != "decline" or state.get("mode") == "chat" or "@" in state["question"]:
        return {**log(f"{NODE}: PASS"), **report(runtime, NODE)}
    distance = await runtime.context.retriever.nearest_distance(state["question"])
    if distance is not None and distance > settings.router_chat_distance:
        reply = OFF_TOPIC_REPLY.format(scope=settings.scope_text)
        verdict = f"OFF_TOPIC (distance {distance:.2f})"
        return {**short_circuit(NODE, "off_topic", reply, verdict), **report(runtime, NODE, "Off topic", verdict)}
    return {**log(f"{NODE}: PASS"), **report(runtime, NODE)}
