"""validate_answerable and validate_sources together: an answer the model judges unanswered becomes the not-found
reply; one it judges answered stays; nothing is asked when there is nothing to judge."""

from langchain_core.messages import BaseMessage, HumanMessage

from backend.graph.nodes.generator import generate
from backend.graph.nodes.validate_answerable import validate_answerable
from backend.graph.nodes.validate_sources import validate_sources
from backend.graph.prompts import ANSWERED, ANSWERED_ABOUT
from backend.llm.fake import ScriptedChatModel, asks_answered
from backend.tests.fakes import applied, runtime, source, turn_state

PASSAGE = "Passwords must be at least 14 characters long. Passwords must never be shared."
DOCS = [source("S1", "it-security-policy.md", PASSAGE)]
NEIGHBOUR = "Passwords must be at least 14 characters long [S1]."  # supported word for word, yet no answer


class Judging(ScriptedChatModel):
    """Fake model: answers `answer` to the question and `verdict` when asked whether the sources answer it."""

    answer: str = NEIGHBOUR
    verdict: str = "No"

    def reply(self, messages: list[BaseMessage]) -> str:
        return self.verdict if asks_answered(messages[-1].text) else self.answer


def rag_state(question: str) -> dict:
    return turn_state(question, "rag", intent="rag", documents=DOCS, fresh_ids=["S1"])


async def turn(model: ScriptedChatModel, question: str, model_name: str = "scripted-fake", **settings) -> dict:
    """Generator, then the answerable check, then the sources check, as the graph runs them."""
    rt, state = runtime(model, **settings), rag_state(question)
    rt.context.model_name = model_name
    for node in (generate, validate_answerable, validate_sources):
        state = applied(state, await node(state, rt))
    return state


async def test_a_supported_answer_to_another_question_becomes_the_not_found_reply_when_the_model_says_no():
    out = await turn(Judging(verdict="No"), "What does the policy say about changing passwords?")
    assert out["answer"].startswith("I could not find this in the documents.")
    assert "it-security-policy.md" in out["answer"]
    sources = out["validation"]["sources"]
    assert sources["supported"] == 1  # the support check alone would have kept it
    assert sources["not_found"] == "replaced" and sources["not_found_reason"] == "unanswered"
    assert sources["original_text"] == NEIGHBOUR
    assert out["validation"]["answerable"]["answered"] is False and out["validation"]["answerable"]["p_yes"] == 0.0


async def test_an_answer_the_model_says_yes_to_is_kept():
    out = await turn(Judging(verdict="Yes"), "How long must passwords be?")
    assert out["answer"] == NEIGHBOUR
    assert out["validation"]["answerable"]["answered"] is True and out["validation"]["sources"]["not_found"] is None


async def test_the_verdict_is_asked_in_place_of_the_answer_after_the_generators_prompt():
    model = Judging(verdict="Yes")
    await turn(model, "How long must passwords be?")
    answer_prompt, verdict_prompt = model.calls
    assert verdict_prompt[:-1] == answer_prompt  # the prompt the slot's KV cache holds: only the question is new
    assert verdict_prompt[-1] == HumanMessage(ANSWERED.format(question="How long must passwords be?"))


async def test_a_clarification_is_judged_on_the_question_it_stands_for_not_on_are_you_sure():
    """Real 1.5B, before: "Are you sure?" after a correct hotel-limit answer got the not-found reply, since no passage
    states the answer to "Are you sure?"; the verdict now asks about the standalone question the follow-up reuses."""

    class OnTheQuestion(Judging):
        """Says yes only when asked about the standalone question: "Are you sure?" has no answer in any passage."""

        def reply(self, messages: list[BaseMessage]) -> str:
            if asks_answered(messages[-1].text):
                return "Yes" if "How long must passwords be?" in messages[-1].text else "No"
            return self.answer

    model = OnTheQuestion(answer="Yes: passwords must be at least 14 characters long [S1].")
    rt = runtime(model)
    state = rag_state("Are you sure?") | {
        "followup": {"is_followup": True, "kind": "clarification", "confidence": 0.9, "reason": "confirm"},
        "context_decision": {"decision": "reuse", "reason": "clarification"},
        "rewritten_query": "How long must passwords be?",
    }
    for node in (generate, validate_answerable, validate_sources):
        state = applied(state, await node(state, rt))
    assert model.calls[-1][-1] == HumanMessage(ANSWERED_ABOUT.format(question="How long must passwords be?"))
    assert state["answer"].startswith("Yes: passwords") and state["validation"]["answerable"]["answered"] is True
    fresh = rag_state("How long must passwords be?") | {"context_decision": {"decision": "fresh", "reason": "new"}}
    await validate_answerable(applied(fresh, await generate(fresh, rt)), rt)
    assert model.calls[-1][-1] == HumanMessage(ANSWERED)  # a new question: the calibrated verdict, as before


async def test_with_the_check_off_the_model_is_not_asked_and_the_answer_stays():
    model = Judging(verdict="No")
    out = await turn(model, "What does the policy say about changing passwords?", answerable_check=False)
    assert out["answer"] == NEIGHBOUR and len(model.calls) == 1 and "answerable" not in out["validation"]


async def test_an_answer_that_already_says_not_found_is_not_judged():
    model = Judging(answer="The documents do not say; they cover password length [S1].", verdict="No")
    out = await turn(model, "What does the policy say about changing passwords?")
    assert len(model.calls) == 1 and "answerable" not in out["validation"]
    assert out["validation"]["sources"]["not_found"] == "model"  # the model's own verdict, in the one wording


async def test_a_not_found_answer_that_echoes_the_prompts_example_is_restated_with_the_passages_found():
    echo = "No, the documents do not say; they cover servicing [S1] and badges [S2]."
    out = await turn(Judging(answer=echo, verdict="No"), "What refrigerant does it use?")
    assert (
        out["answer"]
        == "I could not find this in the documents. The closest passages I found are in it-security-policy.md."
    )
    sources = out["validation"]["sources"]
    assert sources["not_found"] == "model" and sources["original_text"] == echo
    assert any("the model found no answer" in step for step in out["steps"])


async def test_no_verdict_leaves_the_answer_as_it_is():
    out = await turn(Judging(verdict="Maybe"), "What does the policy say about changing passwords?")
    assert out["answer"] == NEIGHBOUR and out["validation"]["answerable"]["answered"] is None


async def test_a_chat_turn_is_not_judged():
    model = Judging(verdict="No")
    state = turn_state("Write a haiku about spring", "chat", intent="chat")
    assert await validate_answerable(state, runtime(model)) == {} and model.calls == []


async def test_a_model_without_a_calibrated_threshold_is_not_asked_unless_one_is_set():
    model = Judging(verdict="No")
    out = await turn(model, "What does the policy say about changing passwords?", model_name="llama3.2:3b")
    assert out["answer"] == NEIGHBOUR and len(model.calls) == 1 and "answerable" not in out["validation"]
    assert any("no threshold for llama3.2:3b" in step for step in out["steps"])
    out = await turn(Judging(verdict="No"), "How often?", model_name="llama3.2:3b", answerable_min_yes=0.4)
    assert out["validation"]["answerable"]["threshold"] == 0.4 and out["answer"].startswith("I could not find")


async def test_a_new_subject_after_an_earlier_question_is_not_judged():
    """Tester: "what about taxis?" after a hotel question was answered with the taxi rule and replaced, P(yes) 0.37:
    the verdict was calibrated on whole questions, not on "What about taxis? (asked after: …)"."""
    model = Judging(verdict="No")
    rt = runtime(model)
    state = rag_state("what about taxis?") | {"completed_question": "What about taxis? (asked after: Hotels?)"}
    for node in (generate, validate_answerable, validate_sources):
        state = applied(state, await node(state, rt))
    assert len(model.calls) == 1 and "answerable" not in state["validation"]
    assert state["answer"] == NEIGHBOUR
