"""GraphDeps: the collaborators every node receives through the LangGraph runtime context."""

from collections.abc import Callable
from dataclasses import dataclass, field

from langchain_core.language_models import BaseChatModel

from backend.guardrails.faq import FaqEntry
from backend.guardrails.policy import GuardrailPolicy
from backend.llm.lease import ModelLease
from backend.rag.retriever import Retriever
from backend.settings import Settings


@dataclass
class GraphDeps:
    """Chat model, retriever, settings, and what the guardrail and triage nodes need."""

    chat_model: BaseChatModel
    retriever: Retriever
    settings: Settings
    policy: GuardrailPolicy = field(default_factory=GuardrailPolicy)
    faq: list[FaqEntry] = field(default_factory=list)
    embed: Callable[[list[str]], list] | None = None
    guard_embed: Callable[[list[str]], list] | None = None  # the offline MiniLM, for the injection classifier
    provider: str = "fake"  # the model backend, recorded with each turn
    model_name: str = "scripted-fake"
    lease: ModelLease | None = None  # this turn's hold on a model slot (set per turn by the runner)
    readable: frozenset[str] | None = None  # the asker's readable document ids, set per turn (None: all)
    user_context: str = ""  # who is asking (profile, and what the request adds), set per turn
