"""Toxic-content detection from a small curated lexicon: threats, directed insults, harassment, slurs.

Aimed at abuse of people (the user's colleagues or the assistant), not at rough words about things:
"this damn unit", "kill the process" and "the fan is dead" stay below the threshold. Slurs are kept as
truncated SHA-256 hashes of their folded spelling so this file does not spell them out; add a term with
``slur_hash(word)``.
"""

import hashlib
import re
from dataclasses import dataclass, field

TOXICITY_THRESHOLD = 0.5

_SLUR_HASHES = frozenset(
    {
        "12e6274e4309293e", "158869a97379229b", "22fc75e65a0e9d34", "333f7618092958c7",
        "362234c02fd606c4", "3b1e0d7c5dd45583", "63bd9333b1a0b11d", "65ffb1a3641348d6",
        "77d1228a9f021466", "98b52c4b6b7d1f48", "b1106bd2a8594910", "b27c1d7f1e7ff7b3",
        "bd331fb1d24298f5", "c3de533e9b7fe63b", "eef3bd091670c344", "f9d0d9b18ae9033a",
    }
)  # fmt: skip
_LEET = str.maketrans("013457@$!", "oieastasi")
_TOKEN = re.compile(r"[\w@$!*]+")


@dataclass(frozen=True)
class ToxicityResult:
    """Score in 0..1, flagged when score >= TOXICITY_THRESHOLD, names of the rules that fired."""

    score: float
    flagged: bool
    reasons: list[str] = field(default_factory=list)


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


_PERSON = r"(you|u|ya|him|her|them|your (family|kids|boss|manager)|everyone here)"
_INSULT = (
    r"(stupid|idiot\w*|moron\w*|dumb(ass)?|imbecile|cretin|loser|jerk|clown|asshole|arsehole|bastard|bitch|dickhead|"
    r"douche\w*|prick|twat|wanker|scum(bag)?|pathetic|worthless|useless|incompetent|brainless|pig|trash|garbage|"
    r"piece of (shit|crap|garbage|trash)|waste of (space|oxygen))"
)
_INSULT_NOUN = (
    r"(idiot|moron|imbecile|cretin|loser|asshole|arsehole|bastard|bitch|dickhead|prick|twat|wanker|scumbag|dumbass)"
)
# fmt: off
_RULES: tuple[tuple[str, float, re.Pattern[str]], ...] = (
    ("threat", 0.9, _rx(
        rf"\b(i|we)('ll| will| am going to|'m going to|'m gonna| gonna| are going to|'re going to| want to)\s+"
        rf"(kill|hurt|murder|beat( up)?|shoot|stab|strangle|destroy|break your|rape|find) {_PERSON}\b")),
    ("threat", 0.9, _rx(
        r"\b(watch your back|you('re| are) (dead|going to die|gonna die)|i know where you live|"
        r"you('ll| will) (be sorry|pay for (this|that)))\b")),
    ("self_harm_incitement", 0.9, _rx(
        r"\b((go )?(kill|hang|shoot) yourself|kys|go die|die in a fire|(you|u) should (just )?die)\b")),
    ("violent_hate", 0.9, _rx(
        r"\b(should|must|deserve to|ought to) (all )?(die|be (killed|exterminated|shot|gassed|hanged|lynched|"
        r"wiped out))\b")),
    ("dehumanising", 0.7, _rx(r"\b(are|is) (all )?(vermin|subhuman|animals|parasites|cockroaches|rats|savages)\b")),
    ("directed_insult", 0.75, _rx(
        rf"\b(you('re| are)|ur)\s+(such |a |an |so |the |just |a total |a complete |a fucking |fucking )*{_INSULT}\b")),
    ("directed_insult", 0.75, _rx(rf"\byou\s+(fucking )?{_INSULT_NOUN}\b")),
    ("directed_insult", 0.7, _rx(r"\b(you|u)\s+(stupid|dumb|useless|fucking|fat|ugly|lazy|worthless)\s+\w+")),
    ("directed_profanity", 0.75, _rx(
        r"\b(fuck|f\*+k|screw|damn) (you|u|off|yourself|your \w+)\b|\bgo to hell\b|"
        r"\bshut (the fuck |the hell )?up\b|\bkiss my ass\b|\bpiss off\b|\beat shit\b|\bsuck my\b|\bstfu\b|\bgtfo\b")),
    ("harassment", 0.6, _rx(
        r"\b(nobody|no one) (likes|wants|cares about|would miss) (you|u)\b|\byou('re| are) (so )?(ugly|fat|"
        r"disgusting|a disgrace|an embarrassment|pathetic)\b|\byou should be (fired|ashamed)\b")),
    ("sexual_harassment", 0.8, _rx(
        r"\b(send (me )?nudes|show me your (body|tits|boobs)|sleep with me|(nice|great) (tits|boobs|ass))\b")),
    ("insult_to_assistant", 0.4, _rx(
        r"\b(stupid|dumb|useless|worthless|fucking|shitty|pathetic) (bot|ai|assistant|machine|program|chatbot)\b")),
    ("profanity", 0.2, _rx(r"\b(fuck\w*|shit\w*|bullshit|crap|damn|bloody hell|wtf|asshole|bitch\w*|bastard)\b")),
)
# fmt: on


def slur_hash(word: str) -> str:
    """Truncated SHA-256 of a word's folded spelling (lower case, leetspeak undone, letter runs collapsed)."""
    return hashlib.sha256(_fold(word).encode()).hexdigest()[:16]


def score_toxicity(text: str) -> ToxicityResult:
    """Score a message for threats, directed insults, harassment and slurs."""
    weights: dict[str, float] = {}
    for name, weight, pattern in _RULES:
        if pattern.search(text):
            weights[name] = max(weight, weights.get(name, 0.0))
    if _has_slur(text):
        weights["slur"] = 0.9
    remaining = 1.0
    for weight in weights.values():
        remaining *= 1 - weight
    score = round(1 - remaining, 4)
    reasons = sorted(weights, key=lambda n: -weights[n])
    return ToxicityResult(score, score >= TOXICITY_THRESHOLD, reasons)


def _fold(word: str) -> str:
    """Lower case, leetspeak digits and symbols to letters, letters only, repeated letters collapsed."""
    letters = re.sub(r"[^a-z]", "", word.lower().translate(_LEET))
    return re.sub(r"(.)\1+", r"\1", letters)


def _has_slur(text: str) -> bool:
    """True when a token, or the token without a plural s, hashes to a listed slur."""
    for token in _TOKEN.findall(text):
        folded = _fold(token)
        if len(folded) < 3:
            continue
        for form in {folded, folded.removesuffix("s")}:
            if hashlib.sha256(form.encode()).hexdigest()[:16] in _SLUR_HASHES:
                return True
    return False
