from backend.graph.nodes.retriever import resolve_names, retrieve
from backend.tests.fakes import FakeRetriever, runtime, source

HITS = [source("S1", "Policy.pdf", "Notice is 30 days."), source("S2", "faq.md", "Parking is free.")]


async def test_retrieve_searches_rewritten_query_with_top_k():
    retriever = FakeRetriever(hits=HITS)
    out = await retrieve(
        {"rewritten_query": "notice period", "targeted_documents": []}, runtime(retriever=retriever, retrieval_top_k=3)
    )
    assert retriever.searches == [("notice period", 3, None)]
    assert [d["document"] for d in out["documents"]] == ["Policy.pdf", "faq.md"]


async def test_retrieve_when_mention_then_only_that_document():
    retriever = FakeRetriever(hits=HITS)
    out = await retrieve({"rewritten_query": "notice", "targeted_documents": ["policy"]}, runtime(retriever=retriever))
    assert retriever.searches[0][2] == ["Policy.pdf"]
    assert {d["document"] for d in out["documents"]} == {"Policy.pdf"}


async def test_retrieve_when_mention_unknown_then_nothing_and_no_search():
    retriever = FakeRetriever(hits=HITS)
    out = await retrieve(
        {"rewritten_query": "x", "targeted_documents": ["../../etc/passwd"]}, runtime(retriever=retriever)
    )
    assert out == {"documents": []}
    assert retriever.searches == []


def test_resolve_names_is_case_insensitive_with_optional_extension():
    known = ["Policy.pdf", "Annual Report 2024.docx", "faq.md"]
    assert resolve_names(["POLICY"], known) == ["Policy.pdf"]
    assert resolve_names(["annual report 2024"], known) == ["Annual Report 2024.docx"]
    assert resolve_names(["faq.md"], known) == ["faq.md"]
    assert resolve_names(["nothing"], known) == []
