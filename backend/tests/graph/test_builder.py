from langgraph.checkpoint.memory import InMemorySaver

from backend.graph.builder import DEFAULT_NODES, build_graph
from backend.graph.state import turn_input
from backend.tests.fakes import runtime


def test_graph_has_the_full_chain_in_order():
    graph = build_graph(None).get_graph()
    names = set(graph.nodes) - {"__start__", "__end__"}
    assert names == set(DEFAULT_NODES)


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
