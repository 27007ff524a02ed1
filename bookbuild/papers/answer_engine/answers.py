"""The answer-level sections recorded against the paper: answer confidence per engine (AE-F8b) and the judges'
agreement with human labels (AE-P), with what the recomputed scorecard (:mod:`.scorecard`) shares with them: the
paper's engine names, the data kind of numbers computed from judged answers and the "not run" reasons. Answers
missing from the records, answers not yet judged (no LLM endpoint, no cached reply), or records that cannot be
scored are recorded as "not run" with the reason, never as an error."""

from __future__ import annotations

import numpy as np
import polars as pl

from analysis_lib.answer_engine.loading import AnswerData
from analysis_lib.answer_engine.scorecard import display_name
from analysis_lib.answer_engine.simulate.annotators import SimulatedLabels
from bookbuild import paper_values
from bookbuild.sections import Number, Section, Table, not_run

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


def _f8b_quantities(engine: str) -> list[str]:
    return [*(q for qt in QUERY_TYPES for q in (f"{engine}: % strongly confident (5), {qt} queries",
                                                 f"{engine}: mean confidence (1–5), {qt} queries")),
            f"{engine}: % strongly confident (5), all queries"]


def f8b_numbers(answers: AnswerData, conf: pl.DataFrame) -> list[Number]:
    """AE-F8b: per paper engine and query type the share of answers the judge scored 5 (strongly confident) and
    the mean score, and the share over all queries (``conf``: :func:`analysis_lib.answer_engine.confidence_frame`
    of the answers' records); not run with the reason where no answer has a score."""
    kind = number_kind(answers)
    planted = answers.simulation.planted if answers.simulation is not None else {}
    if conf.height == 0:
        reason = (unscored_reason(answers) if answers.judging is not None
                  else "not run: no answer record has a confidence score")
        return not_run("AE-F8b", [q for e in PAPER_ENGINES for q in _f8b_quantities(e)], reason)
    by_name = {n: e for e, n in engine_names(list(dict.fromkeys(conf["engine"].to_list()))).items()}
    numbers: list[Number] = []
    for name in PAPER_ENGINES:
        qs, engine = _f8b_quantities(name), by_name.get(name)
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
    return numbers


def paper_strongly_confident(names: list[str] | None = None) -> dict[str, float]:
    """The paper's one number on Fig 8b, to draw on the figure: the share (%) of an engine's answers scored 5 is
    at least this (Perplexity, §5.2, "90+%"); only the engines in ``names`` (display names) when given."""
    out = {}
    for name in PAPER_ENGINES:
        row = paper_values.lookup("AE-F8b", f"{name}: % strongly confident (5), all queries")
        if isinstance(row.paper, float) and (names is None or name in names):
            out[name] = row.paper
    return out


def p_numbers(agreement: pl.DataFrame | None, sim: SimulatedLabels | None, kind: str) -> list[Number]:
    """AE-P: per task the judge–label Pearson r with its interval and the labelled items matched
    (``agreement``: :func:`analysis_lib.answer_engine.judge_agreement`; None when there are no labels: not run);
    on simulated annotators ``sim`` the planted expected r. ``kind``: the data kind of the labels."""
    quantities = [q for t in TASK_NAMES.values()
                  for q in (f"Pearson r, LLM vs annotators, {t}", f"labelled items matched, {t}")]
    if agreement is None:
        return not_run("AE-P", quantities, LABELS_REASON)
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
    return numbers


def p_section(agreement: pl.DataFrame | None, sim: SimulatedLabels | None, kind: str) -> Section:
    """AE-P as the chapter shows it: :func:`p_numbers`, the simulated annotators' calibration (when simulated)
    and the agreement table."""
    tables = [] if sim is None else [Table(sim.planted, "Simulated annotators: calibration", 3)]
    if agreement is not None:
        tables.append(Table(agreement, "Judge against labels: Pearson r with its 95% interval", 3))
    return Section(p_numbers(agreement, sim, kind), [], tables)
