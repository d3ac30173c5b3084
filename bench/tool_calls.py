"""Tool calls: how often an embedded model emits one when one is clearly needed (why RAG_TOOL_CALLING=auto is off).

Each question, sent `--tries` times with the product's system prompt and tools bound, at temperature 0.7.
"""

import argparse
import asyncio
import sys
import time

from langchain_core.messages import HumanMessage, SystemMessage
from openai import DefaultAsyncHttpxClient

from backend.graph.prompts import SYSTEM_PROMPT
from backend.llm.embedded import embedded_chat_model
from backend.llm.model_files import MODELS, ensure_model
from backend.memory.tools import ToolFindings, make_tools
from backend.settings import Settings
from bench.lib import report
from bench.lib.llama import raw_server

QUESTIONS = [
    "Search the documents: how often must the Zephyr-9 be serviced?",
    "What did we discuss earlier about the warranty?",
    "Use the knowledge base to find the notice period for employees.",
]


class NoRetriever:
    """A retriever that finds nothing: the tools are bound, never run."""

    async def search(self, query: str, k: int, documents: list[str] | None = None) -> list:
        """No results."""
        return []


async def ask_all(model_name: str, url: str, settings: Settings, tries: int) -> list[dict]:
    """Every question `tries` times; per question, how many replies called a tool and the time it took."""
    tools = make_tools({"qa_index": [], "ledger": {}}, NoRetriever(), 4, ToolFindings())
    rows = []
    async with DefaultAsyncHttpxClient() as http:
        model = embedded_chat_model(url, model_name, settings, http).bind_tools(tools)
        for question in QUESTIONS:
            start, calls = time.perf_counter(), 0
            for _ in range(tries):
                reply = await model.ainvoke([SystemMessage(SYSTEM_PROMPT), HumanMessage(question)])
                calls += bool(reply.tool_calls)
            seconds = time.perf_counter() - start
            rows.append({"question": question, "tries": tries, "tool_calls": calls, "seconds": seconds})
            report.progress(f"{calls}/{tries} called a tool: {question}")
    return rows


def main(argv: list[str] | None = None) -> int:
    """Ask the questions on a llama.cpp server with the model, print the table, write the JSON."""
    parser = argparse.ArgumentParser(prog="bench.tool_calls", description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="qwen2.5-coder-0.5b", choices=sorted(MODELS))
    parser.add_argument("--tries", type=int, default=4, help="replies per question (default 4)")
    parser.add_argument("--max-tokens", type=int, default=None, help="cap each reply (default: the product's cap)")
    report.add_output_args(parser, "tool_calls")
    args = parser.parse_args(argv)
    cap = {"max_answer_tokens": args.max_tokens} if args.max_tokens else {}
    settings = Settings(llm_backend="embedded", embedded_model=args.model, temperature=0.7, **cap)
    path = ensure_model(MODELS[args.model], settings.cache_dir)
    log_path = args.json.with_suffix(".llama.log")
    log_path.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    raw = settings.model_copy(update={"embedded_ctx": 1024, "data_dir": log_path.parent / "tool_calls-data"})
    with raw_server(path, raw, log_path) as url:
        rows = asyncio.run(ask_all(args.model, url, settings, args.tries))
    wall = time.perf_counter() - started
    body = [[r["question"], f"{r['tool_calls']}/{r['tries']}", report.secs(r["seconds"])] for r in rows]
    total = f"{sum(r['tool_calls'] for r in rows)}/{sum(r['tries'] for r in rows)}"
    body.append(["all questions (incl. model load)", total, report.secs(wall)])
    text = report.table(f"Tool calls by {args.model}", ["question", "called a tool", "time"], body, args.markdown)
    report.publish(text, {"model": args.model, "questions": rows, "wall_s": wall}, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
