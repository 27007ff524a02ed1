"""Feature derivation: the vectorised loader against a straightforward per-row Python loop.

Prints the measured seconds and the ratio from one run on full-size simulated data (24,069
conversations by default), and checks that both give identical values. Target: at least 20x.

    .venv/bin/python benchmarks/bench_features.py [--n 24069] [--seed 0]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from reference_features import features_loop  # noqa: E402

from analysis_lib.data import derive  # noqa: E402
from analysis_lib.simulate import search_arena  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=24_069)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    raw, _ = search_arena(n=args.n, seed=args.seed)
    rows = raw.to_dicts()  # the loop baseline gets Python objects for free

    t0 = time.perf_counter()
    tidy, _ = derive(raw, "benchmark")
    t_vec = time.perf_counter() - t0

    t0 = time.perf_counter()
    expected = features_loop(rows)
    t_loop = time.perf_counter() - t0

    mismatches = 0
    for got, exp in zip(tidy.iter_rows(named=True), expected, strict=True):
        for key, value in exp.items():
            g = got[key]
            if isinstance(value, float) and math.isnan(value):
                mismatches += g is not None
            elif g is None or abs(float(g) - float(value)) > 1e-9:
                mismatches += 1
    print(f"conversations: {raw.height:,}; features per conversation: {len(expected[0])}")
    print(f"vectorised derive(): {t_vec:.2f} s")
    print(f"per-row Python loop: {t_loop:.2f} s")
    print(f"speed-up: {t_loop / t_vec:.1f}x (target >= 20x)")
    print(f"values differing: {mismatches} (target 0)")


if __name__ == "__main__":
    main()
