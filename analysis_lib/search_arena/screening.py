"""Search Arena's battles screened once on their way to a fit: :func:`prepare_battles` and its result
:class:`PreparedBattles` (the screened-battles type every fit of :mod:`analysis_lib.search_arena.bt` takes), and the
paper's battle subsets (:data:`BOTH_CITE`, :data:`DECIDED`, :func:`attribution_battles`).

The screen is :func:`analysis_lib.ranking.screen_battles` with ``drop_invalid=True``: battles with a vote, the
models outside the leaderboard (``in_leaderboard = false`` in ``resources/model_names.csv``) and self-battles
left out, every row left out counted under its reason.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from analysis_lib.ranking import OUTCOME_OF_WINNER, InvalidBattlesError, screen_battles
from analysis_lib.ranking.votes import EXCLUDED, CleanBattles, check_columns, feature_columns
from analysis_lib.search_arena.models import non_leaderboard_models
from analysis_lib.search_arena.schema import ATTRIBUTION_COUNTS, DECISIVE, SIDES

log = logging.getLogger(__name__)

#: The citation-attribution counts (base names; ``<name>_a`` and ``<name>_b`` per side).
ATTRIBUTION: tuple[str, ...] = ATTRIBUTION_COUNTS




@dataclass(frozen=True)
class PreparedBattles:
    """Screened battles, ready for a fit (the input's rows and columns), and what was dropped on the way:
    ``dropped`` counts the rows left out per reason (:func:`analysis_lib.ranking.screen_battles`: ``no vote``,
    ``unknown outcome``, ``missing model``, ``self-battle``, ``excluded model``; ``tie (decided only)`` with
    ``decided_only``). Made by :func:`prepare_battles`; the fits of this module take it without screening again."""

    frame: pl.DataFrame
    n_input: int
    dropped: Mapping[str, int] = field(default_factory=dict)

    @property
    def n_no_vote(self) -> int:
        """Battles without a vote (null ``winner``)."""
        return self.dropped.get("no vote", 0)

    @property
    def n_unknown(self) -> int:
        """Battles with a ``winner`` label outside the release's vocabulary."""
        return self.dropped.get("unknown outcome", 0)

    @property
    def n_excluded_model(self) -> int:
        """Battles of an excluded model."""
        return self.dropped.get("excluded model", 0)

    @property
    def n_self(self) -> int:
        """Self-battles (``model_a == model_b``)."""
        return self.dropped.get("self-battle", 0)

    def summary(self) -> str:
        text = (
            f"{self.frame.height:,} battles kept of {self.n_input:,}: dropped {self.n_no_vote:,} without a vote, "
            f"{self.n_excluded_model:,} with an excluded model, {self.n_self:,} self-battles"
        )
        shown = {"no vote", "excluded model", "self-battle"}
        extra = [f"{v:,} {_REASON_TEXT.get(k, k)}" for k, v in self.dropped.items() if k not in shown and v]
        return text + "".join(f", {e}" for e in extra)

    def where(self, predicate: pl.Expr) -> PreparedBattles:
        """The battles for which ``predicate`` holds (a subset of screened battles needs no screen); ``n_input`` and
        ``dropped`` stay those of the screen."""
        return PreparedBattles(self.frame.filter(predicate), self.n_input, self.dropped)

    def without(self, models: Sequence[str]) -> PreparedBattles:
        """The battles of none of ``models``; those left out are added to the ``excluded model`` count."""
        if not models:
            return self
        out = pl.col("model_a").is_in(list(models)) | pl.col("model_b").is_in(list(models))
        n_out = int(self.frame.select(out.sum()).item())
        if n_out == 0:
            return self
        dropped = {**self.dropped, EXCLUDED: self.dropped.get(EXCLUDED, 0) + n_out}
        return PreparedBattles(self.frame.filter(~out), self.n_input, dropped)

    def fit_frame(self, features: Sequence[str] = ()) -> CleanBattles:
        """The battles in the ranking core's checked form (:class:`analysis_lib.ranking.votes.CleanBattles`:
        ``model_a``, ``model_b``, ``y`` = 1, 0 or 0.5 for model A, the ``<f>_a``, ``<f>_b`` columns of
        ``features`` as floats), without screening the votes again. The one check left is the one the screen could
        not make, as it depends on the fit's ``features``: a missing column or a null / non-finite value is an
        :class:`~analysis_lib.ranking.InvalidBattlesError` naming the column and the rows (numbered from 0 in
        :attr:`frame`), as the core's own check."""
        cols = feature_columns(features)
        check_columns(self.frame, cols)
        if cols:
            bad = self.frame.select(
                **{c: (pl.col(c).cast(pl.Float64).is_null() | ~pl.col(c).cast(pl.Float64).is_finite()).fill_null(True)
                   for c in cols})
            rows = np.flatnonzero(bad.select(pl.any_horizontal(cols)).to_series().to_numpy())
            if rows.size:
                shown = ", ".join(f"column {next(c for c in cols if bad[c][int(r)])!r} (row {r})" for r in rows[:5])
                raise InvalidBattlesError(f"{rows.size:,} of {self.frame.height:,} battles have a missing or "
                                          f"non-finite style feature: {shown}{', …' if rows.size > 5 else ''}")
        y = pl.col("winner").replace_strict(OUTCOME_OF_WINNER, return_dtype=pl.Float64).alias("y")
        frame = self.frame.select(pl.col("model_a").cast(pl.String), pl.col("model_b").cast(pl.String), y,
                                  *(pl.col(c).cast(pl.Float64) for c in cols))
        return CleanBattles(frame, self.n_input, self.dropped)


_REASON_TEXT = {"unknown outcome": "with an unknown winner label", "missing model": "without a model name",
                "tie (decided only)": "ties (decided battles only)"}


def prepare_battles(
    battles: pl.DataFrame,
    *,
    exclude: Sequence[str] | None = None,
    decided_only: bool = False,
) -> PreparedBattles:
    """Keep voted battles; drop the battles of ``exclude`` (default: :func:`non_leaderboard_models`) and
    self-battles: the one screen of the battles on their way to a fit (module docstring).

    The rows are screened by :func:`analysis_lib.ranking.screen_battles` with ``drop_invalid=True``: every row
    left out is counted under its reason (a label outside the vocabulary too, reported apart from the missing
    votes). ``decided_only`` also drops ties (``tie``, ``tie (bothbad)``), counted as ``tie (decided only)``.
    """
    excluded = list(non_leaderboard_models() if exclude is None else exclude)
    screen = screen_battles(battles, exclude=excluded, drop_invalid=True)
    keep, dropped = screen.keep, dict(screen.dropped)
    if decided_only:
        tie = ~battles.select(pl.col("winner").is_in(list(DECISIVE)).fill_null(False)).to_series().to_numpy() & keep
        dropped["tie (decided only)"] = int(tie.sum())
        keep = keep & ~tie
    kept = battles if keep.all() else battles.filter(pl.Series(keep))
    prepared = PreparedBattles(kept, battles.height, dropped)
    log.info(prepared.summary())
    return prepared


Battles = pl.DataFrame | PreparedBattles
"""What every fit here takes: a battle frame (screened on entry) or battles already screened."""


def screened(battles: Battles, exclude: Sequence[str] | None = None) -> PreparedBattles:
    """``battles`` screened once: a frame goes through :func:`prepare_battles` (``exclude``: its default when
    ``None``); a :class:`PreparedBattles` is not screened again, only the battles of ``exclude`` (when given) are
    left out (:meth:`PreparedBattles.without`)."""
    if isinstance(battles, PreparedBattles):
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

    The counts (``support_count``, ``irrelevant_count``, ``contradict_count`` per side, :data:`ATTRIBUTION`)
    exist only in the citation-attribution release (``citation_attribution_data.jsonl``); returns ``None``
    when the columns are missing or all null. Rows with any count missing are dropped. Pass battles after
    :func:`prepare_battles` (the authors remove the non-search model first, as that does).
    """
    cols = [f"{c}_{s}" for c in ATTRIBUTION for s in SIDES]
    if not all(c in battles.columns for c in cols):
        return None
    labelled = battles.filter(pl.all_horizontal([pl.col(c).is_not_null() for c in cols]))
    if labelled.height == 0:
        return None
    return decided(both_cite(labelled))


def decided(battles: pl.DataFrame) -> pl.DataFrame:
    """Battles with a winner (:data:`DECIDED`: ties and both-bad ties dropped)."""
    return battles.filter(DECIDED)
