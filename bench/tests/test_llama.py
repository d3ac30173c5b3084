from pathlib import Path

import httpx
import pytest

from backend.llm.model_files import MODELS, ensure_model
from backend.settings import Settings
from bench.lib.llama import LlamaLog, parse_timings, raw_completion, raw_server

RECORDED = Path(__file__).with_name("llama-server.log")  # xllamacpp's llama.cpp server, two requests on slot 1


def test_timings_of_a_recorded_llama_server_log_give_prompt_and_decode_per_task():
    assert parse_timings(RECORDED.read_text()) == [
        {
            "slot": 1,
            "task": 0,
            "evaluated": 31,
            "prompt_ms": 2128.61,
            "decoded": 8,
            "decode_ms": 2613.25,
            "prompt_tokens": 31,
        },
        {
            "slot": 1,
            "task": 9,
            "evaluated": 6,
            "prompt_ms": 301.94,
            "decoded": 8,
            "decode_ms": 2630.89,
            "prompt_tokens": 32,
        },  # 26 of them from the KV cache
    ]


def test_llama_log_reads_only_what_was_written_since_the_last_call(tmp_path):
    lines = RECORDED.read_text().splitlines(keepends=True)
    split = next(i for i, line in enumerate(lines) if "task 9 | prompt eval" in line)
    log_path = tmp_path / "llama.log"
    log_path.write_text("".join(lines[:split]) + lines[split][:40])  # the second task's line is half written
    log = LlamaLog(log_path)
    assert [c["task"] for c in log.calls()] == [0]
    with log_path.open("a") as f:
        f.write(lines[split][40:] + "".join(lines[split + 1 :]))
    assert [(c["task"], c["evaluated"]) for c in log.calls()] == [(9, 6)]
    assert log.calls() == []


def test_llama_log_without_a_file_has_no_calls(tmp_path):
    assert LlamaLog(None).calls() == [] and LlamaLog(tmp_path / "missing.log").calls() == []


def test_a_task_has_its_whole_prompt_and_the_part_evaluated():
    from bench.lib.llama import parse_timings

    log = (
        "slot print_timing: id  1 | task 7 | prompt eval time =  120.50 ms /    14 tokens (x)\n"
        "slot print_timing: id  1 | task 7 |        eval time =  300.00 ms /    10 tokens (x)\n"
        "slot      release: id  1 | task 7 | stop processing: n_tokens = 1259, truncated = 0\n"
    )
    row = parse_timings(log)[0]
    assert (row["prompt_tokens"], row["evaluated"], row["decoded"]) == (1250, 14, 10)


@pytest.mark.embedded_model
def test_the_raw_server_serves_the_model_with_the_apps_settings_and_times_a_reply(tmp_path):
    settings = Settings(embedded_model="qwen2.5-coder-0.5b", embedded_ctx=512, data_dir=tmp_path / "data")
    path = ensure_model(MODELS[settings.embedded_model], settings.cache_dir)
    log = tmp_path / "llama.log"
    with raw_server(path, settings, log) as url, httpx.Client(timeout=120) as http:
        body = {"messages": [{"role": "user", "content": "Say hi."}], "max_tokens": 4, "temperature": 0}
        reply = raw_completion(http, url, body)
    assert reply["ttft_s"] > 0 and reply["completion_tokens"] >= 1
    assert [c["evaluated"] for c in LlamaLog(log).calls()] == [reply["prompt_n"]]
