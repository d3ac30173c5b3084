"""memory: commit the finished turn to the thread's messages; the only node that writes history."""

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.runtime import Runtime

from backend.graph.deps import GraphDeps
from backend.graph.state import ChatState


async def remember(state: ChatState, runtime: Runtime[GraphDeps]) -> dict:
    """Append the user's original question and the final answer with its sources."""
    sources = [{k: v for k, v in s.items() if k != "text"} for s in state.get("sources", [])]
    answer = AIMessage(
        content=state.get("answer", ""),
        additional_kwargs={"sources": sources, "rewritten_query": state.get("rewritten_query", "")},
    )
    return {"messages": [HumanMessage(content=state["question"]), answer]}
