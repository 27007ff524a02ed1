"""The usability study and the paper's source tables: Table 1's findings (AE-T1), Table 2's cited share (AE-T2), Fig
6 as Table 3 implies it (AE-F6) and the t-tests of Tables 3–5 (AE-T34, AE-T5). Their numbers are recorded by path
(``bookbuild/resources/paper_values/ae.csv``) from the analyses' results of :mod:`analysis_lib.answer_engine`
(:func:`t1_result` adds the counts and notes of Table 1's checks); each ``*_table`` gives a result with readable
column names."""

from __future__ import annotations

import polars as pl

from analysis_lib.answer_engine import implied as f6
from analysis_lib.answer_engine.findings import FindingsCheck
from analysis_lib.answer_engine.scorecard import display_name
from bookbuild.sections import Table


def t1_result(chk: FindingsCheck) -> dict[str, object]:
    """AE-T1 as recorded: Table 1's counts (transcribed: the coded interviews were not released) and what the checks
    of :func:`analysis_lib.answer_engine.check_findings` found, counted, with the findings they name for the notes,
    and each partly counted finding's share (``FindingsCheck.partial_shares``)."""
    return {"check": chk, "per_component": ", ".join(map(str, chk.per_component.values())),
            "out_of_range": len(chk.out_of_range), "out_of_range_ids": ", ".join(chk.out_of_range),
            "mismatch": len(chk.text_mismatch), "mismatch_ids": ", ".join(chk.text_mismatch),
            "partial": len(chk.partial), "shares": chk.partial_shares,
            "partial_ids": ", ".join(f"{fid} ({c}/{n})" for fid, c, n in chk.partial) or "none"}


def t1_table(shares: pl.DataFrame) -> Table:
    """Table 1 as published (:func:`analysis_lib.answer_engine.findings_shares` output)."""
    shown = shares.select(pl.col("component").alias("component"), pl.col("finding_id").alias("ID"),
                          pl.col("finding").alias("finding (Table 1)"),
                          pl.format("{}/{}", "participants", "out_of").alias("participants"),
                          pl.col("share").alias("% of denominator"))
    return Table(shown, "Table 1 as published", 1)


def f6_table(implied: pl.DataFrame, family: f6.Family = "gamma") -> Table:
    """Table 3's statistics beside the implied distributions' medians (both families)."""
    shown = implied.select(
        pl.col("group").map_elements(f6.group_label, return_dtype=pl.String).alias("group"), "measure",
        pl.col("mean").alias("mean (paper)"), pl.col("sd").alias("SD (paper)"),
        pl.col("median").alias("median (paper)"), pl.col("implied_median").alias(f"median ({family})"),
        *[pl.col(f"{f}_median").alias(f"median ({f})") for f in f6.FAMILIES if f != family],
        (100 * pl.col("outside_range")).alias("% outside [min, max]"))
    caption = (f"Table 3's statistics beside the implied distributions' ({family} matched to mean and SD; the "
               "three engines together as their equal mixture, which Table 3 does not summarise)")
    return Table(shown, caption, 2)


def _p(column: str) -> pl.Expr:
    """p-values to three significant digits with a true minus sign (no line break inside a number)."""
    return pl.col(column).map_elements(lambda v: f"{v:.3g}".replace("-", "\u2212"), return_dtype=pl.String)


def _versus(comparison: str) -> str:
    return display_name(comparison.removeprefix("Google vs "))


def t34_table(comparisons: pl.DataFrame) -> Table:
    """Table 4 recomputed beside the published t and p."""
    shown = comparisons.filter(pl.col("table") == "T4").select(
        pl.col("comparison").map_elements(_versus, return_dtype=pl.String).alias("Google vs"), "measure",
        pl.format("{}\u00a0vs\u00a0{}", pl.col("n_1").cast(pl.Int64), pl.col("n_2").cast(pl.Int64)).alias("n"),
        pl.col("t_published").alias("t (paper)"), pl.col("t_pooled_stated_n").alias("t"),
        _p("p_published").alias("p (paper)"), _p("p_pooled_stated_n").alias("p"),
        pl.col("implied_n").alias("implied n"), pl.col("implied_df").alias("implied df"))
    caption = ("Table 4 recomputed from Table 3's means and SDs with the pooled test at the participant counts n, "
               "and the n and df the paper's p implies")
    return Table(shown, caption, 2)


def t5_table(comparisons: pl.DataFrame) -> Table:
    """Table 5's test recomputed beside the published p."""
    shown = comparisons.filter(pl.col("table") == "T5").select(
        "measure", pl.format("{} ({})", "mean_1", "sd_1").alias("disaligned: mean (SD)"),
        pl.format("{} ({})", "mean_2", "sd_2").alias("aligned: mean (SD)"),
        pl.col("n_1").cast(pl.Int64).alias("n per group"), pl.col("t_pooled_stated_n").alias("t"),
        _p("p_published").alias("p (paper)"), _p("p_pooled_stated_n").alias("p"),
        pl.col("implied_n").alias("implied n"))
    return Table(shown, "Table 5's test recomputed with the pooled test at n participants per group, and the n "
                        "the paper's p implies", 2)
