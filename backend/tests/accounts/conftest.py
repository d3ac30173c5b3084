"""The account store on each engine: a SQLite file, and a fresh Postgres database brought to the code's schema."""

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from backend.accounts.limiter import LoginLimiter
from backend.accounts.service import Accounts
from backend.accounts.sql import SqlAccountStore
from backend.store import migrate
from backend.store.database import Database
from backend.store.postgres import PostgresDatabase
from backend.store.sqlite import SqliteDatabase


@pytest.fixture(params=["sqlite", "postgres"])
async def account_db(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Database]:
    """The database the accounts live in: a SQLite file, or a migrated Postgres database."""
    if request.param == "sqlite":
        async with SqliteDatabase.open(tmp_path / "accounts.sqlite") as db:
            yield db
        return
    url = request.getfixturevalue("postgres_url")
    await asyncio.to_thread(migrate.upgrade, url)
    async with PostgresDatabase.open(url, pool_size=4) as pg:
        yield pg


@pytest.fixture
async def account_store(account_db: Database) -> SqlAccountStore:
    """The account store, set up, on each engine."""
    store = SqlAccountStore(account_db)
    await store.setup()
    return store


@pytest.fixture
def accounts(account_store: SqlAccountStore) -> Accounts:
    """The accounts service on each engine (3 failed sign-ins a minute)."""
    return Accounts(account_store, session_hours=1, limiter=LoginLimiter(3, 60))
