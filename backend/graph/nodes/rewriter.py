"""rewriter: decide reuse or fresh retrieval, and turn a follow-up into a standalone search query."""

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from backend.graph.deps import GraphDeps
from backend.graph.history import prompt_prefix, recent_exchanges
from backend.graph.nodes.router import MENTION_RE
from backend.graph.prompts import REWRITE
from backend.graph.state import ChatState
from backend.memory.followup import FollowUp, decide, entities, with_entity


def strip_mentions(text: str) -> str:
    """The text without @mentions, whitespace collapsed."""
    return " ".join(MENTION_RE.sub(" ", text).split()) or text


def clean_rewrite(reply: str, fallback: str) -> str:
    """First non-empty line of the model's reply without quotes or labels; the fallback when unusable."""
    lines = [ln.strip() for ln in reply.strip().splitlines() if ln.strip()]
    if not lines:
        return fallback
    line = lines[0]
    for label in ("Standalone question:", "Rewritten question:", "Question:"):
        if line.lower().startswith(label.lower()):
            line = line[len(label) :].strip()
    line = line.strip('"').strip()
    return line if 0 < len(line) <= 3 * len(fallback) + 200 else fallback


async def rewrite(state: ChatState, runtime: Runtime[GraphDeps]) -> dict:
    """Set rewritten_query and the context decision; a model call only for a follow-up that refers back."""
    question = strip_mentions(state["question"])
    turns = runtime.context.settings.history_turns
    followup = FollowUp(**state["followup"]) if state.get("followup") else FollowUp(False, "new", 1.0, "no history")
    new_mention = state.get("scope_source") == "mention" and state.get("targeted_documents") != state.get("scope")
    decision, why = decide(followup, new_mention)
    if not state.get("use_memory", True) or not state.get("last_context"):
        decision, why = "fresh", why if decision == "fresh" else "no earlier sources to reuse"
    out = {"context_decision": {"decision": decision, "reason": why}}
    if not state.get("use_memory", True) or not followup.is_followup or not recent_exchanges(state, turns):
        return {**out, "rewritten_query": question}
    if followup.kind == "clarification":
        return {**out, "rewritten_query": state.get("last_query") or question}
    prompt = [*prompt_prefix(state, turns), HumanMessage(content=REWRITE.format(question=question))]
    reply = await runtime.context.chat_model.ainvoke(prompt)
    last = recent_exchanges(state, 1)
    previous = entities(" ".join([state.get("last_query", ""), *(m.text for m in last)]))
    return {**out, "rewritten_query": with_entity(clean_rewrite(reply.text, question), previous)}
