"""The usability study and the paper's source tables, recorded against the paper: Table 1's findings (AE-T1),
Table 2's cited share (AE-T2), Fig 6 as Table 3 implies it (AE-F6) and the t-tests of Tables 3–5 (AE-T34,
AE-T5). Each ``*_numbers`` function turns an analysis result of :mod:`analysis_lib.answer_engine` into the
numbers the book records (quantity labels, notes, data kinds); each ``*_table`` gives the result with readable
column names."""

from __future__ import annotations

import polars as pl

from analysis_lib.answer_engine import implied as f6
from analysis_lib.answer_engine.findings import COMPONENTS, FindingsCheck, share_bounds
from analysis_lib.answer_engine.scorecard import display_name
from bookbuild.sections import Number, Table


def t1_numbers(chk: FindingsCheck) -> list[Number]:
    """AE-T1: Table 1's counts (transcribed: the coded interviews were not released) and what the checks of
    :func:`analysis_lib.answer_engine.check_findings` found, with the share of each partly counted finding
    among all final-study participants at both extremes."""
    partial = ", ".join(f"{fid} ({c}/{n})" for fid, c, n in chk.partial) or "none"
    numbers = [Number("AE-T1", "findings in Table 1", chk.n_findings, data="transcribed"),
               Number("AE-T1", "findings per component (answer text, citation, sources, user interface)",
                      ", ".join(str(chk.per_component[c]) for c in COMPONENTS), data="transcribed"),
               Number("AE-T1", "final-study participants (Table 8, pilot excluded)", chk.final_participants,
                      data="transcribed")]
    numbers += [Number("AE-T1", f"final-study participants who used {display_name(e)} (Table 8)", n,
                       data="transcribed") for e, n in chk.per_engine.items()]
    numbers += [Number("AE-T1", "findings with a count above its denominator or a denominator above the final study",
                       len(chk.out_of_range), note=", ".join(chk.out_of_range), data="checked"),
                Number("AE-T1", "findings whose Table 1 count differs from its §3.3 heading", len(chk.text_mismatch),
                       note=", ".join(chk.text_mismatch), data="checked"),
                Number("AE-T1", "findings counted out of fewer participants than the final study had",
                       len(chk.partial), note=partial, data="checked")]
    for fid, c, n in chk.partial:
        lo, hi = share_bounds(c, n, chk.final_participants)
        numbers.append(Number("AE-T1", f"{fid}: % of participants who raised it, as printed ({c}/{n})", 100 * c / n,
                              note=f"among all {chk.final_participants} final-study participants: {lo:.1f}% if the "
                                   f"uncounted one did not raise it, {hi:.1f}% if they did", data="checked"))
    return numbers


def t1_table(shares: pl.DataFrame) -> Table:
    """Table 1 as published (:func:`analysis_lib.answer_engine.findings_shares` output)."""
    shown = shares.select(pl.col("component").alias("component"), pl.col("finding_id").alias("ID"),
                          pl.col("finding").alias("finding (Table 1)"),
                          pl.format("{}/{}", "participants", "out_of").alias("participants"),
                          pl.col("share").alias("% of denominator"))
    return Table(shown, "Table 1 as published", 1)


def t2_numbers(t2: pl.DataFrame) -> list[Number]:
    """AE-T2: per engine the share of displayed sources that are cited, truncated as the paper prints it
    (:func:`analysis_lib.answer_engine.table2_cited_share` output)."""
    return [Number("AE-T2", f"{display_name(r['engine'])}: % of displayed sources cited "
                            "(mean cited / mean displayed, truncated)", r["pct_floor"],
                   note=f"unrounded {r['pct_cited']:.2f}%") for r in t2.iter_rows(named=True)]


def f6_numbers(implied: pl.DataFrame, family: f6.Family = "gamma") -> list[Number]:
    """AE-F6: per group and measure the median of the implied distribution (with the mass outside Table 3's
    range), and for the three engines together the mixture's mean and SD (``implied``:
    :func:`analysis_lib.answer_engine.implied_table` for ``family``)."""
    numbers = []
    for r in implied.iter_rows(named=True):
        name = f6.group_label(r["group"])
        kind = "mixture" if r["group"] == f6.ALL_ENGINES else family
        numbers.append(Number("AE-F6", f"{name}, {r['measure']}: median of the implied {kind}", r["implied_median"],
                              note="" if r["outside_range"] is None else
                              f"{100 * r['outside_range']:.1f}% of the implied {family} lies outside Table 3's "
                              f"[{r['min']:g}, {r['max']:g}]"))
        if r["group"] == f6.ALL_ENGINES:
            numbers += [Number("AE-F6", f"{name}, {r['measure']}: mean of the implied mixture", r["implied_mean"]),
                        Number("AE-F6", f"{name}, {r['measure']}: SD of the implied mixture", r["implied_sd"])]
    return numbers


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


def t34_numbers(comparisons: pl.DataFrame) -> list[Number]:
    """AE-T34: Table 4's tests recomputed at the participant counts, and the n the published p implies
    (``comparisons``: :func:`analysis_lib.answer_engine.usability_comparisons` output)."""
    numbers = []
    for r in comparisons.filter(pl.col("table") == "T4").iter_rows(named=True):
        versus = _versus(r["comparison"])
        numbers += [
            Number("AE-T34", f"t (pooled), {r['measure']}, Google vs {versus}, at participant counts",
                   r["t_pooled_stated_n"], note=f"p = {r['p_pooled_stated_n']:.3g} (published {r['p_published']:.3g})"
                                                f"; Welch p = {r['p_welch_stated_n']:.3g}"),
            Number("AE-T34", f"implied n per group (pooled, equal n), {r['measure']}, Google vs {versus}",
                   r["implied_n"], note=f"t at the implied n {r['t_at_implied_n']:.2f} (published "
                                        f"{r['t_published']:.2f}); df implied by the published t and p "
                                        f"{r['implied_df']:.1f}")]
    return numbers


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


def t5_numbers(comparisons: pl.DataFrame) -> list[Number]:
    """AE-T5: Table 5's test recomputed at the participants per group, and the n the published p implies."""
    numbers = []
    for r in comparisons.filter(pl.col("table") == "T5").iter_rows(named=True):
        numbers += [
            Number("AE-T5", f"p-value (pooled), {r['measure']}, aligned vs disaligned queries, "
                            f"at {r['n_1']:.0f} participants per group", r["p_pooled_stated_n"],
                   note=f"t = {r['t_pooled_stated_n']:.2f}; Welch p = {r['p_welch_stated_n']:.3g}"),
            Number("AE-T5", f"implied n per group (pooled, equal n), {r['measure']}, aligned vs disaligned queries",
                   r["implied_n"], note=f"published p {r['p_published']:.3g}")]
    return numbers


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
