"""Plain-text ingestion: Markdown and text files split by paragraphs into chunks in Chroma."""

import asyncio
import hashlib
from pathlib import Path

from chromadb.api.models.Collection import Collection

TEXT_SUFFIXES = {".md", ".markdown", ".txt"}
TARGET_CHARS = 800


def split_paragraphs(text: str, target_chars: int = TARGET_CHARS) -> list[str]:
    """Group blank-line-separated paragraphs into chunks of about target_chars; headings start a chunk."""
    chunks: list[str] = []
    current: list[str] = []
    for para in (p.strip() for p in text.split("\n\n")):
        if not para:
            continue
        size = sum(len(p) for p in current)
        if current and (para.startswith("#") or size + len(para) > target_chars):
            chunks.append("\n\n".join(current))
            current = []
        current.append(para)
    if current:
        chunks.append("\n\n".join(current))
    return chunks


def replace_document(collection: Collection, name: str, text: str) -> int:
    """Store a document's chunks under its name, replacing any earlier version; returns the chunk count."""
    chunks = split_paragraphs(text)
    collection.delete(where={"document": name})
    if chunks:
        collection.add(
            ids=[f"{name}#{i}" for i in range(len(chunks))],
            documents=chunks,
            metadatas=[
                {"document": name, "chunk": i, "hash": hashlib.sha256(c.encode()).hexdigest()}
                for i, c in enumerate(chunks)
            ],
        )
    return len(chunks)


async def ingest_paths(collection: Collection, paths: list[Path]) -> dict[str, int]:
    """Ingest every text file under the given files and folders; returns chunk counts by document name."""
    files = [p for path in paths for p in ([path] if path.is_file() else sorted(path.rglob("*")))]
    counts: dict[str, int] = {}
    for f in files:
        if f.is_file() and f.suffix.lower() in TEXT_SUFFIXES:
            text = f.read_text(encoding="utf-8", errors="replace")
            counts[f.name] = await asyncio.to_thread(replace_document, collection, f.name, text)
    return counts
