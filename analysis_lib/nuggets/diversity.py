"""Within-battle nugget diversity (NG-T2): unigram Jaccard and embedding cosine of a battle's nuggets.

For a battle with nuggets 1 … n (n ≥ 2), word-unigram sets :math:`U_i` (lower-cased ``\\w+`` tokens) and unit
embeddings :math:`u_i`,

.. math:: J = \\binom{n}{2}^{-1} \\sum_{i<j} \\frac{|U_i \\cap U_j|}{|U_i \\cup U_j|}, \\qquad
          C = \\binom{n}{2}^{-1} \\sum_{i<j} u_i \\cdot u_j
            = \\frac{\\lVert \\sum_i u_i \\rVert^2 - n}{n (n - 1)},

with :math:`|U_i \\cup U_j| = |U_i| + |U_j| - |U_i \\cap U_j|` (a pair of empty sets scores 0). :func:`battle_diversity`
computes both for every battle at once: the intersections come from one sparse product of the nugget × (battle,
token) incidence matrix with its transpose (tokens are keyed by battle, so only pairs within a battle meet), the
cosine from per-battle sums of the unit embeddings. :func:`mean_pairwise_jaccard` and :func:`mean_pairwise_cosine`
are the pair-by-pair definitions for one battle (the tests compare the two).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import combinations
from typing import NamedTuple, cast

import numpy as np
import polars as pl
from scipy import sparse

_TOKEN = re.compile(r"\w+", re.UNICODE)


def unigram_set(text: str) -> set[str]:
    """The lower-cased word unigrams (``\\w+``, every script) of one text."""
    return set(_TOKEN.findall(text.lower()))


def unigram_jaccard(text_1: str, text_2: str) -> float:
    """Jaccard similarity |U_1 ∩ U_2| / |U_1 ∪ U_2| of lower-cased word-unigram sets (NG-T2); 0 if both empty."""
    u1, u2 = unigram_set(text_1), unigram_set(text_2)
    union = u1 | u2
    return len(u1 & u2) / len(union) if union else 0.0


def mean_pairwise_jaccard(texts: Sequence[str]) -> float:
    """Mean unigram Jaccard over all unordered pairs of one battle's nuggets (NG-T2); NaN with < 2 nuggets."""
    pairs = [unigram_jaccard(x, y) for x, y in combinations(texts, 2)]
    return float(np.mean(pairs)) if pairs else float("nan")


def _unit_rows(embeddings: np.ndarray) -> np.ndarray:
    e = np.asarray(embeddings, dtype=float)
    if e.ndim != 2:
        raise ValueError(f"embeddings must be 2-D, got shape {e.shape}")
    norms = np.linalg.norm(e, axis=1)
    if (norms == 0).any():
        raise ValueError(f"zero-length embedding (row {int(np.flatnonzero(norms == 0)[0])})")
    return e / norms[:, None]


def mean_pairwise_cosine(embeddings: np.ndarray) -> float:
    """Mean cosine similarity over all unordered pairs of rows (one battle's nugget embeddings; NG-T2)."""
    u = _unit_rows(embeddings)
    n = u.shape[0]
    if n < 2:
        return float("nan")
    sim = u @ u.T
    return float(sim[np.triu_indices(n, k=1)].mean())


def _pair_counts(n: np.ndarray) -> np.ndarray:
    return n * (n - 1) / 2.0


def _battle_jaccard(texts: list[str], battle: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Mean pairwise Jaccard per battle (module docstring); ``battle[k]`` is the battle index of ``texts[k]``."""
    sets = [unigram_set(t) for t in texts]
    sizes = np.array([len(s) for s in sets], dtype=float)
    owner = np.repeat(np.arange(len(sets)), sizes.astype(np.int64))
    tokens = pl.Series([t for s in sets for t in s], dtype=pl.String)
    keys = pl.DataFrame({"b": battle[owner], "t": tokens})
    column = keys.select(pl.struct("b", "t").rank("dense")).to_series().to_numpy().astype(np.int64) - 1
    incidence = sparse.csr_matrix((np.ones(owner.size), (owner, column)),
                                  shape=(len(sets), int(column.max(initial=-1)) + 1))
    shared = sparse.triu(incidence @ incidence.T, k=1).tocoo()
    inter = shared.data
    ratio = inter / (sizes[shared.row] + sizes[shared.col] - inter)
    total = np.bincount(battle[shared.row], weights=ratio, minlength=n.size)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n >= 2, total / _pair_counts(n), np.nan)


def _battle_cosine(embeddings: np.ndarray, battle: np.ndarray, n: np.ndarray) -> np.ndarray:
    u = _unit_rows(embeddings)
    sums = np.zeros((n.size, u.shape[1]))
    np.add.at(sums, battle, u)
    squares = np.bincount(battle, weights=(u * u).sum(axis=1), minlength=n.size)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n >= 2, ((sums * sums).sum(axis=1) - squares) / (2.0 * _pair_counts(n)), np.nan)


def battle_diversity(nuggets: pl.DataFrame, embeddings: np.ndarray | None = None) -> pl.DataFrame:
    """NG-T2 per battle: ``qid``, ``n_nuggets``, ``jaccard`` (mean pairwise unigram Jaccard of the battle's nuggets)
    and, when ``embeddings`` (one row per row of side a of ``nuggets``, in frame order) is given, ``cosine``.

    ``nuggets`` is the long frame of :class:`~analysis_lib.nuggets.records.NuggetRecords`; side a carries the
    battle's list. Battles come in order of first appearance; battles with fewer than two nuggets get NaN.
    """
    side_a = nuggets.filter(pl.col("side") == "a")
    if embeddings is not None and len(embeddings) != side_a.height:
        raise ValueError(f"{len(embeddings)} embeddings for {side_a.height} nuggets of side a")
    qids = side_a["qid"].unique(maintain_order=True)
    battle = side_a["qid"].replace_strict(qids, pl.int_range(qids.len(), eager=True),
                                          return_dtype=pl.Int64).to_numpy()
    n = np.bincount(battle, minlength=qids.len()).astype(float)
    out = pl.DataFrame({"qid": qids, "n_nuggets": n.astype(np.int64),
                        "jaccard": _battle_jaccard(side_a["text"].to_list(), battle, n)})
    if embeddings is not None:
        out = out.with_columns(pl.Series("cosine", _battle_cosine(embeddings, battle, n)))
    return out


class Spread(NamedTuple):
    """Table 2: the mean and sd of one per-battle measure over the battles with two nuggets or more (None when
    there is none)."""

    mean: float | None
    sd: float | None


def spread(per_battle: pl.DataFrame, column: str) -> Spread:
    """The :class:`Spread` of ``column`` of :func:`battle_diversity`'s frame (``jaccard`` or ``cosine``)."""
    values = per_battle[column].fill_nan(None)
    return Spread(cast("float | None", values.mean()), cast("float | None", values.std()))
