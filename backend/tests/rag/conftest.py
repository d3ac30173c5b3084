"""The knowledge base on each storage engine: SQLite + Chroma, and Postgres (tables, full-text search, pgvector)."""

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from backend.rag.embeddings import OfflineMiniLM, ensure_onnx_files
from backend.rag.knowledge import KnowledgeBase, knowledge_database
from backend.rag.store import open_vectors
from backend.settings import Settings

ENGINES = ["sqlite", "postgres"]


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest) -> dict:
    """Settings choosing the engine: none for SQLite files and Chroma, a fresh Postgres database otherwise."""
    return {"database_url": request.getfixturevalue("postgres_url")} if request.param == "postgres" else {}


@contextmanager
def open_kb(settings: Settings) -> Iterator[KnowledgeBase]:
    """A KnowledgeBase on the settings' storage with the real ONNX embedder, closed after the block."""
    embed = OfflineMiniLM(ensure_onnx_files(settings.cache_dir))
    with knowledge_database(settings) as db:
        yield KnowledgeBase(settings, db, open_vectors(settings, db, embed), embed, "minilm")
