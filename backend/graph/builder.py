"""build_graph: the chat-turn StateGraph, wiring only."""

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from backend.graph.deps import GraphDeps
from backend.graph.nodes.generator import generate
from backend.graph.nodes.memory import remember
from backend.graph.nodes.retriever import retrieve
from backend.graph.nodes.rewriter import rewrite
from backend.graph.nodes.router import next_after_router, route
from backend.graph.state import ChatState


def build_graph(checkpointer: BaseCheckpointSaver | None) -> CompiledStateGraph:
    """router → (chat: generator | rag: rewriter → retriever → generator) → memory → END."""
    graph = StateGraph(ChatState, context_schema=GraphDeps)
    graph.add_node("router", route)
    graph.add_node("rewriter", rewrite)
    graph.add_node("retriever", retrieve)
    graph.add_node("generator", generate)
    graph.add_node("memory", remember)
    graph.add_edge(START, "router")
    graph.add_conditional_edges("router", next_after_router)
    graph.add_edge("rewriter", "retriever")
    graph.add_edge("retriever", "generator")
    graph.add_edge("generator", "memory")
    graph.add_edge("memory", END)
    return graph.compile(checkpointer=checkpointer)
