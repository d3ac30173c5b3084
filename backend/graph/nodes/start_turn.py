"""start_turn: the first node of every turn; derives the turn's keys from the request and resets the rest.

Contract: reads `request`; writes every per-turn key (question, mode, use_memory, run_id, started_at, routing,
retrieval and answer keys to their empty values; `triage`, `validation` and `steps` reset through their reducers;
`turn_record` None). Memory keys are left alone.
"""

import time
import uuid

from langgraph.runtime import Runtime

from backend.graph.deps import GraphDeps
from backend.graph.state import ChatState, TurnRequest


async def start_turn(state: ChatState, runtime: Runtime[GraphDeps]) -> dict:
    """Begin a turn with nothing left over from the previous one."""
    return turn_defaults(state["request"])


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
