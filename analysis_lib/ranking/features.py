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
        a = battles[f"{f}_a"].fill_null(0).cast(pl.Float64).to_numpy()
        b = battles[f"{f}_b"].fill_null(0).cast(pl.Float64).to_numpy()
        if convention == "paper":
            a, b = a.astype(np.int32).astype(float), b.astype(np.int32).astype(float)
        with np.errstate(divide="ignore", invalid="ignore"):
            np.divide(a - b, a + b + 1.0, out=d[:, j])
        bad = np.flatnonzero(~np.isfinite(d[:, j]))
        if bad.size:
            shown = ", ".join(f"row {r} ({a[r]:g}, {b[r]:g})" for r in bad[:_SHOW])
            more = f", … {bad.size - _SHOW:,} more" if bad.size > _SHOW else ""
            raise InvalidBattlesError(
                f"style feature {f!r}: (x_a − x_b)/(x_a + x_b + 1) is not finite in {bad.size:,} rows of columns "
                f"'{f}_a', '{f}_b' (rows of the checked battles, from 0; values a, b): {shown}{more}. The transform "
                "expects values >= 0 (counts, lengths)"
            )
    sd = d.std(axis=0)
    z = d - d.mean(axis=0)
    z /= np.where(sd > 0, sd, 1.0)
    z[:, sd <= 0] = 0.0
    return z, d
