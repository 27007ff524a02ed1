"""The eight metrics and the Fig 8 scorecard, recorded against the paper: the Fig 7 worked example (AE-M), the
published Fig 8a scorecard in Table 7's categories with the paper's conclusion on it (AE-F8, published), and the
scorecard recomputed from answer records with bootstrap intervals (AE-F8, recomputed)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import polars as pl

from analysis_lib.answer_engine.loading import AnswerData
from analysis_lib.answer_engine.metrics import CATEGORIES, METRICS, Ratio, VertexCover
from analysis_lib.answer_engine.plots import scorecard_intervals
from analysis_lib.answer_engine.scorecard import (
    ENGINE_NAMES,
    METRIC_LABELS,
    Threshold,
    category_counts,
    classify_scorecard,
    display_name,
    wide_scorecard,
)
from bookbuild.sections import Figure, Number, Section, Table, not_run

from .answers import PAPER_ENGINES, engine_names, number_kind, partial_reason, unscored_reason

COUNTS = ("answers scored", "answers skipped (no relevant statement), released convention",
          "answers excluded (not judged, no statements or no scraped source)", "listed sources dropped (scrape failed)")


def _braces(cover: Sequence[int] | np.ndarray) -> str:
    return "{" + ",".join(str(int(j) + 1) for j in cover) + "}"


def m_numbers(metrics: Mapping[str, object], covers: Sequence[Sequence[int]], necessity: Mapping[str, Ratio],
              vc: VertexCover) -> list[Number]:
    """AE-M: the Fig 7 example's eight metrics (a :class:`Ratio` recorded as its fraction), its minimum source
    covers (1-based), Source Necessity by the authors' greedy cover and by the König vertex cover (``necessity``
    keyed ``greedy`` and ``konig``), with the matching and cover ``vc`` in the note."""
    numbers = [Number("AE-M", f"{k} (fraction)" if isinstance(v, Ratio) else k, str(v) if isinstance(v, Ratio) else v)
               for k, v in metrics.items()]
    return numbers + [
        Number("AE-M", "minimum source covers (1-based)", " or ".join(_braces(c) for c in covers)),
        Number("AE-M", "source_necessity, authors' greedy set cover", str(necessity["greedy"])),
        Number("AE-M", "source_necessity, König minimum vertex cover / sources", str(necessity["konig"]),
               note=f"matching size {vc.matching_size} = cover size {vc.size} "
                    f"(statements {[int(i) + 1 for i in vc.rows.nonzero()[0]]}, "
                    f"sources {[int(j) + 1 for j in vc.cols.nonzero()[0]]}); a vertex cover must touch every edge")]


def f8_published_numbers(classified: pl.DataFrame) -> list[Number]:
    """AE-F8, published: the number of metrics per Table 7 category per engine, each published percentage's
    category (``classified``: :func:`analysis_lib.answer_engine.classify_scorecard` of the published card) and
    the paper's conclusion on them (:func:`most_metrics_claim`)."""
    numbers = [Number("AE-F8", f"{display_name(r['engine'])}: metrics {cat}, published values", r[cat])
               for r in category_counts(classified).iter_rows(named=True) for cat in CATEGORIES]
    numbers += [Number("AE-F8", f"{display_name(r['engine'])}: {r['metric']} category, published value",
                       r["category"], note=f"{r['value']:.1f}%") for r in classified.iter_rows(named=True)]
    return [*numbers, most_metrics_claim(classified)]


def most_metrics_claim(classified: pl.DataFrame) -> Number:
    """The paper's conclusion (§7) that no engine "met acceptable performance across most metrics": holds when every
    engine is acceptable on at most half of the eight metrics (``classified``: one row per engine and metric with
    its Table 7 ``category``)."""
    acceptable = (classified.group_by("engine", maintain_order=True)
                  .agg(n=(pl.col("category") == "acceptable").sum(), of=pl.len())
                  .sort("n", descending=True, maintain_order=True))
    best = acceptable.row(0, named=True)
    holds = all(2 * r["n"] <= r["of"] for r in acceptable.iter_rows(named=True))
    return Number("AE-F8", "claim: no engine is acceptable on most of the eight metrics (published values)",
                  "holds" if holds else "does not hold", data="checked",
                  note=f"most acceptable: {display_name(best['engine'])}, {best['n']} of {best['of']}")


def recorded_scorecard(long: pl.DataFrame, planted: pl.DataFrame | None = None, *,
                       level: float = 0.95) -> list[dict]:
    """What the chapter records for a recomputed scorecard, one dict per (engine, metric) of the three AEE
    engines: ``quantity`` (``"<Engine>: % <metric>, recomputed from answers"``), ``value``, ``note`` (the
    bootstrap interval at ``level`` and the answers it used) and ``planted`` (None without a simulation)."""
    look = {} if planted is None else {(r["engine"], r["metric"]): r["planted"] for r in planted.iter_rows(named=True)}
    out = []
    for r in long.iter_rows(named=True):
        name = display_name(r["engine"])
        if name not in ENGINE_NAMES.values():
            continue
        skipped = f" ({r['n_undefined']} undefined, skipped)" if r["n_undefined"] else ""
        out.append({"quantity": f"{name}: % {r['metric']}, recomputed from answers", "value": r["value"],
                    "note": f"{100 * level:g}% bootstrap CI [{r['lo']:.1f}, {r['hi']:.1f}] "
                            f"over {r['n_answers']} answers{skipped}",
                    "planted": look.get((r["engine"], r["metric"]))})
    return out


def _recomputed_quantities(name: str) -> list[str]:
    return ([f"{name}: % {k}, recomputed from answers" for k in METRICS]
            + [f"{name}: metrics {c}, recomputed" for c in CATEGORIES])


def f8_not_run(answers: AnswerData) -> Section:
    """AE-F8 recomputed when no answer could be scored: every quantity not run with the reason, and the count of
    excluded answers."""
    excluded = Number("AE-F8", COUNTS[2], answers.converted.excluded.height, data=number_kind(answers))
    quantities = [q for e in PAPER_ENGINES for q in _recomputed_quantities(e)] + [COUNTS[0], COUNTS[1], COUNTS[3]]
    return Section([*not_run("AE-F8", quantities, unscored_reason(answers)), excluded])


def f8_recomputed_numbers(answers: AnswerData, metrics: pl.DataFrame, long: pl.DataFrame,
                          thresholds: dict[str, Threshold], *, level: float = 0.95) -> list[Number]:
    """AE-F8 from answers: per engine and metric the bootstrap percentage (``long``:
    :func:`analysis_lib.answer_engine.bootstrap_scorecard` of the per-answer ``metrics``), the Table 7 category
    counts, the paper's engines without answers as not run, and the counts of scored and excluded answers."""
    kind, conv = number_kind(answers), answers.converted
    planted = answers.simulation.planted_frame() if answers.simulation is not None else None
    names = engine_names(list(dict.fromkeys(long["engine"].to_list())))
    partial = partial_reason(answers)
    numbers = [Number("AE-F8", r["quantity"], r["value"], note=r["note"], planted=r["planted"], data=kind)
               if math.isfinite(r["value"]) and not partial else
               Number("AE-F8", r["quantity"], reason=partial or "not run: no answer of this engine defines it",
                      planted=r["planted"])
               for r in recorded_scorecard(long, planted, level=level)]
    counts = category_counts(classify_scorecard(wide_scorecard(long), thresholds))
    defined = dict(zip(*long.group_by("engine").agg(pl.col("value").is_not_nan().sum()).iter_columns()))
    numbers += [Number("AE-F8", f"{names[r['engine']]}: metrics {c}, recomputed", r[c], data=kind,
                       note="" if defined[r["engine"]] == len(METRICS)
                       else f"of the {defined[r['engine']]} of {len(METRICS)} metrics defined")
                if not partial else Number("AE-F8", f"{names[r['engine']]}: metrics {c}, recomputed", reason=partial)
                for r in counts.iter_rows(named=True) if names[r["engine"]] in PAPER_ENGINES for c in CATEGORIES]
    missing = [e for e in PAPER_ENGINES if e not in names.values()]
    numbers += not_run("AE-F8", [q for e in missing for q in _recomputed_quantities(e)],
                       f"not run: no answers from {', '.join(missing)} in the records")
    scored = int(metrics["unsupported_statements"].is_not_nan().sum())
    return numbers + [Number("AE-F8", COUNTS[0], scored, data=kind),
                      Number("AE-F8", COUNTS[1], metrics.height - scored, data=kind),
                      Number("AE-F8", COUNTS[2], conv.excluded.height, data=kind),
                      Number("AE-F8", COUNTS[3], int(conv.meta["n_dropped_sources"].sum()), data=kind)]


def f8_recomputed_section(answers: AnswerData, metrics: pl.DataFrame, long: pl.DataFrame, card: pl.DataFrame,
                          thresholds: dict[str, Threshold], *, n_bootstrap: int, level: float = 0.95) -> Section:
    """AE-F8 from answers, as the chapter shows it: :func:`f8_recomputed_numbers`, the recomputed scorecard
    against the published one (``card``), the same answers under both conventions and, when present, the
    partial scorecard and the engines the paper did not evaluate, in tables of their own."""
    numbers = f8_recomputed_numbers(answers, metrics, long, thresholds, level=level)
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
        tables.append(Table(long.with_columns(pl.col("engine").map_elements(display_name, return_dtype=pl.String)),
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
    return Section(numbers, [Figure(fig, answers.kind)], tables)
