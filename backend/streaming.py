"""One chat turn as a sequence of typed SSE payloads, mapped from LangGraph's astream_events (v2)."""

import logging
from collections.abc import AsyncIterator
from typing import Any

import httpx
from langgraph.graph.state import CompiledStateGraph
from pydantic import BaseModel

from backend.graph.deps import GraphDeps
from backend.graph.state import ChatState, Mode, turn_input
from backend.schemas import (
    DoneEvent,
    ErrorEvent,
    MetadataEvent,
    ReplaceEvent,
    SourceOut,
    SourcesEvent,
    StatusEvent,
    TokenEvent,
)

log = logging.getLogger(__name__)

NODE_LABELS = {
    "router": "Understanding question",
    "rewriter": "Checking the conversation",
    "retriever": "Searching documents",
    "generator": "Writing answer",
    "memory": "Saving conversation",
}
ANSWER_NODE = "generator"


def start_label(node: str, state: dict[str, Any]) -> str:
    """Human text for a node that starts, naming targeted documents when the search is aimed."""
    targeted = state.get("targeted_documents") or []
    if node == "retriever" and targeted:
        return f"Searching {', '.join(targeted)}…"
    return NODE_LABELS[node] + "…"


DECISION_LABELS = {
    "fresh": "New question: searching afresh",
    "reuse": "Follow-up: reusing the last answer's sources",
    "both": "Follow-up: reusing the last sources and searching again",
}


def end_label(node: str, output: Any) -> str:
    """Human text for a node that ended; unresolved @mentions and the context decision are said here."""
    out = output if isinstance(output, dict) else {}
    if node == "router" and out.get("mention_notes"):
        return "; ".join(out["mention_notes"])
    if node == "rewriter" and out.get("context_decision"):
        return DECISION_LABELS[out["context_decision"]["decision"]]
    return NODE_LABELS[node]


def end_detail(node: str, output: Any) -> str | None:
    """What a node decided, for the status event at its end."""
    if not isinstance(output, dict):
        return None
    if node == "router":
        notes = "; ".join(output.get("mention_notes") or [])
        return f"{output.get('intent')}: {output.get('route_reason')}" + (f" ({notes})" if notes else "")
    if node == "rewriter":
        decision = output.get("context_decision") or {}
        return f"{output.get('rewritten_query')} ({decision.get('reason', '')})"
    if node == "retriever":
        return f"{len(output.get('documents', []))} passages"
    return None


def describe_error(exc: BaseException, deps: GraphDeps) -> ErrorEvent:
    """A client-safe error payload saying what failed and what to check."""
    settings = deps.settings
    if isinstance(exc, httpx.ConnectError | ConnectionError) or type(exc).__name__ == "APIConnectionError":
        where = settings.ollama_base_url if settings.llm_backend == "ollama" else "the embedded llama.cpp server"
        return ErrorEvent(
            code="model_unreachable",
            message=f"Could not reach the {settings.llm_backend} model at {where}. "
            "Check that it is running and that RAG_OLLAMA_BASE_URL points at it.",
        )
    if type(exc).__name__ in {"ResponseError", "APIStatusError", "BadRequestError", "InternalServerError"}:
        return ErrorEvent(code="model_error", message=f"The model server reported an error: {exc}")
    return ErrorEvent(code="internal_error", message=f"The turn failed ({type(exc).__name__}); see the server log.")


def replace_reason(state: ChatState) -> str:
    """Why the final answer differs from the streamed tokens."""
    removed = state.get("validation", {}).get("citations", {}).get("removed")
    if removed:
        return f"removed citations to sources that do not exist: {', '.join(removed)}"
    return "the answer was revised after streaming"


def _source_out(sources: list) -> list[SourceOut]:
    return [SourceOut.model_validate({k: v for k, v in s.items() if k != "text"}) for s in sources]


async def turn_events(
    graph: CompiledStateGraph,
    deps: GraphDeps,
    question: str,
    mode: Mode,
    thread_id: str,
    run_id: str,
    use_memory: bool = True,
) -> AsyncIterator[BaseModel]:
    """Run one turn, yielding metadata, status, token, sources and done (or error) payloads in order."""
    yield MetadataEvent(thread_id=thread_id, run_id=run_id)
    config = {"configurable": {"thread_id": thread_id}, "run_id": run_id}
    streamed: list[str] = []
    try:
        async for ev in graph.astream_events(
            turn_input(question, mode, use_memory), config, context=deps, version="v2", durability="sync"
        ):
            payload = _map_event(ev)
            if payload is not None:
                if isinstance(payload, TokenEvent):
                    streamed.append(payload.text)
                yield payload
        state: ChatState = (await graph.aget_state(config)).values  # type: ignore[assignment]
    except Exception as exc:  # the stream reports it; nothing half-written was committed to history
        log.exception("turn failed on thread %s", thread_id)
        yield describe_error(exc, deps)
        return
    if not streamed and state.get("answer"):  # decided without the model (e.g. an unknown @mention)
        yield TokenEvent(text=state["answer"])
    elif streamed and state.get("answer", "") != "".join(streamed).strip():
        yield ReplaceEvent(text=state.get("answer", ""), reason=replace_reason(state))
    if state.get("sources"):
        yield SourcesEvent(sources=_source_out(state["sources"]))
    yield DoneEvent(
        thread_id=thread_id,
        answer=state.get("answer", ""),
        intent=state.get("intent", "chat"),
        rewritten_query=state.get("rewritten_query", question),
        route_reason=state.get("route_reason", ""),
        triage=state.get("triage") or None,
        validation=state.get("validation") or None,
    )


def _map_event(ev: dict[str, Any]) -> BaseModel | None:
    kind, name = ev["event"], ev.get("name", "")
    node = ev.get("metadata", {}).get("langgraph_node")
    if kind == "on_chat_model_stream" and node == ANSWER_NODE:
        text = ev["data"]["chunk"].text
        return TokenEvent(text=text) if text else None  # Ollama ends its stream with empty chunks
    if name not in NODE_LABELS or node != name:
        return None
    if kind == "on_chain_start":
        return StatusEvent(node=name, phase="start", label=start_label(name, ev["data"].get("input") or {}))
    if kind == "on_chain_end":
        output = ev["data"].get("output")
        detail = end_detail(name, output)
        return StatusEvent(node=name, phase="end", label=end_label(name, output), detail=detail)
    return None
