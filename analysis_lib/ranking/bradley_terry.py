"""Bradley–Terry point fits of :class:`~analysis_lib.ranking.pairs.PairData` for any number of weight vectors,
and the Elo scale (the leaderboard itself, with intervals, is :func:`analysis_lib.ranking.leaderboard.leaderboard`).

Model: ratings ``r`` in log10-odds units; for a matchup ``(a, b)`` with outcome ``y`` for ``a`` (ties 0.5),
``P(a beats b) = σ(ln 10 · (r_a − r_b))`` and the loss is the count-weighted negative log-likelihood

    L(r) = − Σ_i c_i [ y_i log σ(η_i) + (1 − y_i) log σ(−η_i) ],   η_i = ln 10 · (r_{a_i} − r_{b_i}),

over the unique ``(a, b, y)`` rows ``i`` with counts ``c_i``, without a penalty (as ``arena-rank``'s
``BradleyTerry``). ``r`` is identified up to a constant; :func:`bt_params` returns the ``Σ r = 0`` solution, by
the exact sparse Newton solver of :mod:`analysis_lib.ranking.newton` (``solver="lbfgs"``: the authors' kind of
fit, for comparison). The MLE exists only when the beat graph is strongly connected
(:mod:`analysis_lib.ranking.graph`): otherwise the fit raises
:class:`~analysis_lib.ranking.graph.NotIdentifiableError` naming the models concerned. Elo scale: ``400 · r +
offset`` (:func:`to_elo`).
"""

from __future__ import annotations

import numpy as np

from analysis_lib.ranking.bootstrap import check_converged
from analysis_lib.ranking.graph import NotIdentifiableError, diagnose, mle_exists
from analysis_lib.ranking.newton import PairStats, fit_pairs
from analysis_lib.ranking.pairs import PairData
from analysis_lib.ranking.result import INIT_RATING, SCALE
from analysis_lib.ranking.solver import Solver, fit_logistic_lbfgs

__all__ = ["bt_params", "to_elo"]


def _require_mle(data: PairData, w: np.ndarray) -> None:
    exists = mle_exists(data.pairs, data.outcomes, len(data.models), w)
    if not exists.all():
        first = diagnose(data.models, data.pairs, data.outcomes, w[int(np.argmin(exists))])
        what = "" if w.shape[0] == 1 else f"{int((~exists).sum())} of {w.shape[0]} weight vectors: "
        raise NotIdentifiableError(what + first.message())


def bt_params(data: PairData, weights: np.ndarray | None = None, *, solver: Solver = "newton") -> np.ndarray:
    """ML ratings (log10-odds units, ``Σ r = 0``) of :class:`PairData`; one row per row of ``weights``.

    ``weights`` defaults to ``data.counts`` (the observed battles); the loss is that of the module docstring.
    Raises :class:`~analysis_lib.ranking.graph.NotIdentifiableError` when a weight vector has no MLE.
    """
    w = data.counts[None, :] if weights is None else np.atleast_2d(np.asarray(weights, dtype=float))
    _require_mle(data, w)
    if solver == "lbfgs":
        theta = fit_logistic_lbfgs(data.design(), data.outcomes, w)
    elif solver == "newton":
        stats = PairStats.from_rows(data.pairs, data.outcomes, len(data.models))
        n, s = stats.totals(w)
        theta, report = fit_pairs(stats, n, s)
        check_converged(report, "Bradley–Terry fit")
    else:
        raise ValueError(f"unknown solver {solver!r}")
    return theta - theta.mean(axis=1, keepdims=True)


def to_elo(r: np.ndarray, offset: float = INIT_RATING) -> np.ndarray:
    """``400 · r + offset``."""
    return SCALE * r + offset
