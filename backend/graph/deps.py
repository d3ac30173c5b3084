"""GraphDeps: the collaborators every node receives through the LangGraph runtime context."""

from dataclasses import dataclass

from langchain_core.language_models import BaseChatModel

from backend.rag.retriever import Retriever
from backend.settings import Settings


@dataclass
class GraphDeps:
    """Chat model, retriever and settings for one graph run."""

    chat_model: BaseChatModel
    retriever: Retriever
    settings: Settings
