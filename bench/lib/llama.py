"""llama.cpp's own timings: its log lines per task, and a raw server to replay requests on for comparison."""

import os
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from httpx_sse import connect_sse

from backend.llm.embedded import llama_server
from backend.settings import Settings

# "slot print_timing: id  1 | task 9 | prompt eval time =  301.94 ms /  6 tokens (...)" and "... | eval time = ..."
TIMING_RE = re.compile(r"id\s+(\d+) \| task (\d+) \|\s+(prompt eval|eval) time =\s*([\d.]+) ms /\s*(\d+) tokens")


# "slot release: id  0 | task 0 | stop processing: n_tokens = 792, truncated = 0": prompt + decoded - 1 tokens
RELEASE_RE = re.compile(r"id\s+(\d+) \| task (\d+) \| stop processing: n_tokens = (\d+)")


def parse_timings(text: str) -> list[dict]:
    """Per finished llama.cpp task, in log order: slot, prompt tokens (all, and evaluated, i.e. not from the KV
    cache) and time."""
    tasks: dict[int, dict] = {}
    released: dict[int, int] = {int(task): int(n) for _, task, n in RELEASE_RE.findall(text)}
    for slot, task, kind, ms, n in TIMING_RE.findall(text):
        row = tasks.setdefault(int(task), {"slot": int(slot), "task": int(task)})
        if kind == "prompt eval":
            row |= {"evaluated": int(n), "prompt_ms": float(ms)}
        else:
            row |= {"decoded": int(n), "decode_ms": float(ms)}
    for task, row in tasks.items():
        if task in released and "decoded" in row:
            row["prompt_tokens"] = released[task] - row["decoded"] + 1  # the last token sampled is not in the cache
    return [row for row in tasks.values() if "evaluated" in row]


class LlamaLog:
    """A log file llama.cpp writes to; `calls()` parses the tasks finished since the last call."""

    def __init__(self, path: Path | None) -> None:
        self.path, self.offset = path, 0

    def calls(self) -> list[dict]:
        """The tasks whose timing lines were written since the last read (a half-written line waits)."""
        if self.path is None or not self.path.exists():
            return []
        with self.path.open("rb") as f:
            f.seek(self.offset)
            data = f.read()
        complete = data[: data.rfind(b"\n") + 1]
        self.offset += len(complete)
        return parse_timings(complete.decode(errors="replace"))


@contextmanager
def stderr_to(path: Path | None) -> Iterator[None]:
    """Send file descriptor 2 (where llama.cpp logs) to a file for the duration; nothing when path is None."""
    if path is None:
        yield
        return
    saved = os.dup(2)
    with path.open("ab") as f:
        os.dup2(f.fileno(), 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


@contextmanager
def raw_server(model_path: Path, settings: Settings, log_path: Path) -> Iterator[str]:
    """The product's llama.cpp server (same slots, ctx and prompt cache as `settings` give) logging to log_path;
    yields its URL."""
    with stderr_to(log_path), llama_server(model_path, settings) as url:
        yield url


def raw_completion(http: httpx.Client, url: str, payload: dict) -> dict:
    """Send one OpenAI chat request body to llama.cpp, streamed, and time it; usage and timings from the last chunk."""
    body = {**payload, "stream": True, "stream_options": {"include_usage": True}}
    t0, first, final = time.monotonic(), None, {}
    with connect_sse(http, "POST", f"{url}/v1/chat/completions", json=body) as source:
        source.response.raise_for_status()
        for sse in source.iter_sse():
            if sse.data == "[DONE]":
                continue
            chunk = sse.json()
            if first is None and ((chunk.get("choices") or [{}])[0].get("delta") or {}).get("content"):
                first = time.monotonic()
            if chunk.get("usage") or chunk.get("timings"):
                final = chunk
    usage, timings = final.get("usage") or {}, final.get("timings") or {}
    return {
        "ttft_s": None if first is None else first - t0,
        "total_s": time.monotonic() - t0,
        "prompt_tokens": usage.get("prompt_tokens"),
        "completion_tokens": usage.get("completion_tokens"),
        "prompt_n": timings.get("prompt_n"),
        "cache_n": timings.get("cache_n"),
        "decode_tokens_per_s": timings.get("predicted_per_second"),
    }


def warm_page_cache(path: Path) -> None:
    """Read a model file once so every server that loads it afterwards finds it in the page cache."""
    with path.open("rb") as f:
        while f.read(16 << 20):
            pass
