"""bench.conflicts on the sample documents and a folder with a document that disagrees with them."""

import json

from bench import conflicts

RULES = "Mileage is reimbursed at 0.42 euros per kilometre when a technician uses a private car.\n"


def test_the_scan_flags_the_disagreeing_rate_and_nothing_in_the_sample_documents(tmp_path, capsys):
    extra = tmp_path / "uploads"
    extra.mkdir()
    (extra / "expense-rules.txt").write_text(RULES)
    assert conflicts.main(["--docs", str(extra), "--json", str(tmp_path / "out.json")]) == 0
    out = json.loads((tmp_path / "out.json").read_text())
    corpora, halves = out["corpora"], out["cases"]
    assert sum(h["true"] + h["false"] for h in halves.values()) == 80 and set(halves) == {"tune", "report"}
    assert corpora["sample documents"]["flagged"] == []
    assert corpora["SQuAD 2.0 paragraphs"]["flagged"] == []
    pairs = {(a, b) for a, _, b, _ in corpora["sample documents + uploads"]["flagged"]}
    assert pairs == {("travel-policy.pdf", "expense-rules.txt"), ("expense-rules.txt", "travel-policy.pdf")}
    assert "0.42 euros per kilometre" in capsys.readouterr().out
