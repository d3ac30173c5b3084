from langgraph.checkpoint.memory import InMemorySaver

from backend.graph.builder import DEFAULT_NODES, build_graph
from backend.graph.state import turn_input
from backend.tests.fakes import runtime

CHAIN = [  # (source, target, conditional): every edge of the turn graph
    ("__start__", "start_turn", False),
    ("start_turn", "guardrail_input", False),
    ("guardrail_input", "triage_relevance", True),
    ("guardrail_input", "guardrail_output", True),
    ("triage_relevance", "triage_faq", False),
    ("triage_faq", "triage_intent", False),
    ("triage_intent", "router", True),
    ("triage_intent", "guardrail_output", True),
    ("router", "rewriter", True),
    ("router", "generator", True),
    ("router", "guardrail_output", True),
    ("rewriter", "retriever", False),
    ("retriever", "generator", False),
    ("generator", "validate_answerable", False),
    ("validate_answerable", "validate_sources", False),
    ("validate_sources", "validate_tone", False),
    ("validate_tone", "guardrail_output", False),
    ("guardrail_output", "memory", False),
    ("memory", "__end__", False),
]


def test_graph_has_exactly_the_nodes_and_edges_of_the_chain():
    graph = build_graph(None).get_graph()
    assert set(graph.nodes) - {"__start__", "__end__"} == set(DEFAULT_NODES)
    assert {(e.source, e.target, e.conditional) for e in graph.edges} == set(CHAIN)  # a missing edge fails here


async def test_a_direct_invocation_after_small_talk_starts_a_fresh_turn():
    graph = build_graph(InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    deps = runtime().context
    await graph.ainvoke(turn_input("thanks!"), config, context=deps)
    out = await graph.ainvoke({"request": {"question": "Write a poem about the sea"}}, config, context=deps)
    assert out["answer"] != "You're welcome!" and out["triage"]["skip_llm"] is False
    assert out["mode"] == "auto" and len(out["qa_index"]) == 2


async def test_a_node_can_be_replaced_by_name_without_touching_the_graph():
    async def strict_input(state, runtime):
        return {
            "triage": {"route": "blocked", "skip_llm": True, "early_response": "No.", "triage_log": ["custom"]},
            "answer": "No.",
        }

    graph = build_graph(InMemorySaver(), nodes={"guardrail_input": strict_input})
    config = {"configurable": {"thread_id": "t"}}
    out = await graph.ainvoke(turn_input("What is the notice period?", "auto"), config, context=runtime().context)
    assert out["answer"] == "No." and out["triage"]["triage_log"][0] == "custom"
    assert out["messages"][-1].text == "No."  # memory still ran
