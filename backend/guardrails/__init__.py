"""Synchronous guardrail and triage detectors (no language model) that the graph nodes wrap.

Input:      check_input(text, GuardrailPolicy, embed=None) -> InputVerdict  (policy.py: injection, toxicity, PII;
            embed, the offline MiniLM, adds the embedding classifier for long messages)
Documents:  score_injection(chunk, source="document") -> InjectionResult  (injection.py, ingest and retrieval)
Triage:     classify_intent(message) -> IntentMatch | None             (intent.py)
            match_faq(question, load_faq(path)) -> FaqMatch | None     (faq.py)
Validators: check_grounding(answer, {"S1": text}, embed=None) -> GroundingResult  (grounding.py)
            check_tone(answer, question) -> ToneResult                 (tone.py)
            check_output(answer, sources_text, question, system_prompt) -> OutputVerdict  (output.py)
Streaming:  StreamRedactor(allowed=known_pii(question, sources)).feed(token) / .flush()  (stream.py)
"""

from backend.guardrails.faq import FaqEntry, FaqMatch, load_faq, match_faq, parse_faq
from backend.guardrails.grounding import GroundingResult, check_grounding
from backend.guardrails.injection import INJECTION_THRESHOLD, InjectionResult, score_injection
from backend.guardrails.intent import IntentMatch, classify_intent
from backend.guardrails.output import OutputVerdict, check_output
from backend.guardrails.pii import PII_TYPES, PiiMatch, find_pii, known_pii, redact
from backend.guardrails.policy import BLOCK_MESSAGES, GuardrailPolicy, InputVerdict, block_message, check_input
from backend.guardrails.stream import StreamRedactor
from backend.guardrails.tone import ToneConfig, ToneResult, check_tone
from backend.guardrails.toxicity import TOXICITY_THRESHOLD, ToxicityResult, score_toxicity

__all__ = [
    "BLOCK_MESSAGES",
    "INJECTION_THRESHOLD",
    "PII_TYPES",
    "TOXICITY_THRESHOLD",
    "FaqEntry",
    "FaqMatch",
    "GroundingResult",
    "GuardrailPolicy",
    "InjectionResult",
    "InputVerdict",
    "IntentMatch",
    "OutputVerdict",
    "PiiMatch",
    "StreamRedactor",
    "ToneConfig",
    "ToneResult",
    "ToxicityResult",
    "block_message",
    "check_grounding",
    "check_input",
    "check_output",
    "check_tone",
    "classify_intent",
    "find_pii",
    "known_pii",
    "load_faq",
    "match_faq",
    "parse_faq",
    "redact",
    "score_injection",
    "score_toxicity",
]
