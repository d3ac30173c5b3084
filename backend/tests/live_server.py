"""Real HTTP servers for tests that need true streaming, disconnects or process kills."""

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import uvicorn
from fastapi import FastAPI

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    """A TCP port nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(base_url: str, timeout: float = 60.0) -> None:
    """Poll /api/health until it answers 200."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{base_url}/api/health", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise TimeoutError(f"server at {base_url} did not become healthy in {timeout}s")


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


@contextmanager
def serve_in_process(env: dict[str, str]) -> Iterator[tuple[str, subprocess.Popen]]:
    """Run `uvicorn --factory backend.main:create_app` as a child process with extra env; yields (url, process)."""
    port = free_port()
    cmd = [sys.executable, "-m", "uvicorn", "--factory", "backend.main:create_app", "--port", str(port)]
    proc = subprocess.Popen(cmd, cwd=ROOT, env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base_url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(base_url)
        yield base_url, proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=30)
