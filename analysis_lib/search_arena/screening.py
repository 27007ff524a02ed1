"""Search Arena's battles screened once on their way to a fit: :func:`prepare_battles` (the ranking core's checked
:class:`analysis_lib.ranking.Battles`, with the paper's exclusions) and the paper's battle subsets
(:data:`BOTH_CITE`, :data:`DECIDED`, :func:`attribution_battles`).

The screen is :meth:`analysis_lib.ranking.Battles.from_frame` with ``drop_invalid=True``: battles with a vote, the
models outside the leaderboard (``in_leaderboard = false`` in ``resources/model_names.csv``) and self-battles
left out, every row left out counted under its reason.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import polars as pl

from analysis_lib.ranking import Battles
from analysis_lib.search_arena.models import non_leaderboard_models
from analysis_lib.search_arena.schema import ATTRIBUTION_COUNTS, DECISIVE, SIDES

log = logging.getLogger(__name__)


def prepare_battles(
    battles: pl.DataFrame,
    *,
    exclude: Sequence[str] | None = None,
    decided_only: bool = False,
) -> Battles:
    """Keep voted battles; drop the battles of ``exclude`` (default: :func:`non_leaderboard_models`) and
    self-battles: the one screen of the battles on their way to a fit (module docstring).

    Every row left out is counted under its reason (a label outside the vocabulary too, reported apart from the
    missing votes). ``decided_only`` also drops ties (``tie``, ``tie (bothbad)``), counted as ``tie (decided
    only)``. The result's :meth:`~analysis_lib.ranking.Battles.where` gives screened subsets
    (``prep.where(BOTH_CITE)``)."""
    excluded = list(non_leaderboard_models() if exclude is None else exclude)
    prepared = Battles.from_frame(battles, exclude=excluded, drop_invalid=True)
    if decided_only:
        prepared = prepared.drop(~DECIDED, "tie (decided only)")
    log.info(prepared.summary())
    return prepared


def screened(battles: pl.DataFrame | Battles, exclude: Sequence[str] | None = None) -> Battles:
    """``battles`` screened once: a frame goes through :func:`prepare_battles` (``exclude``: its default when
    ``None``); checked :class:`~analysis_lib.ranking.Battles` are not screened again, only the battles of
    ``exclude`` (when given) are left out."""
    if isinstance(battles, Battles):
        return battles if exclude is None else battles.without(exclude)
    return prepare_battles(battles, exclude=exclude)


#: Both sides cite (``citation_count_a > 0`` and ``citation_count_b > 0``): the battles of SA-32C (:func:`both_cite`).
BOTH_CITE = (pl.col("citation_count_a") > 0) & (pl.col("citation_count_b") > 0)
#: A battle with a winner (ties and both-bad ties out): :func:`decided`.
DECIDED = pl.col("winner").is_in(list(DECISIVE))


def both_cite(battles: pl.DataFrame) -> pl.DataFrame:
    """Battles where both sides cite (:data:`BOTH_CITE`), as in SA-32C (screened battles:
    ``prep.where(BOTH_CITE)``).

    The test is on the exact (float) mean citations per turn, as the authors' filter. A side with
    ``0 < citations per turn < 1`` (e.g. one citation over two turns) is kept, yet under
    ``convention="paper"`` its feature value is ``int32``-truncated to 0 in the fit: the authors' behaviour,
    kept on purpose (``convention="float"`` uses the exact value).
    """
    return battles.filter(BOTH_CITE)


def attribution_battles(battles: pl.DataFrame) -> pl.DataFrame | None:
    """The SA-F6R frame: decided battles where both sides cite, among those with attribution counts.

    The counts (``support_count``, ``irrelevant_count``, ``contradict_count`` per side,
    :data:`~analysis_lib.search_arena.schema.ATTRIBUTION_COUNTS`)
    exist only in the citation-attribution release (``citation_attribution_data.jsonl``); returns ``None``
    when the columns are missing or all null. Rows with any count missing are dropped. Pass battles after
    :func:`prepare_battles` (the authors remove the non-search model first, as that does).
    """
    cols = [f"{c}_{s}" for c in ATTRIBUTION_COUNTS for s in SIDES]
    if not all(c in battles.columns for c in cols):
        return None
    labelled = battles.filter(pl.all_horizontal([pl.col(c).is_not_null() for c in cols]))
    if labelled.height == 0:
        return None
    return decided(both_cite(labelled))


def decided(battles: pl.DataFrame) -> pl.DataFrame:
    """Battles with a winner (:data:`DECIDED`: ties and both-bad ties dropped)."""
    return battles.filter(DECIDED)
