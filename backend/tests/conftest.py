"""Shared fixtures: a fake-model app on a temp data dir with the sample corpus, and an HTTP client."""

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from asgi_lifespan import LifespanManager
from fastapi import FastAPI

from backend.main import create_app
from backend.rag.knowledge import ingest_paths
from backend.settings import Settings

SAMPLE_DOCS = Path(__file__).resolve().parents[2] / "data" / "documents"


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
