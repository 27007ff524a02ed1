"""Chapter 07's tables laid out for reading: short column names that say what a column holds and in which unit,
values rounded as the paper prints them, few enough columns to fit the page; and NG-N's worked example, a table
whose scores a reader checks by hand."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import polars as pl

from analysis_lib.nuggets.scores import (
    ASSIGNMENT_ORDER,
    AssignedNugget,
    Assignment,
    Importance,
    Nugget,
    cap_nuggets,
    nugget_preference,
    nugget_scores,
)

VARIANT_NAMES = {"with_urls": "URLs + responses", "responses_only": "responses only"}

#: NG-N's worked example: (nugget, importance, assignment in response A, assignment in response B)
WORKED_EXAMPLE = (
    ("Paris is the capital of France", "vital", "support", "support"),
    ("Paris has about 2.1 million inhabitants", "vital", "partial_support", "support"),
    ("The Seine flows through Paris", "okay", "support", "not_support"),
    ("Paris hosted the 2024 Summer Olympics", "vital", "not_support", "partial_support"),
    ("The Louvre is the most visited museum", "okay", "partial_support", "not_support"),
    ("Paris is divided into 20 arrondissements", "okay", "not_support", "support"),
)


class WorkedExample(NamedTuple):
    """NG-N's hand-checkable numbers: the four scores of each response (``a``, ``b``), ``diff`` = All_B − All_A,
    the nugget ``preference`` at ``threshold``, and the 30-nugget cap applied to 12 vital + 25 okay nuggets
    (``cap``: what it keeps)."""

    a: dict[str, float]
    b: dict[str, float]
    diff: float
    preference: str
    threshold: float
    cap: str


def worked_example(tie_threshold: float) -> WorkedExample:
    """:data:`WORKED_EXAMPLE` scored (:func:`~analysis_lib.nuggets.scores.nugget_scores`), its preference at
    ``tie_threshold`` and the cap's example."""
    a, b = (nugget_scores([AssignedNugget(Nugget(t, Importance(imp)), Assignment(x[k]))
                           for t, imp, *x in WORKED_EXAMPLE]) for k in (0, 1))
    capped = cap_nuggets([Nugget(f"v{i}", Importance.VITAL) for i in range(12)]
                         + [Nugget(f"o{i}", Importance.OKAY) for i in range(25)])
    vital = sum(n.importance == "vital" for n in capped)
    return WorkedExample(a, b, b["all"] - a["all"], nugget_preference([a["all"]], [b["all"]], tie_threshold)[0],
                         tie_threshold, f"{vital} vital + {len(capped) - vital} okay")


def worked_example_table() -> pl.DataFrame:
    """NG-N's worked example as a table (nugget, importance, the two responses' assignments)."""
    return pl.DataFrame(list(WORKED_EXAMPLE), schema=["nugget", "importance", "response A", "response B"],
                        orient="row")


def _fmt(expr: pl.Expr, spec: str) -> pl.Expr:
    return expr.map_elements(lambda v: format(v, spec), return_dtype=pl.String)


def ks_check_table(check: pl.DataFrame) -> pl.DataFrame:
    """The published-K-S check (:func:`nuggets.published.ks_consistency`): which nuggets, which groups, the
    published D and p, the group sizes, the exact p over the D that round to the published one, and whether the
    published p lies in that range."""
    return check.select(
        pl.col("variant").replace_strict(VARIANT_NAMES, default=pl.col("variant")).alias("nuggets from"),
        pl.col("comparison").alias("groups"),
        _fmt(pl.col("ks_statistic"), ".3f").alias("D (paper)"),
        _fmt(pl.col("p_value"), ".1e").alias("p (paper)"),
        pl.format("{} / {}", pl.col("n_1"), pl.col("n_2")).alias("n₁ / n₂"),
        pl.format("{} – {}", _fmt(pl.col("p_at_d_max"), ".1e"), _fmt(pl.col("p_at_d_min"), ".1e"))
        .alias("exact p for that D"),
        pl.when(pl.col("consistent")).then(pl.lit("yes")).otherwise(pl.lit("no")).alias("p follows"),
    )


def sweep_table(sweep: pl.DataFrame) -> pl.DataFrame:
    """The threshold sweep (:func:`nuggets.agreement.threshold_sweep`): κ, agreements, inversions and how the
    human ties split (the paper picks the threshold closest to an even split of that row)."""
    pct = 100 * pl.col("tie_row_a"), 100 * pl.col("tie_row_tie"), 100 * pl.col("tie_row_b")
    return sweep.select(
        _fmt(pl.col("threshold"), "g").alias("threshold"),
        pl.col("kappa").round(3).alias("κ"),
        pl.col("agreements_a").alias("agree A"),
        pl.col("agreements_b").alias("agree B"),
        pl.col("inversions"),
        (100 * pl.col("inversion_rate")).round(1).alias("inversions (%)"),
        pl.format("{} / {} / {}", *(_fmt(p, ".0f") for p in pct)).alias("human ties → A / tie / B (%)"),
    )


def inversion_display(table: pl.DataFrame) -> pl.DataFrame:
    """Table 1 rows (:func:`nuggets.agreement.inversion_table`, optionally with ``subset_type``): shares in % to
    one decimal, κ to three."""
    first = ["subset_type"] if "subset_type" in table.columns else []
    return table.select(
        *(pl.col(c).str.replace("_", " ").alias("by") for c in first),
        "subset", "battles", "inversions",
        pl.col("inversion_pct").round(1).alias("inversions (%)"),
        pl.col("agreement_a_pct").round(1).alias("agree A (%)"),
        pl.col("agreement_b_pct").round(1).alias("agree B (%)"),
        pl.col("kappa").round(3).alias("κ"),
    )


def assignment_table(table: np.ndarray) -> pl.DataFrame:
    """NG-F7's 3 × 3 table of two models' assignments (rows: first model, columns: second)."""
    return pl.DataFrame({"first \\ second": list(ASSIGNMENT_ORDER),
                         **{x: table[:, k].tolist() for k, x in enumerate(ASSIGNMENT_ORDER)}})
