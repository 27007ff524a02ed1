"""The numbers chapter 07 records for the nugget papers' sections NG-A1 to NG-T2 (:class:`bookbuild.sections.Number`).

Each function takes what an analysis of :mod:`analysis_lib.nuggets` returned and gives the numbers of one section:
the quantity (the key of the paper-values table, ``bookbuild/resources/paper_values/ng.csv``), our value, a note
and, where it differs from the chapter's default, the data kind (``published`` for the paper's own matrices,
``none`` for a worked example, ``checked`` for a check of the paper's numbers against each other). Labels that
depend on a parameter are built from it (the tie threshold, sample sizes), and a quantity the paper reports *at* a
parameter value keeps the paper's value: the per-battle κ and agreement shares that NG-F4 compares with the paper
are computed at the paper's tie threshold whatever the chapter's ``tie_threshold`` (which its figures and tables
use), and a number computed at another threshold says so in its note (:func:`threshold_note`).
"""

from __future__ import annotations

from collections.abc import Mapping
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
from bookbuild.sections import Number

PUBLISHED = "published"
#: A check of a published number against another (it checks the paper; it does not reproduce a figure).
CHECKED = "checked"


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
    return [Number("NG-A1", q, v, data=kind,
                   note=A1_SIMULATED_NOTE if q == "single-turn battles" and kind == "simulated" else "")
            for q, v in shares.items()]


#: NG-N's worked example: (nugget, importance, assignment in response A, assignment in response B)
WORKED_EXAMPLE = (
    ("Paris is the capital of France", "vital", "support", "support"),
    ("Paris has about 2.1 million inhabitants", "vital", "partial_support", "support"),
    ("The Seine flows through Paris", "okay", "support", "not_support"),
    ("Paris hosted the 2024 Summer Olympics", "vital", "not_support", "partial_support"),
    ("The Louvre is the most visited museum", "okay", "partial_support", "not_support"),
    ("Paris is divided into 20 arrondissements", "okay", "not_support", "support"),
)


def worked_example_numbers(tie_threshold: float) -> list[Number]:
    """NG-N's hand-checkable numbers: the four scores of both responses, their nugget preference at
    ``tie_threshold`` and the 30-nugget cap applied to 12 vital + 25 okay nuggets."""
    scores = {name: nugget_scores([AssignedNugget(Nugget(t, Importance(imp)), Assignment(x[k]))
                                   for t, imp, *x in WORKED_EXAMPLE]) for k, name in ((0, "A"), (1, "B"))}
    out = [Number("NG-N", f"worked example, response {n}: {metric}", v, data="none")
           for n in ("A", "B") for metric, v in scores[n].items()]
    diff = scores["B"]["all"] - scores["A"]["all"]
    out.append(Number("NG-N", "worked example: nugget preference",
                      nugget_preference([scores["A"]["all"]], [scores["B"]["all"]], tie_threshold)[0], data="none",
                      note=f"threshold {tie_threshold}; score_B − score_A = {diff:+.3f}"))
    capped = cap_nuggets([Nugget(f"v{i}", Importance.VITAL) for i in range(12)]
                         + [Nugget(f"o{i}", Importance.OKAY) for i in range(25)])
    out.append(Number("NG-N", "cap: 12 vital + 25 okay nuggets kept as",
                      f"{sum(n.importance == 'vital' for n in capped)} vital + "
                      f"{sum(n.importance == 'okay' for n in capped)} okay", data="none"))
    return out


def n_numbers(summary: Mapping[str, float], records: NuggetRecords, n_scored: int,
              planted: Mapping[str, Any]) -> list[Number]:
    """NG-N on the records: nuggets per battle, battles at the cap, vital share, battles excluded
    (``summary``: :func:`nuggets.score_summary`; ``planted``: the simulator's, empty on real records)."""
    excluded = ", ".join(f"{v:,} {k.removeprefix('battles ')}" for k, v in records.excluded.items())
    failed = sum(v for k, v in records.excluded.items() if "failed" in k)
    return [
        Number("NG-N", "nuggets per battle (mean)", summary["mean nuggets per battle"],
               planted=planted.get("mean_nuggets")),
        Number("NG-N", "battles reaching the 30-nugget cap", summary["battles reaching the 30-nugget cap"],
               note=f"of {n_scored:,} battles"),
        Number("NG-N", "vital share of nuggets", summary["vital share of nuggets"], planted=planted.get("vital_share")),
        Number("NG-N", "battles excluded (failed nuggetizer steps)", failed, note="all exclusions: " + excluded),
    ]


# ------------------------------------------------------------------------------------------------ NG-F3, NG-F2

def f3_numbers(groups: Mapping[str, np.ndarray]) -> list[Number]:
    """NG-F3: battles in the densities and the mean score difference per human vote."""
    return [Number("NG-F3", "battles in the densities (both-bad excluded)", sum(g.size for g in groups.values())),
            *(Number("NG-F3", f"mean score difference, human {v}", float(np.mean(g))) for v, g in groups.items())]


def f2_numbers(ks: pl.DataFrame) -> list[Number]:
    """NG-F2: D and p of the three pairwise K-S tests (:func:`nuggets.ks_by_vote`)."""
    out = []
    for r in ks.iter_rows(named=True):
        c = f"{r['group_1']} vs {r['group_2']}"
        out += [Number("NG-F2", f"K-S D, {c}", r["ks_statistic"], note=f"n = {r['n_1']:,} and {r['n_2']:,}"),
                Number("NG-F2", f"K-S p, {c}", r["p_value"])]
    return out


def ks_check_numbers(check: pl.DataFrame) -> list[Number]:
    """NG-F2's check of the published statistics (:func:`nuggets.ks_consistency`)."""
    return [Number("NG-F2", f"published p follows from D and the group sizes ({r['variant']}, {r['comparison']})",
                   "yes" if r["consistent"] else "no", data=CHECKED,
                   note=f"exact p over D in [{r['d_min']:.5f}, {r['d_max']:.5f}]: "
                        f"{r['p_at_d_max']:.2e} to {r['p_at_d_min']:.2e}")
            for r in check.iter_rows(named=True)]


# ------------------------------------------------------------------------------------------------ NG-F4, NG-F5

def f4_published_numbers(overall: NuggetConfusion) -> list[Number]:
    """NG-F4 from the published Figure 4 matrix: κ, agreements, row totals, shares, the both-bad sensitivity."""
    rows = overall.row_totals
    return [Number("NG-F4", q, v, data=PUBLISHED) for q, v in (
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
    """NG-F4 from the nugget records (``scores``: :func:`nuggets.battle_scores`) at the paper's tie threshold, the
    numbers it compares with the paper; ``planted_kappa`` is the κ the simulator was calibrated to (None on real
    records)."""
    at_paper = confusion(scores["winner"].to_numpy(), preferences(scores, TIE_THRESHOLD))
    note = "" if np.isclose(tie_threshold, TIE_THRESHOLD) else (
        f"at the paper's tie threshold {TIE_THRESHOLD:g}, to compare with the paper (this page's figures and tables "
        f"use {threshold_label(tie_threshold)})")
    planted = "planted = the κ of the published matrix the simulator was calibrated to" if planted_kappa is not None \
        else ""
    return [
        Number("NG-F4", f"per-battle: weighted kappa at threshold {TIE_THRESHOLD:g}", at_paper.kappa(),
               planted=planted_kappa, note="; ".join(n for n in (note, planted) if n)),
        Number("NG-F4", "per-battle: agreement share, model_a (%)", 100 * at_paper.agreement_share_a, note=note),
        Number("NG-F4", "per-battle: agreement share, model_b (%)", 100 * at_paper.agreement_share_b, note=note),
    ]


def sweep_numbers(sweep: pl.DataFrame) -> list[Number]:
    """NG-F4's sweep: the lowest and highest κ over the swept thresholds (labelled with their range)."""
    ts = sweep["threshold"].to_numpy()
    lo, hi = threshold_label(float(ts.min())), threshold_label(float(ts.max()))
    return [Number("NG-F4", f"per-battle: lowest kappa across thresholds {lo}-{hi}", sweep["kappa"].min()),
            Number("NG-F4", f"per-battle: highest kappa across thresholds {lo}-{hi}", sweep["kappa"].max())]


def f5_numbers(f5: NuggetConfusion) -> list[Number]:
    """NG-F5 from the published responses-only matrix (Figure 5)."""
    return [
        Number("NG-F5", "agreement share, model_a (%)", 100 * f5.agreement_share_a, data=PUBLISHED,
               note=f"{f5.agreements_a} of {f5.row_totals['model_a']}"),
        Number("NG-F5", "agreement share, model_b (%)", 100 * f5.agreement_share_b, data=PUBLISHED,
               note=f"{f5.agreements_b} of {f5.row_totals['model_b']}"),
        Number("NG-F5", "weighted kappa (quadratic, both-bad excluded)", f5.kappa(), data=PUBLISHED),
        Number("NG-F5", "battles in the matrix", f5.n, data=PUBLISHED),
    ]


# ------------------------------------------------------------------------------------------------ NG-T1, NG-B

def t1_published_numbers(table: pl.DataFrame) -> list[Number]:
    """NG-T1 from one side of the published Table 1 (:func:`nuggets.inversion_table`)."""
    out = []
    for r in table.iter_rows(named=True):
        out += [Number("NG-T1", f"{r['subset']}: battles", r["battles"], data=PUBLISHED),
                Number("NG-T1", f"{r['subset']}: inversion (%)", r["inversion_pct"], data=PUBLISHED,
                       note=f"{r['inversions']} of {r['battles']}")]
    return out


def t1_overall_numbers(overall: NuggetConfusion, ours: NuggetConfusion, tie_threshold: float) -> list[Number]:
    """NG-T1's overall inversion rate: the published Figure 4 matrix, and the records at ``tie_threshold``."""
    where = threshold_note(tie_threshold)
    return [Number("NG-T1", "overall inversion (%)", 100 * overall.inversion_rate, data=PUBLISHED,
                   note=f"{overall.inversions} of {overall.n}"),
            Number("NG-T1", "per-battle: overall inversion (%)", 100 * ours.inversion_rate,
                   note=f"{ours.inversions} of {ours.n}" + (f" {where}" if where else ""))]


def b_numbers(confusions: Mapping[tuple[str, str], NuggetConfusion], kappas: pl.DataFrame,
              top_classes: list[str]) -> list[Number]:
    """NG-B from the published matrices: the knowledge-intensive example, every subset's κ (``kappas``:
    :func:`nuggets.kappa_table`) and the three classes of highest κ apart from harmful (``top_classes``,
    :func:`bookbuild.papers.nuggets.claims.top_classes`)."""
    ki = confusions[("query_category", "knowledge-intensive")]
    out = [Number("NG-B", "knowledge-intensive: weighted kappa", ki.kappa(), data=PUBLISHED),
           Number("NG-B", "knowledge-intensive: agreement share, model_a (%)", 100 * ki.agreement_share_a,
                  data=PUBLISHED),
           Number("NG-B", "knowledge-intensive: agreement share, model_b (%)", 100 * ki.agreement_share_b,
                  data=PUBLISHED)]
    out += [Number("NG-B", f"{r['subset_type']} {r['subset']}: weighted kappa", r["kappa"], data=PUBLISHED)
            for r in kappas.filter(pl.col("subset") != "all").iter_rows(named=True)]
    classes = kappas.filter(pl.col("subset_type") == "query_category").sort("kappa", descending=True)
    best = classes.row(0, named=True) if classes.height else None
    note = (f"{best['subset']} ({best['battles']} battles) has the highest κ of all"
            if best is not None and best["subset"] not in top_classes else "")
    out.append(Number("NG-B", "three query classes with the highest kappa (excluding harmful)",
                      ", ".join(sorted(top_classes)), data=PUBLISHED, note=note))
    return out


def b_record_numbers(mine: Mapping[tuple[str, str], NuggetConfusion], tie_threshold: float) -> list[Number]:
    """NG-B from the nugget records (``mine``: :func:`nuggets.subset_confusions` at ``tie_threshold``): the
    knowledge-intensive κ, when the records have that class."""
    ki = mine.get(("query_category", "knowledge-intensive"))
    return [] if ki is None else [Number("NG-B", "per-battle: knowledge-intensive weighted kappa", ki.kappa(),
                                         note=threshold_note(tie_threshold))]


# ------------------------------------------------------------------------------------------------ NG-T2

def t2_numbers(jaccard: pl.DataFrame, cosine: pl.DataFrame, population: int,
               precision: encoder.Precision = "auto") -> list[Number]:
    """NG-T2: mean and sd of the per-battle Jaccard (all battles) and cosine (the sampled battles, embedded by the
    offline encoder at ``precision``, named in the note)."""
    j, c = jaccard["jaccard"].fill_nan(None), cosine["cosine"].fill_nan(None)
    sampled = f"{cosine.height:,} battles sampled" if cosine.height < population else f"all {population:,} battles"
    sampled += f"; {encoder.label(precision)}"
    return [Number("NG-T2", "within-battle nugget Jaccard, mean", j.mean(), note=f"{jaccard.height:,} battles"),
            Number("NG-T2", "within-battle nugget Jaccard, sd", j.std()),
            Number("NG-T2", "within-battle nugget cosine, mean", c.mean(), note=sampled),
            Number("NG-T2", "within-battle nugget cosine, sd", c.std())]
