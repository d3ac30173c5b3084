import pytest

from bench.lib.stats import dist, median, minus, percentile, ratio


def test_percentile_interpolates_linearly_between_closest_ranks():
    values = [4.0, 1.0, 3.0, 2.0]
    assert percentile(values, 0) == 1.0 and percentile(values, 100) == 4.0
    assert percentile(values, 50) == 2.5 == median(values)
    assert percentile(values, 95) == pytest.approx(3.85)  # numpy's default ("linear") gives the same


def test_percentile_of_no_values_is_none_and_of_one_value_is_that_value():
    assert percentile([], 50) is None and median([]) is None
    assert percentile([7.0], 95) == 7.0


def test_dist_summarises_a_sample_and_says_none_where_it_is_empty():
    assert dist([1.0, 2.0, 3.0]) == {"n": 3, "p50": 2.0, "p95": pytest.approx(2.9), "min": 1.0, "max": 3.0, "mean": 2.0}
    assert dist([]) == {"n": 0, "p50": None, "p95": None, "min": None, "max": None, "mean": None}


def test_ratio_and_difference_are_none_when_a_side_is_missing():
    assert ratio(3.0, 2.0) == 1.5 and ratio(3.0, 0.0) is None and ratio(None, 2.0) is None
    assert minus(3.0, 2.0) == 1.0 and minus(3.0, None) is None
