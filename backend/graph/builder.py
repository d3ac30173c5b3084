"""build_graph: the chat-turn StateGraph, wiring only.

start_turn → guardrail_input → triage_relevance → triage_faq → triage_intent → router → (chat: generator |
rag: rewriter → retriever → generator) → validate_answerable → validate_sources → validate_tone →
guardrail_output → memory → END.
A guardrail, triage node or the router may answer at once (triage.skip_llm): the turn then jumps to
guardrail_output, so the output check and memory still run. Any node can be replaced by name (`nodes=`).
"""

from collections.abc import Callable, Mapping
from typing import Any, Literal

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from backend.graph.deps import GraphDeps
from backend.graph.nodes.generator import generate
from backend.graph.nodes.guardrail_input import guardrail_input
from backend.graph.nodes.guardrail_output import guardrail_output
from backend.graph.nodes.memory import remember
from backend.graph.nodes.retriever import retrieve
from backend.graph.nodes.rewriter import rewrite
from backend.graph.nodes.router import next_after_router, route
from backend.graph.nodes.start_turn import start_turn
from backend.graph.nodes.triage_faq import triage_faq
from backend.graph.nodes.triage_intent import triage_intent
from backend.graph.nodes.triage_relevance import triage_relevance
from backend.graph.nodes.validate_answerable import validate_answerable
from backend.graph.nodes.validate_sources import validate_sources
from backend.graph.nodes.validate_tone import validate_tone
from backend.graph.state import ChatState, TurnInput
from backend.graph.triage import decided

DEFAULT_NODES: dict[str, Callable[..., Any]] = {
    "start_turn": start_turn,
    "guardrail_input": guardrail_input,
    "triage_relevance": triage_relevance,
    "triage_faq": triage_faq,
    "triage_intent": triage_intent,
    "router": route,
    "rewriter": rewrite,
    "retriever": retrieve,
    "generator": generate,
    "validate_answerable": validate_answerable,
    "validate_sources": validate_sources,
    "validate_tone": validate_tone,
    "guardrail_output": guardrail_output,
    "memory": remember,
}


def after_input(state: ChatState) -> Literal["triage_relevance", "guardrail_output"]:
    """A blocked message goes straight to the output guardrail."""
    return "guardrail_output" if decided(state) else "triage_relevance"


def after_triage(state: ChatState) -> Literal["router", "guardrail_output"]:
    """A message triage answered (FAQ, small talk, off-topic) skips routing, retrieval and the model."""
    return "guardrail_output" if decided(state) else "router"


def build_graph(
    checkpointer: BaseCheckpointSaver | None, nodes: Mapping[str, Callable[..., Any]] | None = None
) -> CompiledStateGraph:
    """The compiled turn graph; `nodes` replaces default nodes by name (same input/output contract)."""
    chosen = {**DEFAULT_NODES, **(nodes or {})}
    graph = StateGraph(ChatState, input_schema=TurnInput, context_schema=GraphDeps)
    for name, fn in chosen.items():
        graph.add_node(name, fn)
    graph.add_edge(START, "start_turn")
    graph.add_edge("start_turn", "guardrail_input")
    graph.add_conditional_edges("guardrail_input", after_input)
    graph.add_edge("triage_relevance", "triage_faq")
    graph.add_edge("triage_faq", "triage_intent")
    graph.add_conditional_edges("triage_intent", after_triage)
    graph.add_conditional_edges("router", next_after_router)
    graph.add_edge("rewriter", "retriever")
    graph.add_edge("retriever", "generator")
    graph.add_edge("generator", "validate_answerable")
    graph.add_edge("validate_answerable", "validate_sources")
    graph.add_edge("validate_sources", "validate_tone")
    graph.add_edge("validate_tone", "guardrail_output")
    graph.add_edge("guardrail_output", "memory")
    graph.add_edge("memory", END)
    return graph.compile(checkpointer=checkpointer)
