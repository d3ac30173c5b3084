"""Services: what the lifespan opens and the route handlers use, fetched from app.state."""

from dataclasses import dataclass

from chromadb.api.models.Collection import Collection
from fastapi import Request
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph.state import CompiledStateGraph

from backend.graph.deps import GraphDeps
from backend.llm.factory import Models
from backend.memory.threads import ThreadStore


@dataclass
class Services:
    """Everything opened for the app's life."""

    graph: CompiledStateGraph
    deps: GraphDeps
    threads: ThreadStore
    checkpointer: BaseCheckpointSaver
    models: Models
    collection: Collection


def get_services(request: Request) -> Services:
    """FastAPI dependency: the services opened by the lifespan."""
    return request.app.state.services
