"""Ragline's own tables in Postgres, versioned by Alembic (backend/store/migrations).

`upgrade` brings a database to the code's schema under an advisory lock, so replicas starting together migrate
once; it refuses a database whose schema is newer than the code (a replica left on an older release). The
checkpointer's tables are versioned by langgraph-checkpoint-postgres itself (PostgresSaver.setup).
SQLite files keep upgrading themselves in place (each store adds what it misses) and are not versioned here.
"""

from pathlib import Path

import psycopg
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util.exc import CommandError
from sqlalchemy import create_engine, text
from sqlalchemy.engine import Connection
from sqlalchemy.pool import NullPool

VERSION_TABLE = "ragline_schema_version"
MIGRATION_LOCK = 7_243_110_001  # pg_advisory_xact_lock key: one migration at a time across replicas


class SchemaTooNew(Exception):
    """The database was migrated by a newer Ragline than this one."""


def alembic_config() -> Config:
    """Alembic's configuration, without an alembic.ini: the scripts live in this package."""
    config = Config()
    config.set_main_option("script_location", str(Path(__file__).with_name("migrations")))
    return config


def _engine(url: str):
    return create_engine("postgresql+psycopg://", creator=lambda: psycopg.connect(url), poolclass=NullPool)


def current_revision(conn: Connection) -> str | None:
    """The revision the database is at (None: never migrated)."""
    return MigrationContext.configure(conn, opts={"version_table": VERSION_TABLE}).get_current_revision()


def head_revision() -> str:
    """The newest revision this code knows."""
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None
    return head


def check_not_newer(conn: Connection) -> str | None:
    """The database's revision; SchemaTooNew when this code does not know it."""
    revision = current_revision(conn)
    if revision is None:
        return None
    try:
        ScriptDirectory.from_config(alembic_config()).get_revision(revision)
    except CommandError:
        raise SchemaTooNew(
            f"the database schema is at revision {revision}, which this version of Ragline does not know "
            f"(it knows up to {head_revision()}): upgrade Ragline, or point RAG_DATABASE_URL at another database"
        ) from None
    return revision


def upgrade(url: str) -> tuple[str | None, str]:
    """Migrate the database to the code's head; returns (revision before, revision after)."""
    config = alembic_config()
    with _engine(url).begin() as conn:
        conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK})
        before = check_not_newer(conn)
        config.attributes["connection"] = conn
        command.upgrade(config, "head")
        return before, current_revision(conn) or ""
