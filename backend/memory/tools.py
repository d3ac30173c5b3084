"""Memory and knowledge tools for models that call tools, bound to one thread's state and the retriever."""

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from langchain_core.tools import BaseTool, tool

from backend.contract.types import Source
from backend.memory.ledger import assign_ids
from backend.rag.retriever import Retriever

MAX_TOOL_ROUNDS = 3


@dataclass
class ToolFindings:
    """Sources the tools found during one turn, numbered by the thread's ledger."""

    sources: list[Source] = field(default_factory=list)


def make_tools(state: Mapping[str, Any], retriever: Retriever, k: int, findings: ToolFindings) -> list[BaseTool]:
    """search_knowledge_base, retrieve_past_answer and lookup_past_conversation for this thread."""
    index: list[dict] = state.get("qa_index", [])
    ledger: dict = state.get("ledger", {})

    @tool
    async def search_knowledge_base(query: str, documents: list[str] | None = None) -> str:
        """Search the team's documents. Optionally restrict to document names. Returns numbered sources to cite."""
        found = await retriever.search(query, k, documents or None)
        known = {s["id"]: s for s in findings.sources}
        numbered = assign_ids(ledger, [*known.values(), *found])  # same ids as in the context, new ones next
        findings.sources = numbered
        hits = [s for s in numbered if any(s["text"] == f["text"] for f in found)]
        return "\n\n".join(f"[{s['id']}] {s['document']}\n{s['text']}" for s in hits) or "No matching passages."

    @tool
    def retrieve_past_answer(exchange_id: int) -> str:
        """The question and answer of an earlier exchange of this conversation, by its number."""
        entry = next((e for e in index if e["id"] == exchange_id), None)
        return json.dumps(entry) if entry else f"No exchange #{exchange_id} in this conversation."

    @tool
    def lookup_past_conversation(topic: str) -> str:
        """Earlier exchanges of this conversation about a topic (empty topic: all of them)."""
        words = {w for w in topic.lower().split() if len(w) > 2}
        hits = [
            e for e in index if not words or words & set(f"{e['question']} {' '.join(e['topics'])}".lower().split())
        ]
        return "\n".join(f"#{e['id']} {e['question']} -> {e['answer']}" for e in hits) or "Nothing found on that topic."

    return [search_knowledge_base, retrieve_past_answer, lookup_past_conversation]
