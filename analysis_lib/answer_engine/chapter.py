"""The answer-engine chapter's sections that run on the paper's own numbers: the Fig 7 worked example (AE-M),
the published Fig 8a scorecard (AE-F8), the usability study's Table 1 (AE-T1), Table 2 (AE-T2), Fig 6 as
Table 3 implies it (AE-F6) and the t-tests of Tables 3–5 (AE-T34, AE-T5). The sections computed from answer
records are in :mod:`.chapter_answers`.

Each function returns a :class:`Section`: the numbers to record (:mod:`.report`), its figures and its tables
with readable column names, so a notebook cell shows them and records the numbers in a few lines. Every check
and its threshold lives here; the paper's values are in ``resources/paper_values/ae.csv``.
"""

from __future__ import annotations

import polars as pl

from analysis_lib.fetch import published
from bookbuild.sections import Figure, Number, Section, Table

from . import findings as t1
from . import implied as f6
from .metrics import CATEGORIES, Ratio, answer_metrics, figure7_example, minimum_source_covers, minimum_vertex_cover
from .metrics import source_necessity as necessity
from .plots import figure7_matrices, scorecard, sources_bars
from .plots_study import findings_bars, implied_violins
from .scorecard import Threshold, category_counts, classify_scorecard, display_name, table2_cited_share
from .usability import load_usability_tables, usability_comparisons


def _braces(cover: object) -> str:
    return "{" + ",".join(str(int(j) + 1) for j in cover) + "}"  # type: ignore[attr-defined]


def figure7_section() -> Section:
    """AE-M: the eight metrics of the Fig 7 example under the paper's definitions, its minimum source covers,
    the authors' greedy cover and the König vertex cover the text names."""
    ex = figure7_example()
    numbers = [Number("AE-M", f"{k} (fraction)" if isinstance(v, Ratio) else k, str(v) if isinstance(v, Ratio) else v)
               for k, v in answer_metrics(ex, convention="paper").items()]
    covers = minimum_source_covers(ex.support, ex.relevant)
    vc = minimum_vertex_cover(ex.support[ex.relevant])
    numbers += [
        Number("AE-M", "minimum source covers (1-based)", " or ".join(_braces(c) for c in covers)),
        Number("AE-M", "source_necessity, authors' greedy set cover",
               str(necessity(ex.support, ex.relevant, "greedy"))),
        Number("AE-M", "source_necessity, König minimum vertex cover / sources",
               str(necessity(ex.support, ex.relevant, "konig")),
               note=f"matching size {vc.matching_size} = cover size {vc.size} "
                    f"(statements {[int(i) + 1 for i in vc.rows.nonzero()[0]]}, "
                    f"sources {[int(j) + 1 for j in vc.cols.nonzero()[0]]}); a vertex cover must touch every edge")]
    fig = figure7_matrices(ex.citations, ex.support, ex.relevant,
                           title="Fig 7 example: citation and factual-support matrices")
    return Section(numbers, [Figure(fig, "published")])


def published_scorecard_section(card: pl.DataFrame, thresholds: dict[str, Threshold]) -> Section:
    """AE-F8, published: each Fig 8a percentage's Table 7 category and the number of metrics per category per
    engine (the score card's summary), with the scorecard figure."""
    classified = classify_scorecard(card, thresholds)
    numbers = [Number("AE-F8", f"{display_name(r['engine'])}: metrics {cat}, published values", r[cat])
               for r in category_counts(classified).iter_rows(named=True) for cat in CATEGORIES]
    numbers += [Number("AE-F8", f"{display_name(r['engine'])}: {r['metric']} category, published value",
                       r["category"], note=f"{r['value']:.1f}%") for r in classified.iter_rows(named=True)]
    numbers.append(most_metrics_claim(classified))
    fig = scorecard(card, thresholds, title="Fig 8a: the published scorecard in Table 7's colours")
    return Section(numbers, [Figure(fig, "published")])


def most_metrics_claim(classified: pl.DataFrame) -> Number:
    """The paper's conclusion (§7) that no engine "met acceptable performance across most metrics": holds when every
    engine is acceptable on at most half of the eight metrics (``classified``: one row per engine and metric with
    its Table 7 ``category``)."""
    acceptable = (classified.group_by("engine", maintain_order=True)
                  .agg(n=(pl.col("category") == "acceptable").sum(), of=pl.len())
                  .sort("n", descending=True, maintain_order=True))
    best = acceptable.row(0, named=True)
    holds = all(2 * r["n"] <= r["of"] for r in acceptable.iter_rows(named=True))
    return Number("AE-F8", "claim: no engine is acceptable on most of the eight metrics (published values)",
                  "holds" if holds else "does not hold", data="checked",
                  note=f"most acceptable: {display_name(best['engine'])}, {best['n']} of {best['of']}")


def table2_section() -> Section:
    """AE-T2: the share of displayed sources that are cited (mean cited / mean displayed, truncated as the
    paper prints it)."""
    t2 = table2_cited_share(pl.read_csv(published("aee_table2_sources")))
    fig = sources_bars(t2, title="Table 2: sources displayed and cited per answer")
    numbers = [Number("AE-T2", f"{display_name(r['engine'])}: % of displayed sources cited "
                               "(mean cited / mean displayed, truncated)", r["pct_floor"],
                      note=f"unrounded {r['pct_cited']:.2f}%") for r in t2.iter_rows(named=True)]
    return Section(numbers, [Figure(fig, "published")])


def findings_section() -> Section:
    """AE-T1: Table 1 as published, with what can be checked against §3.1, §3.3 and Table 8."""
    table, people = t1.load_findings(), t1.load_participants()
    chk = t1.check_findings(table, people)
    partial = ", ".join(f"{fid} ({c}/{n})" for fid, c, n in chk.partial) or "none"
    # Table 1 is transcribed (nothing released behind it); its counts are checked against §3.3 and Table 8
    numbers = [Number("AE-T1", "findings in Table 1", chk.n_findings, data="transcribed"),
               Number("AE-T1", "findings per component (answer text, citation, sources, user interface)",
                      ", ".join(str(chk.per_component[c]) for c in t1.COMPONENTS), data="transcribed"),
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
        lo, hi = t1.share_bounds(c, n, chk.final_participants)
        numbers.append(Number("AE-T1", f"{fid}: % of participants who raised it, as printed ({c}/{n})", 100 * c / n,
                              note=f"among all {chk.final_participants} final-study participants: {lo:.1f}% if the "
                                   f"uncounted one did not raise it, {hi:.1f}% if they did", data="checked"))
    shares = t1.findings_shares(table)
    shown = shares.select(pl.col("component").alias("component"), pl.col("finding_id").alias("ID"),
                          pl.col("finding").alias("finding (Table 1)"),
                          pl.format("{}/{}", "participants", "out_of").alias("participants"),
                          pl.col("share").alias("% of denominator"))
    fig = findings_bars(shares, title="Table 1: participants who raised each finding")
    return Section(numbers, [Figure(fig, "published")], [Table(shown, "Table 1 as published", 1)])


def implied_section(family: f6.Family = "gamma") -> Section:
    """AE-F6: Fig 6's distributions as Table 3 implies them (a ``family`` fit to each group's mean and SD;
    the three engines together as their equal mixture), the implied medians against the published ones and
    against what §3.4's text states about the answer engines together."""
    tables = load_usability_tables()
    dists = f6.implied_distributions(tables, family)
    table = f6.implied_table(tables, family)
    numbers = []
    for r in table.iter_rows(named=True):
        name = f6.group_label(r["group"])
        kind = "mixture" if r["group"] == f6.ALL_ENGINES else family
        numbers.append(Number("AE-F6", f"{name}, {r['measure']}: median of the implied {kind}", r["implied_median"],
                              note="" if r["outside_range"] is None else
                              f"{100 * r['outside_range']:.1f}% of the implied {family} lies outside Table 3's "
                              f"[{r['min']:g}, {r['max']:g}]"))
        if r["group"] == f6.ALL_ENGINES:
            numbers += [Number("AE-F6", f"{name}, {r['measure']}: mean of the implied mixture", r["implied_mean"]),
                        Number("AE-F6", f"{name}, {r['measure']}: SD of the implied mixture", r["implied_sd"])]
    shown = table.select(
        pl.col("group").map_elements(f6.group_label, return_dtype=pl.String).alias("group"), "measure",
        pl.col("mean").alias("mean (paper)"), pl.col("sd").alias("SD (paper)"),
        pl.col("median").alias("median (paper)"), pl.col("implied_median").alias(f"median ({family})"),
        *[pl.col(f"{f}_median").alias(f"median ({f})") for f in f6.FAMILIES if f != family],
        (100 * pl.col("outside_range")).alias("% outside [min, max]"))
    fig = implied_violins(dists, table, family=family,
                          title=f"Fig 6 as implied by Table 3: {family} fits, not observations")
    caption = (f"Table 3's statistics beside the implied distributions' ({family} matched to mean and SD; the "
               "three engines together as their equal mixture, which Table 3 does not summarise)")
    return Section(numbers, [Figure(fig, "published")], [Table(shown, caption, 2)])


def _p(column: str) -> pl.Expr:
    """p-values to three significant digits with a true minus sign (no line break inside a number)."""
    return pl.col(column).map_elements(lambda v: f"{v:.3g}".replace("-", "\u2212"), return_dtype=pl.String)


def _versus(comparison: str) -> str:
    return comparison.removeprefix("Google vs ")


def usability_section() -> tuple[Section, Section]:
    """AE-T34 and AE-T5: the two-sample t-tests recomputed from Tables 3–5's summaries at the study's
    participant counts, and the group size and degrees of freedom the published p-values imply."""
    usability = usability_comparisons(load_usability_tables())
    engine = pl.col("comparison").map_elements(lambda c: "Google vs " + display_name(_versus(c)),
                                               return_dtype=pl.String)
    t34 = usability.filter(pl.col("table") == "T4").with_columns(engine.alias("comparison"))
    numbers = []
    for r in t34.iter_rows(named=True):
        versus = _versus(r["comparison"])
        numbers += [
            Number("AE-T34", f"t (pooled), {r['measure']}, Google vs {versus}, at participant counts",
                   r["t_pooled_stated_n"], note=f"p = {r['p_pooled_stated_n']:.3g} (published {r['p_published']:.3g})"
                                                f"; Welch p = {r['p_welch_stated_n']:.3g}"),
            Number("AE-T34", f"implied n per group (pooled, equal n), {r['measure']}, Google vs {versus}",
                   r["implied_n"], note=f"t at the implied n {r['t_at_implied_n']:.2f} (published "
                                        f"{r['t_published']:.2f}); df implied by the published t and p "
                                        f"{r['implied_df']:.1f}")]
    shown = t34.select(
        pl.col("comparison").str.strip_prefix("Google vs ").alias("Google vs"), "measure",
        pl.format("{}\u00a0vs\u00a0{}", pl.col("n_1").cast(pl.Int64), pl.col("n_2").cast(pl.Int64)).alias("n"),
        pl.col("t_published").alias("t (paper)"), pl.col("t_pooled_stated_n").alias("t"),
        _p("p_published").alias("p (paper)"), _p("p_pooled_stated_n").alias("p"),
        pl.col("implied_n").alias("implied n"), pl.col("implied_df").alias("implied df"))
    caption = ("Table 4 recomputed from Table 3's means and SDs with the pooled test at the participant counts n, "
               "and the n and df the paper's p implies")
    sec34 = Section(numbers, [], [Table(shown, caption, 2)])
    t5 = usability.filter(pl.col("table") == "T5")
    numbers = []
    for r in t5.iter_rows(named=True):
        numbers += [
            Number("AE-T5", f"p-value (pooled), {r['measure']}, aligned vs disaligned queries, "
                            f"at {r['n_1']:.0f} participants per group", r["p_pooled_stated_n"],
                   note=f"t = {r['t_pooled_stated_n']:.2f}; Welch p = {r['p_welch_stated_n']:.3g}"),
            Number("AE-T5", f"implied n per group (pooled, equal n), {r['measure']}, aligned vs disaligned queries",
                   r["implied_n"], note=f"published p {r['p_published']:.3g}")]
    shown = t5.select(
        "measure", pl.format("{} ({})", "mean_1", "sd_1").alias("disaligned: mean (SD)"),
        pl.format("{} ({})", "mean_2", "sd_2").alias("aligned: mean (SD)"),
        pl.col("n_1").cast(pl.Int64).alias("n per group"), pl.col("t_pooled_stated_n").alias("t"),
        _p("p_published").alias("p (paper)"), _p("p_pooled_stated_n").alias("p"),
        pl.col("implied_n").alias("implied n"))
    sec5 = Section(numbers, [], [Table(shown, "Table 5's test recomputed with the pooled test at n participants per "
                                              "group, and the n the paper's p implies", 2)])
    return sec34, sec5
