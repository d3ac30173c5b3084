"""Starting the app for benchmarks and tests: in a thread, as a child process (documents ingested), or in-process."""

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from asgi_lifespan import LifespanManager
from fastapi import FastAPI

from bench.lib import ROOT

APP_FACTORY = "backend.main:create_app"
KEPT_SETTINGS = ("RAG_CACHE_DIR",)  # where the model files are; every other RAG_* comes from the caller's `env`


def free_port() -> int:
    """A loopback TCP port nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(base_url: str, timeout: float = 60.0, proc: "ServerProcess | None" = None) -> None:
    """Poll /api/health until it answers 200; fail early, with the log's tail, when the child process exits."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and (proc is None or proc.poll() is None):
        try:
            if httpx.get(f"{base_url}/api/health", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    tail = "" if proc is None else f" (exit code {proc.poll()}); log tail:\n{proc.log()[-3000:]}"
    raise TimeoutError(f"server at {base_url} did not become healthy in {timeout}s{tail}")


@contextmanager
def serve_in_thread(app: FastAPI) -> Iterator[str]:
    """Run the app with uvicorn in a background thread (lifespan included); yields its base URL."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    base_url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(base_url)
        yield base_url
    finally:
        server.should_exit = True
        thread.join(timeout=30)


class ServerProcess(subprocess.Popen):
    """A server child process whose output goes to a log file, read with `log()`."""

    log_path: Path
    ingested: str = ""  # the ingest command's summary line, when documents were ingested first
    startup_s: float = 0.0  # process start -> healthy

    def log(self) -> str:
        """Everything the server logged so far."""
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


def child_env(env: dict[str, str]) -> dict[str, str]:
    """The caller's environment without its RAG_* settings (but the cache dir), the repository importable, plus env."""
    inherited = {k: v for k, v in os.environ.items() if not k.startswith("RAG_") or k in KEPT_SETTINGS}
    inherited.pop("OLLAMA_HOST", None)
    path = os.pathsep.join(p for p in (str(ROOT), inherited.get("PYTHONPATH", "")) if p)
    return {**inherited, "PYTHONPATH": path, **env}


def ingest(env: dict[str, str], paths: Sequence[Path], cwd: Path) -> str:
    """Load documents into the data dir with `backend.cli ingest`, as `./scripts/start` does; its summary line."""
    cli = [sys.executable, "-m", "backend.cli", "ingest", "--if-empty", *map(str, paths)]
    done = subprocess.run(cli, cwd=cwd, env=env, check=True, capture_output=True, text=True)
    return done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""


@contextmanager
def serve_in_process(
    env: dict[str, str], ingest_paths: Sequence[Path] = (), factory: str = APP_FACTORY, timeout: float = 60.0
) -> Iterator[tuple[str, ServerProcess]]:
    """Run `uvicorn --factory <factory>` as a child process with env (RAG_DATA_DIR required); yields (url, process).

    It runs in the data dir's parent folder (no .env file of the repository is read) and logs to a file there;
    `ingest_paths` are ingested first, as `./scripts/start` ingests the sample documents.
    """
    full_env = child_env(env)
    workdir = Path(full_env["RAG_DATA_DIR"]).parent
    workdir.mkdir(parents=True, exist_ok=True)
    ingested = ingest(full_env, ingest_paths, workdir) if ingest_paths else ""
    port, started = free_port(), time.monotonic()
    cmd = [sys.executable, "-m", "uvicorn", "--factory", factory, "--host", "127.0.0.1", "--port", str(port)]
    log_path = workdir / f"server-{port}.log"
    with log_path.open("wb") as log:
        proc = ServerProcess([*cmd, "--no-access-log"], cwd=workdir, env=full_env, stdout=log, stderr=log)
    proc.log_path, proc.ingested = log_path, ingested
    base_url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(base_url, timeout, proc)
        proc.startup_s = time.monotonic() - started
        yield base_url, proc
    finally:
        stop(proc)


def stop(proc: subprocess.Popen) -> None:
    """Graceful uvicorn shutdown (SIGINT runs the lifespan's exit), then SIGTERM, then SIGKILL."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
        if proc.poll() is not None:
            return
        proc.send_signal(sig)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            continue


@asynccontextmanager
async def asgi_client(app: Any, wrap: Any = None, startup_timeout: float = 300.0) -> AsyncIterator[httpx.AsyncClient]:
    """The app started in this process (lifespan included) and a client calling it over httpx.ASGITransport.

    `wrap` is an ASGI wrapper of the app to send the requests to instead (it must call the app).
    """
    async with LifespanManager(app, startup_timeout=startup_timeout, shutdown_timeout=startup_timeout) as manager:
        transport = httpx.ASGITransport(app=wrap or manager.app)
        async with httpx.AsyncClient(transport=transport, base_url="http://bench", timeout=900) as client:
            yield client


class SendClock:
    """ASGI wrapper noting when each response body chunk leaves the app (the transport buffers the body)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.chunks: list[tuple[float, bytes]] = []

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        """Pass the request on, stamping every body chunk the app sends."""

        async def timed(message: dict) -> None:
            if message["type"] == "http.response.body":
                self.chunks.append((time.perf_counter(), message.get("body", b"")))
            await send(message)

        await self.app(scope, receive, timed if scope["type"] == "http" else send)

    def first(self, marker: bytes) -> float | None:
        """When the first chunk containing `marker` was sent."""
        return next((t for t, body in self.chunks if marker in body), None)
