"""Tests and agreement statistics.

Cohen's kappa for two raters over the same items, with optional linear or quadratic weights over an
ordered label set (the nugget paper's weighted kappa over (A, tie, B)):

    kappa = 1 - sum_ij w_ij O_ij / sum_ij w_ij E_ij,

with O the observed joint proportions, E the product of the marginals, and disagreement weights
w_ij = 0 on the diagonal and 1 elsewhere (unweighted), |i - j| / (k - 1) (linear) or ((i - j) / (k - 1))^2
(quadratic).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

Weights = Literal["linear", "quadratic"] | None


def kappa_from_confusion(confusion: np.ndarray, weights: Weights = None) -> float:
    """Cohen's kappa from a k x k table of counts (rows: rater 1, columns: rater 2, same label order)."""
    table = np.asarray(confusion, dtype=float)
    if table.ndim != 2 or table.shape[0] != table.shape[1]:
        raise ValueError(f"confusion must be a square matrix, got shape {table.shape}")
    total = table.sum()
    if total <= 0:
        raise ValueError("confusion matrix has no counts")
    k = table.shape[0]
    observed = table / total
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    i, j = np.indices((k, k))
    if weights is None:
        w = (i != j).astype(float)
    elif weights == "linear":
        w = np.abs(i - j) / (k - 1)
    elif weights == "quadratic":
        w = ((i - j) / (k - 1)) ** 2
    else:
        raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")
    denominator = (w * expected).sum()
    if denominator == 0:
        return 1.0 if (w * observed).sum() == 0 else float("nan")
    return float(1.0 - (w * observed).sum() / denominator)


def confusion_matrix(rater1: Sequence[str], rater2: Sequence[str], labels: Sequence[str]) -> np.ndarray:
    """Counts of (rater1 label, rater2 label) pairs in the given label order; unknown labels are an error."""
    index = {lab: n for n, lab in enumerate(labels)}
    a = np.asarray(rater1, dtype=object)
    b = np.asarray(rater2, dtype=object)
    if a.shape != b.shape:
        raise ValueError(f"raters label different numbers of items: {a.shape[0]} vs {b.shape[0]}")
    for name, arr in (("rater1", a), ("rater2", b)):
        unknown = sorted({str(x) for x in arr if x not in index})
        if unknown:
            raise ValueError(f"{name}: labels {unknown} are not in labels={list(labels)}")
    ia = np.fromiter((index[x] for x in a), dtype=np.int64, count=a.size)
    ib = np.fromiter((index[x] for x in b), dtype=np.int64, count=b.size)
    table = np.zeros((len(labels), len(labels)), dtype=np.int64)
    np.add.at(table, (ia, ib), 1)
    return table


def cohen_kappa(
    rater1: Sequence[str], rater2: Sequence[str], labels: Sequence[str] | None = None, weights: Weights = None
) -> float:
    """Cohen's kappa between two label sequences (weights need an ordered ``labels``)."""
    if labels is None:
        if weights is not None:
            raise ValueError("weighted kappa needs the ordered label list `labels`")
        labels = sorted(set(rater1) | set(rater2))
    return kappa_from_confusion(confusion_matrix(rater1, rater2, labels), weights)
