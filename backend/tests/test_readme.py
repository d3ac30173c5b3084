from pathlib import Path

from backend.settings import Settings

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()


def test_readme_shows_both_commands_before_configuration():
    start, test, config = (README.index(s) for s in ("./scripts/start", "./scripts/test", "## Configuration"))
    assert start < config and test < config


def test_readme_documents_every_setting():
    missing = [f"RAG_{name.upper()}" for name in Settings.model_fields if f"`RAG_{name.upper()}`" not in README]
    assert missing == []


def test_readme_documents_every_sse_event():
    from backend.contract.events import SSE_EVENTS

    assert [e for e in SSE_EVENTS.values() if f"| `{e}` |" not in README] == []
