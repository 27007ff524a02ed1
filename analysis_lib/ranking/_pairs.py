"""Competitor indices and the unique matchups of checked battles (internal to :mod:`analysis_lib.ranking`).

- :func:`index_expr` / :func:`pair_indices`: competitor names -> integer indices into a sorted competitor list
  (the one helper every model uses; an unknown name is an error naming it);
- :class:`PairData`: unique ``(a, b, outcome)`` rows with counts, enough for a plain Bradley–Terry fit (the
  ``PairDataset`` of ``arena-rank``), built from :meth:`analysis_lib.ranking.Battles.fit_frame`;
- :func:`incidence`: the dense ``(rows, competitors)`` matrix ``e_a − e_b``, for small designs and comparisons
  only (the solvers never form it).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import polars as pl

#: ln 10: the logit per unit of rating in log10-odds (``P(a beats b) = σ(ln 10 · (r_a − r_b))``).
ALPHA = math.log(10.0)


def competitors(battles: pl.DataFrame, columns: tuple[str, str] = ("model_a", "model_b")) -> tuple[str, ...]:
    """Sorted names of every competitor on either side of ``battles``."""
    return tuple(sorted(set(battles[columns[0]].unique().to_list()) | set(battles[columns[1]].unique().to_list())))


def index_expr(column: str, models: Sequence[str]) -> pl.Expr:
    """``column`` mapped to the position of each name in ``models`` (Int64); unknown names raise."""
    index = {m: i for i, m in enumerate(models)}
    return pl.col(column).replace_strict(index, return_dtype=pl.Int64)


def pair_indices(
    battles: pl.DataFrame, models: Sequence[str], columns: tuple[str, str] = ("model_a", "model_b")
) -> np.ndarray:
    """``(n, 2)`` int64 array: the indices into ``models`` of each battle's two sides (a name outside ``models``
    raises ``ValueError`` listing them). Distinct string names map through a polars ``Enum`` of ``models`` (its
    codes are the positions in ``models``), others through :func:`index_expr`."""
    if (len(set(models)) == len(models) and all(isinstance(m, str) for m in models)
            and not any(battles[c].null_count() for c in columns)):
        enum = pl.Enum(list(models))
        try:
            idx = battles.select(pl.col(c).cast(pl.String).cast(enum).to_physical().cast(pl.Int64).alias(s)
                                 for c, s in zip(columns, "ab", strict=True))
        except pl.exceptions.InvalidOperationError:
            _check_names(battles, models, columns)
            raise
    else:
        _check_names(battles, models, columns)
        idx = battles.select(index_expr(columns[0], models).alias("a"), index_expr(columns[1], models).alias("b"))
    return idx.to_numpy().astype(np.int64).reshape(battles.height, 2)


def _check_names(battles: pl.DataFrame, models: Sequence[str], columns: tuple[str, str]) -> None:
    names = set(battles[columns[0]].unique().to_list()) | set(battles[columns[1]].unique().to_list())
    unknown = sorted(names - set(models), key=str)
    if unknown:
        raise ValueError(f"battles name models outside the model list: {unknown}")


def incidence(pairs: np.ndarray, n_models: int) -> np.ndarray:
    """The dense ``(rows, models)`` matrix with +1 at ``pairs[i, 0]`` and −1 at ``pairs[i, 1]`` in row ``i``."""
    d = np.zeros((pairs.shape[0], n_models))
    rows = np.arange(pairs.shape[0])
    d[rows, pairs[:, 0]] += 1.0
    d[rows, pairs[:, 1]] -= 1.0
    return d


@dataclass(frozen=True)
class PairData:
    """Unique matchups with their outcomes and counts (the only thing a BT fit needs).

    ``pairs[i] = (index of model_a, index of model_b)`` into ``models``; ``outcomes[i]`` ∈ [0, 1] (0, 0.5, 1 from
    votes); ``counts[i]`` = number of battles with that (pair, outcome); ``dropped`` = rows left out of the input
    frame per reason (:class:`analysis_lib.ranking.Battles`).
    """

    models: tuple[str, ...]
    pairs: np.ndarray
    outcomes: np.ndarray
    counts: np.ndarray
    dropped: Mapping[str, int] = field(default_factory=dict)

    @classmethod
    def from_frame(
        cls, frame: pl.DataFrame, models: Sequence[str] | None = None, dropped: Mapping[str, int] | None = None
    ) -> PairData:
        """From checked battles: ``model_a``, ``model_b``, ``y`` (:meth:`analysis_lib.ranking.Battles.fit_frame`).

        Votes (``y`` ∈ {0, ½, 1}): the unique rows sorted by ``(a, b, y)``, models in sorted order (the order the
        bootstrap draws refer to: :func:`analysis_lib.ranking.bootstrap_counts`). Other outcomes (a numeric
        outcome column): one row per battle, in the frame's order, each of count 1."""
        if models is None:
            models = competitors(frame)
        unknown = sorted((set(frame["model_a"].unique().to_list()) | set(frame["model_b"].unique().to_list()))
                         - set(models))
        if unknown:
            raise ValueError(f"battles name models outside the model list: {unknown}")
        m = len(models)
        enum = pl.Enum(list(models))
        idx = frame.select(pl.col("model_a").cast(enum).to_physical().cast(pl.Int64).alias("a"),
                           pl.col("model_b").cast(enum).to_physical().cast(pl.Int64).alias("b"), "y")
        a, b, y = (idx[c].to_numpy() for c in ("a", "b", "y"))
        y2 = 2.0 * y
        votes = bool(np.all((y2 == np.round(y2)) & (y2 >= 0) & (y2 <= 2)))
        if votes and m * m * 3 <= 50_000_000:
            # votes only (y ∈ {0, ½, 1}): one bincount over the keys (a, b, 2y), already in sorted order
            counts = np.bincount((a * m + b) * 3 + y2.astype(np.int64), minlength=m * m * 3)
            keys = np.flatnonzero(counts)
            rows, ys = keys // 3, (keys % 3) / 2.0
            return cls(tuple(models), np.column_stack([rows // m, rows % m]).astype(np.int64), ys,
                       counts[keys].astype(float), dict(dropped or {}))
        if not votes:
            return cls(tuple(models), np.column_stack([a, b]).astype(np.int64).reshape(len(a), 2), y.astype(float),
                       np.ones(len(a)), dict(dropped or {}))
        grouped = idx.group_by("a", "b", "y").len().sort("a", "b", "y")
        return cls(
            models=tuple(models),
            pairs=grouped.select("a", "b").to_numpy().astype(np.int64).reshape(grouped.height, 2),
            outcomes=grouped["y"].to_numpy().astype(float),
            counts=grouped["len"].to_numpy().astype(float),
            dropped=dict(dropped or {}),
        )

    @property
    def n_battles(self) -> int:
        """Battles represented (``Σ counts``)."""
        return int(self.counts.sum())

    def design(self) -> np.ndarray:
        """The dense ``(rows, models)`` design matrix ``ln 10 · (e_a − e_b)`` (small data and comparisons only)."""
        return ALPHA * incidence(self.pairs, len(self.models))

    def battles_per_model(self) -> np.ndarray:
        """Battles of each model (either side), in ``models`` order."""
        m = len(self.models)
        return np.bincount(self.pairs[:, 0], self.counts, m) + np.bincount(self.pairs[:, 1], self.counts, m)
