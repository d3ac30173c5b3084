"""Input guardrail policy: per category (injection, jailbreak, toxicity, each PII type) block, redact or allow.

Setting format (e.g. ``RAG_GUARDRAIL_POLICY``): comma- or semicolon-separated ``key=action`` pairs, case and spaces
ignored, later pairs override earlier ones, and a PII type key always beats the ``pii`` key whatever the order.

    injection=block,jailbreak=block,toxicity=block,pii=redact,email=allow,credit_card=block

keys:    injection, jailbreak, toxicity, pii (every PII type), email, phone, credit_card (card), iban,
         us_ssn (ssn), uk_nino (nino), national_id (us_ssn and uk_nino), ip_address (ip)
actions: block | allow for injection, jailbreak, toxicity; block | redact | allow for PII keys
An empty setting means the defaults: injection, jailbreak and toxicity blocked, all PII redacted.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from backend.guardrails.classifier import judged_by_embedding
from backend.guardrails.injection import InjectionResult, score_injection
from backend.guardrails.pii import PII_TYPES, PiiMatch, apply_redactions, find_pii
from backend.guardrails.toxicity import ToxicityResult, score_toxicity

Action = Literal["block", "redact", "allow"]
Verdict = Literal["pass", "block", "redact"]
ACTIONS: tuple[Action, ...] = ("block", "redact", "allow")
_PII_KEYS: dict[str, tuple[str, ...]] = {
    "pii": PII_TYPES,
    "email": ("EMAIL",),
    "phone": ("PHONE",),
    "credit_card": ("CREDIT_CARD",),
    "card": ("CREDIT_CARD",),
    "iban": ("IBAN",),
    "us_ssn": ("US_SSN",),
    "ssn": ("US_SSN",),
    "uk_nino": ("UK_NINO",),
    "nino": ("UK_NINO",),
    "national_id": ("US_SSN", "UK_NINO"),
    "ip_address": ("IP_ADDRESS",),
    "ip": ("IP_ADDRESS",),
}
BLOCK_MESSAGES: dict[str, str] = {
    "injection": "I can't act on instructions that try to change how I work. "
    "Please ask a question about your documents.",
    "jailbreak": "I can't switch off my rules or take on another persona. Please ask a question about your documents.",
    "toxicity": "I can't respond to abusive or threatening messages. Please rephrase your question respectfully.",
    "pii": "Your message contains personal data that must not be sent here (for example a card number). "
    "Please remove it and ask again.",
}


@dataclass(frozen=True)
class GuardrailPolicy:
    """Action per category; PII actions per PII type (EMAIL, PHONE, ...)."""

    injection: Action = "block"
    jailbreak: Action = "block"
    toxicity: Action = "block"
    pii: dict[str, Action] = field(default_factory=lambda: dict.fromkeys(PII_TYPES, "redact"))

    @classmethod
    def parse(cls, setting: str) -> "GuardrailPolicy":
        """Policy from a compact "key=action,..." setting; raises ValueError naming a bad key or action."""
        general: dict[str, Action] = {}
        per_type: dict[str, Action] = {}
        pii_general: dict[str, Action] = {}
        for pair in (p.strip() for p in setting.replace(";", ",").split(",")):
            if not pair:
                continue
            key, sep, value = (s.strip().lower() for s in pair.partition("="))
            if not sep or value not in ACTIONS:
                raise ValueError(f"guardrail policy: expected key=block|redact|allow, got {pair!r}")
            action: Action = value  # type: ignore[assignment]
            if key in ("injection", "jailbreak", "toxicity"):
                if action == "redact":
                    raise ValueError(f"guardrail policy: {key} can only be block or allow")
                general[key] = action
            elif key in _PII_KEYS:
                target = pii_general if key == "pii" else per_type
                target.update(dict.fromkeys(_PII_KEYS[key], action))
            else:
                raise ValueError(
                    f"guardrail policy: unknown key {key!r}; known: injection, jailbreak, toxicity, "
                    f"{', '.join(_PII_KEYS)}"
                )
        pii = dict.fromkeys(PII_TYPES, "redact") | pii_general | per_type
        return cls(pii=pii, **general)

    def to_setting(self) -> str:
        """The policy as a compact setting string that parse() reads back."""
        parts = [f"injection={self.injection}", f"jailbreak={self.jailbreak}", f"toxicity={self.toxicity}"]
        return ",".join(parts + [f"{t.lower()}={a}" for t, a in self.pii.items()])


@dataclass(frozen=True)
class InputVerdict:
    """Outcome for one user message; text is redacted whenever any PII is redacted or blocked."""

    action: Verdict
    text: str
    categories: list[str]
    matches: list[PiiMatch]
    reason: str
    scores: dict[str, float] = field(default_factory=dict)


def check_input(
    text: str, policy: GuardrailPolicy | None = None, embed: Callable[[list[str]], Sequence] | None = None
) -> InputVerdict:
    """Run injection, toxicity and PII checks on a user message and apply the policy.

    embed: the offline MiniLM embedder (a list of texts to their vectors), which turns on the embedding
    classifier for long messages; None where documents are embedded by another model."""
    policy = policy or GuardrailPolicy()
    blocked: list[str] = []
    reasons: list[str] = []
    scores: dict[str, float] = {}
    if policy.injection != "allow" or policy.jailbreak != "allow":
        vector = embed([text])[0] if embed and judged_by_embedding(text) else None
        injection = score_injection(text, "user", vector=vector)
        scores["injection"] = injection.score
        _apply_injection(injection, policy, blocked, reasons)
    if policy.toxicity != "allow":
        toxicity = score_toxicity(text)
        scores["toxicity"] = toxicity.score
        _apply_toxicity(toxicity, blocked, reasons)
    hidden = [m for m in find_pii(text) if policy.pii.get(m.type, "redact") != "allow"]
    pii_blocked = sorted({m.type for m in hidden if policy.pii.get(m.type) == "block"})
    if pii_blocked:
        blocked.append("pii")
        reasons.append(f"personal data not accepted: {', '.join(t.lower() for t in pii_blocked)}")
    categories = blocked + sorted({f"pii:{m.type.lower()}" for m in hidden})
    redacted = apply_redactions(text, hidden)
    if blocked:
        return InputVerdict("block", redacted, categories, hidden, "; ".join(reasons), scores)
    if hidden:
        kinds = ", ".join(sorted({m.type.lower() for m in hidden}))
        return InputVerdict("redact", redacted, categories, hidden, f"redacted: {kinds}", scores)
    return InputVerdict("pass", text, [], [], "", scores)


def _apply_injection(result: InjectionResult, policy: GuardrailPolicy, blocked: list[str], reasons: list[str]) -> None:
    """Record a block when the detector flagged the message and its kind is blocked by the policy."""
    kind = result.kind or "injection"
    if result.flagged and getattr(policy, kind) == "block":
        blocked.append(kind)
        reasons.append(f"{kind} ({', '.join(result.reasons[:3])}; score {result.score:.2f})")


def _apply_toxicity(result: ToxicityResult, blocked: list[str], reasons: list[str]) -> None:
    """Record a block when the message is toxic (only called when the policy blocks toxicity)."""
    if result.flagged:
        blocked.append("toxicity")
        reasons.append(f"toxicity ({', '.join(result.reasons[:3])}; score {result.score:.2f})")


def block_message(verdict: InputVerdict) -> str:
    """The fixed user-facing explanation for a blocked message (first blocking category wins)."""
    for category in verdict.categories:
        if category in BLOCK_MESSAGES:
            return BLOCK_MESSAGES[category]
    return BLOCK_MESSAGES["injection"]
