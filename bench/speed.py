"""Time to first token of first turns, follow-ups, thread switches and restarts, and 4 users at once (embedded model).

One run per model, alone on the machine: the app on the embedded model over the sample corpus, each turn through
`POST /api/chat/stream`, with llama.cpp's own log read after every turn for the prompt tokens of each model call
(all of them, and the part evaluated rather than taken from the KV cache) and its prompt-evaluation time. The app
runs with the call recorder (bench.lib.recorder), so each turn's answer call is timed where the app makes it: the
model's own time to first token for the identical final prompt, in the slot's cache state at that moment, and
Ragline's share of the API's time to first token is everything else (the steps before the call, and after the
model's first token the PII gate and the SSE frame).

Sequence on thread A: first turn, follow-up; then first turns on B and C (with 2 slots, the third conversation
evicts A's slot); A's follow-up after the switch; a first turn on S stopped at its third token (the UI's Stop) and
the same question asked again; the server is restarted on the same data dir; A's follow-up
after the restart. Then 4 users ask first questions at once: queue wait (request -> the generator starts) and TTFT.
Ratios are to A's first turn, measured in the same run. Before the restart, the report half of bench.answers' own
questions (none used to tune anything here) are asked one by one, each as the first turn of a fresh thread: the
p50 time to first token of first turns over the sample corpus (turns answered without the model, such as an FAQ
hit, are counted apart).
"""

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

from bench.answers import own_items
from bench.lib import SAMPLE_DOCS, report
from bench.lib.llama import LlamaLog
from bench.lib.recorder import FACTORY, recorded_calls
from bench.lib.server import serve_in_process
from bench.lib.sse import Turn, client, stream_turn
from bench.lib.stats import median, ratio

A_FIRST = ("A", "What does the travel policy say about hotels and meals on a business trip?")
A_FOLLOW = ("A", "Is alcohol covered by that meal limit?")
SWITCH = [("B", "How long must passwords be under the IT security policy?"), ("C", "Where is the office kitchen?")]
A_AFTER_SWITCH = ("A", "And who approves a trip abroad?")
A_AFTER_RESTART = ("A", "What about taxis from the airport?")
STOPPED = ("S", "Which damage is excluded from the Zephyr-9 warranty?")  # stopped at its third token, then asked again
STOP_AT_TOKEN = 3
CONCURRENT = [
    ("U1", "How many leave days do employees get?"),
    ("U2", "What is the Zephyr-9 warranty?"),
    ("U3", "What should a new hire do on the first day?"),
    ("U4", "How often does the Zephyr-9 need servicing?"),
]


async def ask(base: str, thread: str, message: str) -> Turn:
    async with client() as c:
        return await stream_turn(c, f"{base}/api/chat/stream", {"message": message, "thread_id": thread, "mode": "rag"})


async def ask_and_stop(base: str, thread: str, message: str) -> Turn:
    """Ask, and post the run's cancel route at the answer's STOP_AT_TOKEN-th token, as the UI's Stop button does; the
    stream is read to its end."""
    async with client() as c:

        async def stop_at_token(turn: Turn) -> None:
            name = turn.events[-1][0]
            if name == "token" and turn.n_tokens == STOP_AT_TOKEN:
                await c.post(f"{base}/api/runs/{turn.events[0][1]['run_id']}/cancel")

        body = {"message": message, "thread_id": thread, "mode": "rag"}
        return await stream_turn(c, f"{base}/api/chat/stream", body, on_event=stop_at_token)


def answer_call(turn: Turn, recorded: list[dict]) -> dict | None:
    """The generator's model call of this turn, as the recorder stamped it (time.monotonic() of the app process, the
    same clock as the client's on Linux)."""
    return next((c for c in reversed(recorded) if c["node"] == "generator" and c["t_start"] >= turn.t_send), None)


def up_to_answer(calls: list[dict]) -> list[dict]:
    """A turn's logged model calls up to its answer: the answerable check's one-token verdict, asked after the
    answer has streamed, is no part of the time to first token."""
    last = max((i for i, c in enumerate(calls) if c.get("decoded", 0) > 1), default=len(calls) - 1)
    return calls[: last + 1]


def measured(label: str, turn: Turn, calls: list[dict], recorded: list[dict] | None = None) -> dict:
    """A turn's TTFT next to llama.cpp's prompt time and tokens for the model calls made before its first token,
    and next to the answer call's own time to first token (the same prompt, seen from where the app sends it)."""
    first, calls = turn.ttft, up_to_answer(calls)
    generator_start = next((t for n, d, t in turn.events if n == "status" and d.get("node") == "generator"), None)
    call = answer_call(turn, recorded or [])
    model_ttft = call["t_first_token"] - call["t_start"] if call and call["t_first_token"] else None
    return {
        "turn": label,
        "ttft_s": first,
        "queue_wait_s": generator_start - turn.t_send if generator_start else None,
        "calls": len(calls),
        "prompt_tokens": sum(c.get("prompt_tokens", 0) for c in calls),
        "evaluated_tokens": sum(c.get("evaluated", 0) for c in calls),
        "llama_prompt_s": sum(c.get("prompt_ms", 0.0) for c in calls) / 1000,
        "model_ttft_s": model_ttft,
        "ragline_s": first - model_ttft if first is not None and model_ttft is not None else None,
        "before_model_s": call["t_start"] - turn.t_send if call else None,
        # the model's first token -> the client's first token event: the PII gate holds the first word until the
        # next token shows where it ends, so this is about one generation step (the second token's gap)
        "after_first_token_s": turn.t_send + first - call["t_first_token"]
        if call and first and call["t_first_token"]
        else None,
        "step_s": call["t_second_token"] - call["t_first_token"] if call and call.get("t_second_token") else None,
        "answer": ((turn.done or {}).get("answer") or turn.error or "")[:60],
    }


def first_turn_questions(limit: int) -> list[str]:
    """Questions of the report half of bench.answers' own set, answerable ones first."""
    items = sorted((i for i in own_items() if i.split == "report"), key=lambda i: not i.answerable)
    return [i.question for i in items[:limit]]


def first_turns_summary(turns: list[dict]) -> dict:
    """p50 and max TTFT of the first turns the model answered, and how many it did not (early answers)."""
    by_model = [t for t in turns if t["model_ttft_s"] is not None and t["ttft_s"] is not None]
    return {
        "asked": len(turns),
        "answered_by_model": len(by_model),
        "ttft_p50_s": median(t["ttft_s"] for t in by_model) if by_model else None,
        "ttft_max_s": max((t["ttft_s"] for t in by_model), default=None),
        "evaluated_p50": median(t["evaluated_tokens"] for t in by_model) if by_model else None,
        "prompt_p50": median(t["prompt_tokens"] for t in by_model) if by_model else None,
        "rows": turns,
    }


def run_model(model: str, root: Path, first_turns: int) -> dict:
    env = {"RAG_LLM_BACKEND": "embedded", "RAG_EMBEDDED_MODEL": model, "RAG_DATA_DIR": str(root / model / "data")}
    rows: list[dict] = []

    def turn(base: str, log: LlamaLog, label: str, thread: str, message: str) -> None:
        done = asyncio.run(ask(base, thread, message))
        time.sleep(0.5)  # let llama.cpp write the timing lines of the calls made during the turn
        rows.append(measured(label, done, log.calls(), recorded_calls(base)))
        report.progress(f"{model}: {label}: ttft {report.secs(rows[-1]['ttft_s'])}")

    report.progress(f"{model}: starting the app and ingesting the sample corpus")
    with serve_in_process(env, [SAMPLE_DOCS], FACTORY, timeout=600) as (base, proc):
        log = LlamaLog(proc.log_path)
        turn(base, log, "warm-up (not counted)", "W", "Write one sentence about the sea.")
        turn(base, log, "first turn", *A_FIRST)
        turn(base, log, "follow-up", *A_FOLLOW)
        for thread, message in SWITCH:
            turn(base, log, f"first turn on {thread}", thread, message)
        turn(base, log, "follow-up after switching back", *A_AFTER_SWITCH)
        stopped = asyncio.run(ask_and_stop(base, *STOPPED))
        time.sleep(0.5)
        rows.append(measured(f"first turn on S, stopped at its token {STOP_AT_TOKEN}", stopped, log.calls()))
        turn(base, log, "the same question asked again after Stop", *STOPPED)
        firsts = []
        for k, question in enumerate(first_turn_questions(first_turns), 1):
            asked = asyncio.run(ask(base, f"F{k}", question))
            time.sleep(0.5)
            firsts.append(measured(f"first turn F{k}", asked, log.calls(), recorded_calls(base)))
            report.progress(f"{model}: first turn F{k}: ttft {report.secs(firsts[-1]['ttft_s'])}")
    kv_files = sorted(p.stat().st_size for p in (root / model / "data" / "kv").glob("*.bin"))
    with serve_in_process(env, factory=FACTORY, timeout=600) as (base, proc):
        log = LlamaLog(proc.log_path)
        turn(base, log, "follow-up after a restart", *A_AFTER_RESTART)

        async def together() -> list[Turn]:
            return await asyncio.gather(*(ask(base, t, m) for t, m in CONCURRENT))

        users = asyncio.run(together())
        time.sleep(0.5)
        log.calls()
    concurrent = [measured(f"user {t}", u, []) for (t, _), u in zip(CONCURRENT, users, strict=True)]
    first = rows[1]["ttft_s"]
    for row in rows:
        row["ratio_to_first"] = ratio(row["ttft_s"], first)
    return {
        "model": model,
        "turns": rows,
        "kv_cache_files": {
            "threads": len(kv_files),
            "largest_mb": max(kv_files, default=0) / 1e6,
            "total_mb": sum(kv_files) / 1e6,
        },  # fmt: skip
        "first_turns": first_turns_summary(firsts),
        "concurrent": {
            "users": len(concurrent),
            "queue_wait_p50_s": median(r["queue_wait_s"] for r in concurrent if r["queue_wait_s"] is not None),
            "ttft_p50_s": median(r["ttft_s"] for r in concurrent if r["ttft_s"] is not None),
            "ttft_max_s": max((r["ttft_s"] for r in concurrent if r["ttft_s"] is not None), default=None),
            "rows": concurrent,
        },
    }


def share(turn: dict) -> str:
    """Ragline's share of the turn's TTFT, in percent."""
    own, ttft = turn.get("ragline_s"), turn.get("ttft_s")
    return "-" if own is None or not ttft else f"{100 * own / ttft:.1f}%"


def render(results: list[dict], markdown: bool) -> str:
    out = []
    for r in results:
        rows = [
            [t["turn"], report.secs(t["ttft_s"]), report.times(t["ratio_to_first"], 2), t["prompt_tokens"],
             t["evaluated_tokens"], report.secs(t["llama_prompt_s"]), report.secs(t.get("model_ttft_s")),
             report.secs(t.get("ragline_s")), share(t), report.secs(t.get("before_model_s")),
             report.secs(t.get("after_first_token_s")), report.secs(t.get("step_s"))]
            for t in r["turns"]
        ]  # fmt: skip
        headers = ["turn", "TTFT", "÷ first", "prompt tok", "evaluated", "llama prompt", "model TTFT", "Ragline",
                   "Ragline %", "model call starts", "model's 1st token -> client", "one generation step"]  # fmt: skip
        out.append(report.table(f"{r['model']}: one conversation", headers, rows, markdown))
        kv = r["kv_cache_files"]
        out.append(
            report.table(
                f"{r['model']}: saved KV caches before the restart",
                ["threads", "largest file", "total"],
                [[kv["threads"], report.num(kv["largest_mb"], " MB"), report.num(kv["total_mb"], " MB")]],
                markdown,
            )
        )
        f = r["first_turns"]
        out.append(
            report.table(
                f"{r['model']}: first turns over the sample corpus (fresh threads)",
                ["asked", "answered by the model", "TTFT p50", "TTFT max", "prompt tok p50", "evaluated p50"],
                [[f["asked"], f["answered_by_model"], report.secs(f["ttft_p50_s"]), report.secs(f["ttft_max_s"]),
                  report.num(f["prompt_p50"], "", 0), report.num(f["evaluated_p50"], "", 0)]],
                markdown,
            )
        )  # fmt: skip
        c = r["concurrent"]
        out.append(
            report.table(
                f"{r['model']}: {c['users']} users at once",
                ["queue wait p50", "TTFT p50", "TTFT max"],
                [[report.secs(c["queue_wait_p50_s"]), report.secs(c["ttft_p50_s"]), report.secs(c["ttft_max_s"])]],
                markdown,
            )
        )
    return "\n\n".join(out) + f"\n\nload average {report.load()}"


def main(argv: list[str] | None = None) -> int:
    """Run the sequence on each model, print the tables, write the JSON."""
    parser = argparse.ArgumentParser(prog="bench.speed", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--model", action="append", help="embedded model (repeatable; default: qwen2.5-coder-1.5b and -0.5b)"
    )
    parser.add_argument(
        "--first-turns", type=int, default=10, help="first turns over the sample corpus for the p50 (default 10)"
    )
    report.add_output_args(parser, "speed")
    args = parser.parse_args(argv)
    models = args.model or ["qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b"]
    with tempfile.TemporaryDirectory() as tmp:
        results = [run_model(m, Path(tmp), args.first_turns) for m in models]
    report.publish(render(results, args.markdown), {"models": results}, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
