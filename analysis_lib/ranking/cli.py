"""The leaderboard command for any arena: ``arena-leaderboard FILE [options]`` (``python -m analysis_lib.ranking``).

Reads a battles file (parquet, csv or JSON lines: one battle per row, columns ``model_a``, ``model_b``, ``winner``
by default; other column names and labels are options, or ``--outcome-col`` for a numeric outcome for A in
[0, 1]), fits Bradley–Terry (contextual BT with ``--style f1,f2``, the columns ``<f>_a``, ``<f>_b``) by
:func:`analysis_lib.ranking.leaderboard`, and prints the fit's settings as ``#`` lines (ridge, loss and its
normalisation, tie handling, anchor, what the rating is, intervals, rounds, seed), then the leaderboard with rank
intervals (``rank_lower``, ``rank_upper``: each model's best and worst rank over the bootstrap rounds), or writes
it (``--out board.csv``, ``.parquet``, ``.json`` or ``.jsonl``). ``--by COLUMN`` gives the overall leaderboard and
one per value of the column (a first column named ``COLUMN`` in the written file, empty for the overall).
``--intervals bootstrap`` (default), ``sandwich`` or ``none`` picks the interval method; ``--pairwise`` adds the
intervals of every pairwise difference (anchor-free: the same bootstrap rounds, no anchor enters;
``--pairwise-out FILE`` writes them).

The rating is the full-data fit (``--point ml``, default) with the bootstrap's percentile intervals;
``--point bootstrap_mean`` reports the mean over the rounds (the Search Arena papers' convention). The rating
intervals are centred (every round centred, shifted by the offset that puts the anchor at 1000 in the full-data
fit, so the anchor keeps an interval); ``--anchored`` prints the intervals of each rating's *difference to the
anchor* (plus 1000) instead: the anchor's own interval collapses to 1000.

Every option is checked before the file is read or anything is fitted (:func:`check_options`): ``--rounds`` in
``1 … MAX_ROUNDS``, ``--reg`` ≥ 0, ``--ridge`` > 0, ``--level`` in (0, 1), output files with a suffix written as
that format, in an existing folder; after reading, every ``--exclude`` and ``--anchor`` name must name a model of
the file (the message names the closest). Model names are stripped of surrounding white space; how many were is
reported on stderr. A JSON-lines file may start with a byte-order mark; a line that is not JSON is named by its
line number.

Errors are one line on stderr naming the option, file, column or rows; exit status 0 on success, 2 for bad
input (a bad option, unreadable file, missing column, rows without a vote or with an unknown label unless
``--drop-invalid``, data without an MLE unless ``--on-separation ridge``, unknown anchor or excluded model), 3
when a fit does not converge.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from analysis_lib import reading
from analysis_lib.ranking._newton import ConvergenceError
from analysis_lib.ranking.battles import closest
from analysis_lib.ranking.fit import MAX_ROUNDS, leaderboard
from analysis_lib.ranking.graph import RIDGE
from analysis_lib.ranking.result import Leaderboards, Ranking
from analysis_lib.ranking.votes import BattleFormat

PROG = "arena-leaderboard"
READERS = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl",
           ".json": "jsonl"}
#: Output suffixes and the format each is written as (anything else is refused).
WRITERS = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet", ".json": "json", ".jsonl": "jsonl",
           ".ndjson": "jsonl"}
EXIT_INPUT, EXIT_CONVERGENCE = 2, 3
#: Largest battles file read.
MAX_BYTES = 16 * 1024**3


class InputError(ValueError):
    """A problem with the command's input, reported as one line."""


def read_battles(path: Path, kind: str | None = None) -> pl.DataFrame:
    """The battles in ``path`` (``kind``: ``parquet``, ``csv`` or ``jsonl``; default from the suffix), read by the
    one safe reader, :mod:`analysis_lib.reading`: a regular file of at most :data:`MAX_BYTES`, UTF-8 with or
    without a byte-order mark, a JSON-lines file checked line by line (a bad line named by its number, from 1)."""
    checked, fmt = reading.check_file(path, "a battles file (--format parquet, csv or jsonl)", kind or READERS,
                                      max_bytes=MAX_BYTES)
    return reading.read_frame(checked, fmt, "a battles file")


def strip_names(frame: pl.DataFrame, columns: Sequence[str]) -> tuple[pl.DataFrame, int]:
    """``(frame, n)``: the string ``columns`` as :func:`analysis_lib.reading.name_key` compares names (NFC, surrounding
    white space stripped); ``n`` = values changed."""
    changed = 0
    for c in columns:
        if c in frame.columns and frame[c].dtype == pl.String:
            named = frame.select(reading.name_expr(pl.col(c))).to_series()
            changed += int((named != frame[c]).fill_null(False).sum())
            frame = frame.with_columns(named.alias(c))
    return frame, changed


def _labels(text: str) -> tuple[str, ...]:
    return tuple(s for s in (part.strip() for part in text.split(",")) if s)


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog=PROG,
        description="Bradley–Terry leaderboard (bootstrap or sandwich intervals, rank intervals, pairwise "
                    "differences, per-category boards, style control) of any arena's battles file.",
        epilog="Exit status: 0 done, 2 bad input (one line naming the option, file, column or rows), 3 a fit did "
               "not converge. Example: arena-leaderboard battles.csv --model-a-col left --model-b-col right "
               "--winner-col vote --by category --style length --pairwise",
    )
    ap.add_argument("file", type=Path, help="battles: .parquet, .csv or .jsonl (one battle per row)")
    ap.add_argument("--format", choices=["parquet", "csv", "jsonl"], help="file type (default: from the suffix)")
    cols = ap.add_argument_group("columns and labels (defaults: the LMArena convention)")
    cols.add_argument("--model-a-col", default="model_a")
    cols.add_argument("--model-b-col", default="model_b")
    cols.add_argument("--winner-col", default="winner")
    cols.add_argument("--a-wins", default="model_a", help="comma-separated labels meaning A won")
    cols.add_argument("--b-wins", default="model_b", help="comma-separated labels meaning B won")
    cols.add_argument("--ties", default="tie,tie (bothbad)", help="comma-separated labels meaning a tie (half a win)")
    cols.add_argument("--outcome-col", help="a numeric column with the outcome for A in [0, 1], instead of labels")
    ap.add_argument("--by", help="one leaderboard per value of this column, after the overall one")
    ap.add_argument("--min-battles", type=int, default=0, help="with --by: leave out values with fewer battles")
    ap.add_argument("--style", default="", help="comma-separated style features (columns <f>_a, <f>_b): contextual "
                                                "BT, coefficients in natural log-odds per SD of the feature")
    ap.add_argument("--convention", choices=["float", "paper"], default="float",
                    help="style values as given (float) or truncated to int32 first (paper)")
    ap.add_argument("--anchor", help="model put at 1000 (default: the mean rating is 1000)")
    ap.add_argument("--exclude", default="", help="comma-separated models whose battles are dropped (each must "
                                                  "appear in the file)")
    ap.add_argument("--intervals", "--ci", dest="ci", choices=["bootstrap", "sandwich", "none"],
                    default="bootstrap", help="interval method (default bootstrap)")
    ap.add_argument("--pairwise", action="store_true",
                    help="also the intervals of every pairwise difference (anchor-free, same rounds)")
    ap.add_argument("--anchored", action="store_true",
                    help="rating intervals of each rating's difference to --anchor (anchor fixed at 1000 in every "
                         "round; sandwich: Var(r_j - r_anchor)) instead of the centred ones")
    ap.add_argument("--rounds", type=int, default=100, help=f"bootstrap rounds, 1 to {MAX_ROUNDS:,} (default 100)")
    ap.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    ap.add_argument("--level", type=float, default=0.95, help="interval coverage, between 0 and 1 (default 0.95)")
    ap.add_argument("--point", choices=["ml", "bootstrap_mean"], default="ml",
                    help="reported rating: the full-data fit (default) or the mean over bootstrap rounds")
    ap.add_argument("--reg", type=float, default=0.0, help="penalty reg/2 ||theta||^2 on the summed loss (>= 0)")
    ap.add_argument("--on-separation", choices=["error", "ridge"], default="error",
                    help="data without an MLE: stop with the models concerned (error) or fit with the ridge; a "
                         "bootstrap round without an MLE (when the data have one) is always fitted with the ridge, "
                         "counted in the summary and in the ridge_rounds column")
    ap.add_argument("--ridge", type=float, default=RIDGE, help=f"ridge for fits without an MLE (> 0; default {RIDGE})")
    ap.add_argument("--drop-invalid", action="store_true",
                    help="drop (and count) rows without a vote, with an unknown label or a self-battle")
    ap.add_argument("--out", type=Path, help="write the leaderboard here (.csv, .parquet, .json or .jsonl) instead "
                                             "of printing it")
    ap.add_argument("--coef-out", type=Path, help="write the style coefficients here (.csv, .parquet, .json, .jsonl)")
    ap.add_argument("--pairwise-out", type=Path, help="write the pairwise differences here")
    ap.add_argument("--quiet", action="store_true", help="no progress bar, no summary line")
    return ap


def check_options(args: argparse.Namespace) -> None:
    """Raise :class:`InputError` naming the first option whose value cannot be used (before any work)."""
    if not 1 <= args.rounds <= MAX_ROUNDS:
        raise InputError(f"--rounds must be between 1 and {MAX_ROUNDS:,}, not {args.rounds}")
    if not (math.isfinite(args.level) and 0.0 < args.level < 1.0):
        raise InputError(f"--level must be between 0 and 1 (e.g. 0.95), not {args.level:g}")
    if not (math.isfinite(args.reg) and args.reg >= 0.0):
        raise InputError(f"--reg must be a finite number >= 0, not {args.reg:g}")
    if not (math.isfinite(args.ridge) and args.ridge > 0.0):
        raise InputError(f"--ridge must be a finite number > 0, not {args.ridge:g}")
    if args.min_battles < 0:
        raise InputError(f"--min-battles must be 0 or more, not {args.min_battles}")
    if args.anchored and args.anchor is None:
        raise InputError("--anchored needs --anchor (the model the differences are taken to)")
    if args.anchored and args.ci == "none":
        raise InputError("--anchored needs intervals (--intervals bootstrap or sandwich)")
    for option, path in (("--out", args.out), ("--coef-out", args.coef_out), ("--pairwise-out", args.pairwise_out)):
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
    """Raise :class:`InputError` for an ``--exclude`` or ``--anchor`` name that no battle has (naming the closest)."""
    names: set[str] = set()
    for c in (fmt.model_a, fmt.model_b):
        if c in battles.columns:
            names |= set(battles[c].cast(pl.String).drop_nulls().unique().to_list())
    unknown = [e for e in exclude if e not in names]
    if unknown:
        raise InputError(f"--exclude: {unknown} not among the {len(names)} models of the file"
                         f"{closest(unknown[0], names)}")
    if anchor is not None and anchor not in names:
        raise InputError(f"--anchor: anchor {anchor!r} has no battles here ({len(names)} models in the file)"
                         f"{closest(anchor, names)}")
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


def board(result: Ranking, anchored: bool) -> pl.DataFrame:
    """The written leaderboard: :meth:`Ranking.to_frame` with the ridge columns, then ``rank_lower``, ``rank_upper``."""
    frame = result.to_frame(intervals="anchored" if anchored else "centred", ridge_columns=True)
    return frame.join(result.rank_intervals().drop("rank"), on="model", how="left", maintain_order="left")


def _tables(result: Ranking | Leaderboards, args: argparse.Namespace) -> dict[str, pl.DataFrame]:
    """``board``, ``coef``, ``pairwise`` frames (stacked with the ``--by`` column first for several boards)."""
    parts = [(None, result)] if isinstance(result, Ranking) else [(None, result.overall), *result.subsets.items()]

    def stack(make) -> pl.DataFrame:  # type: ignore[no-untyped-def]
        frames = [make(r) for _, r in parts]
        if isinstance(result, Ranking):
            return frames[0]
        return pl.concat([f.select(pl.lit(None if v is None else str(v), pl.String).alias(args.by), pl.all())
                          for (v, _), f in zip(parts, frames, strict=True)])

    return {"board": stack(lambda r: board(r, args.anchored)), "coef": stack(lambda r: r.coefficients()),
            "pairwise": stack(lambda r: r.differences())}


def _print(result: Ranking | Leaderboards, tables: dict[str, pl.DataFrame], args: argparse.Namespace) -> None:
    parts = [(None, result)] if isinstance(result, Ranking) else [(None, result.overall), *result.subsets.items()]
    first = parts[0][1]
    print("\n".join(f"# {line}" for line in first.header().splitlines()))
    if isinstance(result, Leaderboards):
        print(f"# by: {args.by} ({len(result.subsets)} values" + (
            f"; left out: {', '.join(f'{v} ({why})' for v, why in result.skipped.items())}" if result.skipped
            else "") + ")")
    with pl.Config(tbl_rows=-1, tbl_cols=-1, tbl_width_chars=200, tbl_hide_dataframe_shape=True):
        for value, r in parts:
            if isinstance(result, Leaderboards):
                title = "overall" if value is None else f"{args.by} = {value}"
                note = "" if r.anchor == first.anchor else "; the anchor has no battles here: mean rating 1000"
                print(f"\n## {title}: {r.n_battles:,} battles, {len(r.models)} models{note}")
            if not args.out:
                print(board(r, args.anchored))
            if r.features:
                print(r.coefficients())
            if args.pairwise:
                print(r.differences())


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; returns the exit status (module docstring)."""
    args = build_parser().parse_args(argv)
    try:
        check_options(args)
        fmt = BattleFormat(args.model_a_col, args.model_b_col, args.winner_col, _labels(args.a_wins),
                           _labels(args.b_wins), _labels(args.ties), args.outcome_col)
        battles, stripped = strip_names(read_battles(args.file, args.format), (fmt.model_a, fmt.model_b))
        if stripped:
            print(f"note: {args.file}: {stripped:,} model names stripped of surrounding white space",
                  file=sys.stderr)
        exclude = _labels(args.exclude)
        check_names(battles, fmt, args.anchor, exclude)
        result = leaderboard(
            battles, by=args.by, anchor=args.anchor, exclude=exclude, ci=args.ci, rounds=args.rounds,
            seed=args.seed, level=args.level, point=args.point, features=_labels(args.style), reg=args.reg,
            convention=args.convention, on_separation=args.on_separation, ridge=args.ridge,
            drop_invalid=args.drop_invalid, fmt=fmt, min_battles=args.min_battles, progress=not args.quiet,
            source=str(args.file),
        )
        tables = _tables(result, args)
        for path, name in ((args.out, "board"), (args.coef_out, "coef"), (args.pairwise_out, "pairwise")):
            if path:
                _write(tables[name], path)
    except ConvergenceError as exc:
        print(f"error: {args.file}: {exc}", file=sys.stderr)
        return EXIT_CONVERGENCE
    except (ValueError, TypeError) as exc:  # InputError, InvalidBattlesError, NotIdentifiableError, bad options
        message = " ".join(str(exc).split())
        prefix = "" if message.startswith((str(args.file), "--")) else f"{args.file}: "
        print(f"error: {prefix}{message}", file=sys.stderr)
        return EXIT_INPUT
    if not args.quiet:
        overall = result if isinstance(result, Ranking) else result.overall
        print(overall.summary(), file=sys.stderr)
    _print(result, tables, args)
    return 0
