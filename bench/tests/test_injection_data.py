import pytest

from bench.injection_data import embedding_train_sets, report_sets, rules_tune_sets, split
from bench.injection_vendor import grams
from bench.lib import DATASETS

# BIPIA, presidio and SQuAD are read in place from ../shared/datasets (never copied into the repository)
needs_datasets = pytest.mark.skipif(not DATASETS.is_dir(), reason=f"the public datasets are not at {DATASETS}")


def test_split_when_called_twice_then_same_disjoint_parts_covering_the_set():
    texts = [f"text {i}" for i in range(50)] + ["text 1"]
    fit, dev = split(texts)
    assert (fit, dev) == split(texts)
    assert not set(fit) & set(dev) and set(fit) | set(dev) == set(texts) and len(dev) == 10


@needs_datasets
def test_report_sets_share_no_text_and_no_close_copy_with_the_training_sets():
    trained = {t for s in embedding_train_sets() + rules_tune_sets() for t in s.texts}
    reported = [t for s in report_sets() for t in s.texts]
    assert not trained & set(reported)
    seen = set().union(*(grams(t) for t in trained))
    close = [t for t in reported if len(grams(t)) >= 10 and len(grams(t) & seen) > 0.1 * len(grams(t))]
    assert close == []


@needs_datasets
def test_every_set_is_labelled_and_not_empty():
    for s in embedding_train_sets() + rules_tune_sets() + report_sets():
        assert s.label in (0, 1) and len(s.texts) >= 5, s.name
