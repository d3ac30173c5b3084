"""A llama.cpp server from the xllamacpp wheel in a child process: a stand-in for any OpenAI-compatible model
server (RAG_LLM_BACKEND=openai) that tests and benchmarks can start, watch through its log, and stop.

`python -m bench.lib.llama_process MODEL.gguf` prints the server's URL on its first line, then serves until it
is terminated; llama.cpp logs to stderr.
"""

import argparse
import os
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from bench.lib import ROOT


def serve(model: Path, ctx: int, parallel: int, threads: int, embedding: bool) -> None:
    """Start llama.cpp's server on a free loopback port, print its URL and serve until a signal ends the process."""
    import xllamacpp  # loaded here: importing it pulls in the native library

    params = xllamacpp.CommonParams()
    params.model.path = str(model)
    params.n_ctx = ctx * parallel
    params.n_parallel = parallel
    params.cpuparams.n_threads = params.cpuparams_batch.n_threads = threads or os.cpu_count() or 2
    params.port = 0
    params.embedding = embedding
    if embedding:  # one vector per input, as /v1/embeddings returns it
        params.pooling_type = int(xllamacpp.llama_pooling_type.LLAMA_POOLING_TYPE_MEAN)
    server = xllamacpp.Server(params)
    print(server.listening_address, flush=True)
    signal.sigwait({signal.SIGTERM, signal.SIGINT})
    del server


class LlamaProcess(subprocess.Popen):
    """The child process; `log()` reads what llama.cpp wrote so far."""

    log_path: Path
    url: str = ""

    def log(self) -> str:
        """Everything llama.cpp logged so far."""
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


def _first_line(proc: LlamaProcess, deadline: float) -> str:
    """The child's first stdout line (its URL), or an error with the log's tail when it dies or hangs."""
    assert proc.stdout is not None
    with selectors.DefaultSelector() as waiting:  # epoll: no limit on descriptor numbers, unlike select()
        waiting.register(proc.stdout, selectors.EVENT_READ)
        while time.monotonic() < deadline and proc.poll() is None:
            if waiting.select(0.2):
                line = proc.stdout.readline().decode().strip()
                if line:
                    return line
    raise RuntimeError(f"llama.cpp child did not start (exit code {proc.poll()}); log tail:\n{proc.log()[-3000:]}")


@contextmanager
def serve_llama_process(
    model: Path, log_path: Path, ctx: int = 2048, parallel: int = 1, threads: int = 0, embedding: bool = False
) -> Iterator[LlamaProcess]:
    """Run the server as a child process for the block; yields it once /health answers 200 (its URL in `.url`)."""
    cmd = [sys.executable, "-m", "bench.lib.llama_process", str(model), f"--ctx={ctx}", f"--parallel={parallel}"]
    cmd += [f"--threads={threads}"] + (["--embedding"] if embedding else [])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("wb") as log:
        proc = LlamaProcess(cmd, stdout=subprocess.PIPE, stderr=log, env=env)
    proc.log_path = log_path
    try:
        deadline = time.monotonic() + 120
        proc.url = _first_line(proc, deadline)
        while httpx.get(f"{proc.url}/health", timeout=5).status_code != 200:  # 503 while the model loads
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError(f"llama.cpp at {proc.url} did not become healthy; log tail:\n{proc.log()[-3000:]}")
            time.sleep(0.1)
        yield proc
    finally:
        stop(proc)


def stop(proc: subprocess.Popen) -> None:
    """SIGTERM, then SIGKILL if it does not exit within 10 s."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    if proc.stdout:
        proc.stdout.close()


def main(argv: list[str] | None = None) -> None:
    """Parse arguments and serve."""
    parser = argparse.ArgumentParser(prog="python -m bench.lib.llama_process")
    parser.add_argument("model", type=Path, help="GGUF file")
    parser.add_argument("--ctx", type=int, default=2048, help="context per slot, in tokens")
    parser.add_argument("--parallel", type=int, default=1, help="slots")
    parser.add_argument("--threads", type=int, default=0, help="CPU threads; 0: all cores")
    parser.add_argument("--embedding", action="store_true", help="serve /v1/embeddings (and no completions)")
    args = parser.parse_args(argv)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})  # llama.cpp's threads inherit it
    serve(args.model, args.ctx, args.parallel, args.threads, args.embedding)


if __name__ == "__main__":
    main()
