"""Services: what the lifespan opens and the route handlers use, fetched from app.state."""

from dataclasses import dataclass

from fastapi import Request
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph.state import CompiledStateGraph

from backend.graph.deps import GraphDeps
from backend.llm.factory import Models
from backend.memory.summary import SummaryScheduler
from backend.memory.threads import ThreadStore
from backend.memory.turns import TurnStore
from backend.rag.knowledge import KnowledgeBase


@dataclass
class Services:
    """Everything opened for the app's life."""

    graph: CompiledStateGraph
    deps: GraphDeps
    threads: ThreadStore
    turns: TurnStore
    checkpointer: BaseCheckpointSaver
    models: Models
    knowledge: KnowledgeBase
    summaries: SummaryScheduler


def get_services(request: Request) -> Services:
    """FastAPI dependency: the services opened by the lifespan."""
    return request.app.state.services
