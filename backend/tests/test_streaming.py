import httpx
from langchain_core.messages import AIMessageChunk

from backend.graph.deps import GraphDeps
from backend.llm.fake import ScriptedChatModel
from backend.settings import Settings
from backend.streaming import _map_event, describe_error
from backend.tests.fakes import FakeRetriever


def deps(**settings) -> GraphDeps:
    return GraphDeps(ScriptedChatModel(), FakeRetriever(), Settings(**settings))


def test_describe_error_connect_failure_names_ollama_host():
    err = describe_error(httpx.ConnectError("refused"), deps(llm_backend="ollama", ollama_base_url="http://box:1"))
    assert err.code == "model_unreachable" and "http://box:1" in err.message


def test_describe_error_unknown_exception_hides_details():
    err = describe_error(ValueError("secret internals"), deps(llm_backend="fake"))
    assert err.code == "internal_error" and "secret" not in err.message and "ValueError" in err.message


def test_map_event_keeps_generator_tokens_and_drops_empty_and_other_nodes():
    def stream(node: str, text: str) -> dict:
        return {
            "event": "on_chat_model_stream",
            "name": "m",
            "metadata": {"langgraph_node": node},
            "data": {"chunk": AIMessageChunk(content=text)},
        }

    assert _map_event(stream("generator", "Hi")).text == "Hi"
    assert _map_event(stream("generator", "")) is None
    assert _map_event(stream("rewriter", "standalone")) is None


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
