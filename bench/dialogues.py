"""Short scripted dialogues on the embedded model over data/documents: route, answer, grounding, each turn shown.

A probe for what a tester saw, not a scored benchmark: each set is a few dialogues (lists of questions asked in
one thread, mode auto) whose answers are read, and the table says how every turn was routed and checked. Sets:
- confirm: a documents answer, then "Are you sure?" or "Is that right?" (a bare "Yes, I am sure." states nothing);
- faq-confirm: the same after an answer from the FAQ;
- route: questions about the team's own affairs and general ones, in auto mode (chat used to invent the former);
- two-documents: questions naming two documents without @;
- negative: a question whose answer is a negative fact ("does not cover");
- elliptical: a question, then a fragment that changes one thing in it ("and for capital cities?").
- elliptical-chain: fragments after fragments (a tester's dialogues): a qualifier after a new subject, a bare code.

    ./scripts/bench dialogues --set confirm --set route [--model qwen2.5-coder-0.5b]
"""

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

from backend.main import create_app
from backend.rag.knowledge import ingest_paths
from backend.settings import Settings
from bench.lib import SAMPLE_DOCS, report
from bench.lib.server import asgi_client
from bench.lib.sse import parse_sse

SETS: dict[str, list[list[str]]] = {
    "confirm": [
        ["How long is the Zephyr-9 warranty?", "Are you sure?"],
        ["How many days of annual leave do employees get?", "Is that right?"],
        ["What is the hotel limit per night in the travel policy?", "Are you sure?"],
        ["Can contractors carry over unused leave days?", "Are you sure?"],
    ],
    "faq-confirm": [
        ["How long is the Zephyr-9 warranty?", "Are you sure?"],
        ["What is the notice period?", "Is that right?"],
    ],
    "route": [
        ["What is the codename of the secret project?"],
        ["When was the company founded?"],
        ["What is our dress code?"],
        ["Who is the CEO of Northwind?"],
        ["What is the capital of France?"],
        ["How do I reverse a list in Python?"],
    ],
    "two-documents": [
        ["What do the travel policy and the IT security policy say about laptops?"],
        ["What do the office guide and the IT security policy say about visitors and personal devices?"],
    ],
    "negative": [["What does the Zephyr-9 warranty not cover?"]],
    "elliptical": [
        ["What is the hotel limit per night?", "and for capital cities?"],
        ["How many days of annual leave do employees get?", "what about contractors?"],
        ["What is the notice period?", "and during probation?"],
        ["What does error code E4 mean on the Zephyr-9?", "What about E7?"],
        ["How much are meals reimbursed per day?", "and for a travel day shorter than 8 hours?"],
    ],
    "elliptical-chain": [
        ["What is the hotel limit per night?", "what about meals?", "and on a short travel day?"],
        ["@zephyr-9-service-manual what does error code E7 mean?", "and E4?"],
        ["How many days of annual leave do employees get?", "and contractors?", "and interns?"],
    ],
}
FAQ_SETS = {"faq-confirm"}  # the others run with the FAQ off, so the model answers


async def run_set(name: str, model: str, work: Path) -> list[dict]:
    """Every dialogue of a set, each on a fresh thread; one row per turn."""
    settings = Settings(
        llm_backend="embedded",
        embedded_model=model,
        data_dir=work / name,
        temperature=0.0,
        **({} if name in FAQ_SETS else {"faq_path": None}),
    )
    app, rows = create_app(settings), []
    async with asgi_client(app) as client:
        await ingest_paths(app.state.services.knowledge, [SAMPLE_DOCS])
        for i, dialogue in enumerate(SETS[name]):
            thread_id = f"dialogue-{name}-{i}"
            for question in dialogue:
                body = {"message": question, "thread_id": thread_id, "mode": "auto"}
                events = parse_sse(await client.post("/api/chat/stream", json=body, timeout=900))
                done = next((d for n, d in events if n == "done"), {})
                sources = next((d["sources"] for n, d in reversed(events) if n == "sources"), [])
                rows.append(turn_row(name, question, done, sources))
                report.progress(f"{name} {question!r}: {rows[-1]['answer'][:80]!r}")
    return rows


def turn_row(name: str, question: str, done: dict, sources: list[dict]) -> dict:
    """What the reader got for one turn and how it was routed and checked."""
    checked = (done.get("validation") or {}).get("sources") or {}
    return {
        "set": name,
        "question": question,
        "route": f"{done.get('intent')}: {done.get('route_reason')}",
        "answer": done.get("answer", ""),
        "cited": sorted({s["document"] for s in sources if s.get("cited", True)}),
        "grounded": checked.get("confidence"),
        "not_found": checked.get("not_found"),
        "unsupported": [u["text"] for u in checked.get("unsupported") or []],
    }


def main(argv: list[str] | None = None) -> int:
    """Run the chosen sets (default all) and print every turn."""
    parser = argparse.ArgumentParser(prog="bench.dialogues", description=__doc__.split("\n")[0])
    parser.add_argument("--set", action="append", choices=list(SETS), help="dialogue sets (default: all)")
    parser.add_argument("--model", default="qwen2.5-coder-1.5b", help="embedded model")
    report.add_output_args(parser, "dialogues")
    args = parser.parse_args(argv)
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.set or list(SETS):
            rows += asyncio.run(run_set(name, args.model, Path(tmp)))
    table = [
        [r["set"], r["question"][:48], r["route"][:44], r["answer"][:90].replace("\n", " "), ", ".join(r["cited"]),
         report.num(r["grounded"], digits=2), r["not_found"] or "", len(r["unsupported"])]
        for r in rows
    ]  # fmt: skip
    headers = ["set", "question", "route", "answer", "cites", "grounded", "not found", "unsupported"]
    text = report.table(f"dialogues on {args.model} (FAQ on only for {', '.join(FAQ_SETS)})", headers, table)
    report.publish(text + f"\n\nload average {report.load()}", {"model": args.model, "turns": rows}, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
