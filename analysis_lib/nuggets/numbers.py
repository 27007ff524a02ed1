"""The numbers the nugget chapter records, section by section, as rows for the book's recorder.

Each function takes what a section computed and returns :class:`Number` rows: the quantity (the key of the
paper-values table, ``resources/paper_values/ng.csv``), our value, a note and, where it differs from the
chapter's default, the data kind (``published`` for the paper's own matrices, ``none`` for a worked example).
A chapter records them with ``rec.number(section, **n.kwargs())``. Labels that depend on a parameter are built
from it (the tie threshold, sample sizes), and a quantity the paper reports *at* a parameter value keeps the
paper's value: the per-battle κ and agreement shares that NG-F4 compares with the paper are computed at the
paper's tie threshold whatever the chapter's ``tie_threshold`` (which its figures and tables use), and a number
computed at another threshold says so in its note (:func:`threshold_note`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from analysis_lib.nuggets.agreement import NuggetConfusion, confusion
from analysis_lib.nuggets.perbattle import preferences
from analysis_lib.nuggets.records import NuggetRecords
from analysis_lib.nuggets.scores import (
    TIE_THRESHOLD,
    AssignedNugget,
    Assignment,
    Importance,
    Nugget,
    cap_nuggets,
    nugget_preference,
    nugget_scores,
)
from analysis_lib.search_arena import encoder

PUBLISHED = "published"
#: A check of a published number against another (it checks the paper; it does not reproduce a figure).
CHECKED = "checked"


@dataclass(frozen=True)
class Number:
    """One recorded number: ``value`` is None for an analysis that did not run (``note`` says why)."""

    quantity: str
    value: Any
    note: str = ""
    data: str | None = None
    planted: Any = None

    def kwargs(self) -> dict[str, Any]:
        """Keyword arguments of ``Recorder.number`` (the analysis ID apart)."""
        return {"quantity": self.quantity, "ours": self.value, "note": self.note, "data": self.data,
                "planted": self.planted}


def not_run(quantity: str, reason: str) -> Number:
    """A number this build could not compute, with the reason (recorded as *not run*)."""
    return Number(quantity, None, note=reason, data="none")


def threshold_label(threshold: float) -> str:
    """The tie threshold as the chapter writes it (``0.07``)."""
    return f"{threshold:g}"


def threshold_note(tie_threshold: float) -> str:
    """``""`` at the paper's tie threshold; else a note that the number uses ``tie_threshold``."""
    if np.isclose(tie_threshold, TIE_THRESHOLD):
        return ""
    return f"at tie threshold {threshold_label(tie_threshold)} (the paper's values are at {TIE_THRESHOLD:g})"


# ------------------------------------------------------------------------------------------------ NG-A1, NG-N

A1_SIMULATED_NOTE = "24k release simulated; the paper counts the v1-7k release"


def a1_numbers(shares: Mapping[str, float], kind: str) -> list[Number]:
    """NG-A1: the battle count and the vote and language shares (:func:`nuggets.battles.vote_and_language_shares`)."""
    return [Number(q, v, data=kind, note=A1_SIMULATED_NOTE if q == "single-turn battles" and kind == "simulated"
                   else "") for q, v in shares.items()]


#: NG-N's worked example: (nugget, importance, assignment in response A, assignment in response B)
WORKED_EXAMPLE = (
    ("Paris is the capital of France", "vital", "support", "support"),
    ("Paris has about 2.1 million inhabitants", "vital", "partial_support", "support"),
    ("The Seine flows through Paris", "okay", "support", "not_support"),
    ("Paris hosted the 2024 Summer Olympics", "vital", "not_support", "partial_support"),
    ("The Louvre is the most visited museum", "okay", "partial_support", "not_support"),
    ("Paris is divided into 20 arrondissements", "okay", "not_support", "support"),
)


def worked_example_table() -> pl.DataFrame:
    """The worked example as a table (nugget, importance, the two responses' assignments)."""
    return pl.DataFrame(list(WORKED_EXAMPLE), schema=["nugget", "importance", "response A", "response B"],
                        orient="row")


def worked_example_numbers(tie_threshold: float) -> list[Number]:
    """NG-N's hand-checkable numbers: the four scores of both responses, their nugget preference at
    ``tie_threshold`` and the 30-nugget cap applied to 12 vital + 25 okay nuggets."""
    scores = {name: nugget_scores([AssignedNugget(Nugget(t, Importance(imp)), Assignment(x[k]))
                                   for t, imp, *x in WORKED_EXAMPLE]) for k, name in ((0, "A"), (1, "B"))}
    out = [Number(f"worked example, response {n}: {metric}", v, data="none")
           for n in ("A", "B") for metric, v in scores[n].items()]
    diff = scores["B"]["all"] - scores["A"]["all"]
    out.append(Number("worked example: nugget preference",
                      nugget_preference([scores["A"]["all"]], [scores["B"]["all"]], tie_threshold)[0], data="none",
                      note=f"threshold {tie_threshold}; score_B − score_A = {diff:+.3f}"))
    capped = cap_nuggets([Nugget(f"v{i}", Importance.VITAL) for i in range(12)]
                         + [Nugget(f"o{i}", Importance.OKAY) for i in range(25)])
    out.append(Number("cap: 12 vital + 25 okay nuggets kept as",
                      f"{sum(n.importance == 'vital' for n in capped)} vital + "
                      f"{sum(n.importance == 'okay' for n in capped)} okay", data="none"))
    return out


def n_numbers(summary: Mapping[str, float], records: NuggetRecords, n_scored: int,
              planted: Mapping[str, Any]) -> list[Number]:
    """NG-N on the records: nuggets per battle, battles at the cap, vital share, battles excluded."""
    excluded = ", ".join(f"{v:,} {k.removeprefix('battles ')}" for k, v in records.excluded.items())
    failed = sum(v for k, v in records.excluded.items() if "failed" in k)
    return [
        Number("nuggets per battle (mean)", summary["mean nuggets per battle"], planted=planted.get("mean_nuggets")),
        Number("battles reaching the 30-nugget cap", summary["battles reaching the 30-nugget cap"],
               note=f"of {n_scored:,} battles"),
        Number("vital share of nuggets", summary["vital share of nuggets"], planted=planted.get("vital_share")),
        Number("battles excluded (failed nuggetizer steps)", failed, note="all exclusions: " + excluded),
    ]


# ------------------------------------------------------------------------------------------------ NG-F3, NG-F2

def f3_numbers(groups: Mapping[str, np.ndarray]) -> list[Number]:
    """NG-F3: battles in the densities and the mean score difference per human vote."""
    return [Number("battles in the densities (both-bad excluded)", sum(g.size for g in groups.values())),
            *(Number(f"mean score difference, human {v}", float(np.mean(g))) for v, g in groups.items())]


def f2_numbers(ks: pl.DataFrame) -> list[Number]:
    """NG-F2: D and p of the three pairwise K-S tests (:func:`nuggets.agreement.ks_by_vote`)."""
    out = []
    for r in ks.iter_rows(named=True):
        c = f"{r['group_1']} vs {r['group_2']}"
        out += [Number(f"K-S D, {c}", r["ks_statistic"], note=f"n = {r['n_1']:,} and {r['n_2']:,}"),
                Number(f"K-S p, {c}", r["p_value"])]
    return out


def ks_check_numbers(check: pl.DataFrame) -> list[Number]:
    """NG-F2's check of the published statistics (:func:`nuggets.published.ks_consistency`)."""
    return [Number(f"published p follows from D and the group sizes ({r['variant']}, {r['comparison']})",
                   "yes" if r["consistent"] else "no", data=CHECKED,
                   note=f"exact p over D in [{r['d_min']:.5f}, {r['d_max']:.5f}]: "
                        f"{r['p_at_d_max']:.2e} to {r['p_at_d_min']:.2e}")
            for r in check.iter_rows(named=True)]


# ------------------------------------------------------------------------------------------------ NG-F4, NG-F5

def f4_published_numbers(overall: NuggetConfusion) -> list[Number]:
    """NG-F4 from the published Figure 4 matrix: κ, agreements, row totals, shares, the both-bad sensitivity."""
    rows = overall.row_totals
    return [Number(q, v, data=PUBLISHED) for q, v in (
        ("weighted kappa (quadratic, both-bad excluded)", overall.kappa()),
        ("agreements, human model_a", overall.agreements_a),
        ("battles won by model_a (row total)", rows["model_a"]),
        ("agreement share, model_a (%)", 100 * overall.agreement_share_a),
        ("agreements, human model_b", overall.agreements_b),
        ("battles won by model_b (row total)", rows["model_b"]),
        ("agreement share, model_b (%)", 100 * overall.agreement_share_b),
        ("battles in the matrix", overall.n),
        ("weighted kappa, both-bad merged into tie (sensitivity)", overall.kappa(both_bad="tie")),
    )]


def f4_record_numbers(scores: pl.DataFrame, tie_threshold: float, planted_kappa: float | None) -> list[Number]:
    """NG-F4 from the nugget records (``scores``: :func:`nuggets.perbattle.battle_scores`) at the paper's tie
    threshold, the numbers it compares with the paper; ``planted_kappa`` is the κ the simulator was calibrated to
    (None on real records)."""
    at_paper = confusion(scores["winner"].to_numpy(), preferences(scores, TIE_THRESHOLD))
    note = "" if np.isclose(tie_threshold, TIE_THRESHOLD) else (
        f"at the paper's tie threshold {TIE_THRESHOLD:g}, to compare with the paper (this page's figures and tables "
        f"use {threshold_label(tie_threshold)})")
    planted = "planted = the κ of the published matrix the simulator was calibrated to" if planted_kappa is not None \
        else ""
    return [
        Number(f"per-battle: weighted kappa at threshold {TIE_THRESHOLD:g}", at_paper.kappa(), planted=planted_kappa,
               note="; ".join(n for n in (note, planted) if n)),
        Number("per-battle: agreement share, model_a (%)", 100 * at_paper.agreement_share_a, note=note),
        Number("per-battle: agreement share, model_b (%)", 100 * at_paper.agreement_share_b, note=note),
    ]


def sweep_numbers(sweep: pl.DataFrame) -> list[Number]:
    """NG-F4's sweep: the lowest and highest κ over the swept thresholds (labelled with their range)."""
    ts = sweep["threshold"].to_numpy()
    lo, hi = threshold_label(float(ts.min())), threshold_label(float(ts.max()))
    return [Number(f"per-battle: lowest kappa across thresholds {lo}-{hi}", sweep["kappa"].min()),
            Number(f"per-battle: highest kappa across thresholds {lo}-{hi}", sweep["kappa"].max())]


def f5_numbers(f5: NuggetConfusion) -> list[Number]:
    """NG-F5 from the published responses-only matrix (Figure 5)."""
    return [
        Number("agreement share, model_a (%)", 100 * f5.agreement_share_a, data=PUBLISHED,
               note=f"{f5.agreements_a} of {f5.row_totals['model_a']}"),
        Number("agreement share, model_b (%)", 100 * f5.agreement_share_b, data=PUBLISHED,
               note=f"{f5.agreements_b} of {f5.row_totals['model_b']}"),
        Number("weighted kappa (quadratic, both-bad excluded)", f5.kappa(), data=PUBLISHED),
        Number("battles in the matrix", f5.n, data=PUBLISHED),
    ]


# ------------------------------------------------------------------------------------------------ NG-T1, NG-B

def t1_published_numbers(table: pl.DataFrame) -> list[Number]:
    """NG-T1 from one side of the published Table 1 (:func:`nuggets.agreement.inversion_table`)."""
    out = []
    for r in table.iter_rows(named=True):
        out += [Number(f"{r['subset']}: battles", r["battles"], data=PUBLISHED),
                Number(f"{r['subset']}: inversion (%)", r["inversion_pct"], data=PUBLISHED,
                       note=f"{r['inversions']} of {r['battles']}")]
    return out


def t1_overall_numbers(overall: NuggetConfusion, ours: NuggetConfusion, tie_threshold: float) -> list[Number]:
    """NG-T1's overall inversion rate: the published Figure 4 matrix, and the records at ``tie_threshold``."""
    where = threshold_note(tie_threshold)
    return [Number("overall inversion (%)", 100 * overall.inversion_rate, data=PUBLISHED,
                   note=f"{overall.inversions} of {overall.n}"),
            Number("per-battle: overall inversion (%)", 100 * ours.inversion_rate,
                   note=f"{ours.inversions} of {ours.n}" + (f" {where}" if where else ""))]


def b_numbers(confusions: Mapping[tuple[str, str], NuggetConfusion], kappas: pl.DataFrame,
              top_classes: list[str]) -> list[Number]:
    """NG-B from the published matrices: the knowledge-intensive example, every subset's κ (``kappas``:
    :func:`nuggets.agreement.kappa_table`) and the three classes of highest κ apart from harmful (``top_classes``,
    :func:`nuggets.claims.top_kappa_classes`)."""
    ki = confusions[("query_category", "knowledge-intensive")]
    out = [Number("knowledge-intensive: weighted kappa", ki.kappa(), data=PUBLISHED),
           Number("knowledge-intensive: agreement share, model_a (%)", 100 * ki.agreement_share_a, data=PUBLISHED),
           Number("knowledge-intensive: agreement share, model_b (%)", 100 * ki.agreement_share_b, data=PUBLISHED)]
    out += [Number(f"{r['subset_type']} {r['subset']}: weighted kappa", r["kappa"], data=PUBLISHED)
            for r in kappas.filter(pl.col("subset") != "all").iter_rows(named=True)]
    classes = kappas.filter(pl.col("subset_type") == "query_category").sort("kappa", descending=True)
    best = classes.row(0, named=True) if classes.height else None
    note = (f"{best['subset']} ({best['battles']} battles) has the highest κ of all"
            if best is not None and best["subset"] not in top_classes else "")
    out.append(Number("three query classes with the highest kappa (excluding harmful)", ", ".join(sorted(top_classes)),
                      data=PUBLISHED, note=note))
    return out


def b_record_numbers(mine: Mapping[tuple[str, str], NuggetConfusion], tie_threshold: float) -> list[Number]:
    """NG-B from the nugget records (``mine``: :func:`nuggets.perbattle.subset_confusions` at ``tie_threshold``):
    the knowledge-intensive κ, when the records have that class."""
    ki = mine.get(("query_category", "knowledge-intensive"))
    return [] if ki is None else [Number("per-battle: knowledge-intensive weighted kappa", ki.kappa(),
                                         note=threshold_note(tie_threshold))]


# ------------------------------------------------------------------------------------------------ NG-T2

def t2_numbers(jaccard: pl.DataFrame, cosine: pl.DataFrame, population: int,
               precision: encoder.Precision = "auto") -> list[Number]:
    """NG-T2: mean and sd of the per-battle Jaccard (all battles) and cosine (the sampled battles, embedded by the
    offline encoder at ``precision``, named in the note)."""
    j, c = jaccard["jaccard"].fill_nan(None), cosine["cosine"].fill_nan(None)
    sampled = f"{cosine.height:,} battles sampled" if cosine.height < population else f"all {population:,} battles"
    sampled += f"; {encoder.label(precision)}"
    return [Number("within-battle nugget Jaccard, mean", j.mean(), note=f"{jaccard.height:,} battles"),
            Number("within-battle nugget Jaccard, sd", j.std()),
            Number("within-battle nugget cosine, mean", c.mean(), note=sampled),
            Number("within-battle nugget cosine, sd", c.std())]


# ------------------------------------------------------------------------------------------------ NG-F6, F7, C, F8

def f6_published_number(overall: NuggetConfusion) -> Number:
    """The nugget-based inversion count the paper sets against the LLM judge (anti-diagonal of Figure 4)."""
    return Number("nugget-based inversions (anti-diagonal of Figure 4)", overall.inversions, data=PUBLISHED)


F7_QUANTITY = "nugget assignment, second model vs first: weighted kappa"
F7_NOT_RUN = ("needs a second model's assignments of the same nuggets (nuggets.pipeline.run_pipeline with another "
              "model); nuggets.llm_analyses.assignment_agreement computes κ from the two records")


def f7_numbers(kappa: float, table: np.ndarray, planted: float, keep: float, kind: str) -> list[Number]:
    """NG-F7 against the simulated second assigner: κ, the planted κ and the assignments compared."""
    return [Number(F7_QUANTITY, kappa, data=kind, planted=planted,
                   note=f"simulated second assigner (keeps a label with probability {keep}); {int(table.sum()):,} "
                        "assignments of both sides")]


def c_numbers(urls: list[str], counts: Mapping[str, int], kind: str) -> list[Number]:
    """NG-C from the battle traces: unique URLs and battles without a URL; the scraped share needs the network."""
    n = counts["single-turn battles"]
    without = n - counts["battles with a URL"]
    return [
        Number("unique URLs of the single-turn battles", len(urls), data=kind,
               note=f"{n:,} single-turn voted battles"
                    + ("; 24k release simulated, with the simulator's URLs" if kind == "simulated" else "")),
        Number("single-turn battles without a URL (%)", 100 * without / max(1, n), data=kind,
               note=f"{without:,} of {n:,}"),
        not_run("URLs yielding <= 100 bytes (%)",
                "needs the network to scrape the URLs (analysis_lib.scrape); this build does not scrape"),
    ]


F8_QUANTITIES = ("ROUGE-L preference vs human winner: agreement, decided battles (%)",
                 "ROUGE-L preference vs human winner: Cohen's kappa, decided battles")
F8_NOT_RUN = ("the nugget records carry no response texts and retrieved chunks (fields answer_text and chunks, which "
              "nuggets.pipeline.run_pipeline writes)")


def f8_numbers(summary: Mapping[str, float], scored: int, sampled: int, total: int, kind: str) -> list[Number]:
    """NG-F8: agreement and κ on the decided battles (``summary``: :func:`nuggets.rouge.alignment_summary`);
    ``scored`` battles carried responses and chunks among the ``sampled`` of ``total``."""
    covered = (f"{scored:,} of {sampled:,} battles scored carry responses and chunks"
               + (f" (a random {sampled:,} of {total:,})" if sampled < total else ""))
    return [Number(F8_QUANTITIES[0], summary["agreement_pct"], data=kind,
                   note=f"{summary['battles']:,.0f} decided battles; {covered}"),
            Number(F8_QUANTITIES[1], summary["kappa"], data=kind)]
