"""Export and import a whole installation, to move it between SQLite files and Postgres (either way).

An export is a folder: `manifest.json` (what it holds, from which engine and schema), one JSON-lines file per
table, `checkpoints.jsonl` (every checkpoint and pending write, serialized by LangGraph's own serializer),
`vectors.jsonl` (every chunk vector with its metadata) and `files/` (the documents' originals). Importing needs
an empty installation: nothing stored is ever overwritten or mixed. Table rows keep their columns; a column only
one engine has (Postgres' creation-order `seq`, SQLite's `rowid`, generated search columns) is left to the
target to fill.
"""

import base64
import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backend.contract.text import fold_name, shown
from backend.store.checkpointer import Checkpointer
from backend.store.database import Conn, Database
from backend.store.open import Storage, open_storage

FORMAT = "ragline-export/1"
Role = str  # which of the installation's databases holds a table (see backend/store/open.py Storage)


class TransferError(Exception):
    """The export folder or the target installation cannot take this transfer (said in a sentence)."""


@dataclass(frozen=True)
class Table:
    """A table to move, in an order that respects foreign keys, with the column that orders its rows."""

    name: str
    role: Role
    order: str


TABLES = (
    Table("users", "accounts", "created_at, id"),
    Table("sessions", "accounts", "created_at, token_hash"),
    Table("api_keys", "accounts", "created_at, id"),
    Table("groups", "accounts", "created_at, id"),
    Table("group_members", "accounts", "group_id, user_id"),
    Table("profiles", "accounts", "user_id"),
    Table("invitations", "accounts", "created_at, id"),
    Table("threads", "conversations", "created_at, thread_id"),
    Table("turns", "conversations", "thread_id, turn"),
    Table("conversation_keys", "conversations", "key"),
    Table("thread_owners", "conversations", "thread_id"),
    Table("runs", "runs", "created_at, run_id"),
    Table("run_events", "runs", "run_id, seq"),
    Table("collections", "knowledge", "created_at, id"),
    Table("collection_groups", "knowledge", "collection_id, group_id"),
    Table("documents", "knowledge", "id"),
    Table("chunks", "knowledge", "doc_id, version, idx"),
    Table("texts", "knowledge", "doc_id"),
)
VECTOR_BATCH = 500
TARGET_MUST_BE_EMPTY = ("users", "threads", "runs", "documents")


def columns(db: Database, conn: Conn, table: str) -> dict[str, str]:
    """The table's columns that take values on insert -> their declared type (lower case)."""
    if db.dialect == "sqlite":
        return {r[1]: str(r[2]).lower() for r in conn.execute(f"PRAGMA table_info({table})")}
    rows = conn.execute(
        "SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = current_schema() "
        "AND table_name = ? AND is_generated = 'NEVER' AND is_identity = 'NO' "
        "AND (column_default IS NULL OR column_default NOT LIKE 'nextval(%')",  # a serial numbers itself
        (table,),
    )
    return {r[0]: str(r[1]).lower() for r in rows}


def _value(value: Any, kind: str) -> Any:
    """A JSON value as the target column wants it (SQLite keeps booleans as 0/1; Postgres has a type for them)."""
    if kind == "boolean" and value is not None:
        return bool(value)
    if isinstance(value, bool):
        return int(value)
    return value


def dump_table(db: Database, table: Table, out: Path) -> int:
    """Write the table's rows as JSON lines; returns how many (run in a worker thread)."""
    with db.connection() as conn, out.open("w") as f:
        cur = conn.execute(f"SELECT * FROM {table.name} ORDER BY {table.order}")
        names = [c[0] for c in cur.description]
        n = 0
        for row in cur.fetchall():
            f.write(json.dumps(dict(zip(names, row, strict=True)), ensure_ascii=False) + "\n")
            n += 1
    return n


def load_table(db: Database, table: Table, source: Path, batch: int = 500) -> int:
    """Insert the rows of a JSON-lines file into the table, in one transaction; returns how many."""
    with db.transaction() as conn:
        kinds = columns(db, conn, table.name)
        n = 0
        for rows in _batches(source, batch):
            keep = [c for c in rows[0] if c in kinds]
            names = ", ".join(f'"{c}"' for c in keep)  # quoted: chunks has a column named "end"
            sql = f"INSERT INTO {table.name} ({names}) VALUES ({', '.join('?' * len(keep))})"
            conn.executemany(sql, [tuple(_value(r.get(c), kinds[c]) for c in keep) for r in rows])
            n += len(rows)
    return n


def _batches(path: Path, size: int) -> Iterator[list[dict]]:
    rows: list[dict] = []
    with path.open() as f:
        for line in f:
            rows.append(json.loads(line))
            if len(rows) == size:
                yield rows
                rows = []
    if rows:
        yield rows


def _typed(serde: Any, value: Any) -> list[str]:
    kind, data = serde.dumps_typed(value)
    return [kind, base64.b64encode(data).decode()]


def _untyped(serde: Any, pair: list[str]) -> Any:
    return serde.loads_typed((pair[0], base64.b64decode(pair[1])))


def dump_checkpoints(checkpointer: Checkpointer, out: Path) -> int:
    """Every checkpoint of every thread, oldest first, with its pending writes (run in a worker thread)."""
    serde = checkpointer.serde  # type: ignore[attr-defined]
    tuples = list(checkpointer.list(None))  # type: ignore[attr-defined]
    with out.open("w") as f:
        for t in reversed(tuples):  # list() is newest first; replaying parents before children
            record = {
                "config": t.config,
                "parent_config": t.parent_config,
                "checkpoint": _typed(serde, t.checkpoint),
                "metadata": _typed(serde, t.metadata),
                "writes": [[task, channel, _typed(serde, value)] for task, channel, value in t.pending_writes or []],
            }
            f.write(json.dumps(record) + "\n")
    return len(tuples)


def load_checkpoints(checkpointer: Checkpointer, source: Path) -> int:
    """Store the exported checkpoints as they were, without the hooks (their turn rows come as table rows)."""
    serde = checkpointer.serde  # type: ignore[attr-defined]
    hooks = checkpointer._on_put, checkpointer._on_delete
    checkpointer._on_put = checkpointer._on_delete = None
    n = 0
    try:
        with source.open() as f:
            for line in f:
                record = json.loads(line)
                checkpoint = _untyped(serde, record["checkpoint"])
                config = record["config"]["configurable"]
                parent = (record["parent_config"] or {}).get("configurable", {})
                put_config = {"configurable": {**config, "checkpoint_id": parent.get("checkpoint_id")}}
                saved = checkpointer.put(
                    put_config, checkpoint, _untyped(serde, record["metadata"]), checkpoint["channel_versions"]
                )
                for task, channel, value in record["writes"]:
                    checkpointer.put_writes(saved, [(channel, _untyped(serde, value))], task)
                n += 1
    finally:
        checkpointer._on_put, checkpointer._on_delete = hooks
    return n


def new_folder(folder: Path) -> None:
    """Create the export folder; TransferError when it exists with something in it."""
    if folder.exists() and any(folder.iterdir()):
        raise TransferError(f"{folder} is not empty: export into a new folder")
    folder.mkdir(parents=True, exist_ok=True)


def dump_vectors(vectors: Any, out: Path) -> int:
    """Every chunk vector with its id, text and metadata, from Chroma or pgvector (run in a worker thread)."""
    n, offset = 0, 0
    with out.open("w") as f:
        while True:
            page = vectors.get(include=["embeddings", "documents", "metadatas"], limit=VECTOR_BATCH, offset=offset)
            for i, vec, doc, meta in zip(
                page["ids"], page["embeddings"], page["documents"], page["metadatas"], strict=True
            ):
                f.write(json.dumps({"id": i, "embedding": [float(x) for x in vec], "document": doc, "metadata": meta}))
                f.write("\n")
            n, offset = n + len(page["ids"]), offset + VECTOR_BATCH
            if len(page["ids"]) < VECTOR_BATCH:
                return n


def load_vectors(vectors: Any, source: Path) -> int:
    """Store the exported vectors (run in a worker thread)."""
    n = 0
    for rows in _batches(source, VECTOR_BATCH):
        vectors.add(
            ids=[r["id"] for r in rows],
            embeddings=[r["embedding"] for r in rows],
            documents=[r["document"] for r in rows],
            metadatas=[r["metadata"] for r in rows],
        )
        n += len(rows)
    return n


def dump_files(files: Any, db: Database, folder: Path) -> int:
    """The documents' kept originals as files named by document id (run in a worker thread)."""
    folder.mkdir(exist_ok=True)
    with db.connection() as conn:
        ids = [r[0] for r in conn.execute("SELECT id FROM documents ORDER BY id")]
    n = 0
    for doc_id in ids:
        if (data := files.get(doc_id)) is not None:
            (folder / doc_id).write_bytes(data)
            n += 1
    return n


def load_files(files: Any, folder: Path) -> int:
    """Keep the exported originals (run in a worker thread)."""
    n = 0
    for path in sorted(folder.iterdir()) if folder.is_dir() else []:
        files.put(path.name, path.read_bytes())
        n += 1
    return n


def write_manifest(folder: Path, manifest: dict) -> None:
    (folder / "manifest.json").write_text(json.dumps({"format": FORMAT, **manifest}, indent=2) + "\n")


def read_manifest(folder: Path) -> dict:
    """The export's manifest; TransferError when the folder is not a Ragline export."""
    try:
        manifest = json.loads((folder / "manifest.json").read_text())
    except (OSError, ValueError):
        raise TransferError(f"{folder} is not a Ragline export (no readable manifest.json)") from None
    if manifest.get("format") != FORMAT:
        raise TransferError(f"{folder} holds a {manifest.get('format')!r} export; this Ragline reads {FORMAT}")
    return manifest


def require_empty(databases: dict[Role, Database]) -> None:
    """TransferError unless the target has no accounts, threads or runs yet (run in a worker thread)."""
    for table in (t for t in TABLES if t.name in TARGET_MUST_BE_EMPTY):
        db = databases[table.role]
        with db.connection() as conn:
            if conn.execute(f"SELECT 1 FROM {table.name} LIMIT 1").fetchone():
                raise TransferError(
                    f"the target already holds {table.name}: import into an empty installation "
                    "(a new RAG_DATA_DIR, or a new Postgres database)"
                )


@asynccontextmanager
async def _installation(settings: Any) -> AsyncIterator[tuple[Storage, Checkpointer, Any, Any]]:
    """What a transfer reads or writes: the storage (tables created), its checkpointer, vector store and originals."""
    from backend.memory.conversations import delete_thread_rows, record_turn
    from backend.rag.files import document_files
    from backend.rag.store import open_vector_store
    from backend.store.checkpointer import checkpointer_for

    async with open_storage(settings) as storage:
        await storage.prepare()
        db, kb = storage.conversations, storage.knowledge
        checkpointer = await db.call(lambda: checkpointer_for(db, record_turn, delete_thread_rows))
        async with open_vector_store(settings, kb, None) as vectors:
            yield storage, checkpointer, vectors, document_files(kb, settings.data_dir / "documents")


async def export_installation(settings: Any, folder: Path) -> dict[str, int]:
    """Write the whole installation the settings point at into a new folder; returns what went, by file."""
    new_folder(folder)
    counts: dict[str, int] = {}
    async with _installation(settings) as (storage, checkpointer, vectors, files):
        databases, db, kb = storage.by_role(), storage.conversations, storage.knowledge
        for table in TABLES:
            d = databases[table.role]
            counts[table.name] = await d.call(lambda t=table, d=d: dump_table(d, t, folder / f"{t.name}.jsonl"))
        counts["checkpoints"] = await db.call(lambda: dump_checkpoints(checkpointer, folder / "checkpoints.jsonl"))
        counts["vectors"] = await kb.call(lambda: dump_vectors(vectors, folder / "vectors.jsonl"))
        counts["files"] = await kb.call(lambda: dump_files(files, kb, folder / "files"))
    write_manifest(folder, {"engine": "postgres" if settings.database_url else "sqlite", "counts": counts})
    return counts


def _rows(folder: Path, table: str) -> Iterator[dict]:
    for rows in _batches(folder / f"{table}.jsonl", VECTOR_BATCH):
        yield from rows


def names_as_one(folder: Path) -> list[str]:
    """Names in an export that this version counts as one (contract.text.fold_name: case beyond ASCII, Unicode
    composition) though an older version stored both: "Été.md" and "été.md" in one collection, which SQLite's
    ASCII-only NOCASE let through. Postgres' unique indexes refuse the second one mid-import, and either engine
    would then answer a mention of them as ambiguous. One line per clash."""
    seen: dict[tuple, list[str]] = {}
    collections = {}
    for row in _rows(folder, "collections"):
        collections[row["id"]] = row["name"]
        if row["kind"] != "personal":
            seen.setdefault(("collection", fold_name(row["name"])), []).append(row["name"])
    for row in _rows(folder, "documents"):
        seen.setdefault(("document", row["collection"], fold_name(row["name"])), []).append(row["name"])
    for row in _rows(folder, "groups"):
        seen.setdefault(("group", fold_name(row["name"])), []).append(row["name"])
    for row in _rows(folder, "users"):
        seen.setdefault(("user", row["email"].lower()), []).append(row["email"])
    clashes = []
    for key, names in seen.items():
        if len(names) > 1:
            where = f" in collection {shown(collections.get(key[1]) or key[1])}" if key[0] == "document" else ""
            clashes.append(f"{key[0]}s {' and '.join(shown(n) for n in names)}{where}")
    return clashes


async def import_installation(settings: Any, folder: Path) -> dict[str, int]:
    """Load an export into the empty installation the settings point at; returns what came, by file. An export
    holding names counted as one (names_as_one) is refused before anything is written."""
    manifest = read_manifest(folder)
    if clashes := names_as_one(folder):
        more = f"; and {len(clashes) - 5} more" if len(clashes) > 5 else ""
        raise TransferError(
            f"nothing was imported: the export holds names this version counts as one (they differ only in case or "
            f"in how accents are encoded): {'; '.join(clashes[:5])}{more}. In the installation you exported, keep "
            "one of each (delete the other document, rename the other collection or group), then export it again "
            "and import the new export"
        )
    counts: dict[str, int] = {}
    async with _installation(settings) as (storage, checkpointer, vectors, files):
        databases, db, kb = storage.by_role(), storage.conversations, storage.knowledge
        await db.call(lambda: require_empty(databases))
        for table in TABLES:
            d = databases[table.role]
            try:
                counts[table.name] = await d.call(lambda t=table, d=d: load_table(d, t, folder / f"{t.name}.jsonl"))
            except d.integrity_error as exc:
                loaded = ", ".join(counts) or "none"
                raise TransferError(
                    f"the target refused a row of {table.name} ({str(exc).splitlines()[0]}); nothing of "
                    f"{table.name} was imported, but the tables before it were ({loaded}): empty the target before "
                    "importing again"
                ) from None
        counts["checkpoints"] = await db.call(lambda: load_checkpoints(checkpointer, folder / "checkpoints.jsonl"))
        counts["vectors"] = await kb.call(lambda: load_vectors(vectors, folder / "vectors.jsonl"))
        counts["files"] = await kb.call(lambda: load_files(files, folder / "files"))
    if counts != manifest["counts"]:
        raise TransferError(f"imported {counts}, but the export holds {manifest['counts']}")
    return counts
