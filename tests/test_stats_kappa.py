import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from analysis_lib.stats import cohen_kappa, confusion_matrix, kappa_from_confusion


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_kappa_matches_sklearn(weights):
    rng = np.random.default_rng(0)
    labels = ["A", "tie", "B"]
    a = rng.choice(labels, 500)
    b = np.where(rng.random(500) < 0.6, a, rng.choice(labels, 500))
    ours = cohen_kappa(list(a), list(b), labels=labels, weights=weights)
    ref = cohen_kappa_score(a, b, labels=labels, weights=weights)
    assert ours == pytest.approx(ref, abs=1e-12)


def test_kappa_from_published_nugget_confusion():
    # Search Arena Meets Nuggets, overall matrix (human A/tie/B rows x nugget A/tie/B), both-bad excluded:
    # the paper reports quadratic-weighted kappa 0.30 (DATA.md: 0.298).
    table = np.array([[938, 381, 395], [360, 342, 343], [443, 394, 924]])
    assert kappa_from_confusion(table, "quadratic") == pytest.approx(0.298, abs=5e-4)


def test_confusion_rejects_unknown_label():
    with pytest.raises(ValueError, match="rater2: labels \\['C'\\]"):
        confusion_matrix(["A"], ["C"], ["A", "B"])
