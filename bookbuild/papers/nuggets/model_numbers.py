"""The numbers chapter 07 records for the sections that need a model, a second model's assignments or the network
(NG-F6, NG-T3, NG-Q, NG-NLI, NG-F7, NG-C, NG-F8), and the book's rules for those steps.

- **What may be sent.** Response texts go to an LLM only from real records that carry them (:func:`llm_pairs`):
  the simulator's texts are pseudo-words built from the nuggets. Queries are classified on every record set that
  carries them, simulated ones on a sample (:data:`SIMULATED_QUERY_BATTLES`, the number the build's LLM plan
  counts: :func:`query_limit`). Simulated chunks and nuggets are not sent to the NLI model (:func:`nli_model`).
- **Why a step did not run** is the LLM client's own reason (:func:`step_reason`): items *not run* carry the
  client's words (no endpoint and no cache, items still pending in a Batch API batch, the request budget, the run
  deadline), failures their error kinds with counts. A number that did not run is a
  :class:`~bookbuild.sections.Number` with that ``reason``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import numpy as np
import polars as pl

from analysis_lib.llm import LLMClient
from analysis_lib.nuggets import llm_analyses, nli
from analysis_lib.nuggets.agreement import NuggetConfusion
from analysis_lib.nuggets.records import NuggetRecords
from analysis_lib.nuggets.sampling import sample_note
from bookbuild import markup
from bookbuild.sections import Number, not_run

F6_QUANTITIES = ("LLM judge vs human: weighted kappa", "LLM judge agreements model_a / model_b",
                 "LLM judge tie share (%)", "LLM judge inversions")
T3_QUANTITIES = ("Kendall tau, fluency / grammar / readability vs preference",
                 "Spearman rho, fluency / grammar / readability vs preference")
NLI_QUANTITY = "nuggets entailed by their source (%)"
#: queries classified on simulated records when the chapter's ``query_class_battles`` is None
SIMULATED_QUERY_BATTLES = 200
LLM_CACHE = "llm-cache"
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


# ------------------------------------------------------------------------------------------------ NG-F6, NG-T3

def f6_published_numbers(overall: NuggetConfusion) -> list[Number]:
    """The nugget-based inversion count the paper sets against the LLM judge (anti-diagonal of Figure 4)."""
    return [Number("NG-F6", "nugget-based inversions (anti-diagonal of Figure 4)", overall.inversions,
                   data="published")]


def f6_numbers(judged: llm_analyses.Judged | None, why: str = "") -> list[Number]:
    """NG-F6 from :func:`nuggets.llm_analyses.judge` (None: not run, because ``why``)."""
    if judged is None:
        return not_run("NG-F6", F6_QUANTITIES, why)
    jm, verdicts = judged.confusion, judged.verdicts
    if jm is None:
        return not_run("NG-F6", F6_QUANTITIES, step_reason(verdicts))
    ok = verdicts.filter(pl.col("status") == "ok")
    return [
        Number("NG-F6", F6_QUANTITIES[0], jm.kappa(), data=LLM_CACHE,
               note=f"{ok.height:,} of {verdicts.height:,} battles judged"),
        Number("NG-F6", F6_QUANTITIES[1], f"{jm.agreements_a:,} / {jm.agreements_b:,}", data=LLM_CACHE),
        Number("NG-F6", F6_QUANTITIES[2], 100 * (ok["judge"] == "tie").to_numpy().mean(), data=LLM_CACHE),
        Number("NG-F6", F6_QUANTITIES[3], jm.inversions, data=LLM_CACHE),
    ]


def t3_numbers(rubric: llm_analyses.Rubric | None, why: str = "") -> list[Number]:
    """NG-T3's Kendall τ and Spearman ρ from :func:`nuggets.llm_analyses.rubric` (None: not run, because ``why``)."""
    if rubric is None:
        return not_run("NG-T3", T3_QUANTITIES, why)
    corr = rubric.correlations
    if corr is None:
        return not_run("NG-T3", T3_QUANTITIES, step_reason(rubric.scores_a, rubric.scores_b))
    note = sample_note(rubric.decided.height, rubric.population, "decided battles")
    return [Number("NG-T3", q, " / ".join(f"{x:.3f}" for x in corr[col]), data=LLM_CACHE, note=note)
            for q, col in zip(T3_QUANTITIES, ("kendall_tau", "spearman_rho"), strict=True)]


# ------------------------------------------------------------------------------------------------ NG-Q, NG-NLI

def query_limit(limit: int | None, kind: str) -> int | None:
    """The battles NG-Q classifies: ``limit``; when None, all on real queries, :data:`SIMULATED_QUERY_BATTLES` on
    simulated ones (``kind``)."""
    return limit if limit is not None else (SIMULATED_QUERY_BATTLES if kind == "simulated" else None)


def q_numbers(classified: pl.DataFrame, population: int, kind: str, model: str) -> list[Number]:
    """NG-Q: battles per class (:func:`nuggets.llm_analyses.class_counts`) of the ``classified`` battles
    (:func:`nuggets.llm_analyses.classify_queries`) among ``population`` with a query, rated by ``model``;
    ``kind``: ``simulated`` when the queries are simulated, else the LLM cache's kind is recorded."""
    quantities = [f"{c}: battles in the class" for c in llm_analyses.ATTRIBUTES]
    if classified.height == 0:
        return not_run("NG-Q", quantities, NO_QUERIES)
    ok = classified.filter(pl.col("status") == "ok")
    if ok.height == 0:
        return not_run("NG-Q", quantities, step_reason(classified))
    unclassified = int((ok["classes"].list.len() == 0).sum())
    drawn = f" (a random {classified.height:,} of {population:,})" if classified.height < population else ""
    note = f"{ok.height:,} of {classified.height:,} battles rated{drawn}; {unclassified:,} with no rating of 7 or more"
    if kind == "simulated":  # an llm row names its model beside the number; a simulated one says it here
        note += f"; LLM ratings ({model})"
    return [Number("NG-Q", f"{c}: battles in the class", n, data=kind, note=note)
            for c, n in llm_analyses.class_counts(classified).iter_rows()]


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


def nli_numbers(share: float, checked: int, records: NuggetRecords, n_battles: int | None, kind: str) -> list[Number]:
    """NG-NLI: the share of nuggets entailed by one of their sources (:func:`nuggets.nli.records_entailed_share`),
    ``checked`` nuggets of a random ``n_battles`` battles with chunks."""
    battles = records.battle_texts(both_responses=False).height
    return [Number("NG-NLI", NLI_QUANTITY, share, data=kind,
                   note=f"{checked:,} nuggets of {min(n_battles or battles, battles):,} battles")]


# ------------------------------------------------------------------------------------------------ NG-F7, C, F8

F7_QUANTITY = "nugget assignment, second model vs first: weighted kappa"
F7_NOT_RUN = ("needs a second model's assignments of the same nuggets (nuggets.pipeline.run_pipeline with another "
              "model); nuggets.llm_analyses.assignment_agreement computes κ from the two records")


def f7_numbers(kappa: float, table: np.ndarray, planted: float, keep: float, kind: str) -> list[Number]:
    """NG-F7 against the simulated second assigner: κ, the planted κ and the assignments compared."""
    return [Number("NG-F7", F7_QUANTITY, kappa, data=kind, planted=planted,
                   note=f"simulated second assigner (keeps a label with probability {keep}); {int(table.sum()):,} "
                        "assignments of both sides")]


def c_numbers(urls: list[str], counts: Mapping[str, int], kind: str) -> list[Number]:
    """NG-C from the battle traces: unique URLs and battles without a URL; the scraped share needs the network."""
    n = counts["single-turn battles"]
    without = n - counts["battles with a URL"]
    return [
        Number("NG-C", "unique URLs of the single-turn battles", len(urls), data=kind,
               note=f"{n:,} single-turn voted battles"
                    + ("; 24k release simulated, with the simulator's URLs" if kind == "simulated" else "")),
        Number("NG-C", "single-turn battles without a URL (%)", 100 * without / max(1, n), data=kind,
               note=f"{without:,} of {n:,}"),
        *not_run("NG-C", ["URLs yielding <= 100 bytes (%)"],
                 "needs the network to scrape the URLs (analysis_lib.scrape); this build does not scrape"),
    ]


F8_QUANTITIES = ("ROUGE-L preference vs human winner: agreement, decided battles (%)",
                 "ROUGE-L preference vs human winner: Cohen's kappa, decided battles")
F8_NOT_RUN = ("the nugget records carry no response texts and retrieved chunks (fields answer_text and chunks, which "
              "nuggets.pipeline.run_pipeline writes)")


def f8_numbers(summary: Mapping[str, Any], scored: int, sampled: int, total: int, kind: str) -> list[Number]:
    """NG-F8: agreement and κ on the decided battles (``summary``: :func:`nuggets.rouge.alignment_summary`);
    ``scored`` battles carried responses and chunks among the ``sampled`` of ``total``."""
    covered = (f"{scored:,} of {sampled:,} battles scored carry responses and chunks"
               + (f" (a random {sampled:,} of {total:,})" if sampled < total else ""))
    return [Number("NG-F8", F8_QUANTITIES[0], summary["agreement_pct"], data=kind,
                   note=f"{summary['battles']:,.0f} decided battles; {covered}"),
            Number("NG-F8", F8_QUANTITIES[1], summary["kappa"], data=kind)]
