"""bench.conflicts on a file of labelled cases and a replayed bench.answers turn."""

import json

from bench import conflicts

RULES = "Mileage is reimbursed at 0.42 euros per kilometre when a technician uses a private car."
POLICY = "Private cars used for business trips are reimbursed at 0.30 euros per kilometre."
CASE = {
    "question": "What is the mileage rate when I use my private car?",
    "answer": "Private cars are reimbursed at 0.30 euros per kilometre. [S1]",
    "cited_document": "travel-policy.pdf",
    "cited_passage": POLICY,
    "other_document": "expense-rules.txt",
}


def test_the_bench_counts_notes_on_labelled_cases_and_replayed_turns(tmp_path, capsys):
    cases = [
        {**CASE, "id": "rates", "label": True, "other_passage": RULES},
        {**CASE, "id": "same-rate", "label": False, "other_passage": RULES.replace("0.42", "0.30")},
        {**CASE, "id": "parking", "label": False, "other_passage": "Parking permits cost 18 euros per month."},
    ]
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    prompt = f"<knowledge_base>\n[S1] travel-policy.pdf\n{POLICY}\n\n[S2] expense-rules.txt\n{RULES}\n</knowledge_base>"
    turn = {"item": {"question": CASE["question"]}, "prompt": prompt, "final": CASE["answer"]}
    (tmp_path / "dump.jsonl").write_text(json.dumps(turn) + "\n")
    argv = ["--cases", str(tmp_path / "cases.json"), "--dump", str(tmp_path / "dump.jsonl")]
    assert conflicts.main([*argv, "--json", str(tmp_path / "out.json")]) == 0
    out = json.loads((tmp_path / "out.json").read_text())
    assert out["cases"]["cases.json"] == {"true": 1, "false": 2, "noted_true": ["rates"], "noted_false": []}
    assert out["dumps"][str(tmp_path / "dump.jsonl")] == {"turns": 1, "fired": [CASE["question"]]}
    assert "1 of 1" in capsys.readouterr().out
