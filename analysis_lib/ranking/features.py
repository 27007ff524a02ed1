"""Battle-level style features for contextual Bradley–Terry: normalised, z-scored differences of per-side values.

For each feature ``f`` with per-side values ``x_a, x_b`` (columns ``<f>_a``, ``<f>_b``) the battle feature is the
normalised difference ``d = (x_a − x_b) / (x_a + x_b + 1)`` (LMArena's style control), z-scored over the battles
of the fit (population SD, computed once, not per bootstrap round): ``z = (d − mean d) / sd d``.

``convention="paper"``: every per-side value is truncated to ``int32`` before differencing (the Search Arena
authors' storage, which truncates fractional values such as mean words per turn toward zero); ``"float"`` uses
the exact values.

The transform is meant for non-negative values (counts, lengths). Where ``x_a + x_b + 1 = 0`` (possible only with
negative values) ``d`` is not finite: that is an error (:class:`~analysis_lib.ranking.votes.InvalidBattlesError`)
naming the feature's columns and the first rows, never a feature silently left out of the fit.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Literal

import numpy as np
import polars as pl

from analysis_lib.ranking.votes import InvalidBattlesError

_SHOW = 5
Convention = Literal["paper", "float"]


def style_features(
    battles: pl.DataFrame, features: Sequence[str], convention: Convention = "paper"
) -> tuple[np.ndarray, np.ndarray]:
    """``(z, d)``: z-scored and raw normalised differences ``(x_a − x_b)/(x_a + x_b + 1)``, shape ``(n, k)``.

    ``convention="paper"`` truncates every per-side value to ``int32`` first (the authors' storage);
    ``"float"`` keeps it exact. Null values count as 0 (as a missing count would; the generic leaderboard
    refuses nulls before this point). A feature with zero spread gets ``z = 0`` (its coefficient is then
    reported as NaN).
    """
    if convention not in ("paper", "float"):
        raise ValueError(f"unknown convention {convention!r}")
    d = np.empty((battles.height, len(features)))  # filled column by column (no stacked copy)
    for j, f in enumerate(features):
        a, b = _sides(battles, f, convention)
        with np.errstate(divide="ignore", invalid="ignore"):
            np.divide(a - b, a + b + 1.0, out=d[:, j])
        _check_finite(f, a, b, d[:, j])
    sd = d.std(axis=0)
    z = d - d.mean(axis=0)
    z /= np.where(sd > 0, sd, 1.0)
    z[:, sd <= 0] = 0.0
    return z, d


def _sides(battles: pl.DataFrame, f: str, convention: Convention) -> tuple[np.ndarray, np.ndarray]:
    """``(x_a, x_b)`` of feature ``f`` as floats (nulls as 0; ``"paper"``: truncated to int32 first)."""
    a = battles[f"{f}_a"].fill_null(0).cast(pl.Float64).to_numpy()
    b = battles[f"{f}_b"].fill_null(0).cast(pl.Float64).to_numpy()
    if convention == "paper":
        a, b = a.astype(np.int32).astype(float), b.astype(np.int32).astype(float)
    return a, b


def _check_finite(f: str, a: np.ndarray, b: np.ndarray, d: np.ndarray) -> None:
    """Raise :class:`InvalidBattlesError` naming the rows where ``d`` (feature ``f``) is not finite."""
    bad = np.flatnonzero(~np.isfinite(d))
    if bad.size:
        shown = ", ".join(f"row {r} ({a[r]:g}, {b[r]:g})" for r in bad[:_SHOW])
        more = f", … {bad.size - _SHOW:,} more" if bad.size > _SHOW else ""
        raise InvalidBattlesError(
            f"style feature {f!r}: (x_a − x_b)/(x_a + x_b + 1) is not finite in {bad.size:,} rows of columns "
            f"'{f}_a', '{f}_b' (rows of the checked battles, from 0; values a, b): {shown}{more}. The transform "
            "expects values >= 0 (counts, lengths)"
        )


def sorted_style_features(battles: pl.DataFrame, features: Sequence[str], convention: Convention,
                          order: np.ndarray, sign: np.ndarray, threads: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """``(zt, sd)``: the ``z`` of :func:`style_features` laid out for the arena-scale fit
    (:mod:`~analysis_lib.ranking._sorted`): feature-major ``(k, n)``, row ``j`` holding
    ``sign_i · z_{order_i, j}``, and each feature's SD of ``d`` (0: zero spread, that row 0).

    Built one feature per task on ``threads`` threads, without the ``(n, k)`` arrays: per feature
    ``d = (x_a − x_b)/(x_a + x_b + 1)``, ``z = (d − mean d)/sd d`` with ``sd² = mean((d − mean d)²)``; the same values
    as :func:`style_features` up to the rounding of the mean and SD (summed in another order). A non-finite ``d``
    raises the same error."""
    if convention not in ("paper", "float"):
        raise ValueError(f"unknown convention {convention!r}")
    zt = np.empty((len(features), len(order)))

    def one(j: int) -> float:
        a, b = _sides(battles, features[j], convention)
        d = np.subtract(a, b)
        den = np.add(a, b)
        den += 1.0
        with np.errstate(divide="ignore", invalid="ignore"):
            np.divide(d, den, out=d)
        del den
        _check_finite(features[j], a, b, d)
        if not d.size or d.min() == d.max():  # zero spread (tested exactly: d − mean d may round to ±1 ulp)
            zt[j] = 0.0
            return 0.0
        d -= d.mean()
        sd = float(np.sqrt(np.dot(d, d) / d.size))
        if not sd > 0:
            zt[j] = 0.0
            return 0.0
        np.take(d, order, out=zt[j], mode="clip")
        zt[j] /= sd
        zt[j] *= sign
        return sd

    if threads > 1 and len(features) > 1:
        with ThreadPoolExecutor(threads) as pool:
            sd = list(pool.map(one, range(len(features))))
    else:
        sd = [one(j) for j in range(len(features))]
    return zt, np.array(sd)
