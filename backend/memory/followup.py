"""Follow-up detection and the context decision, by rules: no model call is spent where a heuristic decides."""

import re
from dataclasses import asdict, dataclass
from typing import Literal

from backend.contract.text import stem, strip_mentions, typed_content_words, word_set

Kind = Literal["new", "clarification", "reference"]
Decision = Literal["fresh", "reuse", "both"]

# The whole message asks whether the last answer is right: answered by checking it against its sources, not by a
# bare "Yes." ("Can you check the travel policy for the hotel limit?" is a question of its own).
CONFIRM = (
    r"((are|r) (you|u) (sure|certain)|really|is (that|this|it) (really )?(right|correct|true|so)|"
    r"((can|could) you )?(double[- ]?)?check( (that|this|it))?|how do you know)"
)
CONFIRM_RE = re.compile(rf"^\s*{CONFIRM}\s*[?.!]*\s*$", re.IGNORECASE)
CLARIFY_RE = re.compile(
    r"^\s*(are you (sure|certain)|really\??$|why\??$|how so\??$|"
    r"explain( (more|further|that|it|this|again|briefly)\b| in (more |greater |full )?detail\b|\s*[?.!]*\s*$)|"
    r"((can|could) you |please )explain (that|it|this)\b|"
    r"(can you |could you |please )?(elaborate|clarify|rephrase|simplify|say that again)|tell me more|"
    r"what do you mean|in (simpler|other) words|more details?|go on|say more|"
    rf"{CONFIRM}\s*[?.!]*\s*$)",
    re.IGNORECASE,
)
REFERENCE_RE = re.compile(
    r"\b(it|its|it's|that|this|these|those|they|them|their|he|she|him|her|there|then|same|above|"
    r"the (last|first|second|third|previous|other|former|latter) (one|ones|item|point|step|option)s?|"
    r"the last one|the first one|which one|what about|how about|and (for|if|what|how|when|the)|also)\b",
    re.IGNORECASE,
)
PAST_CONVERSATION_RE = re.compile(
    r"\b((what|which)( \w+)? (did |have )?(we|i|you) (discuss|talk|cover|ask|say|mention)\w*|"
    r"previous(ly)? (question|answer)s?|you (said|told me|mentioned)|"
    r"(so far|earlier|before) in (this|our) (conversation|chat)|what did we \w+ (earlier|before|so far))\b",
    re.IGNORECASE,
)
# "Disregard my previous question. What are the core hours?" sets the conversation aside and asks something new.
DISMISSED_RE = re.compile(
    r"\b(disregard|ignore|forget( about)?|never ?mind|scratch|skip|drop)\s+((my|the|your|that|this)\s+)?"
    r"(previous|last|earlier|other)\s+(question|answer|message|request)s?\b",
    re.IGNORECASE,
)
# What a question about the conversation asks with, not what about: "what did you say about contractors earlier?"
CONVERSATION_WORDS = word_set(
    "what which did have we i you discuss discussed talk talked cover covered ask asked say said mention mentioned "
    "tell told previous previously question questions answer answers far earlier before conversation chat"
)


def about_conversation(question: str) -> bool:
    """Whether the question asks about the conversation itself ("What did we discuss?", "what did you say about
    contractors earlier?"), not one that sets it aside ("Disregard my previous question. What are …?")."""
    return bool(PAST_CONVERSATION_RE.search(DISMISSED_RE.sub(" ", question)))


ENTITY_RE = re.compile(
    r"\b[A-Z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)+\b"  # Zephyr-9, IT-Security
    r"|\b[A-Z]\d+\b"  # E7
    r"|\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)+\b"  # Northwind Climate Systems
    r"|\b[A-Z]{2,}\b"  # VPN, MFA
)
STOP_ENTITIES = {"I", "OK", "AI", "FAQ", "The", "This", "That", "What", "How", "Why", "When", "Where", "Which"}
SHORT_QUESTION_WORDS = 6


@dataclass(frozen=True)
class FollowUp:
    """Whether a question leans on the conversation, how, and why we think so."""

    is_followup: bool
    kind: Kind
    confidence: float
    reason: str

    def as_dict(self) -> dict:
        """Plain dict for the graph state."""
        return asdict(self)


LEADING_WORDS = re.compile(r"^(The|A|An|Our|My|Your|This|That|What|How|Which|When|Where|Why)\s+")
CITATION_RE = re.compile(r"^S\d+$")
ACRONYM_RE = re.compile(r"\b[A-Z]{2,}\b")


def entities(text: str) -> list[str]:
    """Named things in a text (products, codes, proper names, acronyms), in order, without duplicates."""
    found = [LEADING_WORDS.sub("", m.group(0).strip()) for m in ENTITY_RE.finditer(text)]
    return [e for e in dict.fromkeys(found) if e not in STOP_ENTITIES and not CITATION_RE.match(e)]


def new_terms(question: str, history_text: str) -> list[str]:
    """Entities in the question that the recent conversation never mentioned."""
    seen = history_text.lower()
    return [e for e in entities(question) if e.lower() not in seen]


# Words that name nothing, beyond the stop words of content_words: a short question made only of these and words
# the conversation used refers back. Rule words ("included", "allowed") and generic nouns ("policy", "rules") are
# in follow-ups and new questions alike ("Is parking included?"; "What is the parental leave policy?").
FUNCTION_WORDS = word_set(
    "a an the of to in on at for with by from as into about and or but if so than then is are was were be been do "
    "does did has have had can could will would should may might must shall what which who whom whose when where why "
    "how i you we they he she it me my your our their his her its this that these those there here more most much "
    "many some any all each every no not only also just still even very too please again other same one ones get "
    "explain tell say detail details word words simpler simple briefly short shorter further elaborate long take "
    "takes happen happens include included includes allow allowed cover covered required possible available need "
    "needed policy policies rule rules document documents number information info myself yourself ourselves "
    "themselves itself"
)
MIN_NEW_WORDS = 2  # "What is the deadline?" after an expense answer leans on it; "the parental leave policy" does not


def content_stems(text: str) -> list[str]:
    """The words of a text that name something, stemmed (content_words), in order."""
    return list(dict.fromkeys(stem(w) for w in typed_content_words(text) if w not in FUNCTION_WORDS))


def new_words(question: str, history_text: str) -> list[str]:
    """The question's content words (stemmed) that the recent conversation never used."""
    seen = set(content_stems(history_text))
    return [w for w in content_stems(question) if w not in seen]


QUESTION_OPENER = re.compile(
    r"^\s*(what|which|who|whom|whose|when|where|why|how|is|are|was|were|do|does|did|can|could|will|would|should|"
    r"may|might|must|shall|has|have)\b",
    re.IGNORECASE,
)


HYPOTHETICAL = re.compile(r"^\s*(what|how) (if|about)\b", re.IGNORECASE)  # "What if the trip is urgent?"


def new_subject(question: str, history_text: str) -> list[str]:
    """A whole question ("What is the parental leave policy?", not "and during probation?") most of whose content
    words, and at least MIN_NEW_WORDS, the recent conversation never used: those words (stemmed); [] otherwise.
    Such a short question is a new topic, not a follow-up with its subject left out."""
    if not QUESTION_OPENER.match(question) or HYPOTHETICAL.match(question) or about_conversation(question):
        return []  # a fragment, "what if …?", or a question about the conversation itself ("What did we discuss?")
    stems, unseen = content_stems(question), new_words(question, history_text)
    return unseen if len(unseen) >= MIN_NEW_WORDS and 2 * len(unseen) > len(stems) else []


def detect(question: str, history_text: str) -> FollowUp:
    """Classify a question given the text of the recent exchanges ('' when there are none)."""
    if not history_text.strip():
        return FollowUp(False, "new", 1.0, "first question of the thread")
    words = len(question.split())
    clarify = CLARIFY_RE.search(question)
    rest = question[clarify.end() :] if clarify else ""  # "Explain more about the VPN" asks about something else;
    if clarify and (REFERENCE_RE.search(rest) or not new_words(rest, history_text)):  # not "… about that price"
        return FollowUp(True, "clarification", 0.9, "asks to confirm or expand the last answer")
    if fragment(question):
        return FollowUp(True, "reference", 0.8, "a fragment that leans on the last question")
    fresh = new_terms(question, history_text)
    reference = REFERENCE_RE.search(ACRONYM_RE.sub(" ", question))  # "IT policy" is not the pronoun "it"
    if fresh and not reference:
        return FollowUp(False, "new", 0.8, f"introduces new terms: {', '.join(fresh[:3])}")
    if reference:
        return FollowUp(True, "reference", 0.8, f"refers back with “{reference.group(0)}”")
    if words <= SHORT_QUESTION_WORDS and (topic := new_subject(question, history_text)):
        return FollowUp(False, "new", 0.6, f"a question of its own about words not used so far: {', '.join(topic)}")
    if words <= SHORT_QUESTION_WORDS:
        return FollowUp(True, "reference", 0.6, f"short question ({words} words) without a new subject")
    return FollowUp(False, "new", 0.6, "a complete question on its own")


def decide(followup: FollowUp, new_mention: bool) -> tuple[Decision, str]:
    """Reuse the previous turn's sources, retrieve fresh ones, or both; with the reason."""
    if new_mention:
        return "fresh", "a new document was mentioned"
    if followup.kind == "clarification":
        return "reuse", "clarification of the last answer: its sources are still the right context"
    if followup.kind == "reference":
        return "both", "follow-up: keep the last sources and search for the resolved question"
    return "fresh", "new topic"


NOTED_ENTITIES = 2  # "How long is the warranty? (E7, Zephyr-9)": the code alone searched the error table (tester)


def with_entity(rewritten: str, previous_entities: list[str]) -> str:
    """The rewrite, naming the conversation's first two entities when the model dropped every one of them. One was
    not enough: after "What does E7 mean on the Zephyr-9?", "How long is the warranty?" was searched as "… (E7)"."""
    if not previous_entities or any(e.lower() in rewritten.lower() for e in previous_entities):
        return rewritten
    return noted(rewritten, ", ".join(previous_entities[:NOTED_ENTITIES]))


def names_any(text: str, entity: str) -> bool:
    """The text names one of the note's entities ("E7, Zephyr-9" is two)."""
    return any(part.strip().lower() in text.lower() for part in entity.split(",") if part.strip())


def noted(query: str, entity: str) -> str:
    """A query with an entity noted after it: "How much does it cost? (Zephyr-9)"."""
    return f"{query.rstrip()} ({entity})"


NOTE_RE = re.compile(r"^(?P<query>.*?)(?: \((?P<entity>[^()]*)\))?$", re.DOTALL)


def split_note(query: str) -> tuple[str, str]:
    """A query and the entity noted after it ("" when none): the inverse of `noted`."""
    parts = NOTE_RE.match(query.strip())
    if not parts or (parts["entity"] or "").startswith("asked after:"):  # as_asked's form, not a note
        return query.strip(), ""
    return parts["query"], parts["entity"] or ""


# An elliptical follow-up: a connective ("and", "what about", "even") before a fragment with no verb of its own,
# which means the last question again with one thing changed ("and for capital cities?" after "What is the hotel
# limit per night?"). Searched as it stands, it finds whatever mentions capital cities; read as it stands, the
# small model answered the last question again (a tester's dialogue, README "Conversation memory").
ELLIPSIS_RE = re.compile(
    r"^\s*(?P<connective>(?:(?:and|but|or|so|then)\s+)?(?:(?:what|how)\s+about|also|even|only|just)\b|(?:and|but|or)\b)"
    r"\s*(?P<rest>.*?)\s*[?.!]*\s*$",
    re.IGNORECASE,
)
MODIFIERS = word_set("also even only just")
# A fragment holding one of these anywhere is a clause of its own ("and how much is it?", "and what's the
# deadline?", "but the handbook says 150"), not an ellipsis.
CLAUSE_WORDS = word_set(
    "what which who whom whose when where why how is are was were be do does did can could will would should may "
    "might must shall has have had i you we they he she it there this that these those then so now yes no not ok "
    "okay thanks thank please s re ve ll d m say says said mean means meant think know want"
)
PREPOSITIONS = word_set(
    "for during in on at with without within after before outside inside under over from to by if while per "
    "between beyond except"
)
ARTICLES = word_set("the a an")
MAX_FRAGMENT_WORDS = 10
ABOUT_TAIL = re.compile(r"\? What about [^?]*$")  # a subject asked about before: the next one replaces it
ASKED_AFTER = re.compile(r"^(?P<before>.*?\?) What about (?P<subject>[^?]*)\?$", re.DOTALL)
MAX_NOUN_FRAGMENT_WORDS = 3  # "and interns?"; a longer fragment after a bare "and" may be a sentence of its own
FRAGMENT_WORD = re.compile(r"[^\W_]+(?:-[^\W_]+)*")  # "what's" is two words, "Zephyr-9" one


@dataclass(frozen=True)
class Completed:
    """An elliptical follow-up made whole, and the question the next one is completed from."""

    question: str
    base: str


def complete_ellipsis(question: str, previous: str, base: str = "") -> Completed | None:
    """The elliptical follow-up `question` as a whole question, from the previous standalone question; None when
    the question is not elliptical or there is no previous question.

    - "What about E7?" after "What does error code E4 mean?": the one code of the same form is swapped in (codes,
      models and years: forms with a digit), and that question is the next one's base.
    - "and for capital cities?", "Even during probation?", "or by train?": the fragment is added to the base
      ("What is the hotel limit per night, for capital cities?"), the question the last completed one was made
      from (`base`; else `previous`), so that "and for interns?" after "and for contractors?" does not ask for both.
    - "What about contractors?", "and interns?": "What about contractors? (asked after: <the base>)"; the base
      followed by "What about contractors?" is the next one's base, so "and on a short travel day?" after "what
      about meals?" asks about meals, and a second subject ("and interns?") replaces the first.
    - "and in @hr-handbook.md?" (the mention already stripped: "and in"): the base itself, which the mention aims.
    """
    match = ELLIPSIS_RE.match(question)
    previous, base = strip_mentions(previous).strip(), strip_mentions(base).strip()
    if not match or not previous:
        return None
    rest, connective = match["rest"].strip(" ,"), match["connective"].lower().split()
    typed = FRAGMENT_WORD.findall(rest)
    words = [w.lower() for w in typed]
    acronym = [len(w) > 1 and w.isupper() for w in typed]  # "IT staff" is not the pronoun "it"
    if len(words) > MAX_FRAGMENT_WORDS or any(w in CLAUSE_WORDS and not a for w, a in zip(words, acronym, strict=True)):
        return None
    if swapped := _swapped(words, base or previous):  # the base: "(asked after: …)" is how the model reads it
        return Completed(as_asked(swapped), swapped)
    if (code := _code(words)) and not _same_form(code[0], base or previous):
        return None  # "What about E7?" after a question with no error code: a subject of its own
    body, entity = split_note(base or previous)
    body = body.rstrip(" ?.!")

    def with_entity_noted(text: str) -> str:
        return text if not entity or names_any(text, entity) else noted(text, entity)

    def whole(text: str) -> Completed:
        return Completed(with_entity_noted(as_asked(text)), base or previous)

    if words and all(w in PREPOSITIONS for w in words):  # the mention it aimed at was stripped: "and in @hr.md?"
        return whole(f"{body}?")
    if not words:
        return None
    if words[0] in PREPOSITIONS:
        lead = connective[-1] if connective[-1] in MODIFIERS | {"or"} else ""
        return whole(f"{body}, {' '.join([lead, rest]).strip()}?")
    if connective[-1] in MODIFIERS:
        return None  # "also" before a clause in another language ("Also wie hoch ist das Limit?")
    if connective[-1] == "about" or len(words) <= MAX_NOUN_FRAGMENT_WORDS:
        subject = f"{ABOUT_TAIL.sub('', body)}? What about {rest}?"
        # the new subject is the next base: "and on a short travel day?" after it asks about meals
        return Completed(whole(subject).question, with_entity_noted(subject))
    return None


def as_asked(text: str) -> str:
    """A question with a new subject as the model and the search read it: the subject first, the question it
    follows after it ("What about meals? (asked after: What is the hotel limit per night?)"). Written the other way
    round, the 1.5B model answered the first question again (4 probe dialogues: 0 of 4 answered the new subject
    alone, 4 of 4 this way)."""
    body, entity = split_note(text)
    parts = ASKED_AFTER.match(body)
    if not parts:
        return text
    asked = f"What about {parts['subject']}? (asked after: {parts['before']})"
    return noted(asked, entity) if entity else asked


SUBJECT_FIRST = re.compile(r"^What about (?P<subject>.+?)\? \(asked after: .*\)$", re.DOTALL)


def new_subject_search(query: str) -> tuple[str, list[str]]:
    """For a new subject read subject first ("What about meals? (asked after: How many days of annual leave do
    employees get?)"): the subject asked alone, searched beside the whole form, and the stemmed words that name it
    (before any qualifier: "meals, on a short travel day" is named by "meals"), which let a passage holding them
    past the relevance floor. Searched as the whole form only, the earlier question's words outranked the subject's:
    the meals passages were not among those found and the answer was "not found" (tester); the subject alone is a
    few words, which MiniLM scores under the floor. ("", []) for any other query, and for a subject that names
    nothing ("the other")."""
    parts = SUBJECT_FIRST.match(query.strip())
    subject = parts["subject"].split(",")[0].strip() if parts else ""
    words = content_stems(subject)
    return (f"What about {subject}?", words) if words else ("", [])  # "what about the other?" names nothing


def fragment(question: str) -> bool:
    """A bare fragment after "and", "or" or "but" ("and E4?", "or Zephyr-12?"): a follow-up of the last question,
    even when what it names is new to the conversation."""
    match = ELLIPSIS_RE.match(question)
    if not match or match["connective"].lower() not in {"and", "or", "but"}:
        return False
    typed = FRAGMENT_WORD.findall(match["rest"])
    clause = any(w.lower() in CLAUSE_WORDS and not (len(w) > 1 and w.isupper()) for w in typed)  # "IT staff"
    return 0 < len(typed) <= MAX_NOUN_FRAGMENT_WORDS and not clause


def _shape(token: str) -> str:
    """A code's form with its letters and digits generalised: E4 and E7 share one, Zephyr-9 and Zephyr-12 another."""
    return re.sub(r"[A-Z]+", "A", re.sub(r"\d+", "9", token.upper()))


def _code(words: list[str]) -> list[str]:
    """The fragment's one word when, but for an article or a preposition, it is a code, a model or a year (a word
    with a digit: "E7", "Zephyr-12", "2025"); [] otherwise."""
    token = [w for w in words if w not in ARTICLES and w not in PREPOSITIONS]
    return token if len(token) == 1 and any(c.isdigit() for c in token[0]) else []


def _same_form(code: str, previous: str) -> set[str]:
    """The codes, models or years of the code's form in the previous question (the code itself included)."""
    return {t for t in FRAGMENT_WORD.findall(previous) if _shape(t) == _shape(code)}


def _swapped(words: list[str], previous: str) -> str | None:
    """The previous question with its one code, model or year of the fragment's form replaced by the fragment's
    ("What about E7?", "and in 2025?"); None unless the fragment, but for an article or a preposition, is one
    such token and the previous question has exactly one of its form."""
    token = _code(words)
    same = {t for t in _same_form(token[0], previous) if t.lower() != token[0]} if token else set()
    if len(same) != 1:
        return None
    old = same.pop()
    new = token[0].upper() if old.isupper() else token[0][:1].upper() + token[0][1:] if old[:1].isupper() else token[0]
    return re.sub(rf"(?<![\w-]){re.escape(old)}(?![\w-])", new, previous)
