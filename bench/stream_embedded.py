"""Part B of bench.stream: the app on the embedded model vs a fresh raw llama.cpp server replaying its exact calls."""

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from backend.llm.model_files import MODELS, ensure_model
from backend.settings import Settings
from bench.lib import report
from bench.lib.llama import LlamaLog, raw_completion, raw_server, warm_page_cache
from bench.lib.recorder import FACTORY, recorded_calls
from bench.lib.server import serve_in_process
from bench.lib.sse import Turn, client, stream_turn
from bench.lib.stats import median, ratio

# (label, thread, message, mode): the turn sequence; the warm-up leaves the system prompt in a slot's cache
# (it must reach the model: a greeting is answered by triage without one).
SCRIPT = (
    ("warm-up", "bench-warm", "Write one sentence about the sea.", "chat"),
    ("first turn", "bench-emb", "What are the rules for hotels and meals on a business trip?", "rag"),
    ("follow-up", "bench-emb", "Is alcohol covered by that meal limit?", "rag"),
)
FAIRNESS = (
    "Fairness: every model call the app made is recorded with its exact OpenAI request body; the app is then stopped\n"
    "(its llama.cpp server and KV cache are gone) and a fresh server with the same model, ctx, threads, slots and\n"
    "cache_prompt replays the same calls in the same order, each to completion, so slot choice and prompt-cache hits\n"
    "match (compare 'evaluated app/raw' per call). The model file is read once beforehand so both loads hit the page\n"
    "cache. Raw TTFT = request sent -> first non-empty content delta, as the app's first `token` event."
)


@dataclass
class EmbeddedRun:
    """What every round of part B shares."""

    model: str
    model_path: Path
    ctx: int
    threads: int
    max_tokens: int
    root: Path
    docs: list[Path]


async def run_script(base: str) -> list[Turn]:
    """The turn sequence, one turn after another."""
    async with client() as c:
        bodies = [{"message": msg, "thread_id": thread, "mode": mode} for _, thread, msg, mode in SCRIPT]
        return [await stream_turn(c, f"{base}/api/chat/stream", body) for body in bodies]


def raw_settings(run: EmbeddedRun) -> Settings:
    """The app's llama.cpp settings for this run, with a data dir of its own (saved slots land there)."""
    return Settings(embedded_ctx=run.ctx, embedded_threads=run.threads, data_dir=run.root / "raw")


def replay(calls: list[dict], run: EmbeddedRun, log_path: Path) -> list[dict]:
    """Replay every recorded call, in order and to completion, on a fresh llama.cpp server."""
    fresh = httpx.Limits(max_keepalive_connections=0)  # llama.cpp may drop idle keep-alive connections
    with (
        raw_server(run.model_path, raw_settings(run), log_path) as url,
        httpx.Client(timeout=900, limits=fresh) as http,
    ):
        return [raw_completion(http, url, c["payload"]) for c in calls]


def call_rows(calls: list[dict], raw: list[dict], app_log: list[dict], raw_log: list[dict]) -> list[dict]:
    """Each model call side by side: in the app (recorder stamps, app server log) and replayed raw."""
    app_log = app_log if len(app_log) == len(calls) else [{}] * len(calls)
    raw_log = raw_log if len(raw_log) == len(calls) else [{}] * len(calls)
    return [
        {
            "node": c["node"],
            "thread_id": c["thread_id"],
            "app_ttft_s": c["t_first_token"] - c["t_start"] if c["t_first_token"] else None,
            "app_total_s": c["t_end"] - c["t_start"],
            **{f"raw_{k}": v for k, v in r.items()},
            "app_prompt_n": a.get("evaluated"),
            "app_slot": a.get("slot"),
            "raw_slot": rl.get("slot"),
        }
        for c, r, a, rl in zip(calls, raw, app_log, raw_log, strict=True)
    ]


def compare_turn(label: str, turn: Turn, calls: list[dict], rows: list[dict]) -> dict:
    """One turn: end-to-end vs in-app model vs raw llama.cpp, from the calls made during it."""
    end = (turn.times("done") or turn.times("token") or [float("inf")])[-1]
    idx = [i for i, c in enumerate(calls) if c["thread_id"] == turn.thread_id and turn.t_send <= c["t_start"] <= end]
    gen = next((i for i in reversed(idx) if calls[i]["node"] == "generator"), None)
    if gen is None or turn.ttft is None or rows[gen]["raw_ttft_s"] is None:
        return {"turn": label, "error": turn.error or "no generator call recorded", "route": turn.route}
    g, before = rows[gen], [i for i in idx if i < gen]
    raw_before = sum(rows[i]["raw_total_s"] for i in before)
    app_before = sum(rows[i]["app_total_s"] for i in before)
    return {
        "turn": label,
        "route": turn.route,
        "calls": "+".join(calls[i]["node"] for i in idx),
        "answer": (turn.done or {}).get("answer", "")[:70],
        "e2e_ttft_s": turn.ttft,
        "raw_generator_ttft_s": g["raw_ttft_s"],
        "ratio_e2e_over_raw_generator": ratio(turn.ttft, g["raw_ttft_s"]),
        "raw_before_generator_s": raw_before,
        "raw_floor_s": raw_before + g["raw_ttft_s"],
        "ratio_e2e_over_raw_floor": ratio(turn.ttft, raw_before + g["raw_ttft_s"]),
        "app_generator_ttft_s": g["app_ttft_s"],
        "ratio_app_model_over_raw": ratio(g["app_ttft_s"], g["raw_ttft_s"]),
        "app_before_generator_s": app_before,
        "pipeline_overhead_s": turn.ttft - (g["app_ttft_s"] or 0.0) - app_before,
        "prompt_tokens": g["raw_prompt_tokens"],
        "prompt_evaluated_app": g["app_prompt_n"],
        "prompt_evaluated_raw": g["raw_prompt_n"],
        "prompt_cached_raw": g["raw_cache_n"],
        "sse_tokens": turn.n_tokens,
        "raw_completion_tokens": g["raw_completion_tokens"],
        "sse_tokens_per_s": turn.sse_rate,
        "raw_decode_tokens_per_s": g["raw_decode_tokens_per_s"],
    }


def embedded_round(run: EmbeddedRun, r: int) -> dict:
    """App turns with the embedded model, app stopped, then the identical calls on a fresh raw llama.cpp server."""
    env = {
        "RAG_LLM_BACKEND": "embedded",
        "RAG_EMBEDDED_MODEL": run.model,
        "RAG_EMBEDDED_CTX": str(run.ctx),
        "RAG_EMBEDDED_THREADS": str(run.threads),
        "RAG_MAX_ANSWER_TOKENS": str(run.max_tokens),
        "RAG_DATA_DIR": str(run.root / f"embedded-{r}" / "data"),
    }
    report.progress(f"embedded {run.model}, round {r + 1}: app turns " + ", ".join(label for label, *_ in SCRIPT))
    with serve_in_process(env, run.docs, FACTORY, timeout=300) as (base, proc):
        turns = asyncio.run(run_script(base))
        calls = recorded_calls(base)
    report.progress(f"app stopped; replaying its {len(calls)} model calls on a fresh llama.cpp server")
    raw_log = run.root / f"raw-llama-{r}.log"
    raw = replay(calls, run, raw_log)
    rows = call_rows(calls, raw, LlamaLog(proc.log_path).calls(), LlamaLog(raw_log).calls())
    compared = [compare_turn(label, t, calls, rows) for (label, *_), t in zip(SCRIPT, turns, strict=True)]
    return {"startup_s": proc.startup_s, "turns": compared, "calls": rows}


def median_turns(rounds: list[dict]) -> list[dict]:
    """Per turn, the median over rounds of every number (text from the first round)."""
    merged = []
    for per_round in zip(*(r["turns"] for r in rounds), strict=True):
        out = dict(per_round[0])
        for key, value in out.items():
            if isinstance(value, int | float):
                out[key] = median(t[key] for t in per_round if t.get(key) is not None)
        merged.append(out)
    return merged


def embedded_pass(model: str, max_tokens: int, rounds: int, deadline: float, root: Path, docs: list[Path]) -> dict:
    """Part B: up to `rounds` x (app turns, then raw replay), fewer if past the deadline; medians over rounds."""
    settings = Settings()
    model_path = ensure_model(MODELS[model], settings.cache_dir)  # already assembled: a marker check, no download
    warm_page_cache(model_path)
    run = EmbeddedRun(model, model_path, settings.embedded_ctx, settings.embedded_threads, max_tokens, root, docs)
    results: list[dict] = []
    for r in range(rounds):
        started = time.monotonic()
        results.append(embedded_round(run, r))
        if r + 1 < rounds and time.monotonic() + (time.monotonic() - started) > deadline:
            report.progress(f"stopping after {r + 1} of {rounds} rounds: another would pass the --budget")
            break
    return {"model": model, "ctx": run.ctx, "threads": run.threads, "max_answer_tokens": max_tokens,
            "rounds": results, "turns": median_turns(results)}  # fmt: skip


def report_embedded(b: dict, markdown: bool) -> str:
    """Part B's tables: per-turn medians over rounds, then every model call of round 1, in the app and raw."""
    turns, rounds = b["turns"], b["rounds"]
    metrics = [
        ("route", "route", str),
        ("model calls in the turn", "calls", str),
        ("prompt tokens (generator request)", "prompt_tokens", lambda v: report.num(v, digits=0)),
        ("  evaluated by the app's llama.cpp", "prompt_evaluated_app", lambda v: report.num(v, digits=0)),
        ("  evaluated by the raw llama.cpp", "prompt_evaluated_raw", lambda v: report.num(v, digits=0)),
        ("  reused from KV cache (raw)", "prompt_cached_raw", lambda v: report.num(v, digits=0)),
        ("E2E TTFT: sent -> first token event", "e2e_ttft_s", report.ms),
        ("raw TTFT, same generator request", "raw_generator_ttft_s", report.ms),
        ("ratio E2E / raw generator TTFT", "ratio_e2e_over_raw_generator", lambda v: report.times(v, 2)),
        ("raw floor = calls before + raw TTFT", "raw_floor_s", report.ms),
        ("ratio E2E / raw floor", "ratio_e2e_over_raw_floor", lambda v: report.times(v, 2)),
        ("ratio in-app call / raw (noise check)", "ratio_app_model_over_raw", lambda v: report.times(v, 2)),
        ("pipeline overhead (E2E minus model)", "pipeline_overhead_s", report.ms),
        ("SSE tokens/s (app)", "sse_tokens_per_s", report.num),
        ("raw decode tokens/s (llama timings)", "raw_decode_tokens_per_s", report.num),
    ]
    rows = [[name] + [fmt(t.get(key)) for t in turns] for name, key, fmt in metrics]
    per_round = [", ".join(report.times(r["turns"][i].get("ratio_e2e_over_raw_floor"), 2) for r in rounds)
                 for i in range(len(turns))]  # fmt: skip
    rows.append(["E2E / floor, per round", *per_round])
    title = f"B. Embedded {b['model']} (ctx {b['ctx']}/slot, {b['threads'] or 'all'} threads, {len(rounds)} rounds)"
    out = [report.table(title, ["metric (median over rounds)", *[t["turn"] for t in turns]], rows, markdown)]
    calls = [
        [f"{i + 1} {c['node']}", f"{c['app_slot']} / {c['raw_slot']}", str(c["raw_prompt_tokens"]),
         f"{c['app_prompt_n']} / {c['raw_prompt_n']}", f"{report.ms(c['app_ttft_s'])} / {report.ms(c['raw_ttft_s'])}"]
        for i, c in enumerate(rounds[0]["calls"])
    ]  # fmt: skip
    heads = ["call (round 1)", "slot app/raw", "prompt tok", "evaluated app/raw", "TTFT app/raw"]
    out.append(report.table("B. Every model call, in the app vs replayed raw", heads, calls, markdown))
    answers = [f"{t['turn']}: " + (f"ERROR {t['error']}" if "error" in t else repr(t["answer"])) for t in turns]
    startup = ", ".join(f"{r['startup_s']:.1f} s" for r in rounds)
    return "\n\n".join([*out, f"startup incl. llama.cpp load: {startup}\n" + "\n".join(answers), FAIRNESS])
