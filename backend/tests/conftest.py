"""Shared fixtures: a fake-model app on a temp data dir with the sample corpus, and an HTTP client."""

import os
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import numpy as np
import pytest
from asgi_lifespan import LifespanManager
from fastapi import FastAPI

from backend.main import create_app
from backend.rag.knowledge import ingest_paths
from backend.settings import Settings
from backend.store import migrate
from backend.store.database import Database
from backend.store.postgres import PostgresDatabase
from backend.store.sqlite import SqliteDatabase
from backend.tests.ollama_double import OllamaDouble, serve_ollama
from bench.lib import SAMPLE_DOCS
from bench.lib.postgres import fresh_database, postgres_server


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--storage",
        choices=("sqlite", "postgres"),
        default="sqlite",
        help="where the app fixtures keep their data: SQLite files (default) or a real Postgres started for the run",
    )


@pytest.fixture(scope="session")
def postgres() -> Iterator[str]:
    """A real Postgres server (with pgvector) for the whole run; its admin URL. Its data lives outside pytest's
    temporary folders, which a concurrent pytest run may rotate away."""
    with tempfile.TemporaryDirectory(prefix="ragline-pg-") as folder, postgres_server(Path(folder)) as url:
        yield url


@pytest.fixture
def postgres_url(postgres: str) -> Iterator[str]:
    """A fresh database on the run's Postgres server for one test."""
    with fresh_database(postgres) as url:
        yield url


def fake_settings(data_dir: Path, **overrides) -> Settings:
    """Settings for the scripted fake model on a temp data dir (real Chroma, real SQLite, real ONNX embeddings)."""
    values = {
        "llm_backend": "fake",
        "data_dir": data_dir,
        "fake_tokens_per_second": 0.0,
        "flashrank_dir": data_dir / "no-flashrank-models",
        **overrides,
    }
    return Settings(**values)


@pytest.fixture(params=["sqlite", "postgres"])
async def database(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Database]:
    """One store database on each engine: a SQLite file, and a fresh Postgres database migrated to head."""
    if request.param == "sqlite":
        async with SqliteDatabase.open(tmp_path / "store.sqlite") as db:
            yield db
        return
    url = request.getfixturevalue("postgres_url")
    migrate.upgrade(url)
    async with PostgresDatabase.open(url) as db:
        yield db


REMEMBERED_TEXTS = 200_000  # about 300 MB of vectors at most


@pytest.fixture(scope="session", autouse=True)
def remembered_embeddings() -> Iterator[None]:
    """The real offline MiniLM, with the vector of each text it has embedded in this run remembered: most API tests
    start an app that ingests the same sample documents (32 chunks, about 1 s of the 1.6 s each app took to start;
    about 13 minutes of CI over both storages). A text's vector is computed by the model the first time, so every
    vector is the model's; only the repeats are skipped. Servers started as processes embed as the product does."""
    from backend.rag.embeddings import OfflineMiniLM

    forward = OfflineMiniLM._forward
    known: dict[str, np.ndarray] = {}

    def remembered(self: OfflineMiniLM, documents: list[str], batch_size: int = 32) -> np.ndarray:
        new = list(dict.fromkeys(d for d in documents if d not in known))
        if new:
            vectors = forward(self, new, batch_size)
            if len(known) + len(new) <= REMEMBERED_TEXTS:
                known.update(zip(new, vectors, strict=True))
            else:
                return forward(self, documents, batch_size)
        return np.stack([known[d] for d in documents]) if documents else forward(self, documents, batch_size)

    OfflineMiniLM._forward = remembered  # type: ignore[method-assign]
    try:
        yield
    finally:
        OfflineMiniLM._forward = forward  # type: ignore[method-assign]


@pytest.fixture(autouse=True)
def storage(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The storage of this run (--storage): with postgres, every test's settings point at a fresh database (through
    RAG_DATABASE_URL, which Settings read when a test does not set it)."""
    choice = request.config.getoption("--storage")
    if choice == "postgres":
        monkeypatch.setenv("RAG_DATABASE_URL", request.getfixturevalue("postgres_url"))
    return choice


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return fake_settings(tmp_path / "data")


@pytest.fixture
async def app(settings: Settings) -> AsyncIterator[FastAPI]:
    """The app, started, with the sample documents ingested."""
    application = create_app(settings)
    async with LifespanManager(application):
        await ingest_paths(application.state.services.knowledge, [SAMPLE_DOCS])
        yield application


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test", timeout=60) as c:
        yield c


@pytest.fixture
def no_model_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No RAG_* or OLLAMA_HOST from the caller's shell, and no .env file from the working directory."""
    for name in list(os.environ):
        if name.startswith("RAG_") or name == "OLLAMA_HOST":
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def ollama(no_model_env: None) -> Iterator[OllamaDouble]:
    """An Ollama wire-format double for one test, with the caller's model environment cleared."""
    with serve_ollama() as double:
        yield double


@pytest.fixture(scope="session")
def minilm():
    """The offline MiniLM the product embeds questions with (files prepared from the PyPI wheels)."""
    from backend.rag.embeddings import OfflineMiniLM, ensure_onnx_files

    return OfflineMiniLM(ensure_onnx_files(Settings().cache_dir))
