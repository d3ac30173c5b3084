"""ChatState: what a thread remembers across turns and what one turn works on; TurnInput: what a caller passes.

A turn starts from `{"request": TurnRequest}` only; the first node (start_turn) derives every per-turn key from
it and resets the rest, so nothing of the previous turn leaks into this one however the graph is invoked.
Keys several nodes write (`triage`, `validation`, `steps`) have reducers; writing None resets them.
"""

from typing import Annotated, Literal, NotRequired

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from backend.contract.types import GuardrailMode, Intent, Mode, Source, Triage, TurnRecord, Validation

Decision = Literal["fresh", "reuse", "both"]
FollowUpKind = Literal["new", "clarification", "reference"]


class TurnRequest(TypedDict):
    """One turn as a caller asks for it."""

    question: str  # already redacted when the input policy redacts PII
    mode: NotRequired[Mode]
    use_memory: NotRequired[bool]
    input_redactions: NotRequired[list[str]]  # PII types redacted from the question before the graph saw it
    run_id: NotRequired[str]
    guardrail: NotRequired[GuardrailMode]  # warn: the user re-sent a blocked message ("this was not an attack")
    keep_scope: NotRequired[bool]  # false: a follow-up searches every document, not the last @-question's ones


class TurnInput(TypedDict):
    """The graph's input schema: the request, nothing else."""

    request: TurnRequest


class FollowUpInfo(TypedDict):
    """Whether the question leans on the conversation, how, and why we think so."""

    is_followup: bool
    kind: FollowUpKind
    confidence: float
    reason: str


class ContextDecision(TypedDict):
    """Reuse the previous turn's sources, search afresh, or both; and why."""

    decision: Decision
    reason: str


class TranscriptEntry(TypedDict):
    """One earlier turn as the model saw it: the user message exactly as sent (passages and question), the answer."""

    question: str
    prompt: str
    answer: str
    sources: list[str]  # ids of the passages this message showed


class SentPrompt(TypedDict):
    """What the generator sent this turn, for the memory node to append to the transcript."""

    prompt: str
    sources: list[str]
    window_start: int
    window_note: str


EMPTY_TRIAGE = Triage(route="", skip_llm=False, early_response="", triage_log=[])


def merge_triage(left: Triage | None, right: Triage | dict | None) -> Triage:
    """Reducer: later keys win and log lines accumulate; None resets to an empty triage."""
    if right is None:
        return Triage(**EMPTY_TRIAGE)  # type: ignore[typeddict-item]
    base = dict(left or EMPTY_TRIAGE)
    log = [*base.get("triage_log", []), *right.get("triage_log", [])]
    return Triage(**{**base, **right, "triage_log": log})  # type: ignore[typeddict-item]


def merge_validation(left: Validation | None, right: Validation | None) -> Validation:
    """Reducer: each check adds its own key; None resets."""
    return Validation() if right is None else Validation(**{**(left or {}), **right})  # type: ignore[typeddict-item]


def add_steps(left: list[str] | None, right: list[str] | None) -> list[str]:
    """Reducer: status lines accumulate; None resets."""
    return [] if right is None else [*(left or []), *right]


class ChatState(TypedDict, total=False):
    """State of a thread: memory kept across turns, then the keys of the current turn (reset by start_turn)."""

    # memory (written by the memory node, the summary update, and start_turn when it cuts for a lost passage)
    messages: Annotated[list[AnyMessage], add_messages]
    ledger: dict[str, dict]  # S# -> source with its identity key: ids never change within a thread
    last_context: list[str]  # ledger ids the previous turn's generator saw
    cited: list[str]  # every ledger id an answer of this thread cited
    qa_index: list[dict]  # one line per exchange: id, question, query, topics, sources, answer
    summary: str
    summarized_upto: int  # exchanges already folded into the summary
    scope: list[str]  # documents the last documents turn was aimed at
    last_intent: str
    last_query: str
    last_base_query: str  # the question the next elliptical follow-up is completed from (followup.Completed.base)
    transcript: list[TranscriptEntry]  # the model's view of the conversation (see graph/history.py)
    window_start: int  # first transcript entry the prompt still shows
    window_note: str  # what stands in for the entries before it
    cache_epoch: int  # moves on when the window is cut for a lost passage: KV caches of earlier epochs are not reused
    # the current turn
    request: TurnRequest
    run_id: str
    started_at: float  # wall clock when the turn started, for its latency
    question: str
    input_redactions: list[str]
    guardrail: GuardrailMode
    mode: Mode
    use_memory: bool
    rewritten_query: str
    completed_question: str  # an elliptical follow-up made whole (followup.complete_ellipsis), or a question in
    # another language translated into English (rewriter.translated): the model reads it in place of the question
    base_query: str  # the question the next elliptical follow-up is completed from ("": this turn's query)
    intent: Intent
    route_reason: str
    targeted_documents: list[str]
    scope_source: str  # mention | carried | none
    mention_notes: list[str]
    followup: FollowUpInfo
    context_decision: ContextDecision
    documents: list[Source]
    fresh_ids: list[str]
    dropped: list[str]  # documents of retrieved passages dropped as indirect prompt injection
    sources: list[Source]
    triage: Annotated[Triage, merge_triage]
    validation: Annotated[Validation, merge_validation]
    steps: Annotated[list[str], add_steps]
    answer: str
    sent: SentPrompt | None  # set by the generator
    turn_record: TurnRecord | None  # set by the memory node: the turn as the thread page shows it


def turn_input(
    question: str,
    mode: Mode = "auto",
    use_memory: bool = True,
    redactions: list[str] | None = None,
    run_id: str = "",
    guardrail: GuardrailMode = "enforce",
    keep_scope: bool = True,
) -> TurnInput:
    """The graph input for one turn."""
    request = TurnRequest(
        question=question,
        mode=mode,
        use_memory=use_memory,
        input_redactions=redactions or [],
        guardrail=guardrail,
        keep_scope=keep_scope,
    )
    if run_id:
        request["run_id"] = run_id
    return TurnInput(request=request)
