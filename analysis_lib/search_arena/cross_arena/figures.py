"""The figures of Search Arena §3.3 and Appendix F: Fig 8 (votes by intent in one arena), Fig F.1 (the radar of the
Table F.1 scores and Search Arena against an offline benchmark) and Fig F.2 (Gemini with and without search).
Each takes the frames of :mod:`~analysis_lib.search_arena.cross_arena` and returns a matplotlib figure."""

from __future__ import annotations

import numpy as np
import polars as pl
from matplotlib.figure import Figure

from analysis_lib import plotting
from analysis_lib.search_arena import models, plots
from analysis_lib.search_arena.cross_arena.appendix_f import F1_COLUMNS
from analysis_lib.search_arena.cross_arena.votes import INTENT_ORDER, vote_shares_long

#: The radar's axes (Table F.1's score columns, in the paper's order).
RADAR_AXES = ("search_arena", "fact_synth", "simpleqa", "arenahard_v2", "other")


def figure8(by_intent: pl.DataFrame, title: str) -> Figure:
    """One panel of Fig 8: votes by intent (:func:`~analysis_lib.search_arena.cross_arena.vote_table`), intents in
    the figure's order, each bar labelled with its share of the intent's battles."""
    return plots.vote_bars(vote_shares_long(by_intent), INTENT_ORDER, title=title)


def _bars(frame: pl.DataFrame, column: str) -> np.ndarray:
    """(2, n) lower / upper error-bar lengths of a published score from its ``_lo`` (negative) and ``_hi``."""
    return np.vstack([(-frame[f"{column}_lo"]).to_numpy(), frame[f"{column}_hi"].to_numpy()])


def f1_radar(scores: pl.DataFrame) -> Figure:
    """Fig F.1's radar: the five Table F.1 scores per model (the paper's model names)."""
    named = scores.with_columns(models.paper_name(pl.col("model")))
    return plotting.radar(named, "model", list(RADAR_AXES), axis_labels=[F1_COLUMNS[a] for a in RADAR_AXES],
                          title="Model scores across benchmarks, win rate or accuracy (Fig F.1)")


def f1_scatter(scores: pl.DataFrame, benchmark: str, label: str, tau: float, r: float) -> Figure:
    """Fig F.1's scatter: the Search Arena win rate against ``benchmark`` (axis ``label``) with Table F.1's
    intervals; Kendall's ``tau`` and Pearson's ``r`` of the pair in the title."""
    named = scores.with_columns(models.paper_name(pl.col("model")))
    return plotting.error_scatter(
        scores[benchmark].to_numpy(), scores["search_arena"].to_numpy(),
        xerr=_bars(scores, benchmark), yerr=_bars(scores, "search_arena"),
        labels=named["model"].to_list(), xlabel=label, ylabel="Search Arena win rate (%)",
        title=f"Search Arena vs {label.split(' ')[0]} (Fig F.1): τ = {tau:.3f}, r = {r:.3f}")


def f2_scatter(f2: pl.DataFrame) -> Figure:
    """Fig F.2: SimpleQA accuracy against ArenaHard-v2 win rate of each Gemini model with and without search, with
    the published intervals and a least-squares line."""
    return plotting.error_scatter(
        f2["simpleqa"].to_numpy(), f2["arenahard_v2"].to_numpy(),
        xerr=_bars(f2, "simpleqa"), yerr=_bars(f2, "arenahard_v2"),
        labels=f2["model"].to_list(), groups=f2["variant"].to_list(), fit=True,
        xlabel="SimpleQA accuracy (%)", ylabel="ArenaHard-v2 win rate (%)",
        title="Gemini with and without search (Fig F.2)")
