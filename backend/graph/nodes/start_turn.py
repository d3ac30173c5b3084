"""start_turn: the first node of every turn; derives the turn's keys from the request and resets the rest.

Contract: reads `request`; writes every per-turn key (question, mode, use_memory, run_id, started_at, routing,
retrieval and answer keys to their empty values; `triage`, `validation` and `steps` reset through their reducers;
`turn_record` None). Memory keys are left alone, with two exceptions: a request that does not keep the scope
(`keep_scope` false) ends the thread's `scope`; and when the prompt's window still shows a passage of a document
the asker may no longer read, the window starts after that turn (`window_start`, `window_note`), and the
thread's KV cache moves to a new epoch (`cache_epoch`), so no replica reuses what it cached before.
"""

import time
import uuid

from langgraph.runtime import Runtime

from backend.graph.deps import GraphDeps
from backend.graph.history import earlier_note
from backend.graph.state import ChatState, TurnRequest


async def start_turn(state: ChatState, runtime: Runtime[GraphDeps]) -> dict:
    """Begin a turn with nothing left over from the previous one."""
    window = _without_lost_passages(state, runtime.context.readable)
    if (lease := runtime.context.lease) is not None:  # no replica reuses its cache of the cut turns
        lease.begin(window.get("cache_epoch", state.get("cache_epoch", 0)), cut=bool(window))
    ended = {} if state["request"].get("keep_scope", True) else {"scope": []}  # the user left the @-scope
    return {**turn_defaults(state["request"]), **window, **ended}


def _without_lost_passages(state: ChatState, readable: frozenset[str] | None) -> dict:
    """A window that starts after the last earlier turn whose prompt showed a passage the asker may no longer read.

    Earlier prompts are replayed word for word (so the KV cache serves the follow-up), passages included; once the
    asker lost access to one's document (or it was deleted), the model must not read it again. The turns before
    the new start are then stood in for by the summary and their questions, as when the window is cut for length,
    and the thread's cache moves to a new epoch: this turn computes its prompt afresh, and so does the next turn
    of any replica that cached the thread before (ModelLease.begin)."""
    if readable is None or not state["request"].get("use_memory", True):  # a turn without memory shows no history
        return {}
    transcript, ledger, start = state.get("transcript", []), state.get("ledger", {}), state.get("window_start", 0)
    lost = [
        i
        for i, entry in enumerate(transcript[start:], start)
        if any(sid in ledger and ledger[sid].get("doc_id") not in readable for sid in entry["sources"])
    ]
    if not lost:
        return {}
    cut = lost[-1] + 1
    return {
        "window_start": cut,
        "window_note": earlier_note(state, cut),
        "cache_epoch": state.get("cache_epoch", 0) + 1,
    }


def turn_defaults(request: TurnRequest) -> dict:
    """Every per-turn key for this request; reducer keys get None, which resets them."""
    question = request["question"]
    return {
        "question": question,
        "mode": request.get("mode", "auto"),
        "use_memory": request.get("use_memory", True),
        "input_redactions": request.get("input_redactions", []),
        "guardrail": request.get("guardrail", "enforce"),
        "run_id": request.get("run_id") or uuid.uuid4().hex,
        "started_at": time.time(),
        "rewritten_query": question,
        "completed_question": "",
        "base_query": "",
        "intent": "chat",
        "route_reason": "",
        "targeted_documents": [],
        "scope_source": "none",
        "mention_notes": [],
        "followup": {"is_followup": False, "kind": "new", "confidence": 1.0, "reason": "not checked"},
        "context_decision": {"decision": "fresh", "reason": "not decided"},
        "documents": [],
        "fresh_ids": [],
        "dropped": [],
        "sources": [],
        "answer": "",
        "sent": None,
        "triage": None,
        "validation": None,
        "steps": None,
        "turn_record": None,
    }
