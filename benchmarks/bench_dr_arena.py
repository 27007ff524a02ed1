"""Benchmark: the simulated DR-Arena tournament of the offline build (DR-S, DR-T6, DR-F5 to DR-F7).

12 latent-skill agents, 4 Swiss rounds, every pair playing one match on each mirrored information tree, then
the BT leaderboard with 100 bootstrap rounds and the correlation-by-rounds refits. Prints the wall-clock time of
each stage (median of ``--repeat`` runs, trees already loaded) and its ratio to the 5 s target. Then the build's
check of a user's match logs: the last tournament written as one JSONL file and read back by
``match_log.validate_match_logs`` (every line checked), beside polars' ``read_ndjson`` of the same file (no checks)
as the anchor, in the same run.

    python benchmarks/bench_dr_arena.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import polars as pl

from analysis_lib import dr_arena
from analysis_lib.dr_arena import diagnostics, match_log, simulate, tournament

TARGET_S = 5.0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    trees = dr_arena.load_trees()
    agents = simulate.make_agents(12, seed=0)
    times: dict[str, list[float]] = {"tournament": [], "leaderboard (100 bootstrap)": [], "correlation by rounds": [],
                                     "total": []}
    for rep in range(args.repeat):
        t0 = time.perf_counter()
        rounds = simulate.simulate_tournament(agents, trees, n_rounds=4, seed=rep).rounds
        t1 = time.perf_counter()
        tournament.ratings(match_log.matches(rounds), rounds=100, seed=rep)
        t2 = time.perf_counter()
        diagnostics.correlation_by_rounds(rounds, simulate.planted_strength(agents))
        t3 = time.perf_counter()
        for k, v in zip(times, (t1 - t0, t2 - t1, t3 - t2, t3 - t0), strict=True):
            times[k].append(v)
    n_matches = match_log.matches(rounds).height
    print(f"12 agents, 4 Swiss rounds, {len(trees)} trees: {n_matches} matches, {rounds.height} rounds (last run)")
    for k, v in times.items():
        print(f"{k:>28}: median {statistics.median(v):.3f} s over {len(v)} runs")
    total = statistics.median(times["total"])
    print(f"total / target ({TARGET_S:.0f} s): {total / TARGET_S:.3f}")
    with tempfile.TemporaryDirectory() as tmp:
        log = match_log.write_match_log(Path(tmp) / "tournament.jsonl", rounds.to_dicts())
        check, anchor = [], []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            n = match_log.validate_match_logs(log)
            t1 = time.perf_counter()
            pl.read_ndjson(log)
            t2 = time.perf_counter()
            check.append(t1 - t0)
            anchor.append(t2 - t1)
        size = log.stat().st_size
    c, a = statistics.median(check), statistics.median(anchor)
    print(f"validate_match_logs: {n} rounds ({size / 1e6:.2f} MB) in {c:.3f} s; polars read_ndjson {a:.3f} s; "
          f"ratio {c / a:.1f}")


if __name__ == "__main__":
    main()
