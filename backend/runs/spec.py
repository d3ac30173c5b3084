"""What a run is asked to do: who asks (Asker) and the turn to run (TurnSpec)."""

from dataclasses import dataclass

from backend.contract.types import GuardrailMode, Mode


@dataclass(frozen=True)
class Asker:
    """Who asks: the documents they may read (None: all, RAG_AUTH=off) and the short context the prompt gives about
    them (their profile, and what the request adds)."""

    readable: frozenset[str] | None = None
    context: str = ""


@dataclass(frozen=True)
class TurnSpec:
    """What to run."""

    question: str
    mode: Mode
    thread_id: str
    run_id: str
    use_memory: bool
    guardrail: GuardrailMode = "enforce"
    asker: Asker = Asker()
    keep_scope: bool = True
