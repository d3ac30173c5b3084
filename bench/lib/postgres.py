"""A real Postgres (16, with pgvector) for tests and benchmarks, from the `pgserver` wheel on PyPI.

Debian's `postgresql` package has no pgvector for this release; `pgserver` ships the server binaries with the
extension built in, and runs them as an unprivileged user when started as root. Each test gets its own database.
"""

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg


@contextmanager
def postgres_server(pgdata: Path) -> Iterator[str]:
    """Start a Postgres server on a data folder (created if new); yields its admin URL; stops it after."""
    import pgserver  # a dev dependency: only tests and benchmarks start their own server

    server = pgserver.get_server(pgdata, cleanup_mode="stop")
    try:
        yield server.get_uri()
    finally:
        server.cleanup()


def database_url(server_url: str, name: str) -> str:
    """The URL of another database on the same server."""
    head, sep, query = server_url.partition("?")
    return f"{head.rsplit('/', 1)[0]}/{name}{sep}{query}"


@contextmanager
def fresh_database(server_url: str, prefix: str = "t") -> Iterator[str]:
    """A new empty database, dropped afterwards; yields its URL."""
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    try:
        yield database_url(server_url, name)
    finally:
        with psycopg.connect(server_url, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
