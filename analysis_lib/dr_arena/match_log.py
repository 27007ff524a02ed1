"""DR-Arena match logs: one JSON object per round, one JSONL file per match (or many matches per file).

Format (every match-level analysis reads it; the simulation and the LLM examiner write it):

==================  ============  ==========================================================================
field               type          meaning
==================  ============  ==========================================================================
``match_id``        str           unique per match
``tournament_round`` int or null  Swiss round the match belongs to
``tree_id``         str           information tree of the match
``model_a``         str           agent A (at most :data:`MAX_NAME_CHARS` characters)
``model_b``         str           agent B, another agent than A (a self-match is refused)
``round``           int ≥ 1       round within the match; a match's rounds are 1, 2, …, n in file order
``depth``           int ≥ 1       depth of the task in this round (root = 1); at most :data:`MAX_LEVEL`
``width``           int ≥ 1       width constraint of the task in this round; at most :data:`MAX_LEVEL`
``question``        str or null   the Examiner's question
``answer_a_id``     str or null   id of agent A's answer (e.g. its LLM cache key)
``answer_b_id``     str or null   id of agent B's answer
``verdict``         str           ``A_MUCH_BETTER``, ``A_BETTER``, ``TIE``, ``B_BETTER``, ``B_MUCH_BETTER``
``tie_quality``     str or null   ``high`` or ``low``; required when ``verdict`` is ``TIE``
``failure_type``    str or null   the loser's ``DEEP``, ``WIDE``, ``BOTH`` or ``NONE``; required unless a tie
``score_a``         number        A's cumulative score after this round
``score_b``         number        B's cumulative score after this round
``action``          str or null   evolution action after the round (``pressure_test``, ``backtrack``,
                                  ``drill_down``, ``increase_width``)
``stop``            str or null   stop rule that ended the match at this round (``SCORE_GAP``,
                                  ``MUCH_BETTER``, ``MAX_ROUNDS``), null before the last round
==================  ============  ==========================================================================

:func:`load_match_logs` reads a file or every ``*.jsonl`` under a folder through the one safe reader
(:mod:`analysis_lib.reading`) and raises :class:`~analysis_lib.reading.DataValidationError` naming the file, line
and field of the first bad value; agent names are compared after :func:`~analysis_lib.reading.name_key`;
:func:`matches` reduces rounds to one row per match;
:func:`score_contradictions` lists rounds whose scores contradict their verdict (reported by
:func:`validate_match_logs` in the log, not refused: a match is decided by its final scores).
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

import polars as pl

from analysis_lib import fetch as _fetch
from analysis_lib.dr_arena.loop import FRAMEWORK, VERDICT_CODES, FailureType, LoopConfig, replay_trace, start_on_tree
from analysis_lib.reading import DataValidationError, check_file, json_lines, list_files, name_key, one_line, quote

log = logging.getLogger(__name__)

SCHEMA: dict[str, Any] = {
    "match_id": pl.String, "tournament_round": pl.Int64, "tree_id": pl.String, "model_a": pl.String,
    "model_b": pl.String, "round": pl.Int64, "depth": pl.Int64, "width": pl.Int64, "question": pl.String,
    "answer_a_id": pl.String, "answer_b_id": pl.String, "verdict": pl.String, "tie_quality": pl.String,
    "failure_type": pl.String, "score_a": pl.Float64, "score_b": pl.Float64, "action": pl.String, "stop": pl.String,
}
REQUIRED: tuple[str, ...] = ("match_id", "tree_id", "model_a", "model_b", "round", "depth", "width", "verdict",
                             "score_a", "score_b")
FAILURE_CODES: tuple[str, ...] = tuple(f.name for f in FailureType)
STOP_CODES: tuple[str, ...] = ("SCORE_GAP", "MUCH_BETTER", "MAX_ROUNDS")
#: Fields every round of one match shares.
MATCH_FIELDS: tuple[str, ...] = ("tree_id", "model_a", "model_b", "tournament_round")
#: Suffixes of match-log files in a folder (compared case-insensitively).
LOG_SUFFIXES: tuple[str, ...] = (".jsonl", ".json", ".ndjson")
#: Largest match-log file read (a round is a few hundred bytes; a tournament of thousands of matches is a few MB).
MAX_LOG_BYTES = 1024**3
#: Largest absolute cumulative score accepted (the loop's scores are a few points; 2 per round at most).
MAX_ABS_SCORE = 1e6
#: Largest ``round``, ``depth``, ``width`` and ``tournament_round`` accepted (the framework plays at most 10 rounds on
#: trees a few levels deep; a frame holds 64-bit integers, and a depth of 10**30 failed inside polars).
MAX_LEVEL = 10_000
#: Longest model name accepted, in characters (the Search Arena release's bound, :data:`MAX_NAME_CHARS`).
MAX_NAME_CHARS = 200
#: Scores are compared with this tolerance when a round's change is checked against its verdict.
SCORE_TOLERANCE = 1e-9


def _check(rec: Any, where: str) -> dict[str, Any]:
    if not isinstance(rec, dict):
        raise DataValidationError(f"{where}: not a JSON object (a {type(rec).__name__})")
    for k in REQUIRED:
        if rec.get(k) is None:
            raise DataValidationError(f"{where}, field {k!r}: missing (required: {list(REQUIRED)})")
    rec = {**rec, **{k: name_key(rec[k]) for k in ("model_a", "model_b") if isinstance(rec[k], str)}}
    for k in ("match_id", "tree_id", "model_a", "model_b"):
        if not isinstance(rec[k], str) or not rec[k]:
            raise DataValidationError(f"{where}, field {k!r}: expected a non-empty string, got {quote(rec[k])}")
        if len(rec[k]) > MAX_NAME_CHARS:
            raise DataValidationError(f"{where}, field {k!r}: expected at most {MAX_NAME_CHARS} characters, got "
                                      f"{quote(rec[k])}")
    if rec["model_a"] == rec["model_b"]:
        raise DataValidationError(f"{where}, fields 'model_a'/'model_b': both are {quote(rec['model_a'])}; expected "
                                  "two different agents (a model cannot play itself)")
    for k in ("round", "depth", "width"):
        if not isinstance(rec[k], int) or isinstance(rec[k], bool) or not 1 <= rec[k] <= MAX_LEVEL:
            raise DataValidationError(f"{where}, field {k!r}: expected an integer from 1 to {MAX_LEVEL:,}, "
                                      f"got {quote(rec[k])}")
    tr = rec.get("tournament_round")
    if tr is not None and (not isinstance(tr, int) or isinstance(tr, bool) or not 0 <= tr <= MAX_LEVEL):
        raise DataValidationError(f"{where}, field 'tournament_round': expected an integer from 0 to {MAX_LEVEL:,} or "
                                  f"null, got {quote(tr)}")
    for k in ("score_a", "score_b"):
        v = rec[k]
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v) or abs(v) > MAX_ABS_SCORE:
            raise DataValidationError(f"{where}, field {k!r}: expected a finite number within ±{MAX_ABS_SCORE:g} "
                                      f"(a cumulative score), got {quote(v)}")
    for k in ("question", "answer_a_id", "answer_b_id", "action"):
        if rec.get(k) is not None and not isinstance(rec[k], str):
            raise DataValidationError(f"{where}, field {k!r}: expected a string or null, got {quote(rec[k])}")
    if rec["verdict"] not in VERDICT_CODES:
        raise DataValidationError(f"{where}, field 'verdict': {quote(rec['verdict'])} is not one of "
                                  f"{list(VERDICT_CODES)}")
    tq, ft = rec.get("tie_quality"), rec.get("failure_type")
    if rec["verdict"] == "TIE":
        if tq not in ("high", "low"):
            raise DataValidationError(f"{where}, field 'tie_quality': a TIE needs 'high' or 'low', got {quote(tq)}")
        if ft is not None and ft not in FAILURE_CODES:
            raise DataValidationError(f"{where}, field 'failure_type': {quote(ft)} is not one of {list(FAILURE_CODES)}")
    else:
        if ft not in FAILURE_CODES:
            raise DataValidationError(f"{where}, field 'failure_type': a decided round needs one of "
                                      f"{list(FAILURE_CODES)}, got {quote(ft)}")
        if tq is not None:
            raise DataValidationError(f"{where}, field 'tie_quality': must be null for verdict {rec['verdict']}")
    if rec.get("stop") is not None and rec["stop"] not in STOP_CODES:
        raise DataValidationError(f"{where}, field 'stop': {quote(rec['stop'])} is not one of {list(STOP_CODES)}")
    return {k: rec.get(k) for k in SCHEMA}


def read_match_log(path: str | Path) -> list[dict[str, Any]]:
    """Validated records of one JSONL file read by :func:`analysis_lib.reading.json_lines` (blank lines
    skipped); rounds of a match must run 1, 2, … in order and keep the match's ``tree_id``, ``model_a``,
    ``model_b`` and ``tournament_round``; a file without a round is refused."""
    path = check_file(path, "a match log", "jsonl", max_bytes=MAX_LOG_BYTES)[0]
    out: list[dict[str, Any]] = []
    first: dict[str, dict[str, Any]] = {}
    last: dict[str, int] = {}
    for i, parsed in json_lines(path):
        where = f"{path}, line {i}"
        rec = _check(parsed, where)
        head = first.setdefault(rec["match_id"], rec)
        for k in MATCH_FIELDS:
            if rec[k] != head[k]:
                raise DataValidationError(f"{where}, field {k!r}: match {quote(rec['match_id'])} has {quote(rec[k])} "
                                          f"where its round 1 has {quote(head[k])} (a match keeps its {k})")
        expected = last.get(rec["match_id"], 0) + 1
        if rec["round"] != expected:
            raise DataValidationError(f"{where}, field 'round': match {quote(rec['match_id'])} has round "
                                      f"{rec['round']} where round {expected} was expected")
        last[rec["match_id"]] = rec["round"]
        out.append(rec)
    if not out:
        raise DataValidationError(f"{path}: holds no rounds (only blank lines); expected one JSON object per round")
    return out


def log_files(path: str | Path) -> tuple[list[Path], list[str]]:
    """``(logs, others)``: ``path`` itself when it is a file (any name), else every regular file under it whose
    suffix is one of :data:`LOG_SUFFIXES` in any case (recursively, sorted) and the other entries found there
    (``"name: why"``), which are not read (:func:`skipped_files`). A missing path and a folder without a log are
    refused."""
    return list_files(path, "match logs (one JSON object per round)", LOG_SUFFIXES, recursive=True)


def load_match_logs(path: str | Path) -> pl.DataFrame:
    """Every round of every match under ``path`` (a match-log file or a folder of them, see :func:`log_files`),
    validated, as a frame with the columns of :data:`SCHEMA`. A match id may not appear in two files. Files of
    a folder that are not logs are listed by :func:`skipped_files`."""
    records: list[dict[str, Any]] = []
    seen: dict[str, Path] = {}
    for f in log_files(path)[0]:
        recs = read_match_log(f)
        for mid in sorted({r["match_id"] for r in recs}):
            if mid in seen:
                raise DataValidationError(f"{f}: match {quote(mid)} also appears in {seen[mid]}")
            seen[mid] = f
        records.extend(recs)
    return rounds_frame(records)


def score_contradictions(rounds: pl.DataFrame) -> pl.DataFrame:
    """The rounds whose scores contradict their verdict: with ``Δ`` the round's change of ``score_a − score_b``
    (the scores before round 1 are 0), an ``A_…`` verdict needs ``Δ ≥ 0``, a ``B_…`` verdict ``Δ ≤ 0`` and a
    ``TIE`` ``Δ = 0`` (the loop gives the winner points and the loser none, a tie the same to both;
    :meth:`analysis_lib.dr_arena.loop.LoopConfig.points`), within :data:`SCORE_TOLERANCE`. Returns ``match_id,
    round, verdict, change`` for each such round (none: an empty frame)."""
    gap = pl.col("score_a") - pl.col("score_b")
    change = (gap - gap.shift(1).over("match_id").fill_null(0.0)).alias("change")
    out = rounds.sort("match_id", "round").with_columns(change)
    verdict = pl.col("verdict")
    bad = (verdict.str.starts_with("A_") & (pl.col("change") < -SCORE_TOLERANCE)) | (
        verdict.str.starts_with("B_") & (pl.col("change") > SCORE_TOLERANCE)) | (
        (verdict == "TIE") & (pl.col("change").abs() > SCORE_TOLERANCE))
    return out.filter(bad).select("match_id", "round", "verdict", "change")


def skipped_files(path: str | Path) -> list[str]:
    """Entries under a match-log folder that are not read (``"name: why"``), for the caller to report."""
    return log_files(path)[1]


def validate_match_logs(path: str | Path) -> int:
    """The number of rounds under ``path`` after every check of :func:`load_match_logs` (the build runner calls
    it before any notebook runs); raises :class:`~analysis_lib.reading.DataValidationError` with one line naming
    the file, line and field."""
    try:
        rounds = load_match_logs(path)
        bad = score_contradictions(rounds)
        if bad.height:
            first = bad.row(0, named=True)
            log.warning("%s: %d round(s) whose scores contradict their verdict (first: match %s, round %d, %s with "
                        "a score-gap change of %+g); matches are decided by the final scores",
                        Path(path).name, bad.height, quote(first["match_id"]), first["round"], first["verdict"],
                        first["change"])
        return rounds.height
    except DataValidationError:
        raise
    except (OSError, RecursionError, pl.exceptions.PolarsError) as err:  # an unexpected failure, still one line
        raise DataValidationError(f"{path}: cannot be read as match logs ({type(err).__name__}: "
                                  f"{one_line(str(err))})") from None


def rounds_frame(records: Iterable[Mapping[str, Any]]) -> pl.DataFrame:
    """Round records as a frame with the log schema (missing optional fields are null)."""
    return pl.DataFrame([{k: r.get(k) for k in SCHEMA} for r in records], schema=SCHEMA)


def write_match_log(path: str | Path, records: Iterable[Mapping[str, Any]], *, append: bool = False) -> Path:
    """Write round records as JSONL (each checked against the format first)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(_check(dict(r), f"{path} (record {i})"), ensure_ascii=False) for i, r in enumerate(records, 1)]
    with path.open("a" if append else "w", encoding="utf-8") as fh:
        fh.writelines(line + "\n" for line in lines)
    return path


def matches(rounds: pl.DataFrame) -> pl.DataFrame:
    """One row per match: ``match_id, tournament_round, tree_id, model_a, model_b, n_rounds, score_a, score_b,
    winner`` (``model_a``/``model_b``/``tie`` by the final scores, the BT convention) and ``stop``."""
    return (
        rounds.sort("match_id", "round")
        .group_by("match_id", maintain_order=True)
        .agg(pl.col("tournament_round", "tree_id", "model_a", "model_b").first(), pl.len().alias("n_rounds"),
             pl.col("score_a", "score_b", "stop").last())
        .with_columns(winner=pl.when(pl.col("score_a") > pl.col("score_b")).then(pl.lit("model_a"))
                      .when(pl.col("score_a") < pl.col("score_b")).then(pl.lit("model_b")).otherwise(pl.lit("tie")))
    )


def truncated_matches(rounds: pl.DataFrame, k: int) -> pl.DataFrame:
    """:func:`matches` as if every match had stopped after at most ``k`` rounds (Table 6's "Round k only")."""
    return matches(rounds.filter(pl.col("round") <= k))


PUBLISHED_TRACES = "dr_arena_match_traces"
CASES_TRACE = "dr_arena_cases_trace"


def published_traces() -> pl.DataFrame:
    """The framework's released match traces (``published/dr_arena_match_traces.csv``, see its SOURCES entry)
    in the log's vocabulary: ``verdict`` as a code (``Tie`` → ``TIE``), ``tie_quality`` read off the logged action
    (a tie followed by ``pressure_test`` was high quality, by ``backtrack`` low) and ``evolution_kind`` kept."""
    raw = pl.read_csv(_fetch.published(PUBLISHED_TRACES))
    tie = pl.col("verdict") == "TIE"
    return raw.with_columns(pl.col("verdict").str.to_uppercase()).with_columns(
        tie_quality=pl.when(tie & (pl.col("evolution_kind") == "pressure_test")).then(pl.lit("high"))
        .when(tie).then(pl.lit("low")),
        failure_type=pl.when(tie).then(None).otherwise(pl.col("failure_type")),
        logged_failure_type=pl.col("failure_type"),
    )


def cases_trace() -> pl.DataFrame:
    """The 5-round trace of the framework's project page (``published/dr_arena_cases_trace.csv``: Sonar-Pro vs
    Claude-Opus-4.1, "Handheld Game Consoles"; see its SOURCES entry): ``round``, ``depth``, ``width``, ``verdict``
    (code), ``failure_type``, ``action_on_page``; no ties, so no ``tie_quality``, and no scores (the page prints
    none)."""
    return pl.read_csv(_fetch.published(CASES_TRACE)).with_columns(
        pl.lit(None, dtype=pl.String).alias("tie_quality"))


#: What the project-page trace needs of its tree: the match starts on the root's one child (depth 2), which has no
#: child, so its pressure tests widen only (the page's depth stays 2).
CASES_TREE: Mapping[str, Any] = {"children": [{"children": []}]}


def replay_cases_trace(config: LoopConfig = FRAMEWORK) -> pl.DataFrame:
    """:func:`cases_trace` replayed with ``config`` from the start of :data:`CASES_TREE` (see
    :func:`analysis_lib.dr_arena.loop.replay_trace`; the logged columns are the page's depth and width)."""
    return replay_trace(cases_trace(), config, tree=CASES_TREE, start=start_on_tree(CASES_TREE, config))


def reproduces(replay: pl.DataFrame, n_logged: int) -> bool:
    """Whether a replay (:func:`~analysis_lib.dr_arena.loop.replay_trace`) lands on every logged depth, width and
    score and stops at the logged round (``n_logged`` rounds were logged)."""
    same = all(replay[c].to_list() == replay[f"logged_{c}"].to_list() for c in ("depth", "width", "score_a", "score_b"))
    return same and replay.height == n_logged


class ReplaySummary(NamedTuple):
    """A replayed trace in numbers: rounds played, rounds whose depth and width equal the logged ones, the stop
    rule after the last round and the final score gap."""

    rounds: int
    rounds_reproduced: int
    stop: str
    score_gap: float


def replay_summary(replay: pl.DataFrame) -> ReplaySummary:
    """:class:`ReplaySummary` of a replay (:func:`~analysis_lib.dr_arena.loop.replay_trace`)."""
    same = replay.filter((pl.col("depth") == pl.col("logged_depth")) & (pl.col("width") == pl.col("logged_width")))
    return ReplaySummary(replay.height, same.height, replay["stop"][-1],
                         abs(replay["score_a"][-1] - replay["score_b"][-1]))


class TraceReplay(NamedTuple):
    """One released trace replayed through the loop, and whether the replay reproduces it (:func:`reproduces`)."""

    replay: pl.DataFrame
    reproduced: bool


def replay_published_traces(config: LoopConfig = FRAMEWORK) -> dict[str, TraceReplay]:
    """Each of :func:`published_traces` replayed with ``config`` from its verdicts and failure types alone, by
    ``match_id`` in the file's order."""
    out = {}
    for (match_id,), logged in published_traces().group_by("match_id", maintain_order=True):
        replay = replay_trace(logged, config)
        out[str(match_id)] = TraceReplay(replay, reproduces(replay, logged.height))
    return out
