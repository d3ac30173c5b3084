"""Open the configured storage: SQLite files in RAG_DATA_DIR, or one Postgres database (RAG_DATABASE_URL)."""

import asyncio
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from backend.settings import Settings
from backend.store import migrate
from backend.store.database import Database
from backend.store.postgres import CONNECT_TIMEOUT_SECONDS, PostgresDatabase
from backend.store.sqlite import SqliteDatabase


@dataclass(frozen=True)
class Storage:
    """The database each store uses: four SQLite files, or the same Postgres database for all of them."""

    conversations: Database  # checkpoints, threads and turns (one database: a turn commits with its checkpoint)
    runs: Database
    accounts: Database
    knowledge: Database  # the document registry, chunks, keyword index (and, on Postgres, vectors and originals)

    def by_role(self) -> dict[str, Database]:
        """Each store's database by the name of its role."""
        return {
            "conversations": self.conversations,
            "runs": self.runs,
            "accounts": self.accounts,
            "knowledge": self.knowledge,
        }

    async def prepare(self) -> None:
        """Create the tables every store needs (SQLite files: each store's own upgrade; Postgres: migrated)."""
        from backend.accounts.sql import SqlAccountStore
        from backend.memory.conversations import ConversationStore
        from backend.rag.collections import RegistryCollections
        from backend.rag.index import KnowledgeIndex
        from backend.store.run_tables import create_tables as create_run_tables

        await ConversationStore(self.conversations).setup()
        await SqlAccountStore(self.accounts).setup()
        await create_run_tables(self.runs)
        index = await self.knowledge.call(lambda: KnowledgeIndex(self.knowledge))  # creates a SQLite file's tables
        await RegistryCollections(index).setup()


def connect_database(settings: Settings, sqlite_path: Path) -> Database:
    """A store's database, opened (blocking; the caller closes it): the Postgres of RAG_DATABASE_URL migrated to this
    code's schema first (SchemaTooNew when it is newer), else the SQLite file `sqlite_path`."""
    if settings.database_url is None:
        sqlite_path.parent.mkdir(parents=True, exist_ok=True)
        return SqliteDatabase(sqlite_path)
    url = settings.database_url.get_secret_value()
    migrate.upgrade(url)
    db = PostgresDatabase(url, settings.database_pool_size)
    db.pool.open(True, CONNECT_TIMEOUT_SECONDS)
    return db


@asynccontextmanager
async def open_database(settings: Settings, sqlite_path: Path) -> AsyncIterator[Database]:
    """connect_database for the block's duration; jobs under way finish before it closes."""
    db = await asyncio.to_thread(connect_database, settings, sqlite_path)
    try:
        yield db
    finally:
        await asyncio.shield(asyncio.get_running_loop().run_in_executor(None, db.close))


@asynccontextmanager
async def open_storage(settings: Settings) -> AsyncIterator[Storage]:
    """Every store's database for the server's life."""
    if settings.database_url:
        async with open_database(settings, settings.checkpoint_path) as db:
            yield Storage(db, db, db, db)
        return
    await asyncio.to_thread(settings.data_dir.mkdir, parents=True, exist_ok=True)
    async with AsyncExitStack() as stack:
        files = (settings.checkpoint_path, settings.runs_path, settings.accounts_path, settings.knowledge_path)
        yield Storage(*[await stack.enter_async_context(SqliteDatabase.open(path)) for path in files])
