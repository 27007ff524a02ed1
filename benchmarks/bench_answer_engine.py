"""Time to compute all eight AEE metrics (exact set cover included) for 10,000 answers of 10 sources, and to
read and validate an answer-records file the size of the authors' release.

Metrics target: under 5 s. Prints the vectorised time, the per-answer reference time on a subsample
(extrapolated) and their ratio, and checks the two agree on the subsample.

Reading: a file of ``--load-mb`` megabytes (default 132, the size of ``ans_eng_eval_0.1.json``) of simulated
records with padded source texts, read by ``ae.load_answer_records`` (bounded read, UTF-8, JSON, every record
validated) against the anchor ``json.loads(path.read_text())`` (no checks at all), measured side by side; the
ratio is the cost of the validation.

    PYTHONPATH=$PWD python benchmarks/bench_answer_engine.py [--answers 10000] [--sources 10] [--load-mb 132]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

from analysis_lib import answer_engine as ae
from analysis_lib.answer_engine.simulate import simulate_answers
from analysis_lib.fetch import published


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


def release_sized_file(folder: Path, megabytes: float) -> tuple[Path, int]:
    """The 909 simulated records with their source texts padded so the file has about
    ``megabytes`` MB, like the release (long scraped texts, a few hundred short fields)."""
    base = simulate_answers(pl.read_csv(published("aee_figure8_scorecard")), seed=0).records
    per_record = megabytes * 1e6 / len(base)
    records = []
    for r in base:
        r = dict(r)
        slots = [i for i in range(1, 11) if r.get(f"S{i}_content")]
        for i in slots:
            r[f"S{i}_content"] += "lorem ipsum " * int(per_record / len(slots) / 12)
        records.append(r)
    path = folder / "answers.json"
    path.write_text(json.dumps(records))
    return path, len(records)


def time_loading(megabytes: float) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path, n = release_sized_file(Path(tmp), megabytes)
        size = path.stat().st_size / 1e6
        t0 = time.perf_counter()
        raw = json.loads(path.read_text())
        t1 = time.perf_counter()
        records = ae.load_answer_records(path)
        t2 = time.perf_counter()
        assert len(raw) == len(records) == n
        print(f"read {n:,} records, {size:.0f} MB: json.loads {t1 - t0:.2f} s (anchor, no checks); "
              f"ae.load_answer_records {t2 - t1:.2f} s (bounded read + UTF-8 + JSON + validation); "
              f"ratio ×{(t2 - t1) / (t1 - t0):.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--answers", type=int, default=10_000)
    ap.add_argument("--sources", type=int, default=10)
    ap.add_argument("--reference", type=int, default=300, help="answers timed with the per-answer reference")
    ap.add_argument("--load-mb", type=float, default=132.0, help="size of the answer-records file to read (0: skip)")
    args = ap.parse_args()
    if args.load_mb > 0:
        time_loading(args.load_mb)
    answers, debate = random_answers(args.answers, args.sources)

    t0 = time.perf_counter()
    batch = ae.pack_answers(answers, debate)
    t1 = time.perf_counter()
    frame = ae.batch_metrics(batch, "set_cover")
    t2 = time.perf_counter()
    k = min(args.reference, args.answers)
    ref = ae.metrics.metrics_frame([("e", d, a) for d, a in zip(debate[:k], answers[:k])], "set_cover")
    t3 = time.perf_counter()
    agree = all(np.allclose(frame[c].to_numpy()[:k], ref[c].to_numpy(), equal_nan=True) for c in ae.metrics.METRICS)
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
