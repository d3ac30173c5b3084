from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from backend.graph.builder import build_graph
from backend.llm.fake import ScriptedChatModel
from backend.runs.summary import SummaryScheduler, update_summary
from backend.tests.fakes import runtime

CONFIG = {"configurable": {"thread_id": "t"}}


async def graph_with_index(entries: list[dict], window_start: int = 0):
    graph = build_graph(InMemorySaver())
    values = {"qa_index": entries, "messages": [HumanMessage("q"), AIMessage("a")], "window_start": window_start}
    await graph.aupdate_state(CONFIG, values, as_node="memory")
    return graph


async def test_update_summary_folds_exchanges_that_left_the_window_and_records_progress():
    entries = [{"question": f"Q{i} about the Zephyr-{i}?", "answer": f"A{i}"} for i in (1, 2, 3)]
    graph = await graph_with_index(entries, window_start=1)  # the window was cut: it starts at the second
    model = ScriptedChatModel()
    deps = runtime(model).context
    assert await update_summary(graph, deps, "t") is True
    values = (await graph.aget_state(CONFIG)).values
    assert "Q1 about the Zephyr-1?" in values["summary"] and "Zephyr-2" not in values["summary"]
    assert values["summarized_upto"] == 1
    assert await update_summary(graph, deps, "t") is False  # nothing new
    assert len(model.calls) == 1


async def test_update_summary_inside_the_window_makes_no_model_call():
    graph = await graph_with_index([{"question": "Q1?", "answer": "A1"}])
    model = ScriptedChatModel()
    assert await update_summary(graph, runtime(model).context, "t") is False
    assert model.calls == []


async def test_scheduler_settle_cancels_a_running_update():
    graph = await graph_with_index([{"question": "Q1?", "answer": "A1"}], window_start=1)
    slow = ScriptedChatModel(tokens_per_second=1)  # would take seconds to answer
    deps = runtime(slow).context
    deps.chat_model = slow
    scheduler = SummaryScheduler(graph, deps)
    scheduler.schedule("t")
    await scheduler.settle("t")
    assert (await graph.aget_state(CONFIG)).values.get("summary") is None
