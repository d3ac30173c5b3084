import argparse
import json

from bench.lib import report


def test_table_aligns_the_first_column_left_and_the_others_right():
    text = report.table("Title", ["metric", "value"], [["a", "1.0 ms"], ["longer name", 12]])
    assert text.splitlines() == [
        "Title",
        "-----------  ------",
        "metric        value",
        "-----------  ------",
        "a            1.0 ms",
        "longer name      12",
    ]


def test_table_as_markdown_right_aligns_the_number_columns():
    text = report.table("Title", ["metric", "value"], [["a", 1]], markdown=True)
    assert text.splitlines() == ["#### Title", "", "| metric | value |", "|---|---:|", "| a | 1 |"]


def test_formatters_say_dash_for_a_missing_figure():
    assert report.ms(0.0123) == "12.3 ms" and report.ms(None) == "-"
    assert report.times(1.234, 2) == "1.23x" and report.num(None) == "-"
    assert report.count(3, 4) == "3/4 (75%)" and report.count(0, 0) == "-"


def test_json_is_standard_with_nan_as_null_and_says_where_it_ran(tmp_path):
    path = report.write_json(tmp_path / "results" / "x.json", {"p50": float("nan"), "rows": [(1, float("inf"))]})
    data = json.loads(path.read_text())
    assert data["p50"] is None and data["rows"] == [[1, None]]
    assert set(data["host"]) == {"cores", "load_average", "python", "platform"}


def test_every_benchmark_writes_its_json_into_the_results_folder_by_default():
    parser = argparse.ArgumentParser()
    report.add_output_args(parser, "stream")
    args = parser.parse_args([])
    assert args.json == report.RESULTS / "stream.json" and args.markdown is False
