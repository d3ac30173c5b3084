"""rewriter: decide reuse or fresh retrieval, and turn a follow-up into a standalone search query."""

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from backend.contract.text import strip_mentions
from backend.graph.deps import GraphDeps
from backend.graph.history import prefix, recent_exchanges
from backend.graph.model import chat_model
from backend.graph.prompts import REWRITE, TRANSLATE
from backend.graph.report import report
from backend.graph.state import ChatState, ContextDecision
from backend.memory.followup import Completed, FollowUp, complete_ellipsis, decide, entities, with_entity

NODE = "rewriter"
DECISION_LABELS = {
    "fresh": "New question: searching afresh",
    "reuse": "Follow-up: reusing the last answer's sources",
    "both": "Follow-up: reusing the last sources and searching again",
}


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
    """Set rewritten_query and the context decision; a model call only to translate a question in another language
    (`english`), or, with RAG_REWRITE_WITH_MODEL, for a follow-up that refers back."""
    decision = context_decision(state)
    translation = await english(state, runtime)
    if translation:  # completed and made standalone in English: "Et pour les stagiaires ?" after an English question
        state = {**state, "question": translation}  # is "…, for the interns?" (review)
    completed = completed_question(state)
    query = completed.question if completed else await standalone_query(state, runtime)
    if not translation:  # a translation is not respelt: "annuel" is no misspelt "annual"
        query = await runtime.context.retriever.spelled(query)  # "anual leeve" is searched and shown as "annual leave"
    detail = f"{query} ({decision['reason']}{'; completed from the last question' if completed else ''})"
    return {
        "context_decision": decision,
        "rewritten_query": query,
        # the translation is read by the model too: its answer is then in the passages' language, which the checks
        # read (a French answer, right and cited, was replaced as unsupported: MiniLM reads English only)
        "completed_question": completed.question if completed else translation,
        "base_query": completed.base if completed else base_kept(state),
        **report(runtime, NODE, DECISION_LABELS[decision["decision"]], detail),
    }


async def english(state: ChatState, runtime: Runtime[GraphDeps]) -> str:
    """The question in English when it is in another language (rag/spelling.py `foreign`), for a search by the
    English-only MiniLM ("Combien de jours de congé annuel ai-je ?" went to chat, and its model said "The documents
    do not say"; tester); "" otherwise, and when the model gave it back unchanged."""
    question = strip_mentions(state["question"])
    if not await runtime.context.retriever.foreign(question):
        return ""
    prompt = [HumanMessage(content=TRANSLATE.format(question=question))]
    reply = await (await chat_model(runtime, NODE)).ainvoke(prompt)
    translation = clean_rewrite(reply.text, question)
    return "" if translation.strip() == question.strip() else translation


def context_decision(state: ChatState) -> ContextDecision:
    """Reuse the last sources, search afresh, or both, with the reason."""
    followup = FollowUp(**state["followup"]) if state.get("followup") else FollowUp(False, "new", 1.0, "no history")
    decision, why = decide(followup, mentions_new_document(state))
    if not state.get("use_memory", True) or not state.get("last_context"):
        decision, why = "fresh", why if decision == "fresh" else "no earlier sources to reuse"
    return ContextDecision(decision=decision, reason=why)


def mentions_new_document(state: ChatState) -> bool:
    """The question @mentions documents other than the last documents turn aimed at."""
    return state.get("scope_source") == "mention" and state.get("targeted_documents") != state.get("scope")


def completed_question(state: ChatState) -> Completed | None:
    """An elliptical follow-up ("and for capital cities?") made whole from the last standalone question; None for
    every other question. Searched, and read by the model, in place of the fragment."""
    followup = state.get("followup") or {}
    if not state.get("use_memory", True) or followup.get("kind") != "reference" or state.get("last_intent") != "rag":
        return None  # after a chat turn, the last "question" may be "hi"
    question = strip_mentions(state["question"])
    return complete_ellipsis(question, state.get("last_query", ""), state.get("last_base_query", ""))


def base_kept(state: ChatState) -> str:
    """A clarification ("Are you sure?") keeps the question the next elliptical follow-up is completed from; any
    other question is its own ("": the memory node takes the query)."""
    clarifies = (state.get("followup") or {}).get("kind") == "clarification" and state.get("use_memory", True)
    return state.get("last_base_query", "") if clarifies else ""


def previous_entities(state: ChatState) -> list[str]:
    """The main names of the last query and answer, for a follow-up whose rewrite dropped every one."""
    last = recent_exchanges(state, 1)
    return entities(" ".join([state.get("last_query", ""), *(m.text for m in last)]))


async def standalone_query(state: ChatState, runtime: Runtime[GraphDeps]) -> str:
    """The question as a search query that needs no conversation.

    A follow-up that refers back gets the conversation's main names added; the model rewrites it only when
    RAG_REWRITE_WITH_MODEL is on, since that call sits before the answer's first token (on the 0.5B model it was
    most of a follow-up's wait, `./scripts/bench speed`).
    """
    question = strip_mentions(state["question"])
    turns = runtime.context.settings.history_turns
    followup = state.get("followup") or {}
    if not state.get("use_memory", True) or not followup.get("is_followup") or not recent_exchanges(state, turns):
        return question
    if followup.get("kind") == "clarification":
        return state.get("last_query") or question
    if mentions_new_document(state):
        return question  # "@travel-policy.pdf how much are meals reimbursed?" after an E7 answer: not "… (E7)"
    previous = previous_entities(state)
    if not runtime.context.settings.rewrite_with_model:
        return with_entity(question, previous)
    prompt = [*prefix(state, runtime.context.settings), HumanMessage(content=REWRITE.format(question=question))]
    reply = await (await chat_model(runtime, NODE)).ainvoke(prompt)
    return with_entity(clean_rewrite(reply.text, question), previous)
