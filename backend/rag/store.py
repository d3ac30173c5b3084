"""The vector store: Chroma (on disk under the data dir, or a Chroma server when RAG_CHROMA_URL is set), or
pgvector in the Postgres database when RAG_DATABASE_URL is set."""

import asyncio
import fcntl
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any
from urllib.parse import urlparse

import chromadb
from chromadb.api import ClientAPI
from chromadb.api.models.Collection import Collection
from chromadb.config import Settings as ChromaSettings

from backend.rag.pgvectors import PgVectorStore
from backend.settings import Settings
from backend.store.database import Database

VectorStore = Collection | PgVectorStore  # the part of Chroma's Collection API Ragline calls, either way
LOCK_FILE = "ragline.lock"  # in the Chroma folder: held by the process that writes it


class VectorStoreInUse(RuntimeError):
    """Another process has the on-disk Chroma folder open."""


@contextmanager
def chroma_folder_held(settings: Settings) -> Iterator[None]:
    """Hold the on-disk Chroma folder for the block, or VectorStoreInUse when another process holds it (nothing to
    hold for pgvector or a Chroma server).

    Chroma's files take one writing process: vectors `cli ingest` wrote beside a running server were unseen by the
    server's index, and every search that found their chunks by keyword failed ("Error finding id", a 500) until
    the server next wrote a document."""
    if settings.database_url is not None or settings.chroma_url:
        yield
        return
    settings.chroma_path.mkdir(parents=True, exist_ok=True)
    with open(settings.chroma_path / LOCK_FILE, "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise VectorStoreInUse(
                f"the vector store in {settings.chroma_path} is open in another Ragline process (a running server?)"
            ) from None
        yield


def open_client(settings: Settings) -> ClientAPI:
    """A persistent on-disk client, or an HttpClient when a Chroma server URL is configured."""
    chroma_settings = ChromaSettings(anonymized_telemetry=False)
    if settings.chroma_url:
        url = urlparse(settings.chroma_url)
        return chromadb.HttpClient(
            host=url.hostname or "127.0.0.1",
            port=url.port or (443 if url.scheme == "https" else 8000),
            ssl=url.scheme == "https",
            settings=chroma_settings,
        )
    settings.chroma_path.mkdir(parents=True, exist_ok=True)
    return chromadb.PersistentClient(path=str(settings.chroma_path), settings=chroma_settings)


def open_collection(client: ClientAPI, name: str, embedding_function: Any) -> Collection:
    """The knowledge-base collection, created with cosine distance when new."""
    return client.get_or_create_collection(
        name=name,
        embedding_function=embedding_function,
        configuration={"hnsw": {"space": "cosine"}},
    )


def open_vectors(settings: Settings, db: Database, embedding_function: Any) -> VectorStore:
    """Chroma as configured when RAG_DATABASE_URL is unset, else pgvector in that database (`db`)."""
    if settings.database_url is None:
        return open_collection(open_client(settings), settings.collection, embedding_function)
    if db.dialect != "postgres":
        raise ValueError("RAG_DATABASE_URL is set: the knowledge base's database must be that Postgres database")
    return PgVectorStore(db, embedding_function)


@asynccontextmanager
async def open_vector_store(settings: Settings, db: Database, embedding_function: Any) -> AsyncIterator[VectorStore]:
    """open_vectors for the server's life; a Chroma client is closed at the end (it holds its files open)."""
    if settings.database_url is not None:
        yield await asyncio.to_thread(open_vectors, settings, db, embedding_function)
        return
    with chroma_folder_held(settings):
        client = await asyncio.to_thread(open_client, settings)
        try:
            yield await asyncio.to_thread(open_collection, client, settings.collection, embedding_function)
        finally:
            await asyncio.to_thread(client.close)
