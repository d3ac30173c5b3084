"""Grounding through the API: a model that cites the wrong source and invents a number, one that invents all, the
answerable check replacing a supported answer the model judges does not answer the question, an answer that
gives a neighbouring fact instead of what the question asks for, and one that states a neighbouring fact in the
question's words."""

import asyncio
import json
import re
from unittest.mock import ANY

import pytest
from langchain_core.messages import BaseMessage

from backend.graph.nodes.validate_sources import NO_PASSAGE_REPLY
from backend.llm.fake import NOT_ANSWERED_TRIGGER, ScriptedChatModel, asks_answered, prompt_entries
from bench.lib.sse import parse_sse


def passages_of(prompt: str) -> list[tuple[str, str]]:
    """(id, text) of each passage of the prompt's knowledge base."""
    return [(sid, text) for sid, _, text in prompt_entries(prompt)]


QUESTION = "@employee-handbook can I carry unused leave days over to next year?"


class WrongCitations(ScriptedChatModel):
    """Fake model that cites the carry-over rule to a passage without it, and invents a number."""

    def reply(self, messages: list[BaseMessage]) -> str:
        entries = passages_of(messages[-1].text)
        right = next(sid for sid, text in entries if "carried over" in text)
        wrong = next((sid for sid, _ in entries if sid != right), "S9")
        return (
            f"Up to 5 unused days may be carried over into the first quarter of the next year [{wrong}]. "
            f"Contractors may carry over 12 days as well [{right}]."
        )


class OpensWithItsSourceAsSubject(ScriptedChatModel):
    """Fake model that cites the carry-over rule rightly, then opens an invented sentence with the passage's marker
    as its subject ("[S1] states that …")."""

    def reply(self, messages: list[BaseMessage]) -> str:
        if asks_answered(messages[-1].text):
            return "Yes"
        entries = passages_of(messages[-1].text)
        right = next(sid for sid, text in entries if "carried over" in text)
        return (
            f"Up to 5 unused days may be carried over into the first quarter of the next year [{right}]. "
            f"[{right}] states that contractors may carry over 12 days as well."
        )


class CitesTwice(ScriptedChatModel):
    """Fake model that cites the right passage and then writes its marker again after the full stop, as the 1.5B
    model does ("… 180 euros [S5]. [S5]")."""

    def reply(self, messages: list[BaseMessage]) -> str:
        if asks_answered(messages[-1].text):
            return "Yes"
        right = next(sid for sid, text in passages_of(messages[-1].text) if "carried over" in text)
        return f"Up to 5 unused days may be carried over into the first quarter of the next year [{right}]. [{right}]"


class AnswersOnePart(ScriptedChatModel):
    """Fake model that answers the notice-period half of a two-part question from its passage, says nothing of the
    other, and judges that the passages do not state the answer (as the 1.5B model did, P(yes) 0.43)."""

    def reply(self, messages: list[BaseMessage]) -> str:
        if asks_answered(messages[-1].text):
            return "No"
        right = next(sid for sid, text in passages_of(messages[-1].text) if "notice period" in text)
        return f"The notice period for permanent employees is 2 months, given in writing to the line manager [{right}]."


class AnswersTheLength(ScriptedChatModel):
    """Fake model that answers only the first part of a two-part question and judges the passages answer it."""

    def reply(self, messages: list[BaseMessage]) -> str:
        if asks_answered(messages[-1].text):
            return "Yes"
        right = next(sid for sid, text in passages_of(messages[-1].text) if "14 characters" in text)
        return f"Passwords must be at least 14 characters long [{right}]."


class NamesTheSite(ScriptedChatModel):
    """Fake model that answers with its passage's sentence and the site the question names, which only the first
    line of the passage's document gives (as the 1.5B model did for a tester)."""

    def reply(self, messages: list[BaseMessage]) -> str:
        if asks_answered(messages[-1].text):
            return "Yes"
        right = next(sid for sid, text in passages_of(messages[-1].text) if "charging bays" in text)
        return f"Six charging bays are reserved for electric vehicles at Lindenhof [{right}]."


PARKING = (
    b"# Parking Policy\n\nThis policy covers the staff car park at the Lindenhof office.\n\n"
    b"## Permits\n\nEach employee may request one parking permit per year. A permit costs 18 euros per month.\n\n"
    b"## Electric vehicles\n\nSix charging bays are reserved for electric vehicles. A car may stay on a charging "
    b"bay for at most 3 hours per day.\n"
)


class NamesTheOffice(ScriptedChatModel):
    """Fake model that answers in a word the passage does not use but its document's name does ("office", from
    office-guide.html), as the 1.5B model did."""

    def reply(self, messages: list[BaseMessage]) -> str:
        return "Yes" if asks_answered(messages[-1].text) else "The office building opens at 07:00 in the morning. [S1]"


class Invents(ScriptedChatModel):
    """Fake model whose whole answer is invented."""

    def reply(self, messages: list[BaseMessage]) -> str:
        return "The Zephyr-9 uses R-410A refrigerant [S1]."


class NeighbouringFact(ScriptedChatModel):
    """Fake model that answers "how often" with the passage's sentence about length (and its verdict with it too,
    which reads as neither yes nor no)."""

    def reply(self, messages: list[BaseMessage]) -> str:
        return "Passwords must be at least 14 characters long [S1]."


class ServicePriceAsPurchasePrice(ScriptedChatModel):
    """Fake model that states the service price of the Zephyr-9 as its purchase price, in the question's words."""

    def reply(self, messages: list[BaseMessage]) -> str:
        return "The purchase price of a new Zephyr-9 unit is 240 euros per unit [S1]."


class EchoesQuestion(ScriptedChatModel):
    """Fake model that answers "where must the badge be worn?" with the question itself, in words the passage has."""

    def reply(self, messages: list[BaseMessage]) -> str:
        return "The visitor badge must be worn at all times [S1]."


async def ask(client, message: str, thread_id: str, mode: str = "auto") -> list[tuple[str, dict]]:
    body = {"message": message, "thread_id": thread_id, "mode": mode}
    events = parse_sse(await client.post("/api/chat/stream", json=body))
    assert events[-1][0] == "done", events[-1]
    return events


def first(events, name: str) -> dict:
    return next(d for n, d in events if n == name)


async def test_wrong_citation_is_re_pointed_and_invented_number_marked_live_and_after_reload(app, client):
    app.state.services.deps.chat_model = WrongCitations()
    events = await ask(client, QUESTION, "g1")
    replace, done = first(events, "replace"), events[-1][1]
    right = re.search(r"next year \[(S\d+)\]", replace["text"]).group(1)
    assert replace["text"] == done["answer"]
    assert replace["text"].endswith("Contractors may carry over 12 days as well.")  # its marker is gone
    assert "→" in replace["reason"] and "employee-handbook.md" in replace["reason"]
    sources = first(events, "sources")["sources"]
    assert [s["id"] for s in sources] == [right] and sources[0]["document"] == "employee-handbook.md"
    check = done["validation"]["sources"]
    assert check["claims"] == 2 and check["supported"] == 1
    [claim] = check["unsupported"]
    assert done["answer"][claim["start"] : claim["end"]] == "Contractors may carry over 12 days as well."
    assert [r["kind"] for r in check["repairs"]] == ["repoint", "remove"]
    stored = (await client.get("/api/threads/g1")).json()["messages"][-1]
    assert stored["content"] == done["answer"] and stored["validation"]["sources"]["unsupported"] == [claim]
    assert [s["id"] for s in stored["sources"]] == [right]
    ledger = (await client.get("/api/threads/g1/memory")).json()["qa_index"][-1]
    assert ledger["sources"] == [right]


async def test_an_unsupported_sentence_about_a_document_is_marked_with_the_documents_name(app, client):
    app.state.services.deps.chat_model = OpensWithItsSourceAsSubject()
    done = (await ask(client, QUESTION, "g-subject"))[-1][1]
    [claim] = done["validation"]["sources"]["unsupported"]
    said = done["answer"][claim["start"] : claim["end"]]
    assert said.endswith(" states that contractors may carry over 12 days as well.")
    assert said.startswith("employee-handbook.md states that")


async def test_a_citation_written_twice_in_one_sentence_is_shown_once_live_and_after_reload(app, client):
    app.state.services.deps.chat_model = CitesTwice()
    events = await ask(client, QUESTION, "g-twice")
    replace, done = first(events, "replace"), events[-1][1]
    right = first(events, "sources")["sources"][0]["id"]
    assert (
        done["answer"] == f"Up to 5 unused days may be carried over into the first quarter of the next year [{right}]."
    )
    assert replace["text"] == done["answer"] and replace["reason"] == (
        "a citation the model wrote twice in one sentence now appears once"
    )
    assert done["validation"]["sources"]["markers_merged"] == 1 and done["validation"]["sources"]["repairs"] == []
    stored = (await client.get("/api/threads/g-twice")).json()["messages"][-1]
    assert stored["content"] == done["answer"]


async def test_a_claim_may_use_the_words_of_its_passages_document_name_which_the_model_read_above_it(app, client):
    """The passage is the "Opening hours" section alone ("The building is open from 07:00 …"); the model read it
    under "[S1] office-guide.html". Checked against the section's words only, the correct answer was replaced by
    the not-found reply (bench.answers, own report half, with neighbours kept to their section)."""
    app.state.services.deps.chat_model = NamesTheOffice()
    done = (await ask(client, "At what time does the office building open in the morning?", "g-office", "rag"))[-1][1]
    assert done["answer"] == "The office building opens at 07:00 in the morning. [S1]"  # kept as written
    assert done["validation"]["sources"]["supported"] == 1


async def test_an_answer_nothing_supports_becomes_an_honest_not_found(app, client):
    app.state.services.deps.chat_model = Invents()
    events = await ask(client, "@zephyr-9-service-manual what refrigerant does the Zephyr-9 use?", "g2")
    done = events[-1][1]
    assert done["answer"].startswith("I could not find this in the documents.")
    assert "zephyr-9-service-manual.md" in done["answer"]
    assert done["validation"]["sources"]["not_found"] == "replaced"
    assert done["validation"]["sources"]["original_text"] == "The Zephyr-9 uses R-410A refrigerant [S1]."
    assert first(events, "replace")["text"] == done["answer"]
    assert all(s["cited"] is False for s in first(events, "sources")["sources"])


async def test_an_answer_the_model_judges_unanswered_becomes_an_honest_not_found_with_the_reason(client):
    question = f"@it-security-policy how often must passwords be changed? {NOT_ANSWERED_TRIGGER}"
    events = await ask(client, question, "g3")
    streamed = "".join(d["text"] for n, d in events if n == "token")
    done, replace = events[-1][1], first(events, "replace")
    assert "Passwords must never be shared" in streamed  # a neighbouring fact, quoted word for word
    assert done["answer"].startswith("I could not find this in the documents.") and replace["text"] == done["answer"]
    assert "it-security-policy.md" in done["answer"]
    assert "do not state the answer to the question (P(yes) 0.00)" in replace["reason"]
    assert done["validation"]["answerable"] == {"p_yes": 0.0, "answered": False, "threshold": 0.5, "ms": ANY}
    assert done["validation"]["sources"]["not_found_reason"] == "unanswered"
    statuses = [d["node"] for n, d in events if n == "status" and d["phase"] == "end"]
    assert statuses.index("generator") < statuses.index("validate_answerable") < statuses.index("validate_sources")


async def test_an_answer_the_model_judges_answered_is_kept(client):
    events = await ask(client, "@it-security-policy how long must passwords be?", "g4")
    done = events[-1][1]
    assert "14 characters" in done["answer"] and done["validation"]["answerable"]["answered"] is True


async def test_a_neighbouring_fact_that_is_not_what_the_question_asks_for_becomes_an_honest_not_found(app, client):
    app.state.services.deps.chat_model = NeighbouringFact()
    events = await ask(client, "@it-security-policy how often must passwords be changed?", "g5")
    done, replace = events[-1][1], first(events, "replace")
    check = done["validation"]["sources"]
    assert check["supported"] == 1  # the passage does state it: only what was asked tells it apart
    assert check["not_found_reason"] == "wrong_kind" and check["asked_for"] == "a frequency"
    assert check["original_text"] == "Passwords must be at least 14 characters long [S1]."
    assert done["answer"].startswith("I could not find this in the documents.") and replace["text"] == done["answer"]
    assert "the question asks for a frequency and the answer gives none" in replace["reason"]
    stored = (await client.get("/api/threads/g5")).json()["messages"][-1]
    assert stored["content"] == done["answer"] and stored["validation"]["sources"]["asked_for"] == "a frequency"


@pytest.mark.parametrize(
    ("model", "question", "answer"),
    [
        (NeighbouringFact, "@it-security-policy how long must passwords be?", "Passwords must be at least 14"),
        (  # the same words as the purchase-price answer, to a question in the passage's words
            ServicePriceAsPurchasePrice,
            "@zephyr-9-service-manual what does a standard service of a Zephyr-9 unit cost?",
            "The purchase price of a new Zephyr-9 unit is 240 euros",
        ),
    ],
)
async def test_an_answer_to_what_was_asked_in_the_passages_words_is_kept(app, client, model, question, answer):
    app.state.services.deps.chat_model = model()
    events = await ask(client, question, f"kept-{model.__name__}")
    done = events[-1][1]
    assert done["answer"].startswith(answer)
    assert "not_found_reason" not in done["validation"]["sources"]


async def test_a_neighbouring_fact_in_the_questions_words_becomes_an_honest_not_found_naming_them(app, client):
    app.state.services.deps.chat_model = ServicePriceAsPurchasePrice()
    events = await ask(client, "@zephyr-9-service-manual what is the purchase price of a new Zephyr-9 unit?", "g7")
    done, replace = events[-1][1], first(events, "replace")
    check = done["validation"]["sources"]
    assert check["supported"] == 1  # "240 euros per unit" is in the passage: only the question's words tell
    assert check["not_found_reason"] == "unstated_premise" and check["unstated"] == ["new", "price", "purchase"]
    assert check["original_text"] == "The purchase price of a new Zephyr-9 unit is 240 euros per unit [S1]."
    assert done["answer"].startswith("I could not find this in the documents.") and replace["text"] == done["answer"]
    said = "the answer says 'new', 'price', 'purchase' as the question does, but no passage the model was given uses"
    assert said in replace["reason"]
    stored = (await client.get("/api/threads/g7")).json()["messages"][-1]
    assert stored["content"] == done["answer"] and stored["validation"]["sources"]["unstated"] == [
        "new",
        "price",
        "purchase",
    ]


class AnswersWithoutPassages(ScriptedChatModel):
    """Fake model that, given no passage, answers `text` without saying the documents lack it."""

    text: str

    def reply(self, messages: list[BaseMessage]) -> str:
        assert "No document in the knowledge base matched" in messages[-1].text
        return self.text


async def test_a_documents_answer_with_no_passage_says_first_that_it_is_not_from_the_documents(app, client):
    # from general knowledge
    text = "A new hire should meet their manager and read the company policies."
    app.state.services.deps.chat_model = AnswersWithoutPassages(text=text)
    events = await ask(client, "What colour are the dragons on the moon?", "g9", mode="rag")
    done, replace = events[-1][1], first(events, "replace")
    assert done["answer"] == (
        "No document in the knowledge base matched this question, so this answer does not come from them.\n\n"
        "A new hire should meet their manager and read the company policies."
    )
    check = done["validation"]["sources"]
    assert check["not_found"] == "no_passages" and check["unsupported_sentences"] == []
    assert check["original_text"] == "A new hire should meet their manager and read the company policies."
    assert replace["text"] == done["answer"] and "no passage matched the question" in replace["reason"]
    stored = (await client.get("/api/threads/g9")).json()["messages"][-1]
    assert stored["content"] == done["answer"] and stored["validation"]["sources"]["not_found"] == "no_passages"


async def test_a_no_passage_answer_stating_a_number_or_code_is_replaced_not_led(app, client):
    # the team's own fact, invented (as the 1.5B model did, asked as a user); no passage near it ("the visitor barrier
    # code" now finds the office guide's Parking section on its own, and takes the path of an answer with passages)
    invented = "The barrier code for the Heron garage is 12345."
    app.state.services.deps.chat_model = AnswersWithoutPassages(text=invented)
    events = await ask(client, "What is the barrier code for the Heron garage?", "g11", mode="rag")
    done, replace = events[-1][1], first(events, "replace")
    assert done["answer"] == NO_PASSAGE_REPLY and "12345" not in done["answer"]
    check = done["validation"]["sources"]
    assert check["not_found"] == "no_passages" and "12345" in check["original_text"]
    assert replace["text"] == done["answer"] and "withheld" in replace["reason"]
    stored = (await client.get("/api/threads/g11")).json()["messages"][-1]
    assert stored["content"] == NO_PASSAGE_REPLY


async def test_a_no_passage_answer_that_already_says_so_is_kept_as_the_model_wrote_it(client):
    events = await ask(client, "What colour are the dragons on the moon?", "g10", mode="rag")
    done = events[-1][1]
    assert not [n for n, _ in events if n == "replace"]
    assert done["answer"].startswith("That is not in the documents")
    assert done["validation"]["sources"]["not_found"] == "no_passages"


async def test_an_answer_that_only_restates_the_question_becomes_an_honest_not_found(app, client):
    app.state.services.deps.chat_model = EchoesQuestion()
    events = await ask(client, "@office-guide where must the visitor badge be worn at all times?", "g8")
    done, replace = events[-1][1], first(events, "replace")
    check = done["validation"]["sources"]
    assert check["supported"] == 1  # the passage holds every word of it: it adds nothing to the question
    assert check["not_found_reason"] == "restates_question"
    assert check["original_text"] == "The visitor badge must be worn at all times [S1]."
    assert done["answer"].startswith("I could not find this in the documents.") and replace["text"] == done["answer"]
    assert "the answer only restates the question" in replace["reason"]
    stored = (await client.get("/api/threads/g8")).json()["messages"][-1]
    assert stored["content"] == done["answer"] and stored["validation"]["sources"]["not_found_reason"] == (
        "restates_question"
    )


async def test_asked_why_after_a_not_found_reply_quotes_the_closest_sentences_instead_of_repeating_it(app, client):
    app.state.services.deps.chat_model = Invents()
    question = "@zephyr-9-service-manual what refrigerant does the Zephyr-9 use?"
    first_reply = (await ask(client, question, "g9"))[-1][1]["answer"]
    assert first_reply.startswith("I could not find this in the documents. The closest passages I found are in")
    for again in ("why?", "Are you sure?"):
        events = await ask(client, again, "g9")
        done = events[-1][1]
        assert done["answer"] != first_reply and done["validation"]["sources"]["not_found"] == "replaced"
        opening, quotes = done["answer"].split("\n\n")
        assert opening == (
            "I could not find this in the documents: none of the passages I found for “what refrigerant does the "
            "Zephyr-9 use?” states it. The closest sentences are:"
        )
        shown = (await client.get("/api/threads/g9/memory")).json()["ledger"]
        lines = quotes.split("\n")
        assert len(lines) == 2 and all(line.startswith("- zephyr-9-service-manual.md (") for line in lines)
        for line in lines:  # each quotes a sentence of a passage the turn found, not the section heading alone
            quoted = line.split("“", 1)[1].rstrip("”")
            assert len(quoted.split()) > 3 and any(quoted in s["snippet"] for s in shown), line
    # a question of its own after the not-found reply gets the short reply, as any question does
    events = await ask(client, "@zephyr-9-service-manual what refrigerant gas is inside the unit?", "g9")
    assert events[-1][1]["answer"].startswith("I could not find this in the documents. The closest passages")


async def test_a_two_part_question_with_one_part_answered_keeps_that_answer_and_names_the_other_live_and_after_reload(
    app, client
):
    app.state.services.deps.chat_model = AnswersOnePart()
    question = "@employee-handbook What is the notice period for permanent employees and is there a gym in the office?"
    events = await ask(client, question, "g9")
    done, replace = events[-1][1], first(events, "replace")
    assert done["answer"].startswith("The notice period for permanent employees is 2 months")
    assert done["answer"].endswith(
        "I could not find the answer to the rest of the question in the documents: “is there a gym in the office?”"
    )
    check = done["validation"]["sources"]
    assert check["unanswered_parts"] == ["is there a gym in the office?"] and not check.get("not_found")
    assert replace["text"] == done["answer"] and "do not state the whole answer" in replace["reason"]
    assert done["validation"]["answerable"]["answered"] is False
    stored = (await client.get("/api/threads/g9")).json()["messages"][-1]
    assert stored["content"] == done["answer"] and stored["validation"]["sources"] == check


async def test_a_name_the_answer_takes_from_the_first_lines_of_its_passages_document_is_supported(app, client):
    await asyncio.to_thread(app.state.services.knowledge.ingestor.ingest, "parking-policy.md", PARKING)
    app.state.services.deps.chat_model = NamesTheSite()
    events = await ask(client, "How many charging bays are reserved for electric vehicles at Lindenhof?", "g10")
    done = events[-1][1]
    assert done["answer"].startswith("Six charging bays are reserved for electric vehicles at Lindenhof")
    assert not done["validation"]["sources"].get("not_found") and done["validation"]["sources"]["grounded"]


async def test_an_answer_that_leaves_a_part_of_a_two_part_question_unanswered_says_so(app, client):
    app.state.services.deps.chat_model = AnswersTheLength()
    events = await ask(
        client, "@it-security-policy How long must passwords be, and how often must they be changed?", "g11"
    )
    done, replace = events[-1][1], first(events, "replace")
    assert done["answer"].startswith("Passwords must be at least 14 characters long [S")
    assert done["answer"].endswith(
        ".\n\nThis answer does not cover the rest of the question: “how often must they be changed?”"
    )
    assert done["validation"]["sources"]["unanswered_parts"] == ["how often must they be changed?"]
    assert "the answer does not cover 1 part of the question" in replace["reason"]


async def test_a_v1_stream_ends_with_the_note_on_the_part_of_the_question_the_answer_leaves(app, client):
    app.state.services.deps.chat_model = AnswersTheLength()
    body = {
        "model": "ragline:it-security-policy.md",
        "stream": True,
        "messages": [{"role": "user", "content": "How long must passwords be, and how often must they be changed?"}],
    }
    response = await client.post("/v1/chat/completions", json=body)
    chunks = [json.loads(line[6:]) for line in response.text.splitlines() if line.startswith("data: {")]
    content = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c.get("choices"))
    assert content.startswith("Passwords must be at least 14 characters long")
    assert content.endswith(
        "\n\nThis answer does not cover the rest of the question: “how often must they be changed?”"
    )
    assert "Correction" not in content
