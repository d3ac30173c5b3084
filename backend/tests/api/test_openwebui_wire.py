"""/v1's stream as Open WebUI 0.12.4 reads it, against fixtures recorded from a real run (python -m bench clients
--record): Ragline's /v1 stream and Open WebUI's /api/chat/completions re-stream of it, for the same question."""

import json
from dataclasses import dataclass, field
from pathlib import Path

import httpx

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "openwebui"
QUESTION = "How many days of annual leave do employees get?"
BODY = {
    "model": "ragline",
    "stream": True,
    "stream_options": {"include_usage": True},
    "messages": [{"role": "user", "content": QUESTION}],
}


@dataclass
class Read:
    """What Open WebUI's middleware takes from a chat-completion stream."""

    content: str = ""
    statuses: list[dict] = field(default_factory=list)
    sources: list[dict] = field(default_factory=list)
    usage: dict = field(default_factory=dict)
    finish_reason: str | None = None
    done: bool = False
    kinds: list[str] = field(default_factory=list)  # each data line: role, status, content, final, usage, done
    shapes: dict[str, set[str]] = field(default_factory=dict)  # kind -> the key paths its lines have


def key_paths(value: object, prefix: str = "") -> set[str]:
    """Every key path of a JSON value, lists as [] (the shape, not the values)."""
    if isinstance(value, dict):
        return {p for k, v in value.items() for p in {f"{prefix}.{k}", *key_paths(v, f"{prefix}.{k}")}}
    if isinstance(value, list):
        return {p for v in value for p in key_paths(v, f"{prefix}[]")}
    return set()


def kind(data: dict) -> str:
    """Which line of the stream a chunk is."""
    if "event" in data:
        return "status"
    if not data.get("choices"):
        return "usage" if "usage" in data else "other"
    choice = data["choices"][0]
    if choice.get("finish_reason"):
        return "final"
    return "role" if "role" in choice["delta"] else "content"


def read_as_open_webui(sse: str) -> Read:
    """Parse `data:` lines as open_webui/utils/middleware.py does: event, usage, choices[0].delta, annotations."""
    read = Read()
    for line in sse.splitlines():
        if not line.startswith("data:"):
            continue
        payload = line[5:].strip()
        if payload == "[DONE]":
            read.done = True
            read.kinds.append("done")
            continue
        data = json.loads(payload)
        read.kinds.append(kind(data))
        read.shapes.setdefault(read.kinds[-1], set()).update(key_paths(data))
        if "event" in data:
            read.statuses.append(data["event"])
        read.usage.update(data.get("usage") or {})
        choices = data.get("choices", [])
        if not choices:
            continue
        read.finish_reason = choices[0].get("finish_reason") or read.finish_reason
        delta = choices[0].get("delta", {})
        read.content += delta.get("content") or ""
        for annotation in delta.get("annotations") or []:
            if annotation.get("type") == "url_citation" and "url_citation" in annotation:
                cited = annotation["url_citation"]
                read.sources.append({"name": cited.get("title", cited.get("url")), "url": cited.get("url", "")})
    return read


def collapsed(kinds: list[str]) -> list[str]:
    """The kinds with runs of the same kind as one."""
    return [k for i, k in enumerate(kinds) if i == 0 or kinds[i - 1] != k]


def test_recorded_stream_gives_open_webui_the_answer_its_source_status_lines_and_usage():
    read = read_as_open_webui((FIXTURES / "ragline-v1.sse").read_text())
    assert "28 days" in read.content and "[S1]" in read.content
    assert [s["name"] for s in read.sources] == ["S1: employee-handbook.md"]
    assert read.sources[0]["url"].endswith("/file") and "/api/documents/" in read.sources[0]["url"]
    assert read.statuses and all(s["type"] == "status" and "description" in s["data"] for s in read.statuses)
    assert read.statuses[-1]["data"]["done"] is True  # the line Open WebUI leaves above the answer
    assert read.usage["total_tokens"] > 0 and read.finish_reason == "stop" and read.done
    assert read.kinds[0] == "role" and read.kinds[-3:] == ["final", "usage", "done"]


def test_open_webui_api_restreams_ragline_unchanged_but_for_ids_and_times():
    ours = read_as_open_webui((FIXTURES / "ragline-v1.sse").read_text())
    theirs = read_as_open_webui((FIXTURES / "openwebui-api.sse").read_text())
    assert (theirs.content, theirs.sources, theirs.statuses) == (ours.content, ours.sources, ours.statuses)
    assert (theirs.kinds, theirs.shapes) == (ours.kinds, ours.shapes)


async def test_current_v1_stream_has_the_recorded_shape(client: httpx.AsyncClient):
    recorded = read_as_open_webui((FIXTURES / "ragline-v1.sse").read_text())
    response = await client.post("/v1/chat/completions", json=BODY)
    assert response.status_code == 200
    current = read_as_open_webui(response.text)
    assert collapsed(current.kinds) == collapsed(recorded.kinds)
    assert current.shapes == recorded.shapes  # same keys at the same places, line kind by line kind
    assert current.content == recorded.content and [s["name"] for s in current.sources] == ["S1: employee-handbook.md"]
    assert [s["data"]["description"] for s in current.statuses] == [s["data"]["description"] for s in recorded.statuses]


async def test_tools_offered_without_tool_choice_as_open_webui_sends_them_are_ignored(client: httpx.AsyncClient):
    tool = {"type": "function", "function": {"name": "search_web", "parameters": {"type": "object"}}}
    response = await client.post("/v1/chat/completions", json={**BODY, "tools": [tool]})
    assert response.status_code == 200
    assert "28 days" in read_as_open_webui(response.text).content
