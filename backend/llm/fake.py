"""ScriptedChatModel: a deterministic fake for tests, UI work and load tests. Never used unless chosen."""

import asyncio
import re
from collections.abc import AsyncIterator, Iterator
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import Field

CONVERSATIONAL_REPLY = "Hello! I am Ragline. Ask me about your documents, or aim a question at one with @name."
NOT_FOUND_REPLY = "That is not in the documents."
# A question containing this makes the fake add a claim no passage supports (for UI and end-to-end tests).
INVENT_TRIGGER = "(fake: invent a fact)"
CITE_AFTER_TRIGGER = "(fake: cite after the full stop)"  # "… per night. [S1]", as small models often write it
TWO_SENTENCES_TRIGGER = "(fake: quote two sentences)"  # two claims citing the first passage, each with its marker
INVENTED_CLAIM = "The unit also holds 42 litres of R-410A refrigerant [S1]."
# Asked whether the sources state the answer (the answerable check), the fake says yes unless the question has this.
NOT_ANSWERED_TRIGGER = "The fake judge says no."  # plain words: the injection classifier flagged "(fake: …)"
_ANSWERED_RE = re.compile(r"state the answer to the question( \"[^\"]*\")?\? Answer yes or no\.$")


def asks_answered(text: str) -> bool:
    """Whether a message is the answerable check's question (prompts.ANSWERED or ANSWERED_ABOUT)."""
    return bool(_ANSWERED_RE.search(text))


_ENTRY_RE = re.compile(r"^\[(S\d+)\] ([^\n]*)\n(.*?)(?=^\[S\d+\] |\Z)", re.MULTILINE | re.DOTALL)
_WORD_RE = re.compile(r"[a-z0-9]+")


def prompt_entries(prompt: str) -> list[tuple[str, str, str]]:
    """The passages of a prompt's <knowledge_base> blocks (prompts.KNOWLEDGE_BASE): (id, header line, text), as
    ("S1", "travel-policy.pdf, page 1", "Travel Policy …")."""
    bodies = [part.split("</knowledge_base>", 1)[0] for part in prompt.split("<knowledge_base>")[1:]]
    return [entry for body in bodies for entry in _ENTRY_RE.findall(body)]


def _words(text: str) -> set[str]:
    """Content words, crudely singularised so that "costs" matches "cost"."""
    return {w[:-1] if len(w) > 3 and w.endswith("s") else w for w in _WORD_RE.findall(text.lower()) if len(w) > 2}


def best_sentence(text: str, question: str) -> str:
    """The sentence of `text` sharing the most words with the question (the first on ties)."""
    parts = re.split(r"(?<=[.!?])\s+|\n+", text)
    sentences = [s.strip() for s in parts if s.strip() and not s.lstrip().startswith("#")]
    q = _words(question)
    return max(sentences, key=lambda s: (len(_words(s) & q), s.endswith((".", "!", "?"))), default=text.strip())


# what the fake "translates" (anything else it returns as it came)
TRANSLATIONS = {"Combien de jours de congé annuel ai-je ?": "How many days of annual leave do I get?"}


def scripted_reply(messages: list[BaseMessage]) -> str:
    """The fake's answer to a prompt, recognised by the markers in its last message."""
    last = messages[-1].text if messages else ""
    if asks_answered(last):
        return "No" if any(NOT_ANSWERED_TRIGGER in m.text for m in messages[:-1]) else "Yes"
    if "Follow-up question:" in last:
        return last.split("Follow-up question:", 1)[1].strip()
    if "Translate the question below into English" in last:
        question = last.rsplit("Question:", 1)[-1].strip()
        return TRANSLATIONS.get(question, question)
    if "different short search queries" in last:
        question = last.rsplit("Question:", 1)[-1].strip()
        n = int(re.search(r"Write (\d+)", last).group(1))  # type: ignore[union-attr]
        return "\n".join(f"{question} (phrasing {i})" for i in range(1, n + 1))
    if "Reply with exactly one word: documents or chat" in last:
        return "documents"
    if "Update the running summary of this conversation" in last:
        questions = re.findall(r"^User: (.*)$", last, re.MULTILINE)
        previous = last.split("Current summary:", 1)[1].split("New exchanges:", 1)[0].strip()
        earlier = "" if previous == "(empty)" else previous.removeprefix("The user asked: ").rstrip(".") + "; "
        return "The user asked: " + earlier + "; ".join(questions) + "."
    if "<conversation_index>" in last:
        index = last.split("<conversation_index>", 1)[1].split("</conversation_index>", 1)[0]
        asked = [line.split("] ", 1)[-1] for line in index.strip().splitlines()]
        return "Earlier we discussed: " + "; ".join(asked) + "."
    if "<knowledge_base>" in last or "sources given earlier in this conversation" in last:
        shown = last if "<knowledge_base>" in last else "\n".join(m.text for m in messages[:-1])
        question = last.rsplit("Question:", 1)[-1]
        entries = [(sid, body) for sid, _, body in prompt_entries(shown)]
        after, twice = CITE_AFTER_TRIGGER in question, TWO_SENTENCES_TRIGGER in question
        question = question.replace(CITE_AFTER_TRIGGER, "").replace(TWO_SENTENCES_TRIGGER, "")
        if twice and entries:  # the first passage's two sentences closest to the question, each citing it
            sid, text = entries[0]
            first = best_sentence(text, question)
            entries = [(sid, first), (sid, best_sentence(text.replace(first, ""), question))]
        quotes = [
            f"{best_sentence(text, question).rstrip('.')}" + (f". [{sid}]" if after else f" [{sid}].")
            for sid, text in entries
        ]
        if quotes and INVENT_TRIGGER in question:
            quotes.append(INVENTED_CLAIM)
        return "According to the documents: " + " ".join(quotes) if quotes else NOT_FOUND_REPLY
    if "No document in the knowledge base matched" in last:
        return NOT_FOUND_REPLY
    return CONVERSATIONAL_REPLY


class ScriptedChatModel(BaseChatModel):
    """Fake chat model: streams a templated answer word by word at `tokens_per_second` (0 = no delay)."""

    tokens_per_second: float = 0.0
    calls: list[list[BaseMessage]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "ragline-scripted-fake"

    def reply(self, messages: list[BaseMessage]) -> str:
        """The answer to a prompt (subclasses in tests script other answers)."""
        return scripted_reply(messages)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.calls.append(list(messages))
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=self.reply(messages)))])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        self.calls.append(list(messages))
        for token in re.findall(r"\S+\s*", self.reply(messages)):
            yield ChatGenerationChunk(message=AIMessageChunk(content=token))

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        self.calls.append(list(messages))
        delay = 1.0 / self.tokens_per_second if self.tokens_per_second > 0 else 0.0
        for token in re.findall(r"\S+\s*", self.reply(messages)):
            await asyncio.sleep(delay)
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=token))
            if run_manager:
                await run_manager.on_llm_new_token(token, chunk=chunk)
            yield chunk
