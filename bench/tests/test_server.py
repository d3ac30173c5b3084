import os

from bench.lib import ROOT
from bench.lib.server import child_env


def test_child_env_drops_the_callers_model_settings_but_keeps_the_cache_dir(monkeypatch):
    monkeypatch.setenv("RAG_LLM_BACKEND", "ollama")
    monkeypatch.setenv("OLLAMA_HOST", "http://elsewhere:11434")
    monkeypatch.setenv("RAG_CACHE_DIR", "/models")
    env = child_env({"RAG_DATA_DIR": "/tmp/data"})
    assert "RAG_LLM_BACKEND" not in env and "OLLAMA_HOST" not in env
    assert env["RAG_CACHE_DIR"] == "/models" and env["RAG_DATA_DIR"] == "/tmp/data"
    assert env["PYTHONPATH"].split(os.pathsep)[0] == str(ROOT)  # `--factory bench.lib...` imports from anywhere
