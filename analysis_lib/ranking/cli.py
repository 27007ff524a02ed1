"""The leaderboard command: ``python -m analysis_lib.ranking FILE [options]``.

Reads a battles file (parquet, csv or jsonl: one battle per row, columns ``model_a``, ``model_b``, ``winner`` by
default), fits Bradley–Terry (contextual BT with ``--style``) by :func:`analysis_lib.ranking.leaderboard`, and
prints the leaderboard or writes it (``--out board.csv``, ``.parquet``, ``.json`` or ``.jsonl``). Column names
and outcome labels are options; the defaults are the LMArena convention.

Every option is checked before the file is read or anything is fitted (:func:`check_options`): ``--rounds`` in
``1 … MAX_ROUNDS``, ``--reg`` ≥ 0, ``--ridge`` > 0, ``--level`` in (0, 1), ``--out``/``--coef-out`` with a suffix
written as that format, in an existing folder; after reading, every ``--exclude`` and ``--anchor`` name must
name a model of the file. Model names are stripped of surrounding white space (``"gpt-4o "`` is ``"gpt-4o"``);
how many names were stripped is reported on stderr. A JSON-lines file may start with a byte-order mark; a
line that is not JSON is named by its line number.

``--intervals centred`` (default) prints the leaderboard's intervals: each rating's interval with every round
centred (mean rating 0) and shifted by the one offset that puts the anchor at 1000 in the full-data fit, so the
anchor keeps an interval of its own. ``--intervals anchored`` prints the intervals of each rating's *difference
to the anchor* (plus 1000): bootstrap, the anchor put at 1000 in every round; sandwich, ``Var(r_j − r_a)`` from
the covariance; the anchor's own interval collapses to 1000. Use the anchored ones to say how far a model is
from the anchor, the centred ones to compare models with one another.

Errors are one line on stderr naming the option, file, column or rows; exit status 0 on success, 2 for bad
input (a bad option, unreadable file, missing column, rows without a vote or with an unknown label unless
``--drop-invalid``, data without an MLE unless ``--on-separation ridge``, unknown anchor or excluded model), 3
when a fit does not converge.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from analysis_lib.ranking.bootstrap import ConvergenceError
from analysis_lib.ranking.graph import RIDGE
from analysis_lib.ranking.leaderboard import MAX_ROUNDS, leaderboard
from analysis_lib.ranking.votes import BattleFormat

READERS = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl",
           ".json": "jsonl"}
#: Output suffixes and the format each is written as (anything else is refused).
WRITERS = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet", ".json": "json", ".jsonl": "jsonl",
           ".ndjson": "jsonl"}
EXIT_INPUT, EXIT_CONVERGENCE = 2, 3
BOM = b"\xef\xbb\xbf"


class InputError(ValueError):
    """A problem with the command's input, reported as one line."""


def _first_bad_json_line(data: bytes) -> str:
    """``line N: <why>`` for the first line of ``data`` that is not one JSON object (blank lines allowed)."""
    for number, raw in enumerate(data.split(b"\n"), start=1):
        text = raw.decode("utf-8", errors="replace").strip(" \t\r")
        if not text:
            continue
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            return f"line {number}: not JSON ({exc.msg} at column {exc.colno})"
        if not isinstance(value, dict):
            return f"line {number}: a JSON {type(value).__name__}, not an object"
    return ""


def read_battles(path: Path, kind: str | None = None) -> pl.DataFrame:
    """The battles in ``path`` (``kind``: ``parquet``, ``csv`` or ``jsonl``; default from the suffix).

    A JSON-lines file may start with a UTF-8 byte-order mark; a line that is not a JSON object is named by its
    (1-based) line number."""
    if path.is_dir():
        raise InputError(f"{path}: is a directory, not a battles file")
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    kind = kind or READERS.get(path.suffix.lower())
    if kind is None:
        raise InputError(f"{path}: unknown file type {path.suffix!r}; use --format parquet, csv or jsonl")
    try:
        if kind == "parquet":
            return pl.read_parquet(path)
        if kind == "csv":
            return pl.read_csv(path, infer_schema_length=10_000)
        data = path.read_bytes()
        data = data[len(BOM):] if data.startswith(BOM) else data
        try:
            return pl.read_ndjson(io.BytesIO(data), infer_schema_length=10_000)
        except (pl.exceptions.PolarsError, ValueError) as exc:
            where = _first_bad_json_line(data)
            if where:
                raise InputError(f"{path}: cannot be read as jsonl: {where}") from exc
            raise
    except (pl.exceptions.PolarsError, OSError, ValueError) as exc:
        if isinstance(exc, InputError):
            raise
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"{path}: cannot be read as {kind}: {first}") from exc


def strip_names(frame: pl.DataFrame, columns: Sequence[str]) -> tuple[pl.DataFrame, int]:
    """``(frame, n)``: the string ``columns`` stripped of surrounding white space; ``n`` = values changed."""
    changed = 0
    for c in columns:
        if c in frame.columns and frame[c].dtype == pl.String:
            stripped = frame[c].str.strip_chars()
            changed += int((stripped != frame[c]).fill_null(False).sum())
            frame = frame.with_columns(stripped.alias(c))
    return frame, changed


def _labels(text: str) -> tuple[str, ...]:
    return tuple(s for s in (part.strip() for part in text.split(",")) if s)


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m analysis_lib.ranking",
        description="Bradley–Terry leaderboard (with bootstrap or sandwich intervals) of a battles file.",
        epilog="Exit status: 0 done, 2 bad input (one line naming the option, file, column or rows), 3 a fit did "
               "not converge.",
    )
    ap.add_argument("file", type=Path, help="battles: .parquet, .csv or .jsonl")
    ap.add_argument("--format", choices=["parquet", "csv", "jsonl"], help="file type (default: from the suffix)")
    ap.add_argument("--anchor", help="model put at 1000 (default: the mean rating is 1000)")
    ap.add_argument("--intervals", choices=["centred", "anchored"], default="centred",
                    help="centred (default): each rating's interval, rounds centred, shifted so the anchor is 1000 "
                         "in the full-data fit (the anchor keeps an interval); anchored: the interval of each "
                         "rating's difference to the --anchor (anchor fixed at 1000 in every round; sandwich: "
                         "Var(r_j - r_anchor)); needs --anchor")
    ap.add_argument("--exclude", default="", help="comma-separated models whose battles are dropped (each must "
                                                  "appear in the file)")
    ap.add_argument("--ci", choices=["bootstrap", "sandwich", "none"], default="bootstrap", help="interval method")
    ap.add_argument("--rounds", type=int, default=100, help=f"bootstrap rounds, 1 to {MAX_ROUNDS:,} (default 100)")
    ap.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    ap.add_argument("--level", type=float, default=0.95, help="interval coverage, between 0 and 1 (default 0.95)")
    ap.add_argument("--point", choices=["bootstrap_mean", "ml"], default="bootstrap_mean",
                    help="reported rating with a bootstrap: mean over rounds (default) or the full-data fit")
    ap.add_argument("--style", default="", help="comma-separated style features (columns <f>_a, <f>_b)")
    ap.add_argument("--convention", choices=["float", "paper"], default="float",
                    help="style values as given (float) or truncated to int32 first (paper)")
    ap.add_argument("--reg", type=float, default=0.0, help="penalty reg/2 ||theta||^2 on the summed loss (>= 0)")
    ap.add_argument("--on-separation", choices=["error", "ridge"], default="error",
                    help="data without an MLE: stop with the models concerned (error) or fit with the ridge; a "
                         "bootstrap round without an MLE (when the data have one) is always fitted with the ridge, "
                         "counted in the summary and in the ridge_rounds column")
    ap.add_argument("--ridge", type=float, default=RIDGE, help=f"ridge for fits without an MLE (> 0; default {RIDGE})")
    ap.add_argument("--drop-invalid", action="store_true",
                    help="drop (and count) rows without a vote, with an unknown label or a self-battle")
    ap.add_argument("--model-a-col", default="model_a")
    ap.add_argument("--model-b-col", default="model_b")
    ap.add_argument("--winner-col", default="winner")
    ap.add_argument("--a-wins", default="model_a", help="comma-separated labels meaning A won")
    ap.add_argument("--b-wins", default="model_b", help="comma-separated labels meaning B won")
    ap.add_argument("--ties", default="tie,tie (bothbad)", help="comma-separated labels meaning a tie")
    ap.add_argument("--out", type=Path, help="write the leaderboard here (.csv, .parquet, .json or .jsonl) instead "
                                             "of printing it")
    ap.add_argument("--coef-out", type=Path, help="write the style coefficients here (.csv, .parquet, .json, .jsonl)")
    ap.add_argument("--quiet", action="store_true", help="no progress bar, no summary line")
    return ap


def _finite(value: float) -> bool:
    return math.isfinite(value)


def check_options(args: argparse.Namespace) -> None:
    """Raise :class:`InputError` naming the first option whose value cannot be used (before any work)."""
    if not 1 <= args.rounds <= MAX_ROUNDS:
        raise InputError(f"--rounds must be between 1 and {MAX_ROUNDS:,}, not {args.rounds}")
    if not (_finite(args.level) and 0.0 < args.level < 1.0):
        raise InputError(f"--level must be between 0 and 1 (e.g. 0.95), not {args.level:g}")
    if not (_finite(args.reg) and args.reg >= 0.0):
        raise InputError(f"--reg must be a finite number >= 0, not {args.reg:g}")
    if not (_finite(args.ridge) and args.ridge > 0.0):
        raise InputError(f"--ridge must be a finite number > 0, not {args.ridge:g}")
    if args.intervals == "anchored" and args.anchor is None:
        raise InputError("--intervals anchored needs --anchor (the model the differences are taken to)")
    if args.intervals == "anchored" and args.ci == "none":
        raise InputError("--intervals anchored needs intervals (--ci bootstrap or sandwich)")
    for option, path in (("--out", args.out), ("--coef-out", args.coef_out)):
        if path is None:
            continue
        if path.suffix.lower() not in WRITERS:
            raise InputError(f"{option} {path}: unknown suffix {path.suffix!r}; use .csv, .parquet, .json or .jsonl")
        if path.is_dir():
            raise InputError(f"{option} {path}: is a directory")
        if not path.parent.is_dir():
            raise InputError(f"{option} {path}: folder {path.parent} does not exist")
    if args.anchor is not None:
        args.anchor = args.anchor.strip()


def check_names(battles: pl.DataFrame, fmt: BattleFormat, anchor: str | None, exclude: Sequence[str]) -> None:
    """Raise :class:`InputError` for an ``--exclude`` or ``--anchor`` name that no battle has."""
    names: set[str] = set()
    for c in (fmt.model_a, fmt.model_b):
        if c in battles.columns:
            names |= set(battles[c].cast(pl.String).drop_nulls().unique().to_list())
    unknown = [e for e in exclude if e not in names]
    if unknown:
        raise InputError(f"--exclude: {unknown} not among the {len(names)} models of the file")
    if anchor is not None and anchor not in names:
        raise InputError(f"--anchor: anchor {anchor!r} has no battles here ({len(names)} models in the file)")
    if anchor is not None and anchor in exclude:
        raise InputError(f"--anchor {anchor!r} is also excluded by --exclude")


def _write(frame: pl.DataFrame, path: Path) -> None:
    kind = WRITERS[path.suffix.lower()]
    try:
        if kind == "parquet":
            frame.write_parquet(path)
        elif kind == "json":
            frame.write_json(path)
        elif kind == "jsonl":
            frame.write_ndjson(path)
        else:
            frame.write_csv(path)
    except OSError as exc:
        raise InputError(f"{path}: cannot write: {exc.strerror or exc}") from exc


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; returns the exit status (module docstring)."""
    args = build_parser().parse_args(argv)
    try:
        check_options(args)
        fmt = BattleFormat(args.model_a_col, args.model_b_col, args.winner_col, _labels(args.a_wins),
                           _labels(args.b_wins), _labels(args.ties))
        battles, stripped = strip_names(read_battles(args.file, args.format), (fmt.model_a, fmt.model_b))
        if stripped:
            print(f"note: {args.file}: {stripped:,} model names stripped of surrounding white space",
                  file=sys.stderr)
        exclude = _labels(args.exclude)
        check_names(battles, fmt, args.anchor, exclude)
        result = leaderboard(
            battles, anchor=args.anchor, exclude=exclude, ci=args.ci, rounds=args.rounds,
            seed=args.seed, level=args.level, point=args.point, features=_labels(args.style), reg=args.reg,
            convention=args.convention, on_separation=args.on_separation, ridge=args.ridge,
            drop_invalid=args.drop_invalid, fmt=fmt, progress=not args.quiet, source=str(args.file),
        )
        board = result.to_frame(intervals=args.intervals, ridge_columns=True)
        if args.out:
            _write(board, args.out)
        if args.coef_out:
            _write(result.coefficients(), args.coef_out)
    except ConvergenceError as exc:
        print(f"error: {args.file}: {exc}", file=sys.stderr)
        return EXIT_CONVERGENCE
    except (ValueError, TypeError) as exc:  # InputError, InvalidBattlesError, NotIdentifiableError, bad options
        message = " ".join(str(exc).split())
        prefix = "" if message.startswith((str(args.file), "--")) else f"{args.file}: "
        print(f"error: {prefix}{message}", file=sys.stderr)
        return EXIT_INPUT
    if not args.quiet:
        print(result.summary(), file=sys.stderr)
    if not args.out:
        with pl.Config(tbl_rows=-1, tbl_cols=-1, tbl_width_chars=160):
            print(board)
            if result.features:
                print(result.coefficients())
    return 0
