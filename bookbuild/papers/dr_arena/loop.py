"""The book's side of the DR-Arena chapter's DR-L sections: Table 2 and the loop's rules, the framework's released
match traces replayed through the loop (:func:`analysis_lib.dr_arena.replay_published_traces`) and the project
page's 5-round walkthrough replayed (:func:`analysis_lib.dr_arena.replay_cases_trace`), as tables with readable
column names; the numbers are recorded by path (``bookbuild/resources/paper_values/dr.csv``).
"""

from __future__ import annotations

import polars as pl

from analysis_lib.dr_arena.match_log import cases_trace
from bookbuild.sections import Table

#: ``LoopConfig`` fields in words (the config table's first column).
RULE_LABELS = {
    "name": "rules", "much_better_points": "points for Much Better", "better_points": "points for Better",
    "tie_points": "points for a tie", "gap_threshold": "stop when the score gap reaches",
    "min_rounds": "rounds before the gap rule applies", "max_rounds": "stop after this many rounds",
    "stop_on_much_better": "stop on a Much Better verdict", "start_depth": "starting depth (root = 1)",
    "start_width": "starting width constraint", "min_depth": "smallest depth", "min_width": "smallest width",
    "backtrack_width": "width after a backtrack", "no_child": "a descent without a child",
}
TRANSITION_COLUMNS = {"verdict": "verdict", "failure_type": "loser's failure", "action": "action",
                      "d_depth": "Δ depth", "d_width": "Δ width", "points_a": "points A", "points_b": "points B",
                      "stops_match": "can end the match"}
#: The released trace shown as the worked example.
EXAMPLE_ID = "tree_0022_glm47_vs_pplsonar_1300"


def rules_tables(table2: pl.DataFrame, rules: pl.DataFrame, name: str) -> list[Table]:
    """Table 2 and the rules of the config ``name`` (``rules``: :func:`analysis_lib.dr_arena.config_table`) in
    words."""
    rules = rules.with_columns(pl.col("rule").replace_strict(RULE_LABELS, default=pl.col("rule")))
    return [Table(table2.drop("kind").rename(TRANSITION_COLUMNS),
                  "Table 2 with the points and stop rule of the rules below.", 0),
            Table(rules, f"The loop's rules ({name}).", 0)]


def traces_tables(example: pl.DataFrame) -> list[Table]:
    """The worked example's replay beside its logged task and scores."""
    return [Table(trace_table(example), "Released trace tree_0022 replayed: the loop's task and scores beside "
                                        "the logged ones.", 0)]


def page_tables(replay: pl.DataFrame) -> list[Table]:
    """The page's match replayed beside the page's own depth, width and action
    (:func:`analysis_lib.dr_arena.match_log.cases_trace`)."""
    shown = trace_table(replay.with_columns(cases_trace()["action_on_page"]), "page")
    return [Table(shown, "The project page's match replayed: the loop's depth, width, action and scores; "
                         "the page's depth, width and action.", 0)]


def _task(depth: str, width: str) -> pl.Expr:
    return pl.format("{} × {}", pl.col(depth), pl.col(width))


def _words(col: str) -> pl.Expr:
    return pl.col(col).str.replace_all("_", " ")


def _scores(frame: pl.DataFrame, a: str, b: str) -> pl.Expr:
    """``A–B``, in whole points when every score is whole."""
    whole = all(float(v).is_integer() for v in frame[a].drop_nulls().to_list() + frame[b].drop_nulls().to_list())
    ca, cb = (pl.col(a).cast(pl.Int64), pl.col(b).cast(pl.Int64)) if whole else (pl.col(a), pl.col(b))
    return pl.format("{}–{}", ca, cb)


def trace_table(replay: pl.DataFrame, logged: str = "logged") -> pl.DataFrame:
    """A replayed trace as the page shows it: round, verdict, loser's failure, action, the task (depth × width)
    and scores after the round, the stop, and the ``logged`` task beside it (``"logged"`` or ``"page"``), with the
    page's action when the trace has one (``action_on_page``), else the logged scores."""
    cols = [pl.col("round"), pl.col("verdict"), pl.col("failure_type").alias("loser's failure"),
            _words("action").alias("action"), _task("depth", "width").alias("task (depth × width)"),
            _scores(replay, "score_a", "score_b").alias("score A–B"), _words("stop").alias("stop"),
            _task("logged_depth", "logged_width").alias(f"{logged} task")]
    if "action_on_page" in replay.columns:
        cols.append(pl.col("action_on_page").alias("action on the page"))
    elif replay["logged_score_a"].null_count() < replay.height:
        cols.append(_scores(replay, "logged_score_a", "logged_score_b").alias(f"{logged} score"))
    return replay.select(cols)
