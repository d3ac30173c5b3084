"""validate_answerable: ask the model whether the passages it was given state the answer to the question.

A small model often answers a question the passages cannot answer with a neighbouring fact they do state, word
for word ("Passwords must be at least 14 characters long [S1]" to "how often must passwords be changed?"), which
every support check passes. So, after the answer has streamed, the model is asked prompts.ANSWERED in place of its
answer: the conversation up to the user message with the passages and the question, then that one question. Its
one-token reply is read as P(yes) from its log-probabilities and compared with a threshold calibrated per model
(bench.answers, tune split). The turn's slot holds that prompt in its KV cache, so only the question's few tokens
are evaluated; the slot is stashed before the request and put back when the turn ends, after `done`
(ModelLease.aside), so the next turn still finds the answer cached.

Contract: reads `question`, `answer`, `sent`, `documents`, `intent`, the memory keys; writes
`validation.answerable` {p_yes, answered, threshold, ms}. validate_sources replaces an answer judged unanswered
(answered False) by the not-found reply. Nothing is asked or written when RAG_ANSWERABLE_CHECK is off, for a turn
without documents, for an answer that states nothing (it already says the documents do not have it), for a
follow-up read as a new subject after an earlier question ("What about taxis? (asked after: …)"), or for a
model with no calibrated threshold when RAG_ANSWERABLE_MIN_YES is unset (the status says so).
"""

import logging
import time

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from backend.contract.types import AnswerableCheck
from backend.graph.deps import GraphDeps
from backend.graph.history import prefix
from backend.graph.model import chat_model
from backend.graph.prompts import ANSWERED, ANSWERED_ABOUT
from backend.graph.report import report
from backend.graph.state import ChatState
from backend.graph.triage import decided
from backend.guardrails.grounding import answer_spans, claim_kind
from backend.llm.yes_no import one_token, p_yes
from backend.memory.followup import new_subject_search

NODE = "validate_answerable"
# P(yes) below which an answer is replaced, per model, from the P(yes) of the correct answers on the tune split of
# `./scripts/bench answers` (README, "Answers"): 0.02 below the (k+1)-th lowest, k being 5% of them rounded down (the
# share of correct answers the issue lets the check replace). 1.5B: 25 correct, k 1, 0.665; 0.5B: 15, k 0, 0.29.
# The fake model answers with a word (P(yes) 0 or 1).
CALIBRATED_MIN_YES = {"qwen2.5-coder-1.5b": 0.645, "qwen2.5-coder-0.5b": 0.27, "scripted-fake": 0.5}
log = logging.getLogger(__name__)
# "What about taxis?" after a hotel question, read "What about taxis? (asked after: …)": the threshold was calibrated
# on whole questions, and on such follow-ups the model said no to correct answers (tester's dialogues, 1.5B: P(yes)
# 0.37 and 0.54 for the taxi and hire-car rules, 0.61 for the contractors' notice period; asking about "What about
# taxis?" alone gave 0.51, 0.49 and 0.61). The other checks still judge these answers.
SUBJECT_FOLLOW_UP = "a new subject after an earlier question, which the verdict was not calibrated for"


def states_something(answer: str) -> bool:
    """Whether some sentence of the answer is a claim (not only "the documents do not say")."""
    return any(claim_kind(sentence)[0] for sentence, _, _ in answer_spans(answer))


def threshold(deps: GraphDeps) -> float | None:
    """RAG_ANSWERABLE_MIN_YES, else the calibrated value for the model; None when neither exists."""
    if deps.settings.answerable_min_yes is not None:
        return deps.settings.answerable_min_yes
    return CALIBRATED_MIN_YES.get(deps.model_name)


def verdict_question(state: ChatState) -> str:
    """ANSWERED; for a clarification of the last answer, which reuses its sources, ANSWERED_ABOUT the question it
    stands for. Both are read against the threshold calibrated for ANSWERED: ANSWERED_ABOUT was not calibrated on
    its own (the tune split has no clarifications)."""
    reused = (state.get("context_decision") or {}).get("decision") == "reuse"
    standalone = state.get("rewritten_query") or ""
    if reused and (state.get("followup") or {}).get("kind") == "clarification" and standalone:
        return ANSWERED_ABOUT.format(question=standalone)
    return ANSWERED


async def validate_answerable(state: ChatState, runtime: Runtime[GraphDeps]) -> dict:
    """The model's verdict on whether the passages answer the question, when there is a documents answer."""
    deps, sent = runtime.context, state.get("sent")
    if decided(state) or state.get("intent") != "rag" or not state.get("documents") or not sent:
        return {}
    if not deps.settings.answerable_check or not states_something(state.get("answer", "")):
        return {}
    if new_subject_search(state.get("completed_question") or "")[0]:
        return report(runtime, NODE, detail=f"skipped: {SUBJECT_FOLLOW_UP}")
    if (min_yes := threshold(deps)) is None:
        return report(runtime, NODE, detail=f"skipped: no threshold for {deps.model_name}; set RAG_ANSWERABLE_MIN_YES")
    question = HumanMessage(verdict_question(state))
    messages = [*prefix(state, deps.settings), HumanMessage(sent["prompt"]), question]
    started = time.perf_counter()
    try:
        model = one_token(await chat_model(runtime, NODE), deps.settings.llm_backend)
        if deps.lease:
            await deps.lease.aside()
        p = p_yes(await model.ainvoke(messages))
    except Exception as exc:  # the answer is out already: a failed verdict leaves it as it is
        log.warning("answerable check failed: %s", exc)
        p = None
    ms = round((time.perf_counter() - started) * 1000, 1)
    answered = None if p is None else p >= min_yes
    check = AnswerableCheck(p_yes=p, answered=answered, threshold=min_yes, ms=ms)
    said = "no verdict" if p is None else f"P(yes) {p:.2f}: " + ("answered" if answered else "not answered")
    return {"validation": {"answerable": check}, **report(runtime, NODE, detail=said)}
