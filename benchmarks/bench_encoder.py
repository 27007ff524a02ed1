"""The offline encoder in bfloat16 against float32 (the anchor), side by side in one process (issue 23, chapter 02).

Embeds the real English Search Arena prompts of chapter 02 (4,747 unique) with the shipped all-MiniLM-L6-v2 at each
precision, in alternating order (float32, bfloat16, float32, bfloat16 with ``--repeat 2``) after one warm-up batch,
and prints per precision: the best wall and CPU seconds, the ratio to float32, and how far the bfloat16 vectors are
from float32's: per-prompt cosine (min, 1st percentile, mean), the share of each prompt's 15 nearest neighbours
(cosine, as UMAP's graph) kept, and the largest change of a pairwise cosine. With ``--topics`` it also fits the
chapter's topics on both (same seed) and prints their structure: the vectors agree to 1e-4, the clusterings need not.

    python benchmarks/bench_encoder.py [--threads N] [--repeat R] [--topics]

Whether bfloat16 is native here (``encoder.native_bfloat16``) is printed first: without it bfloat16 is emulated
and slower, and ``precision="auto"`` keeps float32.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

PRECISIONS = ("float32", "bfloat16")


def neighbours(v: np.ndarray, k: int) -> np.ndarray:
    sims = v @ v.T
    np.fill_diagonal(sims, -np.inf)
    return np.argpartition(-sims, k, axis=1)[:, :k]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's, one per core)")
    ap.add_argument("--repeat", type=int, default=1, help="timed runs per precision (the best is kept)")
    ap.add_argument("--topics", action="store_true", help="also fit the chapter's topics on both")
    args = ap.parse_args()
    os.environ.setdefault("ANALYSIS_DATA_MIRROR", str(Path(__file__).resolve().parents[2] / "shared" / "data"))

    import torch

    from analysis_lib.search_arena import encoder, prompt_sets

    if args.threads:
        torch.set_num_threads(args.threads)
    texts = prompt_sets.search_arena_prompts("all")
    print(f"{len(texts):,} prompts, {torch.get_num_threads()} torch threads, native bfloat16: "
          f"{encoder.native_bfloat16()}, auto -> {encoder.resolve_precision('auto')}")
    for p in PRECISIONS:
        encoder.encode(texts[:32], p)  # load the model, warm both paths
    vecs: dict[str, np.ndarray] = {}
    best: dict[str, tuple[float, float]] = {}
    for _ in range(args.repeat):
        for p in PRECISIONS:
            wall, cpu = time.perf_counter(), time.process_time()
            vecs[p] = encoder.encode(texts, p)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            best[p] = min(best.get(p, (np.inf, np.inf)), (wall, cpu))
    anchor = best["float32"][0]
    for p in PRECISIONS:
        wall, cpu = best[p]
        print(f"{p:9s} {wall:6.1f} s wall {cpu:6.1f} s CPU   ratio to float32 {wall / anchor:.2f}")

    full, half = vecs["float32"], vecs["bfloat16"]
    cos = (full * half).sum(axis=1)
    k = 15
    kept = np.mean([np.intersect1d(a, b).size / k for a, b in zip(neighbours(full, k), neighbours(half, k),
                                                                     strict=True)])
    pair = np.abs(full @ full.T - half @ half.T).max()
    print(f"bfloat16 vs float32: cosine min {cos.min():.5f}, 1st percentile {np.percentile(cos, 1):.5f}, "
          f"mean {cos.mean():.6f}; {kept:.1%} of the {k} nearest neighbours kept; largest pairwise cosine change "
          f"{pair:.4f}")

    if args.topics:
        import tempfile

        from analysis_lib.search_arena import topics

        for p in PRECISIONS:
            with tempfile.TemporaryDirectory() as tmp:
                table, _ = topics.fit_topics(texts, embeddings=vecs[p], seed=0, cache_dir=tmp, precision=p)
            s = topics.topic_summary(table)
            print(f"topics ({p}): {s.n_topics} topics, largest {s.largest_share_clustered:.1%} of clustered "
                  f"({s.largest_label}), {s.unclustered_share:.1%} unclustered")


if __name__ == "__main__":
    main()
