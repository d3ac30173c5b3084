"""Services: what the lifespan opens and the route handlers use, fetched from app.state."""

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request
from langgraph.graph.state import CompiledStateGraph

from backend.accounts.service import Accounts
from backend.graph.deps import GraphDeps
from backend.llm.factory import Models
from backend.memory.conversations import ConversationStore
from backend.rag.knowledge import KnowledgeBase
from backend.runs.runner import TurnRunner
from backend.store.checkpointer import Checkpointer


@dataclass
class Services:
    """Everything opened for the app's life."""

    graph: CompiledStateGraph
    deps: GraphDeps
    conversations: ConversationStore
    checkpointer: Checkpointer
    models: Models
    knowledge: KnowledgeBase
    runner: TurnRunner
    accounts: Accounts


def get_services(request: Request) -> Services:
    """FastAPI dependency: the services opened by the lifespan."""
    return request.app.state.services


ServicesDep = Annotated[Services, Depends(get_services)]
