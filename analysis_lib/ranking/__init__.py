"""Paper-agnostic pairwise ranking at arena scale: Bradley–Terry and contextual BT, exact sparse Newton,
bootstrap and sandwich intervals, input checks, one result type, one leaderboard.

- :mod:`~analysis_lib.ranking.votes`              the vote vocabulary (LMArena labels by default), column names,
  the input checks every frame passes (:func:`clean_battles`, :func:`screen_battles`)
- :mod:`~analysis_lib.ranking.pairs`              competitor indices, :class:`PairData` (unique matchups)
- :mod:`~analysis_lib.ranking.graph`              when the MLE exists (beat graph, strong components), the
  diagnosis of a failure, the ridge
- :mod:`~analysis_lib.ranking.newton`             exact sparse Newton for BT on unique matchups, batched
- :mod:`~analysis_lib.ranking.contextual_solver`  Newton for contextual BT, sparse in the ratings; chord rounds
- :mod:`~analysis_lib.ranking.features`           style features (normalised, z-scored differences)
- :mod:`~analysis_lib.ranking.bootstrap`          resample draws and batched, warm-started bootstrap rounds
- :mod:`~analysis_lib.ranking.blas`               one BLAS thread for the solvers' small dense products
- :mod:`~analysis_lib.ranking.intervals`          percentile and sandwich (robust) intervals
- :mod:`~analysis_lib.ranking.result`             :class:`Ranking`, the one result type
- :mod:`~analysis_lib.ranking.leaderboard`        :func:`leaderboard`: the one leaderboard (plain or contextual)
- :mod:`~analysis_lib.ranking.bradley_terry`      point fits for many weight vectors (:func:`bt_params`), the Elo
  scale
- :mod:`~analysis_lib.ranking.solver`             reference fits on a dense design (L-BFGS, the authors' kind of
  fit) and :func:`bootstrap_counts`
- :mod:`~analysis_lib.ranking.validation`         interval coverage over replicate datasets (bootstrap or
  sandwich)
- ``python -m analysis_lib.ranking FILE …``        the leaderboard command (:mod:`~analysis_lib.ranking.cli`)

Nothing here knows about a particular arena: which battles count, the anchor, the excluded models and the
penalty are the caller's (for Search Arena: :mod:`analysis_lib.search_arena.bt`).
"""

from __future__ import annotations

from analysis_lib.ranking.bootstrap import ConvergenceError
from analysis_lib.ranking.bradley_terry import bt_params, to_elo
from analysis_lib.ranking.features import Convention, style_features
from analysis_lib.ranking.graph import RIDGE, Diagnosis, NotIdentifiableError, diagnose, mle_exists
from analysis_lib.ranking.intervals import sandwich_bt, sandwich_contextual
from analysis_lib.ranking.leaderboard import leaderboard, rank_contextual, rank_pairs
from analysis_lib.ranking.pairs import ALPHA, PairData, competitors, incidence, index_expr, pair_indices
from analysis_lib.ranking.result import BASE, INIT_RATING, SCALE, Convergence, Ranking, rank_from_intervals
from analysis_lib.ranking.solver import Solver, bootstrap_counts, fit_logistic_lbfgs, logistic_loss_and_grad
from analysis_lib.ranking.validation import coverage_summary, ranking_coverage, result_coverage
from analysis_lib.ranking.votes import (
    DECISIVE,
    LMARENA,
    OUTCOME_OF_WINNER,
    WINNERS,
    BattleFormat,
    InvalidBattlesError,
    clean_battles,
    screen_battles,
)

__all__ = [
    "ALPHA", "BASE", "DECISIVE", "INIT_RATING", "LMARENA", "OUTCOME_OF_WINNER", "RIDGE", "SCALE", "WINNERS",
    "BattleFormat", "Convention", "Convergence", "ConvergenceError", "Diagnosis", "InvalidBattlesError",
    "NotIdentifiableError", "PairData", "Ranking", "Solver", "bootstrap_counts", "bt_params", "clean_battles",
    "competitors", "coverage_summary", "diagnose", "fit_logistic_lbfgs", "incidence", "index_expr", "leaderboard",
    "logistic_loss_and_grad", "mle_exists", "pair_indices", "rank_contextual", "rank_from_intervals", "rank_pairs",
    "ranking_coverage", "result_coverage", "sandwich_bt", "sandwich_contextual", "screen_battles", "style_features",
    "to_elo",
]
