"""Recording a leaderboard against the paper's (SA-D5, Table D.1): the book's side of chapter 03.

:func:`record_ratings` records each model's rating and rank. On the simulator, where the planted ratings are
calibrated to Table D.1, each rating carries its 95% interval (so a miss beyond the tolerance says whether the
interval covers the target: :func:`bookbuild.evidence.miss_note`) and the offset all ratings share from Table D.1
(the anchor's estimation error: :func:`analysis_lib.search_arena.methods_validation.error_decomposition`). A
release without the paper's anchor is rated with the mean at 1000, and every rating says so.
"""

from __future__ import annotations

import polars as pl

from analysis_lib.search_arena import methods_validation
from bookbuild.recorder import Recorder


def rating_note(d1: pl.DataFrame, published: pl.DataFrame, *, anchor: str | None, simulated: bool,
                target: str) -> str:
    """The note every rating carries: the calibration target and the shared offset on the simulator; the scale
    when the release has no anchor."""
    if anchor is None:
        return "Elo rating with the mean at 1000: this release has no gpt-4o-search, the paper's anchor"
    if not simulated:
        return ""
    offset = methods_validation.error_decomposition(dict(zip(d1["model"], d1["rating"], strict=True)),
                                                    dict(zip(published["model"], published["rating"], strict=True)))
    return (f"{target}; the ratings here share an offset of {offset['shared_offset'][0]:+.1f} Elo from Table D.1 "
            "(the anchor's estimation error; the methods-validation chapter measures it)")


def record_ratings(rec: Recorder, d1: pl.DataFrame, board: pl.DataFrame, published: pl.DataFrame, *,
                   anchor: str | None, simulated: bool, target: str) -> None:
    """SA-D5: ``<model> rating`` (with its interval from ``board``, the leaderboard's frame) and ``<model> rank`` of
    every model of ``d1`` (:func:`analysis_lib.search_arena.preference.table_d1`)."""
    note = rating_note(d1, published, anchor=anchor, simulated=simulated, target=target)
    interval = {m: (lo, hi) for m, lo, hi in board.select("model", "ci_lower", "ci_upper").iter_rows()}
    for row in d1.iter_rows(named=True):
        rec.number("SA-D5", f"{row['model']} rating", row["rating"], note=note, interval=interval.get(row["model"]))
        rec.number("SA-D5", f"{row['model']} rank", row["rank"])
