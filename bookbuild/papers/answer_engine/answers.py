"""The answer-level sections: answer confidence per engine (AE-F8b) and the judges' agreement with human labels
(AE-P), as the chapter records them by path (``bookbuild/resources/paper_values/ae.csv``), with what the recomputed
scorecard (:mod:`.scorecard`) shares with them: the paper's engine names, the data kind of numbers computed from
judged answers, the notes beside the numbers and the "not run" reasons. Answers missing from the records, answers
not yet judged (no LLM endpoint, no cached reply), or records that cannot be scored are recorded as "not run" with
the reason, never as an error.

Each section hands the recorder a :class:`Recorded`: the result its paper-values rows read, the simulator's
planted values read with the same paths, the notes beside the numbers that ran (the recorder keeps a row's own note
unformatted when the row did not run, so a note drawn from the result is passed here, by quantity) and the reason
for what did not run."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import polars as pl

from analysis_lib.answer_engine.agreement import confidence_summary
from analysis_lib.answer_engine.loader import AnswerData
from analysis_lib.answer_engine.scorecard import display_name
from analysis_lib.answer_engine.simulate.annotators import SimulatedLabels
from bookbuild import paper_values
from bookbuild.recorder import NotRun
from bookbuild.sections import Table

TASK_NAMES = {"confidence": "answer confidence", "support": "factual support"}
LABELS_REASON = ("the human labels were not released; give a labels file to run it "
                 "(make book ANSWER_LABELS=path/to/labels.csv)")

#: The paper's three engines, by their Fig 8 names (the names this chapter shows on every page).
PAPER_ENGINES = ("You.com", "BingChat", "Perplexity")


class Recorded(NamedTuple):
    """What one section hands ``Recorder.record``: the ``result`` its rows read, the ``planted`` values (None off
    the simulator), the ``notes`` beside the numbers by quantity and the ``reason`` for a value that did not run."""

    result: Any
    planted: Any = None
    notes: dict[str, str] = {}
    reason: str = ""


def answers_detail(answers: AnswerData) -> str:
    """The data banner's sentence on the answers: the records read (and the support judgements beside them), how
    they converted, what this build judged and sent; or the simulated answers."""
    if answers.kind == "simulated":
        return (f"{len(answers.records):,} simulated answers (3 engines × 303 queries) whose citation, support, "
                "stance and confidence behaviour is planted from the published Fig 8 values; no real answer is "
                f"used. {answers.converted.summary()}.")
    judged = answers.judging
    return (f"{len(answers.records):,} answer records"
            + (f", support judgements from `{answers.support_file}`" if answers.support_file else "")
            + f". {answers.converted.summary()}."
            + (" Judged in this build: " + "; ".join(f"{r['step']} {r['ok']}/{r['items']} ok" for r in judged.rows)
               + (f". LLM usage: {answers.llm_stats.summary()}." if answers.llm_stats is not None else ".")
               if judged else ""))


def engine_names(engines: list[str]) -> dict[str, str]:
    """Data id → the paper's name (unknown engines keep their id)."""
    return {e: display_name(e) for e in engines}


def named(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with its ``engine`` column in the paper's names (the paper-values rows select them)."""
    return frame.with_columns(pl.col("engine").map_elements(display_name, return_dtype=pl.String))


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


def f8b_record(answers: AnswerData, conf: pl.DataFrame) -> Recorded:
    """AE-F8b: per engine and query type (and over all queries) the share of answers the judge scored 5 (strongly
    confident) and the mean score (``conf``: :func:`analysis_lib.answer_engine.confidence_frame` of the answers'
    records; :func:`analysis_lib.answer_engine.confidence_summary`), the planted share on the simulator; not run
    with the reason where no answer has a score."""
    if conf.height == 0:
        return Recorded(None, reason=unscored_reason(answers) if answers.judging is not None
                        else "not run: no answer record has a confidence score")
    summary = named(confidence_summary(conf))
    planted = None
    if answers.simulation is not None:
        p5 = {display_name(e): p.p_conf5 for e, p in answers.simulation.planted.items()}
        planted = summary.select("engine", "query_type", strongly=pl.col("engine").replace_strict(
            p5, default=None, return_dtype=pl.Float64), mean=pl.lit(None, dtype=pl.Float64))
    notes = {f"{r['engine']}: % strongly confident (5), {r['query_type']} queries": f"{r['n']} answers"
             for r in summary.filter(pl.col("query_type") != "all").iter_rows(named=True)}
    return Recorded(summary, planted, notes)


def paper_strongly_confident(names: list[str] | None = None) -> dict[str, float]:
    """The paper's one number on Fig 8b, to draw on the figure: the share (%) of an engine's answers scored 5 is
    at least this (Perplexity, §5.2, "90+%"); only the engines in ``names`` (display names) when given."""
    out = {}
    for name in PAPER_ENGINES:
        row = paper_values.lookup("AE-F8b", f"{name}: % strongly confident (5), all queries")
        if isinstance(row.paper, float) and (names is None or name in names):
            out[name] = row.paper
    return out


def p_record(agreement: pl.DataFrame | None, sim: SimulatedLabels | None) -> Recorded:
    """AE-P: per task the judge–label Pearson r with its interval and the labelled items matched (``agreement``:
    :func:`analysis_lib.answer_engine.judge_agreement`; None when there are no labels: not run); on simulated
    annotators ``sim`` the planted expected r and items."""
    if agreement is None:
        return Recorded(None, reason=LABELS_REASON)
    result: dict[str, Any] = {}
    planted: dict[str, Any] = {}
    notes: dict[str, str] = {}
    for task, name in TASK_NAMES.items():
        rows = agreement.filter(pl.col("task") == task).rows(named=True)
        if not rows or not np.isfinite(rows[0]["r"]):
            why = NotRun(f"not run: {rows[0]['n'] if rows else 0} labelled {name} items matched a judged item (at "
                         "least 3 with varying values are needed)")
            result[task] = {"r": why, "n": why}
            continue
        row = result[task] = rows[0]
        ci = f"95% CI [{row['lo']:.2f}, {row['hi']:.2f}], p = {row['p_value']:.2g}"
        if sim is not None:
            planted[task] = {"r": sim.planted_r(task), "n": row["n"] + row["n_unmatched"]}
            ci = ("simulated labels (2 simulated annotators, judge value + noise calibrated to the paper's r, "
                  f"rounded onto the label scale; planted = expected r after rounding); {ci}")
        notes |= {f"Pearson r, LLM vs annotators, {name}": ci,
                  f"labelled items matched, {name}": f"{row['n_unmatched']} labelled items not judged"}
    return Recorded(result, planted or None, notes)


def p_tables(agreement: pl.DataFrame | None, sim: SimulatedLabels | None) -> list[Table]:
    """AE-P's tables: the simulated annotators' calibration (when simulated) and the agreement."""
    tables = [] if sim is None else [Table(sim.planted, "Simulated annotators: calibration", 3)]
    if agreement is not None:
        tables.append(Table(agreement, "Judge against labels: Pearson r with its 95% interval", 3))
    return tables
