from bench.runs_load import compare, run_load

LOG = [(1, "metadata", "{}"), (2, "status", '{"a": 1}'), (3, "token", '{"text": "Hi"}'), (4, "done", "{}")]


def test_compare_counts_lost_doubled_changed_and_reordered_events():
    assert compare(LOG, LOG) == {"lost": 0, "duplicated": 0, "mismatched": 0, "out_of_order": 0}
    re_attached_one_too_early = LOG[:3] + LOG[2:]
    assert compare(re_attached_one_too_early, LOG) == {"lost": 0, "duplicated": 1, "mismatched": 0, "out_of_order": 1}
    re_attached_one_too_late = LOG[:2] + LOG[3:]
    assert compare(re_attached_one_too_late, LOG)["lost"] == 1
    other_text = [*LOG[:2], (3, "token", '{"text": "Ho"}'), LOG[3]]
    assert compare(other_text, LOG)["mismatched"] == 1


def test_five_runs_each_re_attached_once_lose_and_double_nothing(tmp_path):
    r = run_load(runs=5, tokens_per_second=20, gap=0.2, data_dir=tmp_path / "data")
    assert r["follower_errors"] == []
    assert (r["lost"], r["duplicated"], r["mismatched"], r["out_of_order"]) == (0, 0, 0, 0)
    assert r["completed"] == 5 and r["events"] == r["events_seen"] > 5 * 16  # 16 tokens each, plus status events
    assert r["reattach_s"]["n"] == 5 and r["reattached_mid_run"] >= 1
