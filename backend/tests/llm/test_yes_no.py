import math

import pytest
from langchain_core.messages import AIMessage

from backend.llm.yes_no import p_yes


def alternatives(*pairs: tuple[str, float]) -> list[dict]:
    return [{"token": t, "logprob": lp, "bytes": list(t.encode())} for t, lp in pairs]


def test_p_yes_from_llama_cpp_openai_logprobs_sums_the_spellings_of_yes_and_no():
    tops = alternatives(("No", math.log(0.5)), ("Yes", math.log(0.3)), ("yes", math.log(0.1)), ("The", math.log(0.05)))
    reply = AIMessage("No", response_metadata={"logprobs": {"content": [{**tops[0], "top_logprobs": tops}]}})
    assert p_yes(reply) == pytest.approx(0.4 / 0.9)


def test_p_yes_from_ollama_logprobs():
    tops = alternatives(("Yes", math.log(0.6)), ("No", math.log(0.2)))
    reply = AIMessage("Yes", response_metadata={"logprobs": [{**tops[0], "top_logprobs": tops}]})
    assert p_yes(reply) == pytest.approx(0.75)


def test_p_yes_without_logprobs_reads_the_word():
    assert p_yes(AIMessage("Yes.")) == 1.0 and p_yes(AIMessage("no")) == 0.0
    assert p_yes(AIMessage("Perhaps")) is None and p_yes(AIMessage("")) is None


def test_p_yes_is_none_when_neither_word_is_among_the_alternatives():
    tops = alternatives(("The", -0.1), ("I", -2.0))
    logprobs = {"content": [{**tops[0], "top_logprobs": tops}]}
    assert p_yes(AIMessage("The", response_metadata={"logprobs": logprobs})) is None
