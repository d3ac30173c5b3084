"""Checkpoint pruning on both engines: idle threads keep their last complete checkpoint and go on from it."""

import operator
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph

from backend.memory.conversations import create_tables, delete_thread_rows, record_turn
from backend.store.checkpointer import checkpointer_for
from backend.store.prune import prune_checkpoints


class State(TypedDict):
    said: Annotated[list[str], operator.add]


def two_step_graph(checkpointer):
    graph = StateGraph(State)
    graph.add_node("echo", lambda s: {"said": [f"echo {len(s['said'])}"]})
    graph.add_node("again", lambda s: {"said": ["again"]})
    graph.add_edge(START, "echo")
    graph.add_edge("echo", "again")
    graph.add_edge("again", END)
    return graph.compile(checkpointer=checkpointer)


async def count(db, table: str, thread_id: str) -> int:
    sql = f"SELECT COUNT(*) FROM {table} WHERE thread_id = ?"
    return await db.read(lambda c: c.execute(sql, (thread_id,)).fetchone()[0])


async def test_idle_threads_keep_only_their_last_complete_checkpoint_and_continue_from_it(database):
    if database.dialect == "sqlite":
        await database.call(lambda: create_tables(database.conn))
    checkpointer = await database.call(lambda: checkpointer_for(database, record_turn, delete_thread_rows))
    graph = two_step_graph(checkpointer)
    insert = "INSERT INTO threads (thread_id, owner, title, created_at, updated_at) VALUES (?, 'local', 't', ?, ?)"
    for thread_id, updated in (("idle", "2020-01-01T00:00:00.000+00:00"), ("recent", "2999-01-01T00:00:00.000+00:00")):
        await database.write(lambda c, t=thread_id, u=updated: c.execute(insert, (t, u, u)))
        for n in range(3):
            await graph.ainvoke({"said": [f"turn {n}"]}, {"configurable": {"thread_id": thread_id}})
    before = {t: await count(database, "checkpoints", t) for t in ("idle", "recent")}
    state = (await graph.aget_state({"configurable": {"thread_id": "idle"}})).values

    pruned = await prune_checkpoints(graph, checkpointer, idle_days=30)

    assert (pruned.threads, pruned.checkpoints) == (1, before["idle"] - 1)
    assert await count(database, "checkpoints", "idle") == 1 and await count(database, "checkpoints", "recent") > 1
    assert (await graph.aget_state({"configurable": {"thread_id": "idle"}})).values == state
    if database.dialect == "postgres":  # only the values the kept checkpoint refers to are left
        assert await count(database, "checkpoint_blobs", "idle") == 1
    after = await graph.ainvoke({"said": ["turn 3"]}, {"configurable": {"thread_id": "idle"}})
    assert after["said"] == [*state["said"], "turn 3", "echo 10", "again"]
    touch = "UPDATE threads SET updated_at = '2999-01-01T00:00:00.000+00:00' WHERE thread_id = 'idle'"
    await database.write(lambda c: c.execute(touch))
    assert (await prune_checkpoints(graph, checkpointer, idle_days=30)).checkpoints == 0  # in use again: spared
