"""The Chroma vector store: on disk under the data dir, or a Chroma server when RAG_CHROMA_URL is set."""

from typing import Any
from urllib.parse import urlparse

import chromadb
from chromadb.api import ClientAPI
from chromadb.api.models.Collection import Collection
from chromadb.config import Settings as ChromaSettings

from backend.settings import Settings


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
