"""The book's side of the DR-Arena chapter's sections on published tables: DR-T3 (Table 3, Fig 3), DR-T4 (Table 4),
DR-T5 (Table 5) and DR-T7 (Table 7): the numbers recorded from the analyses' results
(:func:`analysis_lib.stats.leaderboard_correlations`, :func:`analysis_lib.dr_arena.table5_check`,
:func:`analysis_lib.dr_arena.table7_check`), the tables as the page shows them (readable column names) and the
not-run reasons; the paper's values are in ``bookbuild/resources/paper_values/dr.csv``.
"""

from __future__ import annotations

import polars as pl

from analysis_lib.dr_arena import Table5Check, Table7Check
from analysis_lib.dr_arena import human_studies as hs
from analysis_lib.stats import LeaderboardAgreement
from bookbuild.sections import Number, Table, not_run

#: Why Table 4's other rows cannot be shown.
T4_MISSING = ("Table 4's body is not in the paper's text as we have it: the prose gives DR-Arena's values and, "
              "for FutureSearch and LiveResearchBench, only the sign")
T4_QUANTITIES = ("Spearman rho of every other benchmark with Search Arena",
                 "Pearson r of every other benchmark with Search Arena",
                 "models per benchmark (N)")


def t3_numbers(agree: LeaderboardAgreement) -> list[Number]:
    """DR-T3: Spearman and Pearson between the two Elo columns of Table 3, the Spearman from the published rank
    columns, the p-values and the pairs ordered differently."""
    return [
        Number("DR-T3", "Spearman rho, Search Arena vs DR-Arena Elo", agree.spearman, data="published"),
        Number("DR-T3", "Pearson r, Search Arena vs DR-Arena Elo", agree.pearson, data="published"),
        Number("DR-T3", "Spearman rho from the published rank columns", agree.spearman_published_ranks,
               data="published"),
        Number("DR-T3", "Spearman p-value (scipy, t approximation)", agree.spearman_p, data="published"),
        Number("DR-T3", "Pearson p-value", agree.pearson_p, data="published"),
        Number("DR-T3", "model pairs ordered differently", agree.n_rank_swaps, data="published"),
    ]


def t4_numbers(agree: LeaderboardAgreement, n_models: int, t4: pl.DataFrame) -> list[Number]:
    """DR-T4: DR-Arena's row of Table 4 recomputed from Table 3 (``agree`` over its ``n_models`` models), the signs
    the prose states (``t4``: :func:`analysis_lib.dr_arena.table4`), and the rest of the table as not run (missing
    from the text)."""
    stated = t4.filter(pl.col("sign_stated").is_not_null())
    return [
        # Table 4's body is not published: its DR-Arena row checked against Table 3, the prose's signs transcribed
        Number("DR-T4", "DR-Arena: Spearman rho with Search Arena (from Table 3)", agree.spearman, data="checked",
               note=f"{n_models} models"),
        Number("DR-T4", "DR-Arena: Pearson r with Search Arena (from Table 3)", agree.pearson, data="checked"),
        Number("DR-T4", "benchmarks stated to correlate negatively with Search Arena", stated.height,
               data="transcribed", note="; ".join(stated["benchmark"].to_list())),
        *not_run("DR-T4", T4_QUANTITIES, T4_MISSING),
    ]


def t4_tables(t4: pl.DataFrame) -> list[Table]:
    """Table 4 as far as the text states it, an empty cell shown as "—"."""
    shown = t4.with_columns(pl.col("n_models").cast(pl.String)).rename(
        {"benchmark": "benchmark", "spearman": "Spearman ρ", "pearson": "Pearson r", "n_models": "N",
         "sign_stated": "sign stated in the prose"})
    caption = ("Table 4 as far as the paper's text states it; an empty cell is a number missing from the text, "
               "not a zero.")
    return [Table(shown.fill_null("—"), caption)]


def t5_numbers(check: Table5Check, cases: int = hs.T5_CASES, annotators: int = hs.T5_ANNOTATORS) -> list[Number]:
    """DR-T5: Table 5's checks (``check``: :func:`analysis_lib.dr_arena.table5_check` with ``cases`` and
    ``annotators``): each column sums to 100 % (one choice of three per case), each share is a whole count of the
    selections, and whether the full tree is selected most often."""
    n = check.long.height
    return [
        Number("DR-T5", "question quality: shares summed (%)", check.sums["question_quality"], data="checked"),
        Number("DR-T5", "rubric accuracy: shares summed (%)", check.sums["rubric_accuracy"], data="checked"),
        Number("DR-T5", f"shares that are a whole count of the {cases} cases", check.of_cases, data="checked",
               note=f"of {n}"),
        Number("DR-T5", f"shares that are a whole count of {check.votes} votes ({cases} cases, "
                        f"{annotators} annotators)", check.of_votes, data="checked", note=f"of {n}"),
        Number("DR-T5", "smallest number of selections giving every share", check.smallest, data="checked"),
        Number("DR-T5", "claim: the full tree is selected most often in both columns",
               "holds" if check.full_tree_best else "does not hold", data="checked"),
    ]


def t5_tables(t5: pl.DataFrame, check: Table5Check, cases: int = hs.T5_CASES) -> list[Table]:
    """Table 5 as published and each share as a whole count of the cases and of the votes."""
    shown = t5.rename({"configuration": "configuration", "question_quality": "question quality (%)",
                       "rubric_accuracy": "rubric accuracy (%)"})
    reach = hs.reachability_table(check.long, "cell", {f"of {cases} cases": cases,
                                                       f"of {check.votes} votes": check.votes})
    return [Table(shown, f"Table 5 as published ({cases} cases).", 1),
            Table(reach, "Each share as a whole count of the selections (— : none gives it).", 1)]


def t7_numbers(check: Table7Check, turns: int = hs.T7_TURNS, matches: int = hs.T7_MATCHES) -> list[Number]:
    """DR-T7: the counts Table 7's percentages imply (``check``: :func:`analysis_lib.dr_arena.table7_check` with
    ``turns`` and ``matches``): which are ``k/turns`` or ``k/matches``, and the smallest number of judgements that
    gives all four. Cohen's κ needs the annotations (not run)."""
    n = check.percentages.height
    return [
        Number("DR-T7", f"percentages that are a whole count of the {turns} turns", check.of_turns, data="checked",
               note=f"of {n}"),
        Number("DR-T7", f"percentages that are a whole count of the {matches} matches", check.of_matches,
               data="checked", note=f"of {n}"),
        Number("DR-T7", "smallest number of judgements giving every percentage", check.smallest, data="checked"),
        Number("DR-T7", "stop efficiency as a count of the matches", _count_text(check.stop, matches),
               data="checked", note=f"as turns: {_count_text(check.stop, turns)}"),
        *not_run("DR-T7", ["verdict agreement, Cohen's kappa, recomputed"],
                 "needs the annotators' verdicts for the 64 audited turns, which are not released"),
    ]


def t7_tables(t7: pl.DataFrame, check: Table7Check, turns: int = hs.T7_TURNS,
              matches: int = hs.T7_MATCHES) -> list[Table]:
    """Table 7 as published and each percentage as a whole count of the matches and of the turns."""
    reach = hs.reachability_table(check.percentages, "criterion", {f"of {matches} matches": matches,
                                                                   f"of {turns} turns": turns})
    shown = t7.rename({"component": "component", "criterion": "criterion", "result": "result", "unit": "unit"})
    return [Table(shown, f"Table 7 as published ({matches} matches, {turns} turns).", 2),
            Table(reach, "Each percentage as a whole count (— : none gives it).", 1)]


def _count_text(percent: float, n: int) -> str:
    k = hs.implied_count(percent, n)
    return f"{k}/{n}" if k is not None else f"none of k/{n}"
