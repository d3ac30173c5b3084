"""A model's yes-or-no verdict as a probability: one token, read from its log-probabilities where the backend
gives them (llama.cpp's OpenAI-compatible server, Ollama 0.12.11+), else from the word it wrote (the fake)."""

import math
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable

TOP_LOGPROBS = 10  # alternatives asked for at the verdict's token: "Yes", "No", "yes", "no" are all near the top


def one_token(model: Runnable, backend: str) -> Runnable:
    """The model asked for a single token with its top alternatives' log-probabilities."""
    if backend == "embedded":
        return model.bind(max_tokens=1, logprobs=True, top_logprobs=TOP_LOGPROBS)
    if backend == "ollama":
        return model.bind(logprobs=True, top_logprobs=TOP_LOGPROBS, options={"num_predict": 1})
    return model


def p_yes(reply: BaseMessage) -> float | None:
    """P(yes) / (P(yes) + P(no)) at the reply's first token; None when the reply says neither."""
    alternatives = _first_token_alternatives(reply.response_metadata.get("logprobs"))
    if alternatives:
        yes = sum(math.exp(lp) for token, lp in alternatives if _word(token) == "yes")
        no = sum(math.exp(lp) for token, lp in alternatives if _word(token) == "no")
        return yes / (yes + no) if yes + no > 0 else None
    word = _word(reply.text.split()[0]) if reply.text.split() else ""
    return {"yes": 1.0, "no": 0.0}.get(word)


def _word(token: str) -> str:
    return token.strip().strip(".,!:").lower()


def _first_token_alternatives(logprobs: Any) -> list[tuple[str, float]]:
    """(token, logprob) of the alternatives at the first token: OpenAI's {"content": [...]} or Ollama's list."""
    tokens = logprobs.get("content") if isinstance(logprobs, dict) else logprobs
    if not tokens:
        return []
    first = tokens[0]
    tops = first.get("top_logprobs") or [first]
    return [(t["token"], t["logprob"]) for t in tops if "token" in t and "logprob" in t]
