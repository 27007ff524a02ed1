"""Benchmark: embedding + topic modelling of the real English Search Arena prompts (SA-B4).

Runs the whole pipeline twice, each in a fresh Python process (imports and just-in-time compilation
included): once from a cold embedding cache (a new temporary directory) and once from the warm cache the
first run left (embeddings and the UMAP coordinates). Prints both wall-clock times and the topic structure.
Targets: cold < 300 s, warm < 30 s on two CPU cores.

    python benchmarks/bench_topics.py [--keep-cache DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
from analysis_lib.search_arena import prompt_sets, topics
texts = prompt_sets.search_arena_prompts("all")
t1 = time.perf_counter()
emb = topics.embed_texts(texts, cache_dir=sys.argv[1])
t2 = time.perf_counter()
tp, asg = topics.fit_topics(texts, embeddings=emb, seed=0, cache_dir=sys.argv[1])
t3 = time.perf_counter()
s = topics.topic_summary(tp)
print(json.dumps({"n_texts": len(texts), "load_s": t1 - t0, "embed_s": t2 - t1, "topics_s": t3 - t2,
                  "total_s": t3 - t0, **s._asdict()}))
"""


def run(cache: str) -> dict:
    env = {**os.environ}
    env.setdefault("ANALYSIS_DATA_MIRROR", os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data"))
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", CHILD, cache], capture_output=True, text=True, env=env, check=False)
    wall = time.perf_counter() - t
    if out.returncode != 0:
        sys.exit(f"benchmark child failed:\n{out.stderr[-3000:]}")
    res = json.loads(out.stdout.strip().splitlines()[-1])
    res["wall_s"] = wall
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keep-cache", help="embedding cache directory to use and keep (default: a temporary one)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cache = args.keep_cache or tmp
        cold = run(cache)
        warm = run(cache)
    for name, r, limit in (("cold", cold, 300), ("warm", warm, 30)):
        verdict = "OK" if r["wall_s"] < limit else "SLOWER THAN TARGET"
        print(f"{name}: {r['wall_s']:.1f} s wall (embedding {r['embed_s']:.1f} s, topics {r['topics_s']:.1f} s, "
              f"imports+data {r['load_s']:.1f} s) — target < {limit} s: {verdict}")
    print(f"{cold['n_texts']:,} unique prompts -> {cold['n_topics']} topics; largest {cold['largest_label']!r} "
          f"{cold['largest_share']:.1%} of prompts ({cold['largest_share_clustered']:.1%} of clustered); "
          f"unclustered {cold['unclustered_share']:.1%}")
    same = (cold["n_topics"], cold["largest_share"]) == (warm["n_topics"], warm["largest_share"])
    print(f"cold and warm runs give the same topics: {same}")


if __name__ == "__main__":
    main()
