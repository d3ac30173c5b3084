"""Output guardrail: leaked system prompt, PII the user and sources never gave, links from nowhere."""

import re
from dataclasses import dataclass, field

from backend.guardrails.pii import apply_redactions, find_pii, known_pii, pii_key
from backend.guardrails.repair import has_markup, replace_markup

LEAK_NGRAM = 8  # words: an answer repeating this many consecutive system-prompt words leaks it
LEAK_FALLBACK = "Sorry, I can't share how I am configured. Please ask a question about your documents."
LINK_REMOVED = "[link removed]"

_WORDS = re.compile(r"[a-z0-9]+")
_TLDS = r"com|org|net|io|xyz|info|biz|co|ai|app|dev|ly|me|us|uk|de|fr|eu|ru|cn|top|site|online|shop|link"
_URL = re.compile(
    rf"https?://[^\s<>()\[\]\"'`]+|\bwww\.[^\s<>()\[\]\"'`]+|(?<![@\w.-])[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:{_TLDS})"
    r"(?:/[^\s<>()\[\]\"'`]*)?(?![\w@-])",
    re.IGNORECASE,
)
_MD_LINK = re.compile(r"\[([^\]\n]+)\]\(([^)\s]+)\)")


@dataclass(frozen=True)
class OutputVerdict:
    """safe is True when the answer needed no change; text is what to show and store."""

    safe: bool
    issues: list[str]
    text: str
    original_text: str = ""
    removed: list[str] = field(default_factory=list)  # redacted PII placeholders and removed URLs, for logs


def check_output(answer: str, sources_text: str, question: str, system_prompt: str) -> OutputVerdict:
    """Replace a leaked system prompt; redact new PII; remove URLs absent from the sources and the question; read
    the prompt's markup tags as "the documents"."""
    if leaks_system_prompt(answer, system_prompt, sources_text):
        return OutputVerdict(False, ["system_prompt_leak"], LEAK_FALLBACK, answer)
    issues: list[str] = []
    allowed = known_pii(question, sources_text)
    new_pii = [m for m in find_pii(answer) if pii_key(m) not in allowed]
    text = apply_redactions(answer, new_pii)
    issues += sorted({f"pii:{m.type.lower()}" for m in new_pii})
    text, dropped = remove_unknown_urls(text, question + "\n" + sources_text)
    issues += [f"unknown_url:{url}" for url in dropped]
    known = question + "\n" + sources_text  # tags quoted from these are the reader's own words, not markup
    if has_markup(text) and not has_markup(known):
        plain = replace_markup(text)
        # the prompt's tags, which the reader never saw, in any answer (a chat one too: "Yes, I am sure. The
        # warranty details are clearly stated in the <knowledge_base> block.")
        text, issues = plain, [*issues, "prompt_markup"]
    removed = [f"[{m.type}]" for m in new_pii] + dropped
    return OutputVerdict(not issues, issues, text, answer, removed)


def leaks_system_prompt(answer: str, system_prompt: str, sources_text: str = "", n: int = LEAK_NGRAM) -> bool:
    """True when the answer repeats n consecutive words of the system prompt that the sources do not contain."""
    prompt_words = _WORDS.findall(system_prompt.lower())
    if not prompt_words:
        return False
    n = min(n, len(prompt_words))
    leaked = _ngrams(prompt_words, n) & _ngrams(_WORDS.findall(answer.lower()), n)
    return bool(leaked - _ngrams(_WORDS.findall(sources_text.lower()), n))


def remove_unknown_urls(text: str, known_text: str) -> tuple[str, list[str]]:
    """Text without the URLs that do not occur in known_text (Markdown links keep their label), and those URLs."""
    known = {_normalise_url(m.group()) for m in _URL.finditer(known_text)}
    dropped: list[str] = []

    def unknown(url: str) -> bool:
        key = _normalise_url(url)
        if key in known:
            return False
        dropped.append(url.rstrip(".,;:!?"))
        return True

    def markdown(m: re.Match[str]) -> str:
        return m.group(1) if unknown(m.group(2)) else m.group()

    def bare(m: re.Match[str]) -> str:
        url = m.group()
        trail = url[len(url.rstrip(".,;:!?")) :]
        return LINK_REMOVED + trail if unknown(url) else url

    text = _URL.sub(bare, _MD_LINK.sub(markdown, text))
    return text, list(dict.fromkeys(dropped))


def _normalise_url(url: str) -> str:
    """Lower case, no scheme, no www., no trailing punctuation or slash."""
    url = url.lower().rstrip(".,;:!?")
    url = re.sub(r"^https?://", "", url)
    return url.removeprefix("www.").rstrip("/")


def _ngrams(words: list[str], n: int) -> set[tuple[str, ...]]:
    """All n-word windows."""
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)} if n > 0 else set()
