#!/usr/bin/env python3
"""How often does an embedded model emit a tool call when one is clearly needed? Decides RAG_TOOL_CALLING=auto.

Usage: .venv/bin/python scripts/bench_tool_calls.py [--model qwen2.5-coder-0.5b] [--tries 6]
"""

import argparse
import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langchain_core.messages import HumanMessage, SystemMessage  # noqa: E402

from backend.graph.prompts import SYSTEM_PROMPT  # noqa: E402
from backend.llm.embedded import embedded_chat_model, llama_server  # noqa: E402
from backend.llm.model_files import MODELS, ensure_model  # noqa: E402
from backend.memory.tools import ToolFindings, make_tools  # noqa: E402
from backend.settings import Settings  # noqa: E402

QUESTIONS = [
    "Search the documents: how often must the Zephyr-9 be serviced?",
    "What did we discuss earlier about the warranty?",
    "Use the knowledge base to find the notice period for employees.",
]


class NoRetriever:
    async def search(self, query, k, documents=None):
        return []


async def run(model_name: str, tries: int) -> None:
    settings = Settings(llm_backend="embedded", embedded_model=model_name, temperature=0.7)
    path = ensure_model(MODELS[model_name], settings.cache_dir)
    tools = make_tools({"qa_index": [], "ledger": {}}, NoRetriever(), 4, ToolFindings())
    with llama_server(path, 2048, 0) as url:
        model = embedded_chat_model(url, model_name, settings).bind_tools(tools)
        calls = total = 0
        start = time.perf_counter()
        for question in QUESTIONS:
            for _ in range(tries):
                reply = await model.ainvoke([SystemMessage(SYSTEM_PROMPT), HumanMessage(question)])
                total += 1
                calls += bool(reply.tool_calls)
        print(f"| {model_name} | {calls}/{total} replies called a tool | {time.perf_counter() - start:.0f} s |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="qwen2.5-coder-0.5b", choices=sorted(MODELS))
    parser.add_argument("--tries", type=int, default=4)
    args = parser.parse_args()
    asyncio.run(run(args.model, args.tries))
