"""Stop: how soon the model request closes after POST /api/runs/{id}/cancel, on the embedded model and Ollama's wire.

Each run streams a long chat answer; after its third token the client posts the cancel route. Measured from that
request: when the route answered (it answers once the run has ended), and when the model server stopped. For the
embedded llama.cpp model, the stop is llama.cpp's own "cancel task" log line (timed as it is written: a thread
tails the log) and the slot's release; for Ollama, the moment the wire-format double (backend/tests/ollama_double,
streaming 20 pieces a second) saw its client leave. The issue's goal is 1 s. Runs one after another.
"""

import argparse
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
from httpx_sse import connect_sse

from backend.main import create_app
from backend.settings import Settings
from bench.lib import report
from bench.lib.llama import stderr_to
from bench.lib.server import serve_in_thread
from bench.lib.stats import median

STORY = "Write a long story about a lighthouse keeper and his dog."
CANCEL_LINE = "stop: cancel task"
RELEASE_LINE = "stop processing"


class LogTail:
    """Lines of a growing file, each stamped with time.monotonic() when it was read (every 2 ms)."""

    def __init__(self, path: Path) -> None:
        self.path, self.lines = path, []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> "LogTail":
        self.path.touch()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        with self.path.open("rb") as f:
            while not self._stop.is_set():
                line = f.readline()
                if line:
                    self.lines.append((time.monotonic(), line.decode(errors="replace")))
                else:
                    time.sleep(0.002)

    def first_after(self, start: float, text: str, timeout: float = 30) -> float | None:
        """Seconds from `start` to the first line containing `text` read after it."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            hit = next((t for t, line in list(self.lines) if t >= start and text in line), None)
            if hit is not None:
                return hit - start
            time.sleep(0.01)
        return None


@dataclass
class Stopped:
    """A run stopped after its third token: when the cancel request went (time.monotonic()), how long the route
    took to answer, its response, and the run's events as the client read them."""

    sent: float
    route_s: float
    response: httpx.Response
    events: list[tuple[str, dict]]

    def summary(self) -> dict:
        return {"event": self.events[-1][0], "answer_words": len(self.events[-1][1].get("answer", "").split())}


def stop_once(client: httpx.Client) -> Stopped:
    """Ask for a long story and post the cancel route at its third token; the stream is read to its end."""
    with connect_sse(client, "POST", "/api/chat/stream", json={"message": STORY, "mode": "chat"}) as source:
        events: list[tuple[str, dict]] = []
        for sse in (e for e in source.iter_sse() if e.data):
            events.append((sse.event, sse.json()))
            if sse.event == "token" and sum(name == "token" for name, _ in events) == 3:
                sent = time.monotonic()
                response = client.post(f"/api/runs/{events[0][1]['run_id']}/cancel")
                answered = time.monotonic() - sent
    return Stopped(sent, answered, response, events)


def embedded(model: str, runs: int, work: Path) -> list[dict]:
    settings = Settings(
        llm_backend="embedded", embedded_model=model, temperature=0.0, max_answer_tokens=300, data_dir=work / model
    )
    log_path, rows = work / f"{model}.log", []
    with (
        LogTail(log_path) as tail,
        stderr_to(log_path),
        serve_in_thread(create_app(settings)) as url,
        httpx.Client(base_url=url, timeout=300) as client,
    ):
        stop_once(client)  # warm-up
        for k in range(runs):
            stopped = stop_once(client)
            assert stopped.response.status_code == 200, stopped.response.text
            stop, free = tail.first_after(stopped.sent, CANCEL_LINE), tail.first_after(stopped.sent, RELEASE_LINE)
            rows.append({"route_s": stopped.route_s, "model_stop_s": stop, "slot_free_s": free, **stopped.summary()})
            report.progress(f"{model} {k + 1}/{runs}: llama.cpp cancelled after {report.ms(stop)}")
    return rows


@contextmanager
def ollama_double() -> Iterator[object]:
    from backend.tests.ollama_double import Reply, serve_ollama

    with serve_ollama() as double:
        double.default_reply = Reply(text="The keeper walked along the shore with his dog. " * 45, delay=0.05)
        yield double


def ollama(runs: int, work: Path) -> list[dict]:
    rows = []
    with ollama_double() as double:
        settings = Settings(llm_backend="ollama", ollama_base_url=double.base_url, data_dir=work / "ollama")
        with serve_in_thread(create_app(settings)) as url, httpx.Client(base_url=url, timeout=60) as client:
            stop_once(client)
            for k in range(runs):
                seen = len(double.stream_ends)
                stopped = stop_once(client)
                assert stopped.response.status_code == 200, stopped.response.text
                deadline = time.monotonic() + 30
                while len(double.stream_ends) == seen and time.monotonic() < deadline:
                    time.sleep(0.01)
                end = double.stream_ends[-1] if len(double.stream_ends) > seen else None
                stop = end.at - stopped.sent if end and end.client_left else None
                row = {"route_s": stopped.route_s, "model_stop_s": stop, "slot_free_s": None}
                rows.append(row | stopped.summary())
                report.progress(f"ollama double {k + 1}/{runs}: stream closed after {report.ms(stop)}")
    return rows


def summary(rows: list[dict]) -> dict:
    stops = [r["model_stop_s"] for r in rows if r["model_stop_s"] is not None]
    return {
        "runs": len(rows),
        "stopped_events": sum(r["event"] == "stopped" for r in rows),
        "route_p50_s": median(r["route_s"] for r in rows),
        "model_stop_p50_s": median(stops) if stops else None,
        "model_stop_max_s": max(stops, default=None),
        "model_never_stopped": len(rows) - len(stops),
        "within_1s": sum(s <= 1.0 for s in stops),
        "rows": rows,
    }


def main(argv: list[str] | None = None) -> int:
    """Stop each backend `--runs` times; print p50/max of the model's stop and the route's answer."""
    parser = argparse.ArgumentParser(prog="bench.stop", description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--model", action="append", help="embedded model (repeatable; default qwen2.5-coder-0.5b)")
    parser.add_argument("--no-ollama", action="store_true", help="skip the Ollama double")
    report.add_output_args(parser, "stop")
    args = parser.parse_args(argv)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for model in args.model or ["qwen2.5-coder-0.5b"]:
            results[f"embedded {model}"] = summary(embedded(model, args.runs, Path(tmp)))
        if not args.no_ollama:
            results["ollama (wire double)"] = summary(ollama(args.runs, Path(tmp)))
    rows = [
        [name, s["runs"], s["stopped_events"], report.ms(s["route_p50_s"]), report.ms(s["model_stop_p50_s"]),
         report.ms(s["model_stop_max_s"]), f"{s['within_1s']}/{s['runs']}"]
        for name, s in results.items()
    ]  # fmt: skip
    headers = ["backend", "runs", "ended `stopped`", "route answered p50", "model stopped p50", "max", "within 1 s"]
    text = report.table("Stop: cancel request -> the model request closed", headers, rows, args.markdown)
    report.publish(text + f"\n\nload average {report.load()}", results, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
