"""Greeting, thanks, goodbye and small-talk detection with canned replies; real questions get None.

A message is small talk only when, once its greeting/thanks/small-talk phrases and filler words are removed,
nothing is left: "hi there!" and "thanks, that helped" are; "hi, what is the notice period?" is not.
"""

import re
from dataclasses import dataclass
from typing import Literal

from backend.contract.text import word_set

Intent = Literal["greeting", "thanks", "goodbye", "capabilities", "identity", "wellbeing", "acknowledgement"]

DEFAULT_REPLIES: dict[str, str] = {
    "greeting": "Hello! Ask me anything about your team's documents.",
    "thanks": "You're welcome!",
    "goodbye": "Goodbye! Come back any time you have a question about your documents.",
    "capabilities": "I answer questions about your team's documents and cite the passages I used. "
    "You can aim a question at one document with @name.",
    "identity": "I'm Ragline, an assistant that answers questions about your team's documents.",
    "wellbeing": "I'm doing well, thanks. What would you like to know about your documents?",
    "acknowledgement": "Glad to help. Anything else about your documents?",
}

_PHRASES: tuple[tuple[Intent, str], ...] = (  # checked in order; the first intent found names the message
    (
        "thanks",
        r"thanks?( you)?|thank u|thx|ty|cheers|much appreciated|appreciate it|i appreciate (it|that)|"
        r"many thanks|thanks a lot|merci|danke",
    ),
    (
        "goodbye",
        r"bye|goodbye|good bye|bye bye|see you( later| soon)?|see ya|later|have a (nice|good|great) "
        r"(day|one|evening|weekend)|good night|take care|that's all|that is all",
    ),
    (
        "capabilities",
        r"what (can|do) you do|what are you (for|able to do)|how (can|do) you help( me)?|"
        r"what can i ask( you)?|(can|could) you help( me)?|help me|help",
    ),
    (
        "identity",
        r"who are you|what are you|what is your name|what's your name|are you (a bot|an ai|human|a human|real)",
    ),
    (
        "wellbeing",
        r"how are you( doing)?( today)?|how is it going|how's it going|how are things|what's up|whats up|sup",
    ),
    ("greeting", r"hi|hello|hey|hiya|howdy|greetings|yo|hallo|hola|good (morning|afternoon|evening|day)|morning"),
    (
        "acknowledgement",
        r"ok|okay|k|cool|great|nice|perfect|awesome|got it|understood|alright|all right|sounds good|"
        r"that helps|that helped|that was helpful|very helpful|helpful|makes sense|i see",
    ),
)
_FILLER = word_set(
    "there all again so much very a lot you ragline bot assistant team for the your that this it is was "
    "really everyone folks guys mate friend just and oh well please indeed too"
)
_COMPILED = tuple((intent, re.compile(rf"\b({pattern})\b")) for intent, pattern in _PHRASES)
_MAX_WORDS = 12


@dataclass(frozen=True)
class IntentMatch:
    """A small-talk message and the short reply to send without the LLM."""

    intent: Intent
    reply: str


def classify_intent(message: str, replies: dict[str, str] | None = None) -> IntentMatch | None:
    """The small-talk intent of a message with its canned reply, or None for a real question."""
    text = _normalise(message)
    if not text or len(text.split()) > _MAX_WORDS:
        return None
    found: list[Intent] = []
    for intent, pattern in _COMPILED:
        if pattern.search(text):
            found.append(intent)
            text = pattern.sub(" ", text)
    if not found or any(word not in _FILLER for word in text.split()):
        return None
    intent = found[0]
    return IntentMatch(intent, (replies or DEFAULT_REPLIES).get(intent, DEFAULT_REPLIES[intent]))


def _normalise(message: str) -> str:
    """Lower case, straight apostrophes, letters/digits/apostrophes only, single spaces."""
    text = message.lower().replace("\u2019", "'")
    return " ".join(re.sub(r"[^a-z0-9' ]+", " ", text).split())
