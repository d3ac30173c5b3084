import httpx
from langchain_core.messages import AIMessageChunk

from backend.graph.deps import GraphDeps
from backend.llm.fake import ScriptedChatModel
from backend.settings import Settings
from backend.streaming import TokenGate, _map_event, _payloads, describe_error
from backend.tests.fakes import FakeRetriever


def deps(**settings) -> GraphDeps:
    return GraphDeps(ScriptedChatModel(), FakeRetriever(), Settings(**settings))


def test_describe_error_connect_failure_names_ollama_host():
    err = describe_error(httpx.ConnectError("refused"), deps(llm_backend="ollama", ollama_base_url="http://box:1"))
    assert err.code == "model_unreachable" and "http://box:1" in err.message


def test_describe_error_unknown_exception_hides_details():
    err = describe_error(ValueError("secret internals"), deps(llm_backend="fake"))
    assert err.code == "internal_error" and "secret" not in err.message and "ValueError" in err.message


def stream(node: str, text: str) -> dict:
    return {
        "event": "on_chat_model_stream",
        "name": "m",
        "metadata": {"langgraph_node": node},
        "data": {"chunk": AIMessageChunk(content=text)},
    }


def node_event(kind: str, state: dict) -> dict:
    key = "input" if kind == "on_chain_start" else "output"
    return {"event": kind, "name": "generator", "metadata": {"langgraph_node": "generator"}, "data": {key: state}}


def test_payloads_keep_generator_tokens_and_drop_empty_and_other_nodes():
    gate = TokenGate()
    assert [p.text for p in _payloads(stream("generator", "Hi "), gate)] == ["Hi "]
    assert _payloads(stream("generator", ""), gate) == []
    assert _payloads(stream("rewriter", "standalone "), gate) == []


def test_pii_split_across_tokens_never_leaves_unredacted_and_is_flushed_before_generator_end():
    gate = TokenGate()
    _payloads(node_event("on_chain_start", {"question": "Who to contact?", "documents": []}), gate)
    pieces = ["Write ", "to jo", "hn.do", "e@exa", "mple.", "com to", "day."]
    out = [p for piece in pieces for p in _payloads(stream("generator", piece), gate)]
    out += _payloads(node_event("on_chain_end", {"answer": "x"}), gate)
    texts = [p.text for p in out if hasattr(p, "text") and not hasattr(p, "node")]
    assert "john.doe" not in "".join(texts) and "".join(texts) == "Write to [EMAIL] today."
    assert out[-1].node == "generator" and out[-1].phase == "end"


def test_pii_from_the_sources_may_be_repeated():
    gate = TokenGate()
    docs = [{"text": "Report incidents to security@northwind.example."}]
    _payloads(node_event("on_chain_start", {"question": "Who?", "documents": docs}), gate)
    out = _payloads(stream("generator", "Mail security@northwind.example now."), gate)
    out += _payloads(node_event("on_chain_end", {}), gate)
    assert "".join(p.text for p in out if not hasattr(p, "node")) == "Mail security@northwind.example now."


def test_map_event_status_only_for_the_node_itself_not_nested_runnables():
    start = {
        "event": "on_chain_start",
        "name": "retriever",
        "metadata": {"langgraph_node": "retriever"},
        "data": {"input": {"targeted_documents": ["Policy.pdf"]}},
    }
    nested = {**start, "name": "RunnableSequence"}
    assert _map_event(start).label == "Searching Policy.pdf…"
    assert _map_event(nested) is None
