"""PostgresDatabase and the Alembic migrations, on a real Postgres (pgserver: PostgreSQL 16 with pgvector)."""

import asyncio

import psycopg
import pytest
from alembic import command

from backend.store import migrate
from backend.store.postgres import PostgresDatabase, to_psycopg


def test_placeholders_become_psycopg_style_and_percent_signs_stay_literal() -> None:
    assert to_psycopg("SELECT * FROM t WHERE a = ? AND b LIKE '%x'") == "SELECT * FROM t WHERE a = %s AND b LIKE '%%x'"


async def test_rows_read_by_position_and_by_column(postgres_url: str) -> None:
    async with PostgresDatabase.open(postgres_url) as db:
        row = await db.read(lambda c: c.execute("SELECT ? AS a, ? AS b", (1, "x")).fetchone())
    assert (row[0], row["b"], dict(row)) == (1, "x", {"a": 1, "b": "x"})


async def test_a_failing_write_rolls_back_as_a_whole(postgres_url: str) -> None:
    async with PostgresDatabase.open(postgres_url) as db:
        await db.write(lambda c: c.execute("CREATE TABLE t (k TEXT PRIMARY KEY)"))

        def twice(c) -> None:
            c.execute("INSERT INTO t VALUES (?)", ("a",))
            c.execute("INSERT INTO t VALUES (?)", ("a",))

        with pytest.raises(db.integrity_error):
            await db.write(twice)
        assert await db.read(lambda c: c.execute("SELECT COUNT(*) FROM t").fetchone()[0]) == 0


async def test_a_cancelled_write_still_commits_and_leaves_no_transaction_open(postgres_url: str) -> None:
    async with PostgresDatabase.open(postgres_url, pool_size=2) as db:
        await db.write(lambda c: c.execute("CREATE TABLE t (k TEXT PRIMARY KEY)"))

        def slow(c) -> None:
            c.execute("INSERT INTO t VALUES (?)", ("a",))
            c.execute("SELECT pg_sleep(0.3)")

        task = asyncio.create_task(db.write(slow))
        await asyncio.sleep(0.1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        # every pooled connection takes new writes at once, and the cancelled job runs to its end and commits
        for key in ("b", "c", "d"):
            await asyncio.wait_for(db.write(lambda c, k=key: c.execute("INSERT INTO t VALUES (?)", (k,))), 10)
        for _ in range(100):
            if await db.read(lambda c: c.execute("SELECT 1 FROM t WHERE k = 'a'").fetchone()):
                break
            await asyncio.sleep(0.1)
        assert await db.read(lambda c: [r[0] for r in c.execute("SELECT k FROM t ORDER BY k")]) == list("abcd")


def test_migrate_brings_an_empty_database_to_head_and_is_idempotent(postgres_url: str) -> None:
    assert migrate.upgrade(postgres_url) == (None, migrate.head_revision())
    assert migrate.upgrade(postgres_url) == (migrate.head_revision(),) * 2
    with psycopg.connect(postgres_url) as conn:
        tables = {r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}
    assert {"threads", "turns", "runs", "run_events", migrate.VERSION_TABLE} <= tables


def test_start_refuses_a_schema_newer_than_the_code(postgres_url: str) -> None:
    migrate.upgrade(postgres_url)
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f"UPDATE {migrate.VERSION_TABLE} SET version_num = '9999_from_the_future'")
    with pytest.raises(migrate.SchemaTooNew, match="9999_from_the_future"):
        migrate.upgrade(postgres_url)


def _tables(url: str) -> set[str]:
    with psycopg.connect(url) as conn:
        return {r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}


def test_the_knowledge_migration_makes_its_tables_and_its_downgrade_removes_only_them(postgres_url: str) -> None:
    knowledge = {"documents", "chunks", "texts", "collections", "collection_groups", "vectors"}
    migrate.upgrade(postgres_url)
    assert knowledge <= _tables(postgres_url)
    config = migrate.alembic_config()
    with migrate._engine(postgres_url).begin() as conn:
        config.attributes["connection"] = conn
        command.downgrade(config, "0001_conversations_runs")
    assert not knowledge & _tables(postgres_url) and "threads" in _tables(postgres_url)
    assert migrate.upgrade(postgres_url) == ("0001_conversations_runs", migrate.head_revision())
