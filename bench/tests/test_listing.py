from bench.__main__ import benchmarks, main


def test_every_benchmark_module_is_listed_with_its_docstring_and_helpers_are_not():
    found = benchmarks()
    assert set(found) == {
        "answers",
        "auth",
        "clients",
        "conflicts",
        "dialogues",
        "faults",
        "guardrails",
        "memory",
        "relevance_floor",
        "retrieval",
        "runs_load",
        "scale",
        "search_storage",
        "speed",
        "stop",
        "stream",
        "tool_calls",
        "train_injection",
        "vocabulary",
    }
    assert all(line and len(line) < 120 for line in found.values())


def test_an_unknown_benchmark_name_is_refused_with_the_list(capsys):
    assert main(["no-such-bench"]) == 2
    assert "stream" in capsys.readouterr().err
