import httpx
from langchain_core.messages import AIMessageChunk

from backend.graph.deps import GraphDeps
from backend.llm.fake import ScriptedChatModel
from backend.settings import Settings
from backend.streaming import EventMapper, describe_error, final_events
from backend.tests.fakes import FakeRetriever


def deps(**settings) -> GraphDeps:
    return GraphDeps(ScriptedChatModel(), FakeRetriever(), Settings(**settings))


def test_describe_error_connect_failure_names_ollama_host():
    err = describe_error(httpx.ConnectError("refused"), deps(llm_backend="ollama", ollama_base_url="http://box:1"))
    assert err.code == "model_unreachable" and "http://box:1" in err.message


def test_describe_error_unknown_exception_hides_details():
    err = describe_error(ValueError("secret internals"), deps(llm_backend="fake"))
    assert err.code == "internal_error" and "secret" not in err.message and "ValueError" in err.message


def token(node: str, text: str) -> tuple[str, tuple]:
    return "messages", (AIMessageChunk(content=text), {"langgraph_node": node})


def task_start(node: str, state: dict) -> tuple[str, dict]:
    return "tasks", {"id": "1", "name": node, "input": state, "triggers": ()}


def task_end(node: str) -> tuple[str, dict]:
    return "tasks", {"id": "1", "name": node, "error": None, "result": {}, "interrupts": []}


def run(mapper: EventMapper, *items: tuple) -> list:
    return [p for mode, chunk in items for p in mapper.map(mode, chunk)]


def test_tokens_kept_for_the_generator_only_and_empty_ones_dropped():
    mapper = EventMapper()
    assert [p.text for p in run(mapper, token("generator", "Hi "))] == ["Hi "]
    assert run(mapper, token("generator", ""), token("rewriter", "standalone ")) == []


def test_pii_split_across_tokens_never_leaves_unredacted_and_is_flushed_before_generator_end():
    mapper = EventMapper()
    pieces = ["Write ", "to jo", "hn.do", "e@exa", "mple.", "com to", "day."]
    out = run(
        mapper,
        task_start("generator", {"question": "Who to contact?", "documents": []}),
        *(token("generator", p) for p in pieces),
        task_end("generator"),
    )
    texts = [p.text for p in out if hasattr(p, "text") and not hasattr(p, "node")]
    assert "john.doe" not in "".join(texts) and "".join(texts) == "Write to [EMAIL] today."
    assert out[-1].node == "generator" and out[-1].phase == "end"


def test_pii_from_the_sources_may_be_repeated():
    mapper = EventMapper()
    docs = [{"text": "Report incidents to security@northwind.example."}]
    out = run(
        mapper,
        task_start("generator", {"question": "Who?", "documents": docs}),
        token("generator", "Mail security@northwind.example now."),
        task_end("generator"),
    )
    assert "".join(p.text for p in out if not hasattr(p, "node")) == "Mail security@northwind.example now."


def test_a_node_report_becomes_its_end_status_and_progress_changes_its_label():
    mapper = EventMapper()
    out = run(
        mapper,
        task_start("retriever", {}),
        ("custom", {"kind": "progress", "node": "retriever", "label": "Searching Policy.pdf…"}),
        ("custom", {"kind": "report", "node": "retriever", "label": "Searching documents", "detail": "2 passages"}),
        task_end("retriever"),
    )
    assert [(p.phase, p.label, p.detail) for p in out] == [
        ("start", "Searching documents…", None),
        ("progress", "Searching Policy.pdf…", None),
        ("end", "Searching documents", "2 passages"),
    ]


def test_bookkeeping_and_unknown_tasks_make_no_status():
    mapper = EventMapper()
    assert run(mapper, task_start("start_turn", {}), task_end("start_turn"), task_start("other", {})) == []


def test_describe_error_connect_failure_names_the_openai_server_and_its_setting():
    settings = {"llm_backend": "openai", "openai_chat_model": "m", "openai_base_url": "http://gpu:8000"}
    err = describe_error(httpx.ConnectError("refused"), deps(**settings))
    assert err.code == "model_unreachable"
    assert "http://gpu:8000/v1" in err.message and "RAG_OPENAI_BASE_URL" in err.message


def test_describe_error_embedded_failure_points_at_the_log_not_at_another_backends_setting():
    err = describe_error(httpx.ConnectError("refused"), deps(llm_backend="embedded"))
    assert err.code == "model_unreachable" and "embedded llama.cpp" in err.message and "RAG_" not in err.message


def test_describe_error_finds_a_hang_up_under_the_sdks_connection_error():
    try:
        try:
            raise httpx.RemoteProtocolError("peer closed connection without sending complete message body")
        except httpx.RemoteProtocolError as cause:
            raise ConnectionError("Connection error.") from cause
    except ConnectionError as exc:
        err = describe_error(exc, deps(llm_backend="ollama", ollama_base_url="http://box:1"))
    assert err.code == "model_error" and "http://box:1 broke off its answer" in err.message


def test_describe_error_names_the_pool_server_an_error_came_from_else_every_server():
    pool = deps(llm_backend="ollama", ollama_base_url="http://gpu-a:1,http://gpu-b:2")
    broken = httpx.RemoteProtocolError("peer closed connection")
    broken.add_note("model server: http://gpu-b:2")
    assert describe_error(broken, pool).message == "The ollama model server at http://gpu-b:2 broke off its answer."
    none = describe_error(ConnectionError("Failed to connect to Ollama"), pool).message
    assert "Could not reach the ollama model servers at http://gpu-a:1, http://gpu-b:2." in none


def generator_text(mapper: EventMapper, node_input: dict, pieces: list[str]) -> str:
    out = run(
        mapper, task_start("generator", node_input), *(token("generator", p) for p in pieces), task_end("generator")
    )
    return "".join(p.text for p in out if not hasattr(p, "node"))


def test_a_chat_answers_citation_markers_never_stream_even_split_across_tokens():
    """Tester, /v1 model ragline-chat: "Bonjour! [S1]" streamed as is (the stored answer dropped the marker, which
    only the ragline.replace extension said); an OpenAI client keeps what streamed."""
    chat = {"question": "Say hello in French.", "intent": "chat", "documents": []}
    assert generator_text(EventMapper(), chat, ["Bon", "jour!", " [", "S", "1", "]"]) == "Bonjour!"
    assert (
        generator_text(EventMapper(), chat, ["Too cold", " [S1][S2]", "! A [note] stays."])
        == "Too cold! A [note] stays."
    )
    no_passages = {"question": "Our dress code?", "intent": "rag", "documents": []}
    assert generator_text(EventMapper(), no_passages, ["None matched [S1]."]) == "None matched."


def test_a_documents_answers_citation_markers_stream_as_written():
    rag = {"question": "Leave?", "intent": "rag", "documents": [{"id": "S1", "text": "Leave is 28 days."}]}
    assert generator_text(EventMapper(), rag, ["Leave is 28 days", " [", "S1", "]."]) == "Leave is 28 days [S1]."


def test_a_chat_answers_markers_stream_as_written_once_the_model_searched_the_documents_with_a_tool():
    """Review: with tools, a chat turn may find sources itself and cite them; the stored answer keeps the markers."""
    mapper = EventMapper()
    chat = {"question": "Leave?", "intent": "chat", "documents": []}
    call = AIMessageChunk(
        content="", tool_call_chunks=[{"name": "search_knowledge_base", "args": "{}", "id": "1", "index": 0}]
    )
    out = run(
        mapper,
        task_start("generator", chat),
        ("messages", (call, {"langgraph_node": "generator"})),
        *(token("generator", p) for p in ["Leave is 28 days", " [S1]", "."]),
        task_end("generator"),
    )
    assert "".join(p.text for p in out if not hasattr(p, "node")) == "Leave is 28 days [S1]."


def test_spaces_a_removed_marker_leaves_at_a_line_end_are_no_replacement():
    """Review: "- tea [S1]\\n- coffee [S2]" streamed "- tea\\n- coffee" and was stored "- tea \\n- coffee": a replace
    event for nothing a reader can see."""
    record = {"answer": "- tea \n- coffee", "sources": [], "question": "q", "intent": "chat", "rewritten_query": "",
              "route_reason": "", "scope": None, "triage": None, "validation": None}  # fmt: skip
    events = final_events(record, "- tea\n- coffee", "t")
    assert [type(e).__name__ for e in events] == ["DoneEvent"]


def bad_request(message: str) -> Exception:
    import openai

    response = httpx.Response(400, request=httpx.Request("POST", "http://127.0.0.1:1/v1/chat/completions"))
    return openai.BadRequestError(message, response=response, body=None)


def test_describe_error_a_prompt_longer_than_the_context_says_to_shorten_the_message_with_the_sizes():
    llama = (
        "Error code: 400 - request (4993 tokens) exceeds the available context size (4096 tokens), try increasing it"
    )
    err = describe_error(bad_request(llama), deps(llm_backend="embedded"))
    assert err.code == "too_long" and "(4,993 tokens; it reads at most 4,096)" in err.message
    assert "Shorten the message" in err.message and "llama.cpp" not in err.message
    vllm = "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens in the messages."
    err = describe_error(bad_request(vllm), deps(llm_backend="embedded"))
    assert err.code == "too_long" and "(9,000 tokens; it reads at most 8,192)" in err.message
    other = describe_error(bad_request("Error code: 400 - invalid grammar"), deps(llm_backend="embedded"))
    assert other.code == "model_error"
