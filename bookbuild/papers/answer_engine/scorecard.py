"""The eight metrics and the Fig 8 scorecard as the chapter records them by path
(``bookbuild/resources/paper_values/ae.csv``): the Fig 7 worked example (AE-M), the published Fig 8a scorecard in
Table 7's categories with the paper's conclusion on it and the scorecard recomputed from answer records with
bootstrap intervals (AE-F8, one record for both), and the recomputed scorecard's figure and tables."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl

from analysis_lib.answer_engine.loader import AnswerData
from analysis_lib.answer_engine.metrics import CATEGORIES, METRICS, Ratio, VertexCover
from analysis_lib.answer_engine.plots import scorecard_intervals
from analysis_lib.answer_engine.scorecard import (
    METRIC_LABELS,
    Threshold,
    category_counts,
    classify_scorecard,
    display_name,
    wide_scorecard,
)
from bookbuild.sections import Figure, Section, Table

from .answers import PAPER_ENGINES, Recorded, engine_names, named, partial_reason, unscored_reason


def _braces(cover: Sequence[int] | np.ndarray) -> str:
    return "{" + ",".join(str(int(j) + 1) for j in cover) + "}"


def m_result(metrics: Mapping[str, object], covers: Sequence[Sequence[int]], necessity: Mapping[str, Ratio],
             vc: VertexCover) -> dict[str, Any]:
    """AE-M as recorded: the Fig 7 example's eight metrics (a :class:`Ratio` read as its fraction), its minimum
    source covers (1-based), Source Necessity by the authors' greedy cover and by the König vertex cover
    (``necessity`` keyed ``greedy`` and ``konig``) and the matching and cover ``vc`` (1-based) for the note."""
    return {"metrics": metrics, "covers": " or ".join(_braces(c) for c in covers), "necessity": necessity, "vc": vc,
            "cover_rows": [int(i) + 1 for i in vc.rows.nonzero()[0]],
            "cover_cols": [int(j) + 1 for j in vc.cols.nonzero()[0]]}


def most_metrics_claim(classified: pl.DataFrame) -> dict[str, Any]:
    """The paper's conclusion (§7) that no engine "met acceptable performance across most metrics": ``holds`` when
    every engine is acceptable on at most half of the eight metrics (``classified``: one row per engine and metric
    with its Table 7 ``category``), with the ``best`` engine and its ``n`` acceptable metrics ``of`` its metrics."""
    acceptable = (classified.group_by("engine", maintain_order=True)
                  .agg(n=(pl.col("category") == "acceptable").sum(), of=pl.len())
                  .sort("n", descending=True, maintain_order=True))
    best = acceptable.row(0, named=True)
    holds = all(2 * r["n"] <= r["of"] for r in acceptable.iter_rows(named=True))
    return {"holds": "holds" if holds else "does not hold", "best": display_name(best["engine"]), "n": best["n"],
            "of": best["of"]}


def f8_record(answers: AnswerData, classified: pl.DataFrame, metrics: pl.DataFrame | None,
              long: pl.DataFrame | None, thresholds: dict[str, Threshold], *, level: float = 0.95) -> Recorded:
    """AE-F8, published and recomputed: the published scorecard's Table 7 categories and counts (``classified``:
    :func:`analysis_lib.answer_engine.classify_scorecard` of the card) with the paper's conclusion on them, and
    the scorecard recomputed from answers (``long``: :func:`analysis_lib.answer_engine.bootstrap_scorecard` of the
    per-answer ``metrics``; both None when no answer could be scored) with its category counts and the counts of
    scored and excluded answers; the planted values on the simulator; the bootstrap intervals in the notes."""
    conv = answers.converted
    result: dict[str, Any] = {"published": {"counts": named(category_counts(classified)), "cells": named(classified)},
                              "claim": most_metrics_claim(classified), "recomputed": None, "categories": None,
                              "scored": None, "skipped": None, "dropped": None, "excluded": conv.excluded.height}
    if metrics is None or long is None:
        return Recorded(result, reason=unscored_reason(answers))
    scored = int(metrics["unsupported_statements"].is_not_nan().sum())
    result |= {"scored": scored, "skipped": metrics.height - scored,
               "dropped": int(conv.meta["n_dropped_sources"].sum())}
    partial = partial_reason(answers)
    if partial:
        return Recorded(result, reason=partial)
    counts = category_counts(classify_scorecard(wide_scorecard(long), thresholds))
    result |= {"recomputed": {"scores": named(long)}, "categories": {"counts": named(counts)}}
    planted = None if answers.simulation is None else {
        "recomputed": {"scores": named(answers.simulation.planted_frame().rename({"planted": "value"}))}}
    notes = {}
    for r in named(long).iter_rows(named=True):
        skipped = f" ({r['n_undefined']} undefined, skipped)" if r["n_undefined"] else ""
        notes[f"{r['engine']}: % {r['metric']}, recomputed from answers"] = (
            f"{100 * level:g}% bootstrap CI [{r['lo']:.1f}, {r['hi']:.1f}] over {r['n_answers']} answers{skipped}")
    defined = named(long).group_by("engine").agg(pl.col("value").is_not_nan().sum())
    notes |= {f"{e}: metrics {c}, recomputed": f"of the {n} of {len(METRICS)} metrics defined"
              for e, n in defined.iter_rows() if n != len(METRICS) for c in CATEGORIES}
    return Recorded(result, planted, notes, "not run: no answer of this engine defines it")


def f8_recomputed_section(answers: AnswerData, metrics: pl.DataFrame, long: pl.DataFrame, card: pl.DataFrame,
                          thresholds: dict[str, Threshold], *, n_bootstrap: int, level: float = 0.95) -> Section:
    """AE-F8 from answers, as the chapter shows it (its numbers: :func:`f8_record`): the recomputed scorecard
    against the published one (``card``), the same answers under both conventions and, when present, the
    partial scorecard and the engines the paper did not evaluate, in tables of their own."""
    planted = answers.simulation.planted_frame() if answers.simulation is not None else None
    names, partial = engine_names(list(dict.fromkeys(long["engine"].to_list()))), partial_reason(answers)
    judged = f"; partial: on the {metrics.height:,} answers judged of {len(answers.records):,}" if partial else ""
    fig = scorecard_intervals(long, card, thresholds, names, planted=planted, level=level,
                              title=f"Fig 8a recomputed from answers ({100 * level:g}% bootstrap intervals, "
                                    f"{n_bootstrap} rounds{judged})")
    both = answers.convention_comparison().select(
        pl.col("engine").map_elements(display_name, return_dtype=pl.String),
        pl.col("metric").replace_strict(METRIC_LABELS, default=pl.col("metric")),
        pl.col("released").alias("released convention (%)"), pl.col("paper").alias("paper's equations (%)"),
        pl.col("difference").alias("difference"))
    tables = [Table(both, "The same answers under the released convention (the scorecard) and the paper's equations "
                          "read literally: percentages and released − paper", 1)]
    if partial:
        tables.append(Table(named(long),
                            f"Partial scorecard, not recorded: on the {metrics.height:,} answers judged of "
                            f"{len(answers.records):,} answer records ({partial.removeprefix('not run: ')})", 1))
    others = [e for e, n in names.items() if n not in PAPER_ENGINES]
    if others:
        counts = category_counts(classify_scorecard(wide_scorecard(long), thresholds))
        extra = long.filter(pl.col("engine").is_in(others)).join(
            counts.filter(pl.col("engine").is_in(others)), on="engine", how="left")
        tables.append(Table(extra, "Engines the paper did not evaluate: percentages, "
                                   f"{100 * level:g}% bootstrap intervals and Table 7 category counts (no paper value)",
                            1))
    return Section([Figure(fig, answers.kind)], tables)
