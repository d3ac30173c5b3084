import httpx

from bench.lib.sse import Turn, parse_sse

BODY = (
    'event: metadata\r\ndata: {"thread_id": "t", "run_id": "r"}\r\n\r\n'
    ": ping - 2025-01-01 00:00:00\r\n\r\n"
    'event: status\r\ndata: {"node": "router", "phase": "end", "label": "Searching"}\r\n\r\n'
    'event: token\r\ndata: {"text":\r\ndata: "split over two data lines"}\r\n\r\n'
)


def test_parse_sse_gives_events_in_order_without_pings_and_joins_data_lines():
    response = httpx.Response(200, headers={"content-type": "text/event-stream; charset=utf-8"}, text=BODY)
    assert parse_sse(response) == [
        ("metadata", {"thread_id": "t", "run_id": "r"}),
        ("status", {"node": "router", "phase": "end", "label": "Searching"}),
        ("token", {"text": "split over two data lines"}),
    ]


def test_turn_times_the_first_token_the_token_rate_and_the_route():
    done = {"intent": "rag", "route_reason": "close to a document chunk (distance 0.42)"}
    events = [("metadata", {}, 10.1), ("status", {"node": "router", "phase": "end"}, 10.2)]
    events += [("token", {"text": "a"}, 10.5), ("token", {"text": "b"}, 10.75), ("token", {"text": "c"}, 11.0)]
    turn = Turn("t", t_send=10.0, events=[*events, ("done", done, 11.1)])
    assert turn.ttft == 0.5 and turn.n_tokens == 3 and turn.sse_rate == 4.0
    assert turn.route == "rag: close to a document chunk"
    assert turn.marks() == {"metadata": 10.1, "router:end": 10.2, "token": 10.5, "done": 11.1}


def test_turn_without_done_has_no_route_and_no_rate():
    turn = Turn("t", t_send=0.0, events=[("token", {"text": "a"}, 1.0)])
    assert turn.done is None and turn.route == "error" and turn.sse_rate is None
