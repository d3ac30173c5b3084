"""Test fakes built per test: an in-memory retriever and a recording chat model."""

from dataclasses import dataclass, field

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langgraph.runtime import Runtime

from backend.contract.types import Source
from backend.graph.deps import GraphDeps
from backend.graph.nodes.start_turn import turn_defaults
from backend.graph.state import EMPTY_TRIAGE, TurnRequest, add_steps, merge_triage, merge_validation
from backend.llm.fake import ScriptedChatModel
from backend.settings import Settings


def source(sid: str, document: str, text: str, score: float = 0.8) -> Source:
    """A Source with sensible defaults for tests."""
    return Source(id=sid, document=document, page=None, chunk=0, snippet=text[:40], score=score, text=text)


@dataclass
class FakeRetriever:
    """In-memory retriever: returns the configured hits and records every search."""

    hits: list[Source] = field(default_factory=list)
    distance: float | None = 0.5
    names: list[str] = field(default_factory=list)
    sections: list[str] = field(default_factory=list)
    searches: list[tuple[str, int, list[str] | None]] = field(default_factory=list)
    probes: int = 0
    variants: list[list[str]] = field(default_factory=list)
    anchors: list[list[str]] = field(default_factory=list)
    respellings: dict[str, str] = field(default_factory=dict)  # misspelt word -> the documents' word
    foreign_words: set[str] = field(default_factory=set)  # a query holding one of them is "foreign"
    terms: list[str] = field(default_factory=list)  # the documents' own words and codes ("Zephyr-9")
    first_lines: dict[str, str] = field(default_factory=dict)  # document id -> its first chunk's text
    versions: dict[str, int] = field(default_factory=dict)  # document id -> its current version (none: any)

    async def search(
        self,
        query: str,
        k: int,
        documents: list[str] | None = None,
        variants: list[str] | None = None,
        anchors: list[str] | None = None,
    ) -> list[Source]:
        self.searches.append((query, k, documents))
        self.variants.append(variants or [])
        self.anchors.append(anchors or [])
        return [h for h in self.hits if documents is None or h["document"] in documents][:k]

    async def nearest_distance(self, query: str) -> float | None:
        self.probes += 1
        return self.distance

    async def spelled(self, query: str) -> str:
        return " ".join(self.respellings.get(w, w) for w in query.split()) if self.respellings else query

    async def current(self, sources: list[Source]) -> list[Source]:
        return [
            s for s in sources if s.get("doc_id") not in self.versions or self.versions[s["doc_id"]] == s.get("version")
        ]

    async def openings(self, doc_ids: list[str]) -> dict[str, str]:
        return {d: self.first_lines[d] for d in doc_ids if d in self.first_lines}

    async def document_terms(self, query: str) -> list[str]:
        return [t for t in self.terms if t.lower() in query.lower()]

    async def foreign(self, query: str) -> bool:
        return any(w in self.foreign_words for w in query.lower().split())

    async def document_names(self) -> list[str]:
        return self.names or sorted({h["document"] for h in self.hits})

    async def pending_names(self) -> list[str]:
        return []

    async def section_names(self) -> list[str]:
        return self.sections

    def scoped(self, readable: frozenset[str] | None) -> "FakeRetriever":
        return self  # the fake has no collections: every reader sees its hits


def runtime(chat_model=None, retriever: FakeRetriever | None = None, **settings) -> Runtime[GraphDeps]:
    """A Runtime whose context holds the given fakes."""
    deps = GraphDeps(
        chat_model=chat_model or ScriptedChatModel(),
        retriever=retriever or FakeRetriever(),
        settings=Settings(llm_backend="fake", **settings),
    )
    return Runtime(context=deps)


def replying(*texts: str) -> GenericFakeChatModel:
    """A fresh GenericFakeChatModel answering with the given texts in turn."""
    return GenericFakeChatModel(messages=iter(texts))


def turn_state(question: str, mode: str = "auto", **keys) -> dict:
    """The state start_turn leaves for a new turn (reducer keys empty), with the given keys on top."""
    state = turn_defaults(TurnRequest(question=question, mode=mode))  # type: ignore[typeddict-item]
    return {**state, "triage": dict(EMPTY_TRIAGE), "validation": {}, "steps": [], **keys}


REDUCERS = {"triage": merge_triage, "validation": merge_validation, "steps": add_steps}


def applied(state: dict, out: dict) -> dict:
    """The state after a node's output, merged with the graph's reducers."""
    merged = {**state, **out}
    for key, reducer in REDUCERS.items():
        if key in out:
            merged[key] = reducer(state.get(key), out[key])
    return merged
