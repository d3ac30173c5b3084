"""Open WebUI 0.12.4 as a client of /v1: models, a streamed answer, and in a browser its status and sources.

Ragline runs on the scripted fake model (RAG_LLM_BACKEND=fake: deterministic, it quotes passages with [S1]
markers) with the sample documents. Open WebUI is installed once into ~/.cache/ragline/clients/open-webui (a venv
of about 7.4 GB; `pip install open-webui==0.12.4` takes about 3 minutes on a fast link) and started offline with
Ragline as its OpenAI connection. The benchmark asks through Open WebUI's own POST /api/chat/completions and
records that stream and Ragline's /v1 stream for the same body (--record writes them as the fixtures of
backend/tests/api/test_openwebui_wire.py), then asks in headless Chromium (frontend/scripts/openwebui-check.mjs)
and screenshots the answer into bench/results/.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from bench.lib import ROOT, SAMPLE_DOCS, report
from bench.lib.server import free_port, serve_in_process, stop

VERSION = "0.12.4"
CACHE = Path.home() / ".cache" / "ragline" / "clients" / "open-webui"
FIXTURES = ROOT / "backend" / "tests" / "fixtures" / "openwebui"
QUESTION = "How many days of annual leave do employees get?"
EXPECTED = "28 days"
MESSAGES = [{"role": "user", "content": QUESTION}]
OFFLINE_ENV = {  # Open WebUI without network, accounts, Ollama, or its own embedding model and side tasks
    "OFFLINE_MODE": "true",
    "HF_HUB_OFFLINE": "1",
    "ENABLE_OLLAMA_API": "false",
    "WEBUI_AUTH": "False",
    "OPENAI_API_KEY": "unused",
    "ENABLE_PERSISTENT_CONFIG": "false",
    "RAG_EMBEDDING_MODEL_AUTO_UPDATE": "false",
    "RAG_RERANKING_MODEL_AUTO_UPDATE": "false",
    "BYPASS_EMBEDDING_AND_RETRIEVAL": "true",
    "RAG_EMBEDDING_ENGINE": "openai",
    "ENABLE_VERSION_UPDATE_CHECK": "false",
    "ENABLE_TITLE_GENERATION": "false",
    "ENABLE_TAGS_GENERATION": "false",
    "ENABLE_FOLLOW_UP_GENERATION": "false",
    "ENABLE_AUTOCOMPLETE_GENERATION": "false",
    "WEBUI_SECRET_KEY": "bench-clients",
    "ANONYMIZED_TELEMETRY": "false",
    "SCARF_NO_ANALYTICS": "true",
    "DO_NOT_TRACK": "true",
}


def install(cache: Path) -> tuple[Path, float | None]:
    """The open-webui command, installed into `cache` first unless it is there; (path, install seconds or None)."""
    command = cache / "bin" / "open-webui"
    if command.exists():
        return command, None
    started = time.monotonic()
    report.progress(f"installing open-webui=={VERSION} into {cache} (about 3 min, 7.4 GB)")
    subprocess.run([sys.executable, "-m", "venv", str(cache)], check=True)
    subprocess.run([str(cache / "bin" / "pip"), "install", "-q", f"open-webui=={VERSION}"], check=True)
    return command, time.monotonic() - started


def start_open_webui(command: Path, ragline_url: str, workdir: Path) -> tuple[subprocess.Popen, str, Path]:
    """Open WebUI on a free port with Ragline's /v1 as its OpenAI connection; (process, url, log path)."""
    port, data = free_port(), workdir / "open-webui-data"
    data.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, **OFFLINE_ENV, "DATA_DIR": str(data), "OPENAI_API_BASE_URL": f"{ragline_url}/v1"}
    log_path = workdir / "open-webui.log"
    with log_path.open("wb") as log:
        cmd = [str(command), "serve", "--host", "127.0.0.1", "--port", str(port)]
        proc = subprocess.Popen(cmd, cwd=workdir, env=env, stdout=log, stderr=log)
    return proc, f"http://127.0.0.1:{port}", log_path


def wait_up(url: str, proc: subprocess.Popen, timeout: float) -> None:
    """Poll Open WebUI's /health until it answers; fail if the process exits first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(1)
    raise TimeoutError(f"Open WebUI at {url} did not start in {timeout}s (exit code {proc.poll()})")


def raw_stream(url: str, body: dict, headers: dict[str, str]) -> tuple[str, float]:
    """POST a streamed completion; the response body as sent (SSE text) and the seconds it took."""
    started = time.monotonic()
    with httpx.stream("POST", url, json=body, headers=headers, timeout=300) as response:
        response.raise_for_status()
        text = "".join(response.iter_text())
    return text, time.monotonic() - started


def browser_check(url: str, screenshot: Path) -> dict:
    """Ask in headless Chromium; what the page showed (answer, status line, sources), as the script prints it."""
    script = ROOT / "frontend" / "scripts" / "openwebui-check.mjs"
    cmd = ["node", str(script), url, "ragline", QUESTION, EXPECTED, str(screenshot)]
    done = subprocess.run(cmd, cwd=ROOT / "frontend", capture_output=True, text=True, timeout=600)
    lines = done.stdout.strip().splitlines()
    return json.loads(lines[-1]) if lines else {"error": done.stderr[-2000:]}


def ask(ragline_url: str, webui_url: str, results: dict) -> tuple[str, str]:
    """Models listed, then the question through Open WebUI and straight to Ragline; both raw streams."""
    token = httpx.post(f"{webui_url}/api/v1/auths/signin", json={"email": "", "password": ""}, timeout=60)
    auth = {"Authorization": f"Bearer {token.json()['token']}"}
    models = httpx.get(f"{webui_url}/api/models", headers=auth, timeout=120).json()["data"]
    results["models"] = [m["id"] for m in models]
    body = {"model": "ragline", "stream": True, "stream_options": {"include_usage": True}, "messages": MESSAGES}
    webui_sse, results["webui_question_s"] = raw_stream(f"{webui_url}/api/chat/completions", body, auth)
    ragline_sse, results["ragline_question_s"] = raw_stream(f"{ragline_url}/v1/chat/completions", body, {})
    return webui_sse, ragline_sse


def render(results: dict) -> str:
    """The short report: timings, models, what each stream and the browser showed."""
    browser, models = results.get("browser") or {}, results.get("models", [])
    rows = [
        ["install", "reused" if results["install_s"] is None else report.secs(results["install_s"])],
        ["Ragline startup (fake model, ingest excluded)", report.secs(results["ragline_startup_s"])],
        ["Open WebUI startup", report.secs(results["webui_startup_s"])],
        ["question via Open WebUI /api/chat/completions", report.secs(results.get("webui_question_s"))],
        ["question via Ragline /v1", report.secs(results.get("ragline_question_s"))],
        ["models Open WebUI lists", f"{len(models)}: {', '.join(models[:2])}, ..." if models else "-"],
        ["browser: answer shown", browser.get("answer")],
        ["browser: status line", browser.get("status")],
        ["browser: sources button", browser.get("sources_button")],
        ["browser: error", browser.get("error") or "-"],
    ]
    return report.table(f"Open WebUI {VERSION} on Ragline /v1", ["check", "result"], rows)


def run(args: argparse.Namespace, workdir: Path) -> dict:
    """Everything, in order; the results dict (also when a step fails part way, with `error`)."""
    results: dict = {"question": QUESTION}
    command, results["install_s"] = install(args.cache)
    env = {"RAG_DATA_DIR": str(workdir / "ragline" / "data"), "RAG_LLM_BACKEND": "fake"}
    with serve_in_process(env, sorted(SAMPLE_DOCS.iterdir()), timeout=300) as (ragline_url, server):
        results["ragline_startup_s"] = server.startup_s
        started = time.monotonic()
        proc, webui_url, results["webui_log"] = start_open_webui(command, ragline_url, workdir)
        try:
            wait_up(webui_url, proc, args.timeout)
            results["webui_startup_s"] = time.monotonic() - started
            webui_sse, ragline_sse = ask(ragline_url, webui_url, results)
            if args.record:
                FIXTURES.mkdir(parents=True, exist_ok=True)
                (FIXTURES / "ragline-v1.sse").write_text(ragline_sse)
                (FIXTURES / "openwebui-api.sse").write_text(webui_sse)
            if not args.no_browser:
                results["screenshot"] = str(report.RESULTS / "openwebui-answer.png")
                report.RESULTS.mkdir(parents=True, exist_ok=True)
                results["browser"] = browser_check(webui_url, Path(results["screenshot"]))
        finally:
            stop(proc)
    return results


def main(argv: list[str] | None = None) -> int:
    """Run the check; print the report and write the JSON (and with --record, the fixtures)."""
    parser = argparse.ArgumentParser(prog="bench.clients", description=__doc__.split("\n")[0])
    parser.add_argument("--cache", type=Path, default=CACHE, help="the Open WebUI venv (installed when missing)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds Open WebUI may take to start")
    parser.add_argument("--record", action="store_true", help=f"write both raw streams into {FIXTURES}")
    parser.add_argument("--no-browser", action="store_true", help="skip the Chromium check")
    report.add_output_args(parser, "clients")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ragline-clients-") as tmp:
        results = run(args, Path(tmp))
    report.publish(render(results), results, args.json)
    browser = results.get("browser")
    return 0 if browser is None or (browser.get("answer") and not browser.get("error")) else 1


if __name__ == "__main__":
    sys.exit(main())
