"""Auth overhead: p50 of a read and a write with RAG_AUTH=off, a session cookie (+CSRF) and an API key."""

import argparse
import tempfile
import time
from pathlib import Path

import httpx

from backend.contract.auth import CSRF_HEADER
from backend.main import create_app
from backend.settings import Settings
from bench.lib.report import add_output_args, load, ms, progress, table, write_json
from bench.lib.server import serve_in_thread
from bench.lib.stats import dist, minus

PASSWORD = "correct horse battery"


def _settings(data: Path, auth: str) -> Settings:
    return Settings(
        llm_backend="fake", data_dir=data, fake_tokens_per_second=0.0, flashrank_dir=data / "none", auth=auth
    )


def _thread(client: httpx.Client, headers: dict[str, str]) -> str:
    """A thread to rename (one chat turn on the fake model)."""
    with client.stream("POST", "/api/chat/stream", json={"message": "Hello", "mode": "chat"}, headers=headers) as r:
        for line in r.iter_lines():
            if line.startswith("data:") and '"thread_id"' in line:
                return line.split('"thread_id":"')[1].split('"')[0]
    raise RuntimeError("no thread id in the stream")


def _time(client: httpx.Client, method: str, url: str, headers: dict[str, str], **kw) -> float:
    start = time.perf_counter()
    response = client.request(method, url, headers=headers, **kw)
    elapsed = time.perf_counter() - start
    if response.status_code >= 400:
        raise RuntimeError(f"{method} {url}: {response.status_code} {response.text}")
    return elapsed


def measure(requests: int, root: Path) -> dict:
    """Timings of GET /api/threads and PATCH /api/threads/{id} per mode, requests interleaved across the modes."""
    off_app, local_app = create_app(_settings(root / "off", "off")), create_app(_settings(root / "local", "local"))
    with serve_in_thread(off_app) as off_url, serve_in_thread(local_app) as local_url:
        off, cookie, keyed = (httpx.Client(base_url=url) for url in (off_url, local_url, local_url))
        signed = cookie.post("/api/auth/setup", json={"email": "ann@team.org", "password": PASSWORD}).json()
        csrf = {CSRF_HEADER: signed["csrf_token"]}
        key = cookie.post("/api/keys", json={"name": "bench"}, headers=csrf).json()["key"]
        modes = {"off": (off, {}), "session": (cookie, csrf), "api key": (keyed, {"Authorization": f"Bearer {key}"})}
        threads = {name: _thread(client, headers) for name, (client, headers) in modes.items()}
        samples: dict[str, dict[str, list[float]]] = {r: {m: [] for m in modes} for r in ("read", "write")}
        for n in range(requests):
            for name, (client, headers) in modes.items():
                samples["read"][name].append(_time(client, "GET", "/api/threads", headers))
                url = f"/api/threads/{threads[name]}"
                samples["write"][name].append(_time(client, "PATCH", url, headers, json={"title": f"t{n}"}))
            if n % 100 == 0:
                progress(f"{n}/{requests} rounds")
        for client in (off, cookie, keyed):
            client.close()
    return {route: {mode: dist(values) for mode, values in by_mode.items()} for route, by_mode in samples.items()}


def main(argv: list[str] | None = None) -> int:
    """Run the measurement, print the table, write the JSON."""
    parser = argparse.ArgumentParser(prog="bench auth", description=__doc__)
    parser.add_argument("--requests", type=int, default=300, help="requests per route and mode")
    add_output_args(parser, "auth")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ragline-bench-auth-") as root:
        results = measure(args.requests, Path(root))
    rows = []
    labels = {"read": "GET /api/threads", "write": "PATCH /api/threads/{id}"}
    for route, by_mode in results.items():
        base = by_mode["off"]["p50"]
        for mode, d in by_mode.items():
            rows.append([labels[route], mode, ms(d["p50"]), ms(d["p95"]), ms(minus(d["p50"], base))])
    title = f"Auth overhead per request, {args.requests} requests each, over HTTP on uvicorn (load {load()})"
    print(table(title, ["route", "auth", "p50", "p95", "p50 - off"], rows, args.markdown))
    print(f"wrote {write_json(args.json, {'requests': args.requests, 'results': results})}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
