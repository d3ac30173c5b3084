"""validate_sources: check every claim of a documents answer against the passages, and repair its citations.

Contract: reads `answer`, `documents`, `fresh_ids`, `intent`, `triage`, `validation.length`; writes
`validation.sources` {grounded, confidence, issues, unsupported_sentences, repairs, claims, supported, not_found,
original_text}, `validation.length.cut` false when a cut answer was replaced, and, when citations were repaired or
nothing was supported, `answer`:
- each supported claim cites a passage that supports it (added or re-pointed); unsupported claims cite nothing;
- with RAG_NOT_FOUND_REPLY (default), an answer with claims of which none is supported becomes an honest
  "I could not find this in the documents" naming the closest passages (asked again, "why?", quoting their
  sentences nearest the question);
- so does an answer with claims that the model judged does not answer the question (validation.answerable,
  written by validate_answerable when RAG_ANSWERABLE_CHECK is on), unless the question asks two things and the
  supported claims answer one (parts.py): then the answer stays and ends with PART_NOT_FOUND naming the parts it
  leaves (`unanswered_parts`); a kept answer that leaves a part unanswered ends with PART_NOT_COVERED naming it;
- a kept answer whose figure another document given to the model states differently ends by quoting that
  document's sentence with its marker (`conflicts`, RAG_CONFLICT_NOTE, conflicts.py);
- and, with RAG_NOT_FOUND_REPLY, an answer that does not give the kind of thing the question asks for ("how
  often" answered without a frequency: a neighbouring fact of the passage, answer_kind.py);
- and, with RAG_NOT_FOUND_REPLY, an answer whose claims restate the question in words that no passage uses (a
  neighbouring fact in the question's terms: "the purchase price is 240 euros" from a service price, premise.py);
- and, with RAG_NOT_FOUND_REPLY, an answer to a wh-question whose claims add nothing to it ("What answer denotes
  that …?" answered "The answer denotes that …", premise.echoes_question);
- an answer in which the model itself says the documents lack the answer is restated in that same wording, which
  names the passages found (the model's own may echo the prompt's example, "they cover servicing [S1] and …");
- a documents question that no passage matched gets not_found "no_passages"; with RAG_NOT_FOUND_REPLY, an answer
  that states something without saying the documents do not cover it starts with NO_PASSAGE_LEAD, and one that
  states a number or a code (which can only have come from the model: "the barrier code is 12345") becomes
  NO_PASSAGE_REPLY.
The spans of unsupported claims in the final answer are added by the memory node, after the last rewrite.
"""

import asyncio
import logging
import re

import numpy as np
from langgraph.runtime import Runtime

from backend.contract.text import PART_NOT_COVERED, PART_NOT_FOUND, strip_mentions, without_note
from backend.contract.types import LengthCheck, NotFoundReason, Source, SourcesCheck
from backend.graph.deps import GraphDeps
from backend.graph.report import report
from backend.graph.state import ChatState
from backend.graph.triage import decided
from backend.guardrails.answer_kind import asked_kind, gives_kind
from backend.guardrails.conflicts import conflict_note, conflicts
from backend.guardrails.grounding import (
    Embed,
    GroundingResult,
    SentenceSupport,
    answer_spans,
    check_grounding,
    claim_kind,
    cosines,
    figures,
    passage_sentences,
)
from backend.guardrails.parts import unanswered_parts
from backend.guardrails.premise import echoes_question, unstated_premise
from backend.guardrails.repair import (
    NOT_FOUND_OPENING,
    Repaired,
    not_found_explained,
    not_found_reply,
    repair,
    strip_markup,
)
from backend.guardrails.text import closed_fence, unwrapped

NODE = "validate_sources"
log = logging.getLogger(__name__)
CLOSEST = 2  # passages named in the not-found reply
HEADING_LINE_WORDS = 3  # a passage's line of this many words or fewer is a heading, not a sentence to quote
NOT_FOUND_DETAIL = {
    "model": "the model found no answer in the sources: said so, naming the passages found",
    "unsupported": "nothing in the answer is in the sources: answered that it is not found",
    "unanswered": "the sources do not state the answer to the question: answered that it is not found",
    "wrong_kind": "the question asks for {kind} and the answer gives none: answered that it is not found",
    "unstated_premise": "the passages do not say what the answer takes from the question ({kind}): answered that it "
    "is not found",
    "restates_question": "the answer only restates the question: answered that it is not found",
}


def closest_passages(documents: list[Source], fresh_ids: list[str]) -> list[Source]:
    """The passages retrieved for this question, best first, as many as the not-found reply names."""
    return ([d for d in documents if d["id"] in fresh_ids] or documents)[:CLOSEST]


def asked_again(state: ChatState) -> bool:
    """The reader answers a not-found reply with "why?", "are you sure?" or "explain": the same reply again would
    tell them nothing (a tester got it three times in a row)."""
    index = state.get("qa_index", [])
    followup = state.get("followup") or {}
    last = index[-1].get("answer", "") if index else ""
    return followup.get("kind") == "clarification" and last.startswith(NOT_FOUND_OPENING)


def nearest_sentences(question: str, passages: list[Source], embed: Embed) -> list[tuple[str, str | None, str]]:
    """Each passage's sentence nearest the question by MiniLM similarity, with its document and section; a line of
    HEADING_LINE_WORDS words or fewer is a heading ("Parking", "Zephyr-9 Quick Start"), not a sentence to quote."""
    pieces = [
        [s for s in passage_sentences(unwrapped(p["text"])) if len(s.split()) > HEADING_LINE_WORDS] or [p["text"]]
        for p in passages
    ]
    sims, out, at = cosines([question], [s for sentences in pieces for s in sentences], embed)[0], [], 0
    for passage, sentences in zip(passages, pieces, strict=True):
        best = sentences[int(np.argmax(sims[at : at + len(sentences)]))]
        out.append((passage["document"], passage.get("section"), best))
        at += len(sentences)
    return out


async def not_found_text(state: ChatState, runtime: Runtime[GraphDeps]) -> str:
    """The not-found reply; asked again, the closest passages' sentences nearest the question, quoted."""
    passages = closest_passages(state["documents"], state.get("fresh_ids", []))
    if not asked_again(state):
        return not_found_reply([(d["document"], d.get("section")) for d in passages])
    # the search text finds the sentences nearest it; the reader sees it without its note ("… (asked after: …)")
    nearest = await asyncio.to_thread(nearest_sentences, asked(state), passages, runtime.context.embed)
    return not_found_explained(without_note(asked(state)), nearest)


def name_words(document: str) -> str:
    """A document's name as words: "office-guide.html" reads "office guide html", "zephyr-9-service-manual.md"
    "zephyr 9 service manual md"."""
    return re.sub(r"[^\w-]+|_", " ", document).replace("-", " ").strip()


async def validate_sources(state: ChatState, runtime: Runtime[GraphDeps]) -> dict:
    """Ground the answer's claims in the passages; repair citations; replace an answer nothing supports."""
    return length_shown(state, await _validated(state, runtime))


async def _openings(docs: list[Source], runtime: Runtime[GraphDeps]) -> dict[str, str]:
    """Passage id -> the opening of its document, where a claim's names may be (grounding.check_grounding)."""
    ids = [d["doc_id"] for d in docs if d.get("doc_id")]
    first = await runtime.context.retriever.openings(ids) if ids else {}
    return {d["id"]: first[d["doc_id"]] for d in docs if d.get("doc_id") in first}


def length_shown(state: ChatState, out: dict) -> dict:
    """validation.length as the answer the user gets has it: the model's answer stopped at the length limit, but
    the not-found reply (or NO_PASSAGE_REPLY) that replaced it is whole; one kept behind NO_PASSAGE_LEAD is still
    cut. Every client reads `cut` alone (the UI's badge, /v1's finish_reason "length")."""
    length = (state.get("validation") or {}).get("length")
    check = out.get("validation", {}).get("sources") or {}
    replaced = check.get("not_found") in ("replaced", "model") or check.get("not_found_reason") == "unsupported"
    if not length or not length["cut"] or not replaced:
        return out
    whole = LengthCheck(cut=False, max_tokens=length["max_tokens"])
    return {**out, "validation": {**out["validation"], "length": whole}}


async def _validated(state: ChatState, runtime: Runtime[GraphDeps]) -> dict:
    if decided(state) or state.get("intent") != "rag":
        return {}
    if not state.get("documents"):
        return _no_passages(state, runtime)
    settings, docs = runtime.context.settings, state["documents"]
    original = state.get("answer", "")
    answer = strip_markup(original)
    names = {d["id"]: d["document"] for d in docs}
    # each passage as the model read it, under its document's name ("[S1] office-guide.html"), whose words a claim
    # may use and so does not take from the question ("The office building opens at 07:00" from the "Opening hours"
    # section, "The building is open from 07:00", with the section alone since neighbours keep to their section)
    passages = {d["id"]: f"{name_words(d['document'])}\n{d['text']}" for d in docs}
    # off the event loop: embedding the answer's and passages' sentences takes 30-170 ms, which would stall every
    # other reader's stream meanwhile
    result = await asyncio.to_thread(
        check_grounding,
        answer,
        passages,
        runtime.context.embed,
        settings.grounding_min_support,
        # the question the model answered: "@employee-handbook" is markup, no word a passage should hold, and an
        # elliptical follow-up was read whole
        state.get("completed_question") or strip_mentions(state["question"]),
        names,
        await runtime.context.retriever.document_names(),  # a claim may name one no passage came from
        await _openings(docs, runtime),
    )
    supported = sum(1 for c in result.claims if c.best is not None)
    check = _check(result, supported)
    if answer != original:
        check["markup_removed"] = True
    why, detail = _not_found_reason(state, settings.not_found_reply, result, supported, answer, passages)
    rest = unanswered_parts(
        asked(state), [c.sentence for c in result.claims if c.best is not None], judged_unanswered=why == "unanswered"
    )
    note = PART_NOT_FOUND if why == "unanswered" else PART_NOT_COVERED
    if rest and why in (None, "unanswered"):  # a two-part question with one part answered: it stays, and says so
        why, check["unanswered_parts"] = None, rest
    if why is not None:
        text = await not_found_text(state, runtime)
        check |= {"not_found": "replaced", "not_found_reason": why, "original_text": original, **detail}
        named = check.get("asked_for") or ", ".join(check.get("unstated", []))
        return _out(runtime, check, text, NOT_FOUND_DETAIL[why].format(kind=named))
    if not result.claims and any(s.not_found for s in result.sentences):
        check["not_found"] = "model"
        text = await not_found_text(state, runtime)
        if answer != text:  # in the one wording that names what was found, not the model's (which may echo the
            check["original_text"] = original  # prompt's example: "they cover servicing [S1] and badges [S2]")
            return _out(runtime, check, text, NOT_FOUND_DETAIL["model"])
        return _out(runtime, check, None, _detail(result, None))
    fixed = repair(answer, result, names) if settings.citation_repair else None
    final = answer
    if fixed is not None and fixed.text != answer:
        check["repairs"] = [c.as_dict() for c in fixed.changes]  # type: ignore[misc]
        if fixed.merged:
            check["markers_merged"] = len(fixed.merged)
        # as the repaired text has them: "[S4] states that …" reads "employee-handbook.md states that …", and the
        # mark must cover the name
        check["unsupported_sentences"] = fixed.unsupported
        final = fixed.text
    final = await _with_notes(final, check, note, result.claims, docs, names, asked(state), runtime)
    return _out(runtime, check, final if final != original else None, _detail(result, fixed))


async def _with_notes(
    final: str,
    check: SourcesCheck,
    note: str,
    claims: list[SentenceSupport],
    docs: list[Source],
    names: dict[str, str],
    question: str,
    runtime: Runtime[GraphDeps],
) -> str:
    """A kept answer with its closing paragraphs: the parts of the question it leaves (`note`), then the figures
    that another document given to the model states differently (conflicts.py, RAG_CONFLICT_NOTE); `names` maps
    each passage id to its document."""
    body = final
    if rest := check.get("unanswered_parts"):
        final = f"{closed_fence(final)}\n\n{note}{' '.join(f'“{part}”' for part in rest)}"
    if not runtime.context.settings.conflict_note:
        return final
    texts = {d["id"]: d["text"] for d in docs}
    try:  # off the event loop: comparing the wording embeds the sentences (MiniLM)
        found = await asyncio.to_thread(conflicts, claims, texts, names, body, runtime.context.embed, question)
    except Exception as exc:  # a note that fails must not fail the turn
        log.warning("conflict check failed: %s", exc)
        found = []
    if found:
        check["conflicts"] = found
        final = f"{closed_fence(final)}\n\n{conflict_note(found, names)}"
    return final


NO_PASSAGE_LEAD = "No document in the knowledge base matched this question, so this answer does not come from them."
NO_PASSAGE_REPLY = (
    "I could not find this in the documents: no passage matched the question. (Chat mode asks the model without them.)"
)


def _no_passages(state: ChatState, runtime: Runtime[GraphDeps]) -> dict:
    """A documents question no passage matched: the prompt asks the model to say so first, and a small model often
    answers from what it knows without saying it. With RAG_NOT_FOUND_REPLY such an answer starts with
    NO_PASSAGE_LEAD, so a general answer is never taken for one from the documents; and an answer stating a number
    or a code (a price, a date, a barrier code), which a question about the team's own documents only gets from the
    model's invention, is replaced by NO_PASSAGE_REPLY (the model's text stays in `original_text`). Names are left
    to the lead: a general answer names people and places, and a list's or a heading's first word reads as one."""
    original = state.get("answer", "")
    spans = [sentence for sentence, _, _ in answer_spans(original)]
    kinds = [claim_kind(sentence) for sentence in spans]
    claims = sum(claim for claim, _ in kinds)
    # the lead says it of the whole answer, so its sentences are not each marked as unsupported
    check = SourcesCheck(
        grounded=False,
        confidence=0.0,
        issues=["no passage matched the question"],
        unsupported_sentences=[],
        claims=claims,
        supported=0,
        not_found="no_passages",
        repairs=[],
    )
    if not claims or any(said for _, said in kinds) or not runtime.context.settings.not_found_reply:
        return _out(runtime, check, None, "no passage matched the question")
    check["original_text"] = original
    if any(claim and figures(sentence) for sentence, (claim, _) in zip(spans, kinds, strict=True)):
        check["not_found_reason"] = "unsupported"  # its facts are in no passage: there was none
        return _out(runtime, check, NO_PASSAGE_REPLY, "no passage matched: a number or code from none withheld")
    return _out(runtime, check, f"{NO_PASSAGE_LEAD}\n\n{original}", "no passage matched: said so before the answer")


def asked(state: ChatState) -> str:
    """The question as searched: standalone, without its @mentions."""
    return state.get("rewritten_query") or state["question"]


def _not_found_reason(
    state: ChatState,
    not_found_reply: bool,
    result: GroundingResult,
    supported: int,
    answer: str,
    passages: dict[str, str],
) -> tuple[NotFoundReason | None, dict]:
    """Why an answer with claims becomes the not-found reply, if it does, and what the check adds to
    validation.sources: nothing in it is supported; the model judged the passages do not answer the question; it
    does not give what the question asks for (asked_for); its claims restate the question in words that no
    passage uses (unstated: those words, as the question has them); or they add nothing to a wh-question."""
    if not result.claims:
        return None, {}
    if not supported and not_found_reply:
        return "unsupported", {}
    if state.get("validation", {}).get("answerable", {}).get("answered") is False:
        return "unanswered", {}
    if not not_found_reply:
        return None, {}
    kind = asked_kind(asked(state))
    if kind is not None and supported and not gives_kind(kind, answer, asked(state)):
        return "wrong_kind", {"asked_for": kind.name}
    if missing := unstated_premise(asked(state), result.claims, passages):
        return "unstated_premise", {"unstated": missing}
    if echoes_question(asked(state), answer, result.claims):
        return "restates_question", {}
    return None, {}


def _check(result: GroundingResult, supported: int) -> SourcesCheck:
    return SourcesCheck(
        grounded=result.grounded,
        confidence=result.confidence,
        issues=result.issues,
        unsupported_sentences=result.unsupported_sentences,
        claims=len(result.claims),
        supported=supported,
        not_found=None,
        repairs=[],
    )


def _detail(result: GroundingResult, fixed: Repaired | None) -> str:
    claims = len(result.claims)
    said = f"{claims - len(result.unsupported_sentences)} of {claims} claims supported"
    return said + (f"; {len(fixed.changes)} citation(s) repaired" if fixed and fixed.changes else "")


def _out(runtime: Runtime[GraphDeps], check: SourcesCheck, answer: str | None, detail: str) -> dict:
    out = {"validation": {"sources": check}, **report(runtime, NODE, detail=detail)}
    return {**out, "answer": answer} if answer is not None else out
