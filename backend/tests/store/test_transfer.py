"""Moving rows and checkpoints between engines: SQLite -> Postgres -> SQLite gives back what was stored."""

from pathlib import Path

from backend.memory.conversations import create_tables, delete_thread_rows, record_turn
from backend.store import migrate
from backend.store.checkpointer import checkpointer_for
from backend.store.postgres import PostgresDatabase
from backend.store.sqlite import SqliteDatabase
from backend.store.transfer import TABLES, dump_checkpoints, dump_table, load_checkpoints, load_table
from backend.tests.store.test_prune import two_step_graph

CONVERSATION_TABLES = [t for t in TABLES if t.role == "conversations"]


async def filled_sqlite(path: Path):
    db = SqliteDatabase(path)
    await db.call(lambda: create_tables(db.conn))
    checkpointer = await db.call(lambda: checkpointer_for(db, record_turn, delete_thread_rows))
    graph = two_step_graph(checkpointer)
    sql = "INSERT INTO threads (thread_id, owner, title, created_at, updated_at) VALUES (?, 'me', ?, ?, ?)"
    for thread in ("a", "b"):
        await db.write(lambda c, t=thread: c.execute(sql, (t, f"title {t}", f"2026-01-0{len(t)}", "2026-01-02")))
        for n in range(2):
            await graph.ainvoke({"said": [f"{thread} {n}"]}, {"configurable": {"thread_id": thread}})
    return db, checkpointer, graph


async def test_rows_and_checkpoints_survive_sqlite_to_postgres_and_back(tmp_path, postgres_url):
    source, source_cp, source_graph = await filled_sqlite(tmp_path / "a.sqlite")
    out = tmp_path / "export"
    out.mkdir()
    counts = {
        t.name: await source.call(lambda t=t: dump_table(source, t, out / f"{t.name}.jsonl"))
        for t in CONVERSATION_TABLES
    }
    assert counts["threads"] == 2
    assert await source.call(lambda: dump_checkpoints(source_cp, out / "checkpoints.jsonl")) > 4

    migrate.upgrade(postgres_url)
    async with PostgresDatabase.open(postgres_url) as pg:
        pg_cp = await pg.call(lambda: checkpointer_for(pg, record_turn, delete_thread_rows))
        for t in CONVERSATION_TABLES:
            assert await pg.call(lambda t=t: load_table(pg, t, out / f"{t.name}.jsonl")) == counts[t.name]
        await pg.call(lambda: load_checkpoints(pg_cp, out / "checkpoints.jsonl"))
        pg_graph = two_step_graph(pg_cp)
        for thread in ("a", "b"):
            config = {"configurable": {"thread_id": thread}}
            assert (await pg_graph.aget_state(config)).values == (await source_graph.aget_state(config)).values
            history = [s.values async for s in pg_graph.aget_state_history(config)]
            assert history == [s.values async for s in source_graph.aget_state_history(config)]
        back = tmp_path / "back"
        back.mkdir()
        for t in CONVERSATION_TABLES:
            await pg.call(lambda t=t: dump_table(pg, t, back / f"{t.name}.jsonl"))
        await pg.call(lambda: dump_checkpoints(pg_cp, back / "checkpoints.jsonl"))
        after = await pg_graph.ainvoke({"said": ["a 2"]}, {"configurable": {"thread_id": "a"}})  # it goes on
        assert after["said"][-3:] == ["a 2", "echo 7", "again"]
    again = SqliteDatabase(tmp_path / "again.sqlite")
    await again.call(lambda: create_tables(again.conn))
    again_cp = await again.call(lambda: checkpointer_for(again, record_turn, delete_thread_rows))
    for t in CONVERSATION_TABLES:
        await again.call(lambda t=t: load_table(again, t, back / f"{t.name}.jsonl"))
    await again.call(lambda: load_checkpoints(again_cp, back / "checkpoints.jsonl"))
    rows = "SELECT thread_id, owner, title, created_at, updated_at FROM threads ORDER BY rowid"
    assert await again.read(lambda c: c.execute(rows).fetchall()) == await source.read(
        lambda c: c.execute(rows).fetchall()
    )
    config = {"configurable": {"thread_id": "b"}}
    assert (await two_step_graph(again_cp).aget_state(config)).values == (await source_graph.aget_state(config)).values
    source.close()
    again.close()
