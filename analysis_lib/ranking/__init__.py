"""Paper-agnostic pairwise ranking at arena scale: one battles type, one leaderboard, one result type.

    battles = ranking.Battles.from_frame(frame)          # checked once (or pass the frame to leaderboard)
    result = ranking.leaderboard(battles, anchor="gpt-4o", rounds=1000)   # Bradley–Terry, bootstrap intervals
    print(result)                                        # the fit's settings, then the leaderboard
    result.differences(); result.rank_intervals()        # anchor-free pairwise intervals; best/worst ranks
    ranking.leaderboard(frame, by="category", features=["length"])   # one contextual board per category

- :mod:`~analysis_lib.ranking.votes`       the vote vocabulary (LMArena labels by default), :class:`BattleFormat`
- :mod:`~analysis_lib.ranking.battles`     :class:`Battles`, the checked battles every fit takes (rows without a
  vote, unknown labels, self-battles, missing features: an error, or dropped and counted)
- :mod:`~analysis_lib.ranking.fit`         :func:`leaderboard`: plain or contextual BT, bootstrap or sandwich
  intervals, overall or per subset (``by=``)
- :mod:`~analysis_lib.ranking.result`      :class:`Ranking` (one result type) and :class:`Leaderboards`
- :mod:`~analysis_lib.ranking.graph`       when the MLE exists (beat graph, strong components), the diagnosis of a
  failure, the ridge
- :mod:`~analysis_lib.ranking.features`    style features (normalised, z-scored differences)
- :mod:`~analysis_lib.ranking.coverage`  interval coverage over replicate datasets (bootstrap or sandwich)
- :mod:`~analysis_lib.ranking.reference`   reference fits on a dense design (L-BFGS, the authors' kind of fit)
- :mod:`~analysis_lib.ranking.cli`         the ``arena-leaderboard`` command (``python -m analysis_lib.ranking``)

The solvers are private (``_pairs``, ``_newton``: exact sparse Newton on unique matchups; ``_contextual``: the
one contextual problem, which switches to ``_sorted``'s arena-scale layout at 200,000 battles; ``_bootstrap``: the
one bootstrap draw, :func:`bootstrap_counts`, and the threaded runner; ``_intervals``; ``_blas``). Nothing here
knows about a particular arena: which battles count, the anchor, the excluded models and the penalty are the
caller's (for Search Arena: :mod:`analysis_lib.search_arena.bt`).
"""

from __future__ import annotations

from analysis_lib.ranking._bootstrap import bootstrap_counts
from analysis_lib.ranking._newton import ConvergenceError
from analysis_lib.ranking._pairs import ALPHA
from analysis_lib.ranking.battles import Battles
from analysis_lib.ranking.coverage import coverage_summary, ranking_coverage, result_coverage
from analysis_lib.ranking.features import style_features
from analysis_lib.ranking.fit import leaderboard
from analysis_lib.ranking.graph import RIDGE, NotIdentifiableError
from analysis_lib.ranking.result import BASE, INIT_RATING, SCALE, Leaderboards, Ranking
from analysis_lib.ranking.votes import OUTCOME_OF_WINNER, BattleFormat, InvalidBattlesError

__all__ = [
    "ALPHA", "BASE", "INIT_RATING", "OUTCOME_OF_WINNER", "RIDGE", "SCALE", "BattleFormat", "Battles",
    "ConvergenceError", "InvalidBattlesError", "Leaderboards", "NotIdentifiableError", "Ranking", "bootstrap_counts",
    "coverage_summary", "leaderboard", "ranking_coverage", "result_coverage", "style_features",
]
