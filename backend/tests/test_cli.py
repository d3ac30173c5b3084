"""The command line: a bad RAG_* setting is reported by name, without a traceback."""

import pytest

from backend.cli import main


def test_invalid_settings_name_each_variable_and_exit_without_a_traceback(monkeypatch):
    monkeypatch.setenv("RAG_PROMPT_STYLE", "fancy")
    monkeypatch.setenv("RAG_RELEVANCE_FLOOR", "5")
    with pytest.raises(SystemExit) as exit_:
        main(["serve"])
    message = str(exit_.value.code)
    assert message.startswith("error: invalid settings")
    assert "RAG_PROMPT_STYLE: Input should be 'plain', 'example' or 'quote' (got 'fancy')" in message
    assert "RAG_RELEVANCE_FLOOR: Input should be less than or equal to 1 (got '5')" in message
