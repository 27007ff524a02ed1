"""The answer-engine chapter's sections computed from answer records (:class:`.loading.AnswerData`): the Fig 8a
scorecard recomputed with bootstrap intervals (AE-F8), the confidence distributions of Fig 8b (AE-F8b) and
the agreement of the LLM judges with human labels (AE-P).

Any engine is analysed and shown; only the paper's three engines (:data:`PAPER_ENGINES`, by their
Fig 8 names) have paper values, so only their numbers are recorded, and other engines go to a table of their
own. A paper engine missing from the records, answers not yet judged (no LLM endpoint, no cached reply), or
records that cannot be scored are recorded as "not run" with the reason, never as an error.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import polars as pl

from bookbuild import paper_values
from bookbuild.sections import Figure, Number, Section, Table, not_run

from .agreement import confidence_distribution, judge_agreement, judge_values, load_answer_labels
from .loading import AnswerData
from .metrics import CATEGORIES, METRICS
from .plots import confidence_bars, scorecard_intervals
from .records import confidence_frame
from .scorecard import (
    METRIC_LABELS,
    Threshold,
    bootstrap_scorecard,
    category_counts,
    classify_scorecard,
    display_name,
    recorded_scorecard,
    wide_scorecard,
)
from .simulate.annotators import simulate_labels

COUNTS = ("answers scored", "answers skipped (no relevant statement), released convention",
          "answers excluded (not judged, no statements or no scraped source)", "listed sources dropped (scrape failed)")
QUERY_TYPES = ("debate", "expertise")
TASK_NAMES = {"confidence": "answer confidence", "support": "factual support"}
LABELS_REASON = ("the human labels were not released; give a labels file to run it "
                 "(make book ANSWER_LABELS=path/to/labels.csv)")

#: The paper's three engines, by their Fig 8 names (the names this chapter shows on every page).
PAPER_ENGINES = ("You.com", "BingChat", "Perplexity")


def engine_names(engines: list[str]) -> dict[str, str]:
    """Data id → the paper's name (unknown engines keep their id)."""
    return {e: display_name(e) for e in engines}


def unscored_reason(answers: AnswerData) -> str:
    """Why no answer could be scored: the judging step's not-run reason when records were left unjudged, else
    the conversion's exclusion reasons with their counts."""
    excluded = answers.converted.excluded
    if answers.judging is not None and answers.judging.not_run:
        unjudged = int((excluded["reason"] == "not judged (no core_statements)").sum())
        why = answers.judging.not_run_reason.removeprefix("not run: ")
        return f"not run: {unjudged:,} of {len(answers.records):,} answer records not judged ({why})"
    counts = excluded.group_by("reason").len().sort("len", descending=True)
    return "not run: no answer could be scored (" + "; ".join(f"{n:,} {r}" for r, n in counts.iter_rows()) + ")"


def partial_reason(answers: AnswerData) -> str:
    """When the judging step left records unjudged for a reason a rebuild can finish (the request budget, a
    deadline, the endpoint), the not-run reason of every number computed from the judged part: it starts with
    that reason (``"not run: request budget ..."``) and says how many records are left; else ``""``."""
    if answers.judging is None or not answers.judging.not_run:
        return ""
    items = sum(int(r["items"]) for r in answers.judging.rows)
    why = answers.judging.not_run_reason.removeprefix("not run: ")
    return (f"not run: {why}; {answers.judging.not_run:,} of {items:,} judging requests not sent, so the scorecard "
            f"would be of a part of the {len(answers.records):,} answer records (a rebuild finishes them)")


def number_kind(answers: AnswerData) -> str:
    """The evidence class of numbers computed from the judged answers: ``llm`` when this build's judging step
    (an LLM) produced the judgements, else the answers' own kind."""
    return "llm" if answers.judging is not None and answers.kind != "simulated" else answers.kind


def _recomputed_quantities(name: str) -> list[str]:
    return ([f"{name}: % {k}, recomputed from answers" for k in METRICS]
            + [f"{name}: metrics {c}, recomputed" for c in CATEGORIES])


def recomputed_scorecard_section(answers: AnswerData, card: pl.DataFrame, thresholds: dict[str, Threshold], *,
                                 n_bootstrap: int, seed: int, level: float = 0.95) -> Section:
    """AE-F8 from answers: per engine and metric the mean over answers with a percentile bootstrap interval
    at ``level`` (:func:`.scorecard.bootstrap_scorecard`), the Table 7 categories, the counts of scored and
    excluded answers, and the same answers under both conventions."""
    kind, conv = number_kind(answers), answers.converted
    excluded = Number("AE-F8", COUNTS[2], conv.excluded.height, data=kind)
    if conv.meta.height == 0:
        reason = unscored_reason(answers)
        quantities = [q for e in PAPER_ENGINES for q in _recomputed_quantities(e)] + [COUNTS[0], COUNTS[1], COUNTS[3]]
        return Section([*not_run("AE-F8", quantities, reason), excluded])
    metrics = answers.metrics()
    long = bootstrap_scorecard(metrics, n_bootstrap=n_bootstrap, seed=seed, level=level, convention=answers.convention)
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
    numbers += [Number("AE-F8", COUNTS[0], scored, data=kind),
                Number("AE-F8", COUNTS[1], metrics.height - scored, data=kind), excluded,
                Number("AE-F8", COUNTS[3], int(conv.meta["n_dropped_sources"].sum()), data=kind)]
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
        extra = long.filter(pl.col("engine").is_in(others)).join(
            counts.filter(pl.col("engine").is_in(others)), on="engine", how="left")
        tables.append(Table(extra, "Engines the paper did not evaluate: percentages, "
                                   f"{100 * level:g}% bootstrap intervals and Table 7 category counts (no paper value)",
                            1))
    return Section(numbers, [Figure(fig, answers.kind)], tables)


def confidence_section(answers: AnswerData) -> Section:
    """AE-F8b: per engine and query type the share of answers the judge scored 5 (strongly confident) and the
    mean score; all engines are drawn, the paper's three recorded."""
    kind = number_kind(answers)
    conf = confidence_frame(answers.records)
    planted = answers.simulation.planted if answers.simulation is not None else {}
    quantities = {e: [*(q for qt in QUERY_TYPES for q in (f"{e}: % strongly confident (5), {qt} queries",
                                                           f"{e}: mean confidence (1–5), {qt} queries")),
                      f"{e}: % strongly confident (5), all queries"] for e in PAPER_ENGINES}
    if conf.height == 0:
        reason = (unscored_reason(answers) if answers.judging is not None
                  else "not run: no answer record has a confidence score")
        return Section(not_run("AE-F8b", [q for qs in quantities.values() for q in qs], reason))
    names = engine_names(list(dict.fromkeys(conf["engine"].to_list())))
    by_name = {n: e for e, n in names.items()}
    numbers: list[Number] = []
    for name, qs in quantities.items():
        engine = by_name.get(name)
        sub = conf.filter(pl.col("engine") == engine) if engine else conf.clear()
        p5 = 100 * planted[engine].p_conf5 if engine in planted else None
        for qt in QUERY_TYPES:
            part = sub.filter(pl.col("query_type") == qt)
            if part.height == 0:
                numbers += not_run("AE-F8b", [q for q in qs if q.endswith(f", {qt} queries")],
                                   f"not run: no {qt} answers from {name} with a confidence score")
                continue
            score = part["confidence"].to_numpy()
            numbers += [Number("AE-F8b", f"{name}: % strongly confident (5), {qt} queries",
                               100 * float(np.mean(score == 5)), planted=p5, data=kind, note=f"{part.height} answers"),
                        Number("AE-F8b", f"{name}: mean confidence (1–5), {qt} queries", float(np.mean(score)),
                               data=kind)]
        if sub.height:
            numbers.append(Number("AE-F8b", qs[-1], 100 * float(np.mean(sub["confidence"].to_numpy() == 5)),
                                  planted=p5, data=kind))
        else:
            numbers.append(Number("AE-F8b", qs[-1], reason=f"not run: no answers from {name} with a confidence score"))
    fig = confidence_bars(confidence_distribution(conf), names,
                          reference={n: v for n, v in paper_strongly_confident().items() if n in by_name},
                          title="Fig 8b: answer confidence by engine and query type")
    return Section(numbers, [Figure(fig, answers.kind)])


def paper_strongly_confident() -> dict[str, float]:
    """The paper's one number on Fig 8b, from the paper-values table: the share (%) of Perplexity's answers
    scored 5 is at least this (§5.2, "90+%")."""
    out = {}
    for name in PAPER_ENGINES:
        row = paper_values.lookup("AE-F8b", f"{name}: % strongly confident (5), all queries")
        if isinstance(row.paper, float):
            out[name] = row.paper
    return out


def agreement_section(answers: AnswerData, answer_labels: str | Path = "", *, seed: int = 0) -> Section:
    """AE-P: Pearson r between the judges' values and human labels, from a labels file when given, from
    simulated annotators on simulated answers, else not run (the paper's labels were not released)."""
    judged = judge_values(answers.records, answers.support)
    quantities = [q for t in TASK_NAMES.values()
                  for q in (f"Pearson r, LLM vs annotators, {t}", f"labelled items matched, {t}")]
    if not str(answer_labels).strip() and answers.kind != "simulated":
        return Section(not_run("AE-P", quantities, LABELS_REASON))
    tables, sim = [], None
    if str(answer_labels).strip():
        labels = load_answer_labels(answer_labels)
    else:
        targets = {t: float(paper_values.lookup("AE-P", f"Pearson r, LLM vs annotators, {q}").paper)  # type: ignore[arg-type]
                   for t, q in TASK_NAMES.items()}
        sim = simulate_labels(judged, targets, seed=seed)
        labels = sim.labels
        tables.append(Table(sim.planted, "Simulated annotators: calibration", 3))
    agreement = judge_agreement(labels, judged)
    tables.append(Table(agreement, "Judge against labels: Pearson r with its 95% interval", 3))
    kind = "simulated" if sim is not None else answers.kind
    numbers: list[Number] = []
    for task, name in TASK_NAMES.items():
        rows = agreement.filter(pl.col("task") == task).rows(named=True)
        if not rows or not np.isfinite(rows[0]["r"]):
            n = rows[0]["n"] if rows else 0
            numbers += not_run("AE-P", [f"Pearson r, LLM vs annotators, {name}", f"labelled items matched, {name}"],
                               f"not run: {n} labelled {name} items matched a judged item (at least 3 with "
                               "varying values are needed)")
            continue
        row = rows[0]
        ci = f"95% CI [{row['lo']:.2f}, {row['hi']:.2f}], p = {row['p_value']:.2g}"
        planted_r = planted_n = None
        if sim is not None:
            planted_r, planted_n = sim.planted_r(task), row["n"] + row["n_unmatched"]
            ci = ("simulated labels (2 simulated annotators, judge value + noise calibrated to the paper's r, "
                  f"rounded onto the label scale; planted = expected r after rounding); {ci}")
        numbers += [Number("AE-P", f"Pearson r, LLM vs annotators, {name}", row["r"], note=ci, data=kind,
                           planted=planted_r),
                    Number("AE-P", f"labelled items matched, {name}", row["n"], data=kind, planted=planted_n,
                           note=f"{row['n_unmatched']} labelled items not judged")]
    return Section(numbers, [], tables)
