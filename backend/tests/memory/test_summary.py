from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from backend.graph.builder import build_graph
from backend.llm.fake import ScriptedChatModel
from backend.memory.summary import SummaryScheduler, update_summary
from backend.tests.fakes import runtime

CONFIG = {"configurable": {"thread_id": "t"}}


async def graph_with_index(entries: list[dict]):
    graph = build_graph(InMemorySaver())
    await graph.aupdate_state(
        CONFIG, {"qa_index": entries, "messages": [HumanMessage("q"), AIMessage("a")]}, as_node="memory"
    )
    return graph


async def test_update_summary_folds_new_exchanges_and_records_progress():
    graph = await graph_with_index([{"question": "Q1 about the Zephyr-9?", "answer": "A1"}])
    deps = runtime(ScriptedChatModel()).context
    assert await update_summary(graph, deps, "t") is True
    values = (await graph.aget_state(CONFIG)).values
    assert "Q1 about the Zephyr-9?" in values["summary"] and values["summarized_upto"] == 1
    assert await update_summary(graph, deps, "t") is False  # nothing new


async def test_scheduler_settle_cancels_a_running_update():
    graph = await graph_with_index([{"question": "Q1?", "answer": "A1"}])
    slow = ScriptedChatModel(tokens_per_second=1)  # would take seconds to answer
    deps = runtime(slow).context
    deps.chat_model = slow
    scheduler = SummaryScheduler(graph, deps)
    scheduler.schedule("t")
    await scheduler.settle("t")
    assert (await graph.aget_state(CONFIG)).values.get("summary") is None
