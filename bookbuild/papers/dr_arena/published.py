"""The book's side of the DR-Arena chapter's sections on published tables: DR-T4 (Table 4), DR-T5 (Table 5) and
DR-T7 (Table 7): the tables as the page shows them (readable column names), the not-run reasons and the stop
efficiency as a count; the numbers are recorded by path (``bookbuild/resources/paper_values/dr.csv``).
"""

from __future__ import annotations

import polars as pl

from analysis_lib.dr_arena import human_studies as hs
from analysis_lib.dr_arena.human_studies import Table5Check, Table7Check
from bookbuild.recorder import NotRun
from bookbuild.sections import Table

#: Why Table 4's other rows cannot be shown.
T4_MISSING = ("Table 4's body is not in the paper's text as we have it: the prose gives DR-Arena's values and, "
              "for FutureSearch and LiveResearchBench, only the sign")
KAPPA_REASON = "needs the annotators' verdicts for the 64 audited turns, which are not released"


def t4_tables(t4: pl.DataFrame) -> list[Table]:
    """Table 4 as far as the text states it, an empty cell shown as "—"."""
    shown = t4.with_columns(pl.col("n_models").cast(pl.String)).rename(
        {"benchmark": "benchmark", "spearman": "Spearman ρ", "pearson": "Pearson r", "n_models": "N",
         "sign_stated": "sign stated in the prose"})
    caption = ("Table 4 as far as the paper's text states it; an empty cell is a number missing from the text, "
               "not a zero.")
    return [Table(shown.fill_null("—"), caption)]


def t5_tables(t5: pl.DataFrame, check: Table5Check, cases: int = hs.T5_CASES) -> list[Table]:
    """Table 5 as published and each share as a whole count of the cases and of the votes."""
    shown = t5.rename({"configuration": "configuration", "question_quality": "question quality (%)",
                       "rubric_accuracy": "rubric accuracy (%)"})
    reach = hs.reachability_table(check.long, "cell", {f"of {cases} cases": cases,
                                                       f"of {check.votes} votes": check.votes})
    return [Table(shown, f"Table 5 as published ({cases} cases).", 1),
            Table(reach, "Each share as a whole count of the selections (— : none gives it).", 1)]


def t7_result(check: Table7Check, turns: int = hs.T7_TURNS, matches: int = hs.T7_MATCHES) -> dict[str, object]:
    """DR-T7 as recorded: Table 7's checks (``check``: :func:`analysis_lib.dr_arena.table7_check`), the stop
    efficiency as a count of the ``matches`` and of the ``turns``, and Cohen's κ, which needs the annotations (not
    run)."""
    return {"check": check, "stop_matches": _count_text(check.stop, matches),
            "stop_turns": _count_text(check.stop, turns), "kappa": NotRun(KAPPA_REASON)}


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
