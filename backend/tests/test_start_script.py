"""./scripts/start refuses ports another server holds, before installing or starting anything."""

import os
import socket
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_start_when_another_server_holds_the_api_port_then_it_says_so_and_exits_instead_of_saying_ready():
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        env = {**os.environ, "RAG_PORT": str(port), "RAGLINE_UI_PORT": "1"}
        run = subprocess.run([ROOT / "scripts" / "start"], env=env, capture_output=True, text=True, timeout=60)
    assert run.returncode == 1
    assert f"error: port {port} on 127.0.0.1 is in use (another Ragline?)" in run.stderr
    assert "Ragline is ready" not in run.stdout + run.stderr  # a tester's second instance said so; its UI had died
