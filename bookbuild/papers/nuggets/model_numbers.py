"""The results chapter 07 records for the sections that need a model (NG-F6, NG-T3, NG-Q, NG-NLI), a second
model's assignments (NG-F7), the network (NG-C) or texts (NG-F8), and the book's rules for those steps.

- **What may be sent.** Response texts go to an LLM only from real records that carry them (:func:`llm_pairs`):
  the simulator's texts are pseudo-words built from the nuggets. Queries are classified on every record set that
  carries them, simulated ones on a sample (:data:`SIMULATED_QUERY_BATTLES`, the number the build's LLM plan
  counts: :func:`query_limit`). Simulated chunks and nuggets are not sent to the NLI model (:func:`nli_model`).
- **Why a step did not run** is the LLM client's own reason (:func:`step_reason`): items *not run* carry the
  client's words (no endpoint and no cache, items still pending in a Batch API batch, the request budget, the run
  deadline), failures their error kinds with counts. A step that did not run gives no result and that reason
  (``rec.record(aid, None, reason=why)``).
- **What the paper prints** as one cell, the book compares as one string: the judge's agreements
  (``1,137 / 1,161``), τ and ρ of the three criteria (``0.070 / 0.007 / 0.085``).
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

import numpy as np
import polars as pl

from analysis_lib.llm import LLMClient
from analysis_lib.nuggets import llm_analyses, nli
from analysis_lib.nuggets.agreement import NuggetConfusion
from analysis_lib.nuggets.records import NuggetRecords
from analysis_lib.nuggets.sampling import sample_note
from bookbuild import markup
from bookbuild.papers.nuggets.notes import notes_at

#: queries classified on simulated records when the chapter's ``query_class_battles`` is None
SIMULATED_QUERY_BATTLES = 200
SIMULATED_TEXTS = "the simulated response texts are pseudo-words built from the nuggets, not for an LLM"
NO_TEXTS = "the nugget records carry no response texts (answer_text)"
NO_QUERIES = "the nugget records carry no query texts (query)"


def llm_note(client: LLMClient) -> markup.Html:
    """The chapter's note on its LLM steps, as a note box: where the calls go, or why they cannot."""
    if client.available:
        text = (f"LLM calls go to the configured endpoint (default model {markup.code_span(client.model)}) and are "
                "cached, so a "
                "rebuild repeats none.")
    else:
        text = ("This build has no LLM endpoint: the LLM steps of this chapter (NG-F6, NG-T3, NG-Q) show replies "
                "cached by an earlier build where there are any, else *not run*. Set `OPENAI_BASE_URL` and "
                "`OPENAI_API_KEY` to run them.")
    return markup.admonition("LLM steps", text)


def llm_pairs(records: NuggetRecords, kind: str) -> tuple[pl.DataFrame | None, str]:
    """The battles whose two responses may go to an LLM (:func:`nuggets.llm_analyses.response_pairs`) and ``""``;
    or None and the reason there are none (module docstring)."""
    pairs = llm_analyses.response_pairs(records)
    if pairs is None:
        return None, NO_TEXTS
    if kind == "simulated":
        return None, SIMULATED_TEXTS
    return pairs, ""


def step_reason(*outs: pl.DataFrame) -> str:
    """Why an LLM step has no usable reply, from its result frames (``status``, ``error`` of
    :meth:`LLMClient.run`): the client's reasons for the items *not run* (with their counts when they differ),
    else the kinds of failure with their counts."""
    status = pl.concat([o.select("status", pl.col("error").cast(pl.String)) for o in outs])
    if status.height == 0:
        return "no items to send"
    not_run_items = status.filter(pl.col("status") == "not run")
    if not_run_items.height:
        reasons = (not_run_items.select(pl.col("error").fill_null("no reason given").str.strip_prefix("not run: "))
                   .to_series().value_counts(sort=True))
        if reasons.height == 1:
            return str(reasons["error"][0])
        return "; ".join(f"{n:,} items: {r}" for r, n in reasons.iter_rows())
    failed = status.filter(pl.col("status") != "ok")
    kinds = failed["error"].fill_null("unknown error").map_elements(lambda e: re.sub(r":.*$", "", e),
                                                                    return_dtype=pl.String)
    counts = "; ".join(f"{r} ×{n:,}" for r, n in kinds.value_counts(sort=True).head(3).iter_rows())
    return f"no usable LLM reply: {failed.height:,} of {status.height:,} items failed ({counts})"


# ------------------------------------------------------------------------------------------------ NG-F6, NG-T3, NG-Q

class Outcome(NamedTuple):
    """A model step for ``rec.record(aid, result, reason=..., notes=...)``: its ``result`` (None when it did not
    run), ``reason`` (why not) and its ``notes`` by quantity (:func:`~bookbuild.papers.nuggets.notes.notes_at`:
    a row that did not run shows its paper-values note as written, so a note with the step's numbers comes from
    here)."""

    result: Any
    reason: str
    notes: dict[str, str]


class Judge(NamedTuple):
    """NG-F6: the judge × vote confusion of the battles judged, the agreements as the paper prints them and the
    share of tie verdicts."""

    confusion: NuggetConfusion
    agreements: str
    tie_share: float


def judge_result(judged: llm_analyses.Judged | None, why: str = "") -> Outcome:
    """NG-F6 from :func:`nuggets.llm_analyses.judge` (None: not run, because ``why``)."""
    if judged is None:
        return Outcome(None, why, {})
    jm, verdicts = judged.confusion, judged.verdicts
    if jm is None:
        return Outcome(None, step_reason(verdicts), {})
    ok = verdicts.filter(pl.col("status") == "ok")
    tie_share = float((ok["judge"] == "tie").to_numpy().mean())
    note = f"{ok.height:,} of {verdicts.height:,} battles judged"
    return Outcome(Judge(jm, f"{jm.agreements_a:,} / {jm.agreements_b:,}", tie_share), "",
                   notes_at("NG-F6", {"judge.confusion.kappa": note}))


def rubric_result(rubric: llm_analyses.Rubric | None, why: str = "") -> Outcome:
    """NG-T3's Kendall τ and Spearman ρ of fluency / grammar / readability as the paper prints them
    (``kendall_tau``, ``spearman_rho``), from :func:`nuggets.llm_analyses.rubric` (None: not run, because ``why``)."""
    if rubric is None:
        return Outcome(None, why, {})
    corr = rubric.correlations
    if corr is None:
        return Outcome(None, step_reason(rubric.scores_a, rubric.scores_b), {})
    result = {col: " / ".join(f"{x:.3f}" for x in corr[col]) for col in ("kendall_tau", "spearman_rho")}
    note = sample_note(rubric.decided.height, rubric.population, "decided battles")
    return Outcome(result, "", notes_at("NG-T3", dict.fromkeys(result, note)))


def query_limit(limit: int | None, kind: str) -> int | None:
    """The battles NG-Q classifies: ``limit``; when None, all on real queries, :data:`SIMULATED_QUERY_BATTLES` on
    simulated ones (``kind``)."""
    return limit if limit is not None else (SIMULATED_QUERY_BATTLES if kind == "simulated" else None)


def query_classes(classified: pl.DataFrame, population: int, kind: str) -> Outcome:
    """NG-Q: battles per class (:func:`nuggets.llm_analyses.class_counts`) of the ``classified`` battles
    (:func:`nuggets.llm_analyses.classify_queries`) among ``population`` with a query. The counts are LLM output
    whatever the queries (the chapter records them as ``llm``, naming the model and the endpoint beside them);
    the note says when the queries are the simulator's (``kind``)."""
    if classified.height == 0:
        return Outcome(None, NO_QUERIES, {})
    ok = classified.filter(pl.col("status") == "ok")
    if ok.height == 0:
        return Outcome(None, step_reason(classified), {})
    unclassified = int((ok["classes"].list.len() == 0).sum())
    drawn = f" (a random {classified.height:,} of {population:,})" if classified.height < population else ""
    note = f"{ok.height:,} of {classified.height:,} battles rated{drawn}; {unclassified:,} with no rating of 7 or more"
    if kind == "simulated":
        note += "; ratings of the simulator's queries"
    counts = llm_analyses.class_counts(classified)
    return Outcome(counts, "", notes_at("NG-Q", {f"[query_class={c}]": note for c in counts["query_class"]}))


# ------------------------------------------------------------------------------------------------ NG-NLI, NG-F7

def nli_model(records: NuggetRecords, kind: str) -> tuple[nli.Classifier | None, str]:
    """The NLI model for NG-NLI and ``""``, or None and why the check does not run: simulated records (their
    chunks and nuggets are pseudo-words: the model is not even loaded), records without chunks, or a model that
    does not load."""
    if kind == "simulated":
        return None, "the simulated chunks and nuggets are pseudo-words; they are not sent to the NLI model"
    if records.sides["chunks"].null_count() == records.sides.height:
        return None, "the nugget records carry no retrieved chunks (field chunks) to test the nuggets against"
    try:
        return nli.load_nli(), ""
    except nli.NLIUnavailable as err:
        return None, str(err)


def entailment_note(entailed: nli.Entailment | None) -> str:
    """NG-NLI: the nuggets checked and their battles (``""`` when the check did not run)."""
    return "" if entailed is None else f"{entailed.nuggets:,} nuggets of {entailed.battles:,} battles"


F7_NOT_RUN = ("needs a second model's assignments of the same nuggets (nuggets.pipeline.run_pipeline with another "
              "model); nuggets.llm_analyses.assignment_agreement computes κ from the two records")


def second_assigner_note(keep: float, table: np.ndarray) -> str:
    """NG-F7 on simulated records: the simulated second assigner and the assignments compared (``table``)."""
    return (f"simulated second assigner (keeps a label with probability {keep}); {int(table.sum()):,} assignments of "
            "both sides")


# ------------------------------------------------------------------------------------------------ NG-C, NG-F8

SCRAPE_NOT_RUN = "needs the network to scrape the URLs (analysis_lib.scrape); this build does not scrape"
F8_NOT_RUN = ("the nugget records carry no response texts and retrieved chunks (fields answer_text and chunks, which "
              "nuggets.pipeline.run_pipeline writes)")
