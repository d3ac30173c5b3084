import httpx

from backend.tests.live_server import serve_in_process


def test_thread_survives_kill_9_mid_turn_and_conversation_continues(tmp_path):
    env = {"RAG_LLM_BACKEND": "fake", "RAG_DATA_DIR": str(tmp_path / "data"), "RAG_FAKE_TOKENS_PER_SECOND": "20"}
    thread_id = "survivor"
    with serve_in_process(env) as (url, proc):
        first = httpx.post(f"{url}/api/chat", json={"message": "Hello", "thread_id": thread_id}, timeout=30)
        assert first.status_code == 200
        with httpx.stream(
            "POST", f"{url}/api/chat/stream", json={"message": "Thanks, bye", "thread_id": thread_id}, timeout=30
        ) as r:
            for line in r.iter_lines():
                if line.startswith("event: token"):
                    proc.kill()  # SIGKILL in the middle of the second answer
                    break
        proc.wait(timeout=10)
    with serve_in_process(env) as (url, _):
        messages = httpx.get(f"{url}/api/threads/{thread_id}").json()["messages"]
        assert [(m["role"], m["content"]) for m in messages] == [
            ("user", "Hello"),
            ("assistant", first.json()["answer"]),
        ]
        again = httpx.post(f"{url}/api/chat", json={"message": "Hi again", "thread_id": thread_id}, timeout=30)
        assert again.status_code == 200
        users = [
            m["content"] for m in httpx.get(f"{url}/api/threads/{thread_id}").json()["messages"] if m["role"] == "user"
        ]
        assert users == ["Hello", "Hi again"]
