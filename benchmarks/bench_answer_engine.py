"""Time to compute all eight AEE metrics (exact set cover included) for 10,000 answers of 10 sources.

Target: under 5 s. Prints the vectorised time, the per-answer reference time on a subsample (extrapolated) and
their ratio, and checks the two agree on the subsample.

    PYTHONPATH=$PWD python benchmarks/bench_answer_engine.py [--answers 10000] [--sources 10]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from analysis_lib import answer_engine as ae


def random_answers(n: int, m: int, seed: int = 0) -> tuple[list[ae.Answer], list[bool]]:
    """``n`` answers of exactly ``m`` sources, 8–20 statements, sparse citations and support."""
    rng = np.random.default_rng(seed)
    answers = []
    for _ in range(n):
        s = int(rng.integers(8, 21))
        relevant = rng.random(s) < 0.8
        support = rng.random((s, m)) < 0.15
        citations = rng.random((s, m)) < 0.08
        stance = tuple(rng.choice(["pro", "con", "neutral"], size=s))
        answers.append(ae.Answer(relevant, citations, support, stance, int(rng.integers(1, 6))))
    return answers, list(rng.random(n) < 0.55)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--answers", type=int, default=10_000)
    ap.add_argument("--sources", type=int, default=10)
    ap.add_argument("--reference", type=int, default=300, help="answers timed with the per-answer reference")
    args = ap.parse_args()
    answers, debate = random_answers(args.answers, args.sources)

    t0 = time.perf_counter()
    batch = ae.pack_answers(answers, debate)
    t1 = time.perf_counter()
    frame = ae.batch_metrics(batch, "set_cover")
    t2 = time.perf_counter()
    k = min(args.reference, args.answers)
    ref = ae.metrics_frame([("e", d, a) for d, a in zip(debate[:k], answers[:k])], "set_cover")
    t3 = time.perf_counter()
    agree = all(np.allclose(frame[c].to_numpy()[:k], ref[c].to_numpy(), equal_nan=True) for c in ae.METRICS)
    per_answer = (t3 - t2) / k * args.answers
    print(f"{args.answers:,} answers × {args.sources} sources, {int(batch.valid.sum()):,} statements")
    print(f"pack (Answer objects → bitmasks): {t1 - t0:.2f} s")
    print(f"all eight metrics, exact set cover, vectorised: {t2 - t1:.2f} s (target < 5 s: "
          f"{'met' if t2 - t1 < 5 else 'NOT met'})")
    print(f"per-answer reference: {t3 - t2:.2f} s for {k} answers → {per_answer:.1f} s extrapolated; "
          f"speed-up ×{per_answer / (t2 - t1):.0f}")
    print(f"vectorised == per-answer on the first {k} answers: {agree}")


if __name__ == "__main__":
    main()
