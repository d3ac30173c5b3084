"""open_database: the database the settings choose, Postgres (RAG_DATABASE_URL, migrated first) or a SQLite file."""

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from backend.settings import Settings
from backend.store import migrate
from backend.store.database import Database
from backend.store.postgres import PostgresDatabase
from backend.store.sqlite import SqliteDatabase


@asynccontextmanager
async def open_database(settings: Settings, sqlite_path: Path) -> AsyncIterator[Database]:
    """Open, for the block's duration, the Postgres database of RAG_DATABASE_URL brought to the code's schema (one
    pool of RAG_DATABASE_POOL_SIZE connections per call), or else the SQLite file `sqlite_path`."""
    if settings.database_url is None:
        async with SqliteDatabase.open(sqlite_path) as sqlite:
            yield sqlite
        return
    url = settings.database_url.get_secret_value()
    await asyncio.to_thread(migrate.upgrade, url)
    async with PostgresDatabase.open(url, settings.database_pool_size) as postgres:
        yield postgres
