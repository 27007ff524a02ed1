"""The DR-Arena chapter's sections on published tables with nothing released behind them: DR-T4 (Table 4),
DR-T5 (Table 5) and DR-T7 (Table 7). Each returns a :class:`Section`: the numbers to record, the tables to show
(readable column names) and the figures; the checks, their thresholds and the not-run reasons live here, the
paper's values in ``resources/paper_values/dr.csv``.
"""

from __future__ import annotations

import polars as pl

from analysis_lib.plotting import scatter_fit
from analysis_lib.stats import leaderboard_correlations
from bookbuild.sections import Figure, Number, Section, Table, not_run

from . import human_studies as hs

#: Why Table 4's other rows cannot be shown.
T4_MISSING = ("Table 4's body is not in the paper's text as we have it: the prose gives DR-Arena's values and, "
              "for FutureSearch and LiveResearchBench, only the sign")
T4_QUANTITIES = ("Spearman rho of every other benchmark with Search Arena",
                 "Pearson r of every other benchmark with Search Arena",
                 "models per benchmark (N)")


def table3_section(t3: pl.DataFrame) -> Section:
    """DR-T3: Spearman and Pearson between the two Elo columns of Table 3 (scipy), the Spearman from the published
    rank columns, the p-values, the pairs ordered differently, and Fig 3's scatter."""
    agree = leaderboard_correlations(t3)
    numbers = [
        Number("DR-T3", "Spearman rho, Search Arena vs DR-Arena Elo", agree.spearman, data="published"),
        Number("DR-T3", "Pearson r, Search Arena vs DR-Arena Elo", agree.pearson, data="published"),
        Number("DR-T3", "Spearman rho from the published rank columns", agree.spearman_published_ranks,
               data="published"),
        Number("DR-T3", "Spearman p-value (scipy, t approximation)", agree.spearman_p, data="published"),
        Number("DR-T3", "Pearson p-value", agree.pearson_p, data="published"),
        Number("DR-T3", "model pairs ordered differently", agree.n_rank_swaps, data="published"),
    ]
    fig = scatter_fit(t3["search_arena_elo"].to_numpy(), t3["dr_arena_elo"].to_numpy(), labels=t3["model"].to_list(),
                      xlabel="Search Arena Elo", ylabel="DR-Arena Elo",
                      title=f"Fig 3 (from Table 3): Spearman {agree.spearman:.3f}, Pearson {agree.pearson:.3f}")
    return Section(numbers, [Figure(fig, "published")])


def table4_section(t3: pl.DataFrame) -> Section:
    """DR-T4: DR-Arena's row of Table 4 recomputed from Table 3 (``t3``, the published leaderboards), the signs the
    prose states for two benchmarks, and the rest of the table as not run (missing from the text)."""
    t4 = hs.table4()
    agree = leaderboard_correlations(t3)
    stated = t4.filter(pl.col("sign_stated").is_not_null())
    numbers = [
        # Table 4's body is not published: its DR-Arena row checked against Table 3, the prose's signs transcribed
        Number("DR-T4", "DR-Arena: Spearman rho with Search Arena (from Table 3)", agree.spearman, data="checked",
               note=f"{t3.height} models"),
        Number("DR-T4", "DR-Arena: Pearson r with Search Arena (from Table 3)", agree.pearson, data="checked"),
        Number("DR-T4", "benchmarks stated to correlate negatively with Search Arena", stated.height,
               data="transcribed", note="; ".join(stated["benchmark"].to_list())),
        *not_run("DR-T4", T4_QUANTITIES, T4_MISSING),
    ]
    shown = t4.with_columns(pl.col("n_models").cast(pl.String)).rename(
        {"benchmark": "benchmark", "spearman": "Spearman ρ", "pearson": "Pearson r", "n_models": "N",
         "sign_stated": "sign stated in the prose"})
    caption = ("Table 4 as far as the paper's text states it; an empty cell is a number missing from the text, "
               "not a zero.")
    return Section(numbers, [], [Table(shown.fill_null("—"), caption)])


def table5_section() -> Section:
    """DR-T5: Table 5 shown, with the checks the shares must pass: each column sums to 100 % (one choice of
    three per case), and each share is a whole count of the selections (50 cases; 100 votes of two
    annotators)."""
    t5 = hs.table5()
    sums = hs.column_sums(t5)
    long = hs.table5_long(t5)
    of_cases = sum(hs.reachable(v, hs.T5_CASES) for v in long["value"])
    votes = hs.T5_CASES * hs.T5_ANNOTATORS
    of_votes = sum(hs.reachable(v, votes) for v in long["value"])
    best = all(t5.sort(c, descending=True)["configuration"][0] == "Full Tree" for c in sums)
    numbers = [
        Number("DR-T5", "question quality: shares summed (%)", sums["question_quality"], data="checked"),
        Number("DR-T5", "rubric accuracy: shares summed (%)", sums["rubric_accuracy"], data="checked"),
        Number("DR-T5", f"shares that are a whole count of the {hs.T5_CASES} cases", of_cases, data="checked",
               note=f"of {long.height}"),
        Number("DR-T5", f"shares that are a whole count of {votes} votes ({hs.T5_CASES} cases, "
                        f"{hs.T5_ANNOTATORS} annotators)", of_votes, data="checked", note=f"of {long.height}"),
        Number("DR-T5", "smallest number of selections giving every share",
               hs.smallest_denominator(long["value"].to_list()), data="checked"),
        Number("DR-T5", "claim: the full tree is selected most often in both columns",
               "holds" if best else "does not hold", data="checked"),
    ]
    shown = t5.rename({"configuration": "configuration", "question_quality": "question quality (%)",
                       "rubric_accuracy": "rubric accuracy (%)"})
    reach = hs.reachability_table(long, "cell", {f"of {hs.T5_CASES} cases": hs.T5_CASES, f"of {votes} votes": votes})
    return Section(numbers, [], [Table(shown, "Table 5 as published (50 cases).", 1),
                                 Table(reach, "Each share as a whole count of the selections (— : none gives it).", 1)])


def table7_section() -> Section:
    """DR-T7: Table 7 shown, with the counts its percentages imply: which are ``k/64`` (turns) or ``k/30``
    (matches), and the smallest number of judgements that gives all four. Cohen's κ needs the annotations."""
    t7 = hs.table7()
    pct = hs.table7_percentages(t7)
    values = pct["value"].to_list()
    stop = float(pct.filter(pl.col("criterion").str.starts_with("Stop"))["value"][0])
    numbers = [
        Number("DR-T7", f"percentages that are a whole count of the {hs.T7_TURNS} turns",
               sum(hs.reachable(v, hs.T7_TURNS) for v in values), data="checked", note=f"of {len(values)}"),
        Number("DR-T7", f"percentages that are a whole count of the {hs.T7_MATCHES} matches",
               sum(hs.reachable(v, hs.T7_MATCHES) for v in values), data="checked", note=f"of {len(values)}"),
        Number("DR-T7", "smallest number of judgements giving every percentage", hs.smallest_denominator(values),
               data="checked"),
        Number("DR-T7", "stop efficiency as a count of the matches", _count_text(stop, hs.T7_MATCHES),
               data="checked", note=f"as turns: {_count_text(stop, hs.T7_TURNS)}"),
        *not_run("DR-T7", ["verdict agreement, Cohen's kappa, recomputed"],
                 "needs the annotators' verdicts for the 64 audited turns, which are not released"),
    ]
    reach = hs.reachability_table(pct, "criterion", {f"of {hs.T7_MATCHES} matches": hs.T7_MATCHES,
                                                      f"of {hs.T7_TURNS} turns": hs.T7_TURNS})
    shown = t7.rename({"component": "component", "criterion": "criterion", "result": "result", "unit": "unit"})
    return Section(numbers, [], [Table(shown, "Table 7 as published (30 matches, 64 turns).", 2),
                                 Table(reach, "Each percentage as a whole count (— : none gives it).", 1)])


def _count_text(percent: float, n: int) -> str:
    k = hs.implied_count(percent, n)
    return f"{k}/{n}" if k is not None else f"none of k/{n}"
