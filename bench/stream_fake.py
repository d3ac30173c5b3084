"""Part A of bench.stream: the real app on the scripted fake model, over real HTTP and SSE, many streams at once."""

import asyncio
import time
from collections import Counter
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from backend.llm.fake import ScriptedChatModel
from bench.lib import report
from bench.lib.recorder import FACTORY, recorded_calls
from bench.lib.server import serve_in_process
from bench.lib.sse import Turn, client, stream_turn
from bench.lib.stats import dist, minus, ratio

QUESTIONS = (
    "How much can I spend on meals per day on a business trip?",
    "Which flight class may I book for a flight longer than six hours?",
    "Within how many days must I submit an expense report?",
)
FIXED_MARKS = {
    "send": "request sent",
    "headers": "response headers",
    "metadata": "metadata event",
    "model:start": "model call start (server)",
    "model:first_token": "model first token (server)",
    "first_token": "first token event (client)",
}
MESSAGE_TYPES = {"system": SystemMessage, "human": HumanMessage, "ai": AIMessage}


def question(prefix: str, i: int) -> str:
    """A distinct question per request, so no query-embedding cache makes retrieval look free."""
    return f"{QUESTIONS[i % len(QUESTIONS)]} (request {prefix}-{i})"


async def sequential(base: str, n: int, prefix: str) -> list[Turn]:
    """n turns one after another, each on a new thread with its own question."""
    async with client() as c:
        bodies = [{"message": question(prefix, i), "thread_id": f"{prefix}-{i}", "mode": "auto"} for i in range(n)]
        return [await stream_turn(c, f"{base}/api/chat/stream", body) for body in bodies]


async def concurrent(base: str, n: int, prefix: str) -> tuple[list[Turn], float]:
    """n turns started together on new threads; returns them and the wall time."""
    async with client(n) as c:
        t0 = time.monotonic()
        bodies = [{"message": question(prefix, i), "thread_id": f"{prefix}-{i}", "mode": "auto"} for i in range(n)]
        turns = await asyncio.gather(*(stream_turn(c, f"{base}/api/chat/stream", body) for body in bodies))
        return list(turns), time.monotonic() - t0


def turn_marks(turn: Turn, gen_call: dict | None) -> dict[str, float]:
    """Every timestamp of a turn up to its first token: client events, node status, the server's generator call."""
    marks = {"send": turn.t_send, "headers": turn.t_headers, **turn.marks()}
    marks.pop("generator:start", None)  # received after the model call started: it would sort out of order
    marks["first_token"] = marks.pop("token", None)
    if gen_call:
        marks["model:start"], marks["model:first_token"] = gen_call["t_start"], gen_call["t_first_token"]
    first = marks["first_token"] or 0.0
    return {k: v for k, v in marks.items() if v is not None and (k in FIXED_MARKS or v <= first)}


def waterfall(turns: list[Turn], gen_calls: dict[str, dict]) -> list[dict]:
    """p50/p95 of each step between consecutive marks present in every turn, marks ordered by mean time."""
    all_marks = [turn_marks(t, gen_calls.get(t.thread_id)) for t in turns]
    if not all_marks:
        return []
    common = set.intersection(*(set(m) for m in all_marks))
    keys = sorted(common, key=lambda k: sum(m[k] - m["send"] for m in all_marks))
    label = {k: FIXED_MARKS.get(k, k.replace(":", " ")) for k in keys}
    steps = []
    for a, b in zip(keys, keys[1:], strict=False):
        d = dist([m[b] - m[a] for m in all_marks])
        steps.append({"step": f"{label[a]} -> {label[b]}", "p50_s": d["p50"], "p95_s": d["p95"]})
    return steps


def summarize(turns: list[Turn], gen_calls: dict[str, dict], wall: float | None = None) -> dict:
    """TTFT, SSE rate, errors, routes and waterfall of a batch of turns."""
    ok = [t for t in turns if t.error is None and t.ttft is not None]
    out: dict[str, Any] = {
        "streams": len(turns),
        "errors": len(turns) - len(ok),
        "error_samples": sorted({t.error or "no token" for t in turns if t not in ok})[:3],
        "ttft_s": dist(t.ttft for t in ok),
        "sse_tokens_per_s": dist(r for t in ok if (r := t.sse_rate) is not None),
        "tokens_per_stream": dist(float(t.n_tokens) for t in ok),
        "last_token_to_done_s": dist(t.times("done")[0] - t.times("token")[-1] for t in ok if t.done),
        "routes": dict(Counter(t.route for t in turns)),
        "waterfall": waterfall(ok, gen_calls),
    }
    if wall is not None:
        out["wall_s"] = wall
        out["aggregate_tokens_per_s"] = sum(t.n_tokens for t in ok) / wall if wall else None
    return out


async def fake_model_direct(messages: list[BaseMessage], tps: float, n_ttft: int = 30, n_rate: int = 2) -> dict:
    """The fake model's own TTFT (astream outside the app) and its own streaming rate."""
    model = ScriptedChatModel(tokens_per_second=tps)
    ttfts, rates = [], []
    for _ in range(n_ttft):
        t0 = time.monotonic()
        stream = model.astream(messages)
        async for chunk in stream:
            if chunk.text:
                ttfts.append(time.monotonic() - t0)
                break
        await stream.aclose()
    for _ in range(n_rate):
        stamps = [time.monotonic() async for chunk in model.astream(messages) if chunk.text]
        if len(stamps) > 1:
            rates.append((len(stamps) - 1) / (stamps[-1] - stamps[0]))
    return {"ttft_s": dist(ttfts), "tokens_per_s": dist(rates)}


def fake_pass(tps: float, n_seq: int, n_conc: int, root: Path, docs: list[Path]) -> dict:
    """Part A for one fake streaming rate: start the app, warm up, sequential, concurrent, the model alone."""
    report.progress(f"fake model at {tps:g} tok/s: starting the app")
    env = {"RAG_LLM_BACKEND": "fake", "RAG_FAKE_TOKENS_PER_SECOND": str(tps), "RAG_DATA_DIR": str(root / "data")}
    with serve_in_process(env, docs, FACTORY, timeout=300) as (base, proc):
        warm = asyncio.run(sequential(base, 2, "warm"))
        report.progress(f"{n_seq} sequential streams")
        seq = asyncio.run(sequential(base, n_seq, "seq"))
        report.progress(f"{n_conc} concurrent streams")
        conc, wall = asyncio.run(concurrent(base, n_conc, "conc"))
        calls = recorded_calls(base)
    gen_calls = {c["thread_id"]: c for c in calls if c["node"] == "generator"}
    probe = gen_calls.get(seq[0].thread_id) if seq else next(iter(gen_calls.values()), None)
    messages = [MESSAGE_TYPES[m["type"]](content=m["content"]) for m in probe["messages"]] if probe else None
    return {
        "fake_tokens_per_second": tps,
        "startup_s": proc.startup_s,
        "ingested": proc.ingested,
        "cold_first_request_ttft_s": warm[0].ttft,
        "sequential": summarize(seq, gen_calls),
        "concurrent": summarize(conc, gen_calls, wall),
        "fake_model_direct": asyncio.run(fake_model_direct(messages, tps)) if messages else None,
    }


def own(p: dict, key: str) -> float | None:
    """The fake model's own p50 figure (ttft_s or tokens_per_s), measured outside the app."""
    return (p.get("fake_model_direct") or {}).get(key, {}).get("p50")


def report_fake(passes: list[dict], markdown: bool) -> str:
    """Part A's tables: one column per (rate, sequential|concurrent), then where the time to first token goes."""
    cols = [(p, p[mode]) for p in passes for mode in ("sequential", "concurrent")]
    heads = [
        f"{p['fake_tokens_per_second']:g} tok/s, {s['streams']} {'con' if 'wall_s' in s else 'seq'}" for p, s in cols
    ]
    metrics = [
        ("TTFT p50 (sent -> first token)", lambda p, s: report.ms(s["ttft_s"]["p50"])),
        ("TTFT p95", lambda p, s: report.ms(s["ttft_s"]["p95"])),
        ("fake model's own TTFT p50", lambda p, s: report.ms(own(p, "ttft_s"))),
        ("overhead p50 = TTFT - own TTFT", lambda p, s: report.ms(minus(s["ttft_s"]["p50"], own(p, "ttft_s")))),
        ("TTFT p50 / sequential TTFT p50", lambda p, s: report.times(ratio(s["ttft_s"]["p50"], seq_p50(p)))),
        ("SSE tokens/s per stream p50", lambda p, s: report.num(s["sse_tokens_per_s"]["p50"])),
        (
            "ratio SSE / own tokens/s",
            lambda p, s: report.times(ratio(s["sse_tokens_per_s"]["p50"], own(p, "tokens_per_s"))),
        ),
        ("aggregate tokens/s, all streams", lambda p, s: report.num(s.get("aggregate_tokens_per_s"))),
        ("last token -> done p50", lambda p, s: report.ms(s["last_token_to_done_s"]["p50"])),
        ("errors", lambda p, s: f"{s['errors']}/{s['streams']}"),
    ]
    rows = [[name] + [fn(p, s) for p, s in cols] for name, fn in metrics]
    out = [
        report.table(
            "A. Fake model through the real app (uvicorn, SSE over loopback HTTP)", ["metric", *heads], rows, markdown
        )
    ]
    steps = list(dict.fromkeys(step["step"] for _, s in cols for step in s["waterfall"]))
    rows = [[step] + [waterfall_cell(s["waterfall"], step) for _, s in cols] for step in steps]
    out.append(report.table("A. Where the time to first token goes: p50 / p95 (ms)", ["step", *heads], rows, markdown))
    for p in passes:
        errors = [e for mode in ("sequential", "concurrent") for e in p[mode]["error_samples"]]
        out.append(f"{p['fake_tokens_per_second']:g} tok/s: app startup {p['startup_s']:.1f} s, cold first request "
                   f"TTFT {report.ms(p['cold_first_request_ttft_s'])}; routes {p['sequential']['routes']}"
                   + "".join(f"\n  error sample: {e}" for e in errors))  # fmt: skip
    return "\n\n".join(out)


def seq_p50(p: dict) -> float | None:
    """The sequential pass's TTFT p50 of the same rate."""
    return p["sequential"]["ttft_s"]["p50"]


def waterfall_cell(steps: list[dict], name: str) -> str:
    """'p50 / p95' in ms for one waterfall step, '-' when absent."""
    s = next((s for s in steps if s["step"] == name), None)
    return "-" if s is None else f"{s['p50_s'] * 1000:,.1f} / {s['p95_s'] * 1000:,.1f}"
