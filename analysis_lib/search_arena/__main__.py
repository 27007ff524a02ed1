"""The leaderboard command: ``python -m analysis_lib.search_arena SOURCE`` (or ``search-arena-leaderboard SOURCE``).

A thin Search Arena wrapper over the generic leaderboard (:func:`analysis_lib.ranking.leaderboard`, whose own
command ``python -m analysis_lib.ranking FILE`` takes any battles file): it reads a Search Arena release (a path to
the released parquet or jsonl, ``hf``, or ``sample[:N]`` for the simulator) with
:func:`analysis_lib.search_arena.loader.load_battles`, applies the paper's battle filter, anchor and exclusions
(:func:`analysis_lib.search_arena.bt.leaderboard`) and prints the Table D.1 leaderboard: Bradley–Terry ratings on
the Elo scale with the anchor at 1000, 95% intervals (bootstrap, or ``--ci sandwich``) and ranks. ``--output`` also
writes it as CSV. Needs only the core install.

For any other arena's battles (a CSV, parquet or JSON-lines file with your own column names) use the general command
``arena-leaderboard FILE`` (:mod:`analysis_lib.ranking.cli`); this command's errors on reading say so.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import polars as pl

from analysis_lib.ranking import ConvergenceError
from analysis_lib.search_arena import bt, loader
from analysis_lib.search_arena.models import ANCHOR


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m analysis_lib.search_arena",
                                     description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("source", help="a release file (.parquet / .jsonl), 'hf[:REF]', or 'sample[:N]' (simulator)")
    parser.add_argument("--rounds", type=int, default=100, help="bootstrap rounds (default 100, as the paper)")
    parser.add_argument("--ci", choices=["bootstrap", "sandwich"], default="bootstrap",
                        help="interval method (default: bootstrap, as the paper)")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed, and the simulator's for 'sample'")
    parser.add_argument("--anchor", default=ANCHOR, help=f"model fixed at 1000 Elo (default {ANCHOR})")
    parser.add_argument("--output", help="also write the leaderboard to this CSV file")
    args = parser.parse_args(argv)
    if args.rounds < 0:
        parser.error("--rounds must be 0 or more")
    return args


#: What a read error adds: the general command for data that are not a Search Arena release.
GENERAL = ("this command reads a Search Arena release; to rank another arena's battles file (CSV, parquet or JSON "
           "lines, your own column names) use: arena-leaderboard FILE --model-a-col A --model-b-col B --winner-col W "
           "(arena-leaderboard --help)")


def main(argv: Sequence[str] | None = None) -> int:
    """Print the leaderboard of ``source``; exit status 0, 2 when the source cannot be read or ranked, 3 when a fit
    does not converge."""
    args = parse_args(argv)
    try:
        battles = loader.load_battles(args.source, seed=args.seed)
    except (OSError, ValueError) as err:  # not a release (another file type, other columns), unreadable
        print(f"error: {err}; {GENERAL}", file=sys.stderr)
        return 2
    try:
        result = bt.leaderboard(battles, anchor=args.anchor, rounds=args.rounds, seed=args.seed, ci=args.ci)
    except ConvergenceError as err:
        print(f"error: {err}", file=sys.stderr)
        return 3
    except ValueError as err:  # no battles, unknown anchor, no MLE
        print(f"error: {err}", file=sys.stderr)
        return 2
    board = result.to_frame()
    shown = board.select("rank", "model", "rating", "ci_lower", "ci_upper", "num_battles").with_columns(
        pl.col("rating", "ci_lower", "ci_upper").round(1))
    with pl.Config(tbl_rows=-1, tbl_hide_dataframe_shape=True, tbl_hide_column_data_types=True):
        print(shown)
    print(result.summary(), file=sys.stderr)
    if args.output:
        board.write_csv(args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
