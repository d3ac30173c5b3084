"""Rule-based tone validator that may rewrite an answer: no emoji, no "As an AI", no banned phrases,
no trailing question unless the user asked for suggestions or options. Fenced code is left alone."""

import re
from dataclasses import dataclass

from backend.guardrails.text import split_code, split_sentences

DEFAULT_BANNED_PHRASES: tuple[str, ...] = (
    "I hope this helps",
    "Hope this helps",
    "Feel free to ask",
    "Let me know if you have any other questions",
    "Let me know if you need anything else",
    "Great question",
    "Happy to help",
    "As of my last update",
    "As of my knowledge cutoff",
)
_EMOJI = re.compile(
    "[\U0001f000-\U0001faff\U00002600-\U000027bf\U0001f1e6-\U0001f1ff\u2b00-\u2bff\u2300-\u23ff"
    "\ufe0f\u200d\u20e3\U000e0020-\U000e007f]+"
)
_AS_AN_AI = re.compile(
    r"^(as an ai( language model| assistant| model)?|as a (large )?language model|as an artificial intelligence|"
    r"(i am|i'm) (just |only )?an ai( language model| assistant)?)\b[,:]?\s*",
    re.IGNORECASE,
)
_SELF_TALK = re.compile(
    r"^(i|and i)\s+(can't|cannot|can not|don't|do not|am not|have no|am unable|won't)\b", re.IGNORECASE
)
_ASKS_FOR_OPTIONS = re.compile(
    r"\b(suggest\w*|options?|ideas?|recommend\w*|alternatives?|what else|what should i|brainstorm|any other|"
    r"examples?|follow-?up questions?|ask me)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class ToneConfig:
    """Which rules run; banned phrases are matched case-insensitively."""

    strip_emoji: bool = True
    drop_as_an_ai: bool = True
    drop_trailing_questions: bool = True
    banned_phrases: tuple[str, ...] = DEFAULT_BANNED_PHRASES


@dataclass(frozen=True)
class ToneResult:
    """appropriate is True when no rule changed the answer; text is the (possibly rewritten) answer."""

    appropriate: bool
    adjustments: list[str]
    text: str
    original_text: str


@dataclass
class _Line:
    """One line of prose: its sentences, and whether it had any before rewriting."""

    sentences: list[str]
    had_text: bool


def check_tone(answer: str, question: str = "", config: ToneConfig | None = None) -> ToneResult:
    """Apply the tone rules to an answer; question decides whether trailing questions may stay."""
    config = config or ToneConfig()
    adjustments: list[str] = []
    blocks: list[str | list[_Line]] = []
    for piece, code in split_code(answer):
        if code:
            blocks.append(piece)
            continue
        lines = [_Line(split_sentences(line), bool(line.strip())) for line in piece.split("\n")]
        for line in lines:
            line.sentences = [new for s in line.sentences if (new := _rewrite_sentence(s, config, adjustments))]
        blocks.append(lines)
    if config.drop_trailing_questions and not _ASKS_FOR_OPTIONS.search(question):
        _drop_trailing_questions(blocks, adjustments)
    if not adjustments:
        return ToneResult(True, [], answer, answer)
    text = "".join(block if isinstance(block, str) else _join(block) for block in blocks)
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    return ToneResult(False, list(dict.fromkeys(adjustments)), text, answer)


def _rewrite_sentence(sentence: str, config: ToneConfig, adjustments: list[str]) -> str:
    """One sentence after the emoji, "As an AI" and banned-phrase rules; empty when dropped."""
    if config.strip_emoji and _EMOJI.search(sentence):
        sentence = re.sub(r"\s{2,}", " ", _EMOJI.sub("", sentence)).strip()
        sentence = re.sub(r"\s+([,.!?;:])", r"\1", sentence)
        adjustments.append("removed emoji")
    if config.drop_as_an_ai and (m := _AS_AN_AI.match(sentence)):
        rest = sentence[m.end() :]
        adjustments.append("removed 'As an AI' phrasing")
        sentence = "" if not rest or _SELF_TALK.match(rest) else rest[0].upper() + rest[1:]
    for phrase in config.banned_phrases:
        found = re.search(rf"\b{re.escape(phrase)}\b[,!.]?\s*", sentence, re.IGNORECASE)
        if found:
            adjustments.append(f"removed phrase: {phrase}")
            rest = (sentence[: found.start()] + sentence[found.end() :]).strip()
            sentence = "" if len(re.findall(r"\w+", rest)) < 3 else rest[0].upper() + rest[1:]
    return sentence


def _drop_trailing_questions(blocks: list[str | list[_Line]], adjustments: list[str]) -> None:
    """Remove questions at the very end of the answer while at least one other sentence remains."""
    while (last := _last_line(blocks)) is not None and sum(_counts(blocks)) > 1:
        if not last.sentences[-1].rstrip(" )\"'*_").endswith("?"):
            return
        last.sentences.pop()
        adjustments.append("removed trailing question")


def _last_line(blocks: list[str | list[_Line]]) -> _Line | None:
    """The line holding the answer's last sentence, or None when the answer ends in code."""
    for block in reversed(blocks):
        if isinstance(block, str):
            if block.strip():
                return None
            continue
        for line in reversed(block):
            if line.sentences:
                return line
    return None


def _counts(blocks: list[str | list[_Line]]) -> list[int]:
    """Number of sentences per prose line."""
    return [len(line.sentences) for block in blocks if not isinstance(block, str) for line in block]


def _join(lines: list[_Line]) -> str:
    """A prose block back as text, without the lines that lost all their sentences."""
    return "\n".join(" ".join(line.sentences) for line in lines if line.sentences or not line.had_text)
