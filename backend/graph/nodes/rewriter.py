"""rewriter: turn a follow-up into a standalone search query; a first question passes through untouched."""

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from backend.graph.deps import GraphDeps
from backend.graph.history import prompt_prefix, recent_exchanges
from backend.graph.nodes.router import MENTION_RE
from backend.graph.prompts import REWRITE
from backend.graph.state import ChatState


def strip_mentions(text: str) -> str:
    """The text without @mentions, whitespace collapsed."""
    return " ".join(MENTION_RE.sub(" ", text).split()) or text


def clean_rewrite(reply: str, fallback: str) -> str:
    """First non-empty line of the model's reply without quotes or labels; the fallback when unusable."""
    lines = [ln.strip() for ln in reply.strip().splitlines() if ln.strip()]
    if not lines:
        return fallback
    line = lines[0]
    for label in ("Standalone question:", "Rewritten question:", "Question:"):
        if line.lower().startswith(label.lower()):
            line = line[len(label) :].strip()
    line = line.strip('"').strip()
    return line if 0 < len(line) <= 3 * len(fallback) + 200 else fallback


async def rewrite(state: ChatState, runtime: Runtime[GraphDeps]) -> dict:
    """Set rewritten_query: the question itself on a first turn, else one model call resolving references."""
    question = strip_mentions(state["question"])
    turns = runtime.context.settings.history_turns
    if not recent_exchanges(state, turns):
        return {"rewritten_query": question}
    prompt = [*prompt_prefix(state, turns), HumanMessage(content=REWRITE.format(question=question))]
    reply = await runtime.context.chat_model.ainvoke(prompt)
    return {"rewritten_query": clean_rewrite(reply.text, question)}
