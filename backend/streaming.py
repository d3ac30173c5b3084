"""One chat turn as a sequence of typed SSE payloads, mapped from LangGraph's astream_events (v2)."""

import logging
from collections.abc import AsyncIterator
from typing import Any

import httpx
from langgraph.graph.state import CompiledStateGraph
from pydantic import BaseModel

from backend.graph.deps import GraphDeps
from backend.graph.state import ChatState, Mode, turn_input
from backend.guardrails.pii import known_pii
from backend.guardrails.policy import check_input
from backend.guardrails.stream import StreamRedactor
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
    "guardrail_input": "Checking the message",
    "triage_relevance": "Checking the topic",
    "triage_faq": "Looking in the FAQ",
    "triage_intent": "Recognising small talk",
    "router": "Understanding question",
    "rewriter": "Checking the conversation",
    "retriever": "Searching documents",
    "generator": "Writing answer",
    "validate_sources": "Checking the answer against the sources",
    "validate_tone": "Checking the tone",
    "guardrail_output": "Checking the answer",
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
    if node == "retriever" and out.get("dropped"):
        return f"Ignored {len(out['dropped'])} passage(s) containing instructions aimed at the model"
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
        dropped = output.get("dropped") or []
        note = f"; dropped {len(dropped)} passage(s) that give the model instructions: {', '.join(dropped)}"
        return f"{len(output.get('documents', []))} passages" + (note if dropped else "")
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
    validation = state.get("validation", {})
    reasons = []
    if removed := validation.get("citations", {}).get("removed"):
        reasons.append(f"removed citations to sources that do not exist: {', '.join(removed)}")
    if validation.get("tone", {}).get("adjustments"):
        reasons.append("tone: " + ", ".join(validation["tone"]["adjustments"]))
    if issues := validation.get("output_guardrail", {}).get("issues"):
        reasons.append("output guardrail: " + ", ".join(issues))
    return "; ".join(reasons) or "the answer was revised after streaming"


def _source_out(sources: list) -> list[SourceOut]:
    return [SourceOut.model_validate({k: v for k, v in s.items() if k != "text"}) for s in sources]


class TokenGate:
    """Generator tokens pass through a PII redactor, so personal data split across tokens never goes out raw."""

    def __init__(self) -> None:
        self.sent: list[str] = []
        self._redactor: StreamRedactor | None = None

    def start(self, state: dict[str, Any]) -> None:
        """A generator run starts: PII already in the question or the sources may be repeated."""
        sources = "\n".join(d.get("text", "") for d in state.get("documents") or [])
        self._redactor = StreamRedactor(allowed=known_pii(state.get("question", ""), sources))

    def feed(self, text: str) -> TokenEvent | None:
        """The part of the token that is safe to send now."""
        safe = self._redactor.feed(text) if self._redactor else text
        return self._sent(safe)

    def flush(self) -> TokenEvent | None:
        """Whatever the redactor still holds, at the end of the generator."""
        safe, self._redactor = (self._redactor.flush() if self._redactor else ""), None
        return self._sent(safe)

    def _sent(self, text: str) -> TokenEvent | None:
        if not text:
            return None
        self.sent.append(text)
        return TokenEvent(text=text)


def guarded_input(question: str, deps: GraphDeps) -> tuple[str, list[str]]:
    """The question as the graph may store it (PII the policy redacts is already replaced) and what was redacted."""
    verdict = check_input(question, deps.policy)
    return verdict.text, sorted({m.type for m in verdict.matches})


async def turn_events(
    graph: CompiledStateGraph,
    deps: GraphDeps,
    question: str,
    mode: Mode,
    thread_id: str,
    run_id: str,
    use_memory: bool = True,
) -> AsyncIterator[BaseModel]:
    """Run one turn, yielding metadata, status, token, replace, sources and done (or error) payloads in order."""
    yield MetadataEvent(thread_id=thread_id, run_id=run_id)
    config = {"configurable": {"thread_id": thread_id}, "run_id": run_id}
    stored_question, redactions = guarded_input(question, deps)
    gate = TokenGate()
    try:
        async for ev in graph.astream_events(
            turn_input(stored_question, mode, use_memory, redactions),
            config,
            context=deps,
            version="v2",
            durability="sync",
        ):
            for payload in _payloads(ev, gate):
                yield payload
        state: ChatState = (await graph.aget_state(config)).values  # type: ignore[assignment]
    except Exception as exc:  # the stream reports it; nothing half-written was committed to history
        log.exception("turn failed on thread %s", thread_id)
        yield describe_error(exc, deps)
        return
    for payload in final_events(state, "".join(gate.sent), thread_id):
        yield payload


def _payloads(ev: dict[str, Any], gate: TokenGate) -> list[BaseModel]:
    """SSE payloads for one graph event; generator tokens go through the PII gate."""
    node = ev.get("metadata", {}).get("langgraph_node")
    if ev["event"] == "on_chat_model_stream":
        text = ev["data"]["chunk"].text if node == ANSWER_NODE else ""
        token = gate.feed(text) if text else None  # Ollama ends its stream with empty chunks
        return [token] if token else []
    status = _map_event(ev)
    if status is None:
        return []
    if ev.get("name") == ANSWER_NODE and ev["event"] == "on_chain_start":
        gate.start(ev["data"].get("input") or {})
    if ev.get("name") == ANSWER_NODE and ev["event"] == "on_chain_end":
        rest = gate.flush()
        return [rest, status] if rest else [status]
    return [status]


def final_events(state: ChatState, sent: str, thread_id: str) -> list[BaseModel]:
    """What follows the graph: the answer (if nothing streamed) or a replacement, sources, then done."""
    answer = state.get("answer", "")
    out: list[BaseModel] = []
    if not sent and answer:  # decided without the model (FAQ, small talk, a block, an unknown @mention)
        out.append(TokenEvent(text=answer))
    elif sent and answer != sent.strip():
        out.append(ReplaceEvent(text=answer, reason=replace_reason(state)))
    if state.get("sources"):
        out.append(SourcesEvent(sources=_source_out(state["sources"])))
    out.append(
        DoneEvent(
            thread_id=thread_id,
            question=state.get("question", ""),
            answer=answer,
            intent=state.get("intent", "chat"),
            rewritten_query=state.get("rewritten_query", state.get("question", "")),
            route_reason=state.get("route_reason", ""),
            triage=state.get("triage") or None,
            validation=state.get("validation") or None,
        )
    )
    return out


def _map_event(ev: dict[str, Any]) -> StatusEvent | None:
    kind, name = ev["event"], ev.get("name", "")
    if name not in NODE_LABELS or ev.get("metadata", {}).get("langgraph_node") != name:
        return None
    if kind == "on_chain_start":
        return StatusEvent(node=name, phase="start", label=start_label(name, ev["data"].get("input") or {}))
    if kind == "on_chain_end":
        output = ev["data"].get("output")
        detail = end_detail(name, output)
        return StatusEvent(node=name, phase="end", label=end_label(name, output), detail=detail)
    return None
