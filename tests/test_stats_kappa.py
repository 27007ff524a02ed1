"""Cohen's kappa (``analysis_lib.stats``): statsmodels' ``cohens_kappa`` on non-degenerate tables, scikit-learn from
labels, an exact rational computation of the formula, the published nugget matrix, and the project's constant-rater
convention (kappa = 1 when p_e = 1)."""

import warnings
from fractions import Fraction

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import cohens_kappa

from analysis_lib.stats import cohen_kappa, confusion_matrix, kappa_from_confusion

WEIGHTS = [None, "linear", "quadratic"]


def _exact_kappa(table: np.ndarray, weights: str | None) -> Fraction:
    """kappa = 1 - sum w O / sum w E in exact rationals (module docstring of ``analysis_lib.stats``)."""
    k = len(table)
    total = sum(Fraction(int(x)) for x in table.ravel())
    obs = [[Fraction(int(table[i][j])) / total for j in range(k)] for i in range(k)]
    rows = [sum(obs[i]) for i in range(k)]
    cols = [sum(obs[i][j] for i in range(k)) for j in range(k)]

    def w(i: int, j: int) -> Fraction:
        if weights is None:
            return Fraction(int(i != j))
        d = Fraction(abs(i - j), k - 1)
        return d if weights == "linear" else d * d

    num = sum(w(i, j) * obs[i][j] for i in range(k) for j in range(k))
    den = sum(w(i, j) * rows[i] * cols[j] for i in range(k) for j in range(k))
    return 1 - num / den


def test_kappa_by_hand():
    # p_o = (20 + 15) / 50 = 0.7; rows (0.5, 0.5), columns (0.6, 0.4): p_e = 0.3 + 0.2 = 0.5; kappa = 0.2 / 0.5
    assert kappa_from_confusion(np.array([[20, 5], [10, 15]])) == pytest.approx(0.4, abs=1e-15)
    # one rater constant, the other not: p_o = p_e = 0.6, kappa = 0 (not the degenerate case)
    assert kappa_from_confusion(np.array([[30, 20], [0, 0]])) == 0.0


@pytest.mark.parametrize("weights", WEIGHTS)
def test_kappa_matches_exact_formula_and_statsmodels(weights):
    rng = np.random.default_rng(7)
    for _ in range(50):
        k = int(rng.integers(2, 6))
        table = rng.integers(0, 40, size=(k, k)) * (rng.random((k, k)) < 0.8)
        table[0, 1] += 1  # two labels in use on each side: not degenerate
        ours = kappa_from_confusion(table, weights)
        assert ours == pytest.approx(float(_exact_kappa(table, weights)), abs=1e-12)
        assert ours == pytest.approx(cohens_kappa(table, wt=weights, return_results=False), abs=1e-12)


@pytest.mark.parametrize("weights", WEIGHTS)
def test_kappa_matches_sklearn(weights):
    rng = np.random.default_rng(0)
    labels = ["A", "tie", "B"]
    a = rng.choice(labels, 500)
    b = np.where(rng.random(500) < 0.6, a, rng.choice(labels, 500))
    ours = cohen_kappa(list(a), list(b), labels=labels, weights=weights)
    ref = cohen_kappa_score(a, b, labels=labels, weights=weights)
    assert ours == pytest.approx(ref, abs=1e-12)


@pytest.mark.parametrize("weights", WEIGHTS)
@pytest.mark.parametrize("table", [[[5, 0], [0, 0]], [[0, 0, 0], [0, 0, 0], [0, 0, 4]], [[7]]])
def test_constant_raters_agreeing_give_one(table, weights):
    """Both raters give one same label to every item: p_e = 1 and the formula is 0 / 0 (statsmodels: NaN); the
    project's convention is kappa = 1."""
    t = np.array(table)
    assert kappa_from_confusion(t, weights) == 1.0
    if t.shape[0] > 1 and weights is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            assert np.isnan(cohens_kappa(t, return_results=False))
    assert cohen_kappa(["x"] * 3, ["x"] * 3) == 1.0


def test_kappa_from_published_nugget_confusion():
    # Search Arena Meets Nuggets, overall matrix (human A/tie/B rows x nugget A/tie/B), both-bad excluded:
    # the paper reports quadratic-weighted kappa 0.30 (DATA.md: 0.298).
    table = np.array([[938, 381, 395], [360, 342, 343], [443, 394, 924]])
    assert kappa_from_confusion(table, "quadratic") == pytest.approx(0.298, abs=5e-4)


@pytest.mark.parametrize("table,weights,message", [
    ([[1, 2, 3]], None, "square matrix"),
    ([[0, 0], [0, 0]], None, "no counts"),
    ([[1, -1], [2, 3]], None, "non-negative"),
    ([[1, np.nan], [2, 3]], None, "finite"),
    ([[1, 2], [2, 3]], "cubic", "weights must be"),
])
def test_kappa_refuses_bad_tables(table, weights, message):
    with pytest.raises(ValueError, match=message):
        kappa_from_confusion(np.array(table, dtype=float), weights)


def test_confusion_rejects_unknown_label():
    with pytest.raises(ValueError, match="rater2: labels \\['C'\\]"):
        confusion_matrix(["A"], ["C"], ["A", "B"])
