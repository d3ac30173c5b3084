"""Shapes shared across layers: a source, triage and validation verdicts, a recorded turn.

TypedDicts (from typing_extensions, so pydantic can validate and document them on Python 3.11): the graph keeps
them in its state, the stores persist them, and the wire models in events.py and api.py embed them as they are.
"""

from typing import Literal, NotRequired

from typing_extensions import TypedDict

Mode = Literal["auto", "rag", "chat"]
GuardrailMode = Literal["enforce", "warn"]  # warn: an injection/jailbreak block is logged and the message goes through
Intent = Literal["rag", "chat"]
TurnStatus = Literal["completed", "stopped", "interrupted", "failed"]


class FaqMatch(TypedDict):
    """The FAQ entry that answered a question."""

    id: str
    matched: str
    score: float
    sources: list[str]


class Triage(TypedDict):
    """How the turn was routed before the model: a log line per node, and an early answer if one was given."""

    route: str
    skip_llm: bool
    early_response: str
    triage_log: list[str]
    faq: NotRequired[FaqMatch]


class InputCheck(TypedDict):
    """The input guardrail's verdict on the question."""

    action: str  # pass | redact | block | warn (a block the user overrode for this one message)
    categories: list[str]
    reason: str
    scores: dict[str, float]
    can_override: NotRequired[bool]  # a block the user may re-send once with guardrail "warn"


class UnsupportedClaim(TypedDict):
    """A sentence stating a fact that no passage supports, with its span in the final answer."""

    text: str
    start: int
    end: int


class CitationRepair(TypedDict):
    """A citation added, re-pointed or removed after generation, and why."""

    kind: Literal["add", "repoint", "remove"]
    sentence: str
    before: list[str]
    after: list[str]
    reason: str


NotFoundReason = Literal["unsupported", "unanswered", "wrong_kind", "unstated_premise", "restates_question"]


class Conflict(TypedDict):
    """Another document the model was given states a figure of the answer differently."""

    sentence: str  # the answer's claim
    cited: str  # the source that supports it ("S1")
    source: str  # the other document's source ("S3"), which the answer's last paragraph cites
    says: str  # that source's sentence


class SourcesCheck(TypedDict):
    """Whether the answer's claims are supported by the passages it was given, and what was repaired."""

    grounded: bool
    confidence: float
    issues: list[str]
    unsupported_sentences: list[str]  # as the answer has them: after a citation repair, without markers, and a marker
    # the model wrote as a sentence's subject is its document's name ("employee-handbook.md states that …")
    unsupported: NotRequired[list[UnsupportedClaim]]
    repairs: NotRequired[list[CitationRepair]]
    claims: NotRequired[int]
    supported: NotRequired[int]
    not_found: NotRequired[Literal["model", "replaced", "no_passages"] | None]  # who said the documents lack the
    # answer: the model; the checks, which replaced it; or retrieval, which found no passage for the question
    original_text: NotRequired[str]  # the model's answer when it was replaced by the not-found reply
    markup_removed: NotRequired[bool]  # the answer quoted the prompt's tags (<knowledge_base>); read as "the documents"
    markers_merged: NotRequired[int]  # sentences that cited one passage twice ("… 180 euros [S5]. [S5]"), now once
    not_found_reason: NotRequired[NotFoundReason]  # why it was replaced: no claim supported; the model judged
    # that the passages do not state the answer to the question (validation.answerable); the answer does not give
    # what the question asks for (asked_for); its claims restate the question in words that no passage uses
    # (unstated); or they add nothing to a wh-question (restates_question)
    asked_for: NotRequired[str]  # with "wrong_kind": what the question asks for ("a frequency")
    unstated: NotRequired[list[str]]  # with "unstated_premise": the question's words the passages lack
    unanswered_parts: NotRequired[list[str]]  # a question asking two things, one answered: the others, which the
    # model judged the passages do not answer; the answer says so at its end instead of being replaced
    conflicts: NotRequired[list[Conflict]]  # figures of the answer that another document states differently; the
    # answer ends by quoting them (RAG_CONFLICT_NOTE)


class AnswerableCheck(TypedDict):
    """The model's own verdict, asked after it answered: do the passages state the answer to the question?"""

    p_yes: float | None  # P(yes) / (P(yes) + P(no)) at its one-token reply; None when it said neither
    answered: bool | None  # p_yes >= threshold; None when there was no verdict
    threshold: float
    ms: float  # how long the verdict took


class LengthCheck(TypedDict):
    """The model stopped at the answer's length limit (RAG_MAX_ANSWER_TOKENS), mid-way, not where it meant to.
    `cut` is of the answer shown: false when the checks replaced the cut answer by a whole reply."""

    cut: bool
    max_tokens: int


class ToneCheck(TypedDict):
    """House tone rules applied to the answer."""

    appropriate: bool
    adjustments: list[str]
    original_text: str


class OutputCheck(TypedDict):
    """The output guardrail's verdict on the final answer."""

    safe: bool
    issues: list[str]
    original_text: str


class CitationCheck(TypedDict):
    """Ids the final answer cites, and citations removed because no such source was given."""

    cited: list[str]
    removed: list[str]


class Validation(TypedDict, total=False):
    """Every check's verdict; each node adds its own key."""

    input: InputCheck
    answerable: AnswerableCheck
    length: LengthCheck
    sources: SourcesCheck
    tone: ToneCheck
    output_guardrail: OutputCheck
    citations: CitationCheck


class Scope(TypedDict):
    """The documents a turn's search was limited to, and why: the question @-mentioned them, or a follow-up kept the
    documents the thread's last @-question was aimed at."""

    documents: list[str]
    source: Literal["mention", "carried"]


class PublicSource(TypedDict):
    """A source as clients see it: a passage numbered S1, S2, … by the thread's citation ledger, without its text."""

    id: str
    document: str
    page: int | None
    chunk: int
    snippet: str
    score: float
    section: NotRequired[str | None]
    chunks: NotRequired[list[int]]
    cited: NotRequired[bool]
    doc_id: NotRequired[str]
    start: NotRequired[int]  # the passage's character span in the document's text (GET /api/documents/{id}/text)
    end: NotRequired[int]
    relevance: NotRequired[float | None]  # cosine similarity of its best chunk to the query
    available: NotRequired[bool]  # False: the reader may no longer read its document (nothing else is shown)


SOURCE_NOT_AVAILABLE = "source not available to you"
NAME_NOT_AVAILABLE = "a document not available to you"  # in place of its name in a past turn's steps


def withheld(source: PublicSource) -> PublicSource:
    """A citation to a document the reader may not read: its number only, never its text, snippet or name."""
    return PublicSource(
        id=source["id"], document=SOURCE_NOT_AVAILABLE, page=None, chunk=0, snippet="", score=0.0, available=False
    )


class Source(PublicSource):
    """One passage given to the model: a public source plus the passage text the model read."""

    text: str
    version: NotRequired[int]  # the document's version the passage was read from (a replaced file gets a new one)


class TurnRecord(TypedDict):
    """A finished turn as the thread page and the export show it; committed with the turn's checkpoint."""

    run_id: str
    question: str
    answer: str
    rewritten_query: str
    intent: str
    route_reason: str
    scope: Scope | None  # None: the turn searched every document it may read (or did not search)
    sources: list[PublicSource]
    steps: list[str]
    triage: Triage | None
    validation: Validation | None
    provider: str
    model: str
    latency_ms: float
    use_memory: bool
    status: TurnStatus
    created_at: str


class StoredTurn(TurnRecord):
    """A recorded turn with its place in the thread."""

    thread_id: str
    turn: int


INTERNAL = ("text", "version")  # what a Source holds for the graph alone


def public(source: Source) -> PublicSource:
    """The source without its passage text."""
    return PublicSource(**{k: v for k, v in source.items() if k not in INTERNAL})  # type: ignore[typeddict-item]
