"""Benchmarks of the nugget chapter (07): scoring at scale, the chapter's slow steps against the code they
replaced (measured side by side, outputs asserted equal), and the whole chapter from cold.

1. **Scoring** 100k battle sides (50k battles, ~12.5 nuggets each): cap, four scores, preference, confusion and
   κ, the threshold sweep, three K-S tests and the KDE curves. Target: under 2 s.
2. **Steps, before and after** (each on the chapter's default inputs, the same data for both; CPU and wall time):
   the simulator's nugget texts (a Zipf draw per nugget by ``Generator.choice(p=…)``, which re-checks ``p`` on
   every call, against one cumulative table); NG-T2's Jaccard (a Python loop over pairs against one sparse
   product); sentence splitting (pysbd with the process's regex cache, 50 patterns once ``numpy.f2py`` is
   imported, against room for its ~2,500 patterns); NG-F8's ROUGE-L maxima (every pair against the
   bound-pruned search). ``--encoder`` adds the NG-T2 encoder with two torch threads against one (loads torch
   and the shipped MiniLM).
3. ``--chapter``: the chapter notebook from cold (fresh cache folder, so the release, the records and the
   embeddings are all computed) with papermill, this tree against ``--baseline-ref`` (default ``6a8b4ed``, the
   commit before this work, unpacked with ``git archive``), ``--rounds`` times each, interleaved. Target: 30 s
   wall on two cores. The machine is shared: wall times vary with its load (printed), CPU times less.
4. ``--memory``: the peak memory of :func:`~analysis_lib.nuggets.load_nugget_records` on a generated records file
   of ``--memory-mb`` MB (default 80; simulated records with nugget texts, responses and chunks, repeated with
   distinct battle ids), each load in a fresh subprocess: peak RSS less the RSS after the imports, as a multiple of
   the file's size, this tree against ``--memory-ref`` (the loader before it streamed into column chunks; results
   asserted equal). Measured (two shared cores; peak over the imports, as a multiple of the file):

   ========  ===================  ===================  ===================
   file      before (461039b)     after                frames held
   ========  ===================  ===================  ===================
   24.8 MB   130 MB = 5.23x       125 MB = 5.05x       0.82x
   74.5 MB   320 MB = 4.30x       147 MB = 1.98x       0.82x
   148.9 MB  607 MB = 4.08x       249 MB = 1.67x       0.82x
   ========  ===================  ===================  ===================

   Before, every side stayed a Python dict and every nugget value a Python string until the end, then the frames
   were built beside them and the exclusions grouped the nugget texts into lists; after, the records become frame
   chunks every 2,048 sides, and the differing-lists check compares a 16-byte digest per side. Below ~25 MB the
   peak is not proportional to the file (after: 25 MB for a 1.8 MB file, 125 MB for 24.8 MB, 147 MB for 74.5 MB;
   what grows then stops is, by all signs, the allocators' pools), so the gain shows on the large files.

Run: ``PYTHONPATH=$PWD python benchmarks/bench_nuggets.py [--encoder] [--chapter [--rounds 2]] [--memory]``.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from analysis_lib import nuggets as ng
from analysis_lib.nuggets import battles, diversity, rouge, sampling
from analysis_lib.nuggets.sentences import split_sentences
from analysis_lib.nuggets.simulate import quality, simulate_nuggets
from analysis_lib.nuggets.simulate.quality import _draw_noise, zipf_cdf
from analysis_lib.search_arena import encoder as offline
from analysis_lib.search_arena import loader

ROOT = Path(__file__).resolve().parents[1]
N_BATTLES = 50_000
TARGET_SCORE_S = 2.0
TARGET_CHAPTER_S = 30.0


def timed(f: Callable[[], Any]) -> tuple[Any, float, float]:
    """(result, wall seconds, CPU seconds of this process)."""
    w, c = time.perf_counter(), time.process_time()
    out = f()
    return out, time.perf_counter() - w, time.process_time() - c


def compare(name: str, before: Callable[[], Any], after: Callable[[], Any], same: Callable[[Any, Any], bool]) -> None:
    b, bw, bc = timed(before)
    a, aw, ac = timed(after)
    if not same(b, a):
        sys.exit(f"{name}: the new code's output differs from the old code's")
    print(f"{name}: before {bc:.2f} s CPU ({bw:.2f} s wall), after {ac:.2f} s CPU ({aw:.2f} s wall); "
          f"CPU ratio {bc / max(ac, 1e-9):.1f}x, same output")


# ----------------------------------------------------------------------------------------- 1. scoring

def scoring() -> None:
    rng = np.random.default_rng(0)
    battles = pl.DataFrame({
        "conv_id": [f"c{i}" for i in range(N_BATTLES)],
        "winner": rng.choice(["model_a", "model_b", "tie", "tie (bothbad)"], size=N_BATTLES, p=[0.34, 0.35, 0.2, 0.11]),
        "language": rng.choice(["English", "Russian", "Chinese"], size=N_BATTLES),
    })
    records, t_sim, _ = timed(lambda: simulate_nuggets(battles, seed=0, texts=False).records)
    scores, t_score, _ = timed(lambda: ng.battle_scores(records))

    def tests() -> tuple[float, int, int, int]:
        kappa = ng.subset_confusions(scores)[("overall", "all")].kappa
        sweep = ng.threshold_sweep(scores["all_a"].to_numpy(), scores["all_b"].to_numpy(), scores["winner"].to_numpy())
        ks = ng.ks_by_vote(scores["diff"].to_numpy(), scores["winner"].to_numpy())
        return kappa, sweep.height, ks.height, ng.perbattle.kde_curves(ng.diffs_by_vote(scores)).height

    (kappa, n_sweep, n_ks, n_kde), t_test, _ = timed(tests)
    total = t_score + t_test
    print(f"1. scoring: {records.sides.height:,} battle sides, {records.nuggets.height:,} nugget assignments "
          f"(simulated in {t_sim:.2f} s); score {t_score:.3f} s; confusions, kappa {kappa:.3f}, sweep of {n_sweep}, "
          f"{n_ks} K-S tests, KDE {n_kde} points {t_test:.3f} s; total {total:.3f} s against the {TARGET_SCORE_S} s "
          f"target (ratio {TARGET_SCORE_S / total:.2f})")


# ----------------------------------------------------------------------------------------- 2. steps

def old_texts(noise: Any, rng: np.random.Generator, vocab_size: int = 4000, topic_size: int = 30) -> list[str]:
    """The simulator's nugget texts as written before (one ``rng.choice(p=zipf)`` per nugget)."""
    vocab = np.array(["".join(rng.choice(quality._SYLLABLES, size=3)) for _ in range(vocab_size)])
    zipf = 1.0 / np.arange(1, vocab_size + 1)
    zipf /= zipf.sum()
    topics = rng.choice(vocab_size, size=(noise.n.size, topic_size), p=zipf)
    out = []
    for b, k in zip(noise.battle, rng.integers(5, 11, size=noise.battle.size), strict=True):
        from_topic = rng.uniform(size=k) < 0.7
        words = np.where(from_topic, topics[b, rng.integers(0, topic_size, size=k)],
                         rng.choice(vocab_size, size=k, p=zipf))
        out.append(" ".join(vocab[words]))
    return out


def old_jaccard(nuggets: pl.DataFrame) -> np.ndarray:
    """NG-T2's Jaccard as written before: a Python loop over each battle's pairs."""
    side_a = nuggets.filter(pl.col("side") == "a")
    return np.array([diversity.mean_pairwise_jaccard(g["text"].to_list())
                     for _, g in side_a.group_by("qid", maintain_order=True)])


def old_split(texts: list[str]) -> list[list[str]]:
    """pysbd with the process's regex cache as it is (what ``split_sentences`` did before): CPython keeps 512
    compiled patterns, and importing ``numpy.f2py`` (scipy does) lowers that to 50."""
    import pysbd

    re.purge()
    return [[s.strip() for s in pysbd.Segmenter(language="en", clean=False).segment(t) if s.strip()] for t in texts]


def steps(single: pl.DataFrame, records: ng.records.NuggetRecords) -> None:
    noise = _draw_noise(single.height, np.random.default_rng(0), quality.DEFAULT_PARAMS)
    compare("2a. simulator nugget texts", lambda: old_texts(noise, np.random.default_rng(1)),
            lambda: quality._texts(noise, np.random.default_rng(1)), lambda b, a: b == a)
    assert np.allclose(np.searchsorted(zipf_cdf(10), [0.0, 0.999999]), [0, 9])
    compare("2b. NG-T2 Jaccard per battle", lambda: old_jaccard(records.nuggets),
            lambda: diversity.battle_diversity(records.nuggets)["jaccard"].to_numpy(),
            lambda b, a: np.allclose(b, a, rtol=1e-12, equal_nan=True))
    f8 = sampling.sample_records(records, 100, 0).battle_texts()
    texts = [c for cs in f8["chunks"] for c in cs] + f8["text_a"].to_list()
    limit = re._MAXCACHE  # type: ignore[attr-defined]
    compare(f"2c. sentence splitting ({len(texts):,} texts; this process's regex cache: {limit} patterns)",
            lambda: old_split(texts),
            lambda: [split_sentences(t, "en") for t in texts], lambda b, a: b == a)
    pairs = [([s for c in r["chunks"] for s in split_sentences(c)], split_sentences(r["text_a"]))
             for r in f8.iter_rows(named=True)]
    tok = rouge.UnicodeTokenizer()
    scorer = rouge.rouge_l_scorer(tok)
    compare(f"2d. NG-F8 ROUGE-L maxima ({len(pairs)} responses)",
            lambda: [rouge.rouge_l_matrix(r, c, scorer).max(axis=1) for c, r in pairs],
            lambda: [rouge.best_f1(r, c, scorer, tok) for c, r in pairs],
            lambda b, a: all(np.array_equal(x, y) for x, y in zip(b, a, strict=True)))


def encoder(records: ng.records.NuggetRecords) -> None:
    import torch

    ids = sampling.sample_ids(sampling.record_order_ids(records), 200, 0)
    texts = sampling.subset_records(records, ids).nuggets.filter(pl.col("side") == "a")["text"].to_list()
    out = {}
    for n in (2, 1):
        torch.set_num_threads(n)
        out[n] = timed(lambda: offline.encode(texts, batch_size=64))
    same = np.array_equal(out[2][0], out[1][0])
    print(f"2e. NG-T2 encoder ({offline.resolve_precision()}) on {len(texts):,} nuggets: "
          f"two torch threads {out[2][2]:.1f} s CPU ({out[2][1]:.1f} s "
          f"wall), one thread {out[1][2]:.1f} s CPU ({out[1][1]:.1f} s wall); wall ratio {out[2][1] / out[1][1]:.1f}x; "
          f"{'the same bits' if same else 'DIFFERENT embeddings'}")


# ----------------------------------------------------------------------------------------- 3. chapter

def run_chapter(tree: Path, tmp: Path, label: str) -> tuple[float, float]:
    """Run ``tree``'s chapter 07 from a fresh cache with papermill; (wall, CPU of the kernel and papermill)."""
    cache = Path(tempfile.mkdtemp(dir=tmp, prefix=f"{label}-cache-"))
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1", "ANALYSIS_CACHE_DIR": str(cache)}
    env.setdefault("ANALYSIS_DATA_MIRROR", str(ROOT.parent / "shared" / "data"))
    cmd = [sys.executable, "-m", "papermill", "--no-progress-bar", "-k", "python3",
           str(tree / "notebooks" / "07_nuggets.ipynb"), str(tmp / f"{label}.ipynb"),
           "-p", "cache_dir", str(cache), "-p", "results_dir", str(tmp / f"{label}-results")]
    before = os.times()
    w = time.perf_counter()
    done = subprocess.run(cmd, cwd=tree / "notebooks", env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - w
    after = os.times()
    if done.returncode:
        sys.exit(f"{label}: the chapter failed:\n{done.stderr[-3000:]}")
    return wall, (after.children_user - before.children_user) + (after.children_system - before.children_system)


def chapter(ref: str, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        base = tmp / "baseline"
        base.mkdir()
        archive = subprocess.run(["git", "archive", ref], cwd=ROOT, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(base)], input=archive, check=True)
        times: dict[str, list[tuple[float, float]]] = {"before": [], "after": []}
        for k in range(rounds):
            for label, tree in (("before", base), ("after", ROOT)):
                load = os.getloadavg()[0]
                times[label].append(run_chapter(tree, tmp, f"{label}{k}"))
                wall, cpu = times[label][-1]
                print(f"3. chapter 07 from cold, {label} ({ref if label == 'before' else 'this tree'}), round {k + 1}: "
                      f"{wall:.1f} s wall, {cpu:.1f} s CPU (load average {load:.1f} on {os.cpu_count()} cores)")
        med = {k: np.median(np.array(v), axis=0) for k, v in times.items()}
        print(f"3. median: before {med['before'][0]:.1f} s wall / {med['before'][1]:.1f} s CPU, after "
              f"{med['after'][0]:.1f} s wall / {med['after'][1]:.1f} s CPU; wall ratio "
              f"{med['before'][0] / med['after'][0]:.1f}x, CPU ratio {med['before'][1] / med['after'][1]:.1f}x; "
              f"target {TARGET_CHAPTER_S:.0f} s wall (after / target = {med['after'][0] / TARGET_CHAPTER_S:.2f})")


# ----------------------------------------------------------------------------------------- 4. loader memory

#: run in a fresh interpreter: load the records, print the RSS after the imports, the peak RSS (both in bytes), the
#: frames' size and a digest of the result
_MEASURE = """
import hashlib, resource, sys
import polars as pl
from analysis_lib.nuggets import load_nugget_records
def rss():
    with open("/proc/self/status") as fh:
        return next(int(l.split()[1]) * 1024 for l in fh if l.startswith("VmRSS:"))
base = rss()
rec = load_nugget_records(sys.argv[1])
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
size = rec.sides.estimated_size() + rec.nuggets.estimated_size()
digest = hashlib.sha256()
for frame in (rec.sides, rec.nuggets):
    digest.update(frame.rechunk().write_ipc(None, compat_level=pl.CompatLevel.oldest()).getvalue())
digest.update(repr(rec.excluded).encode())
print(base, peak, size, digest.hexdigest())
"""


def records_file(path: Path, megabytes: float) -> int:
    """Write a records file of about ``megabytes`` MB: 2,000 simulated battles (nugget texts, responses, chunks)
    repeated with distinct battle ids; returns its size in bytes."""
    rng = np.random.default_rng(0)
    n = 2000
    votes = pl.DataFrame({"conv_id": [f"c{i}" for i in range(n)],
                          "winner": rng.choice(["model_a", "model_b", "tie", "tie (bothbad)"], size=n),
                          "language": rng.choice(["English", "Russian", "Chinese"], size=n)})
    one = simulate_nuggets(votes, seed=0).records.to_jsonl(path.with_suffix(".one.jsonl")).read_text("utf-8")
    copies = max(1, round(megabytes * 1e6 / len(one.encode())))
    with path.open("w", encoding="utf-8") as fh:
        for k in range(copies):
            fh.write(one.replace('{"qid": "c', f'{{"qid": "r{k}c'))
    return path.stat().st_size


def loader_memory(ref: str, megabytes: float) -> None:
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        base = tmp / "baseline"
        base.mkdir()
        archive = subprocess.run(["git", "archive", ref], cwd=ROOT, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(base)], input=archive, check=True)
        data = tmp / "records.jsonl"
        size = records_file(data, megabytes)
        out = {}
        for label, tree in (("before", base), ("after", ROOT)):
            env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1"}
            w = time.perf_counter()
            done = subprocess.run([sys.executable, "-c", _MEASURE, str(data)], cwd=tree, env=env, capture_output=True,
                                  text=True, check=False)
            wall = time.perf_counter() - w
            if done.returncode:
                sys.exit(f"{label}: the load failed:\n{done.stderr[-3000:]}")
            rss0, peak, frames, digest = done.stdout.split()
            extra = int(peak) - int(rss0)
            out[label] = digest
            print(f"4. loader memory, {label} ({ref if label == 'before' else 'this tree'}): {size / 1e6:.1f} MB file, "
                  f"peak {extra / 1e6:.0f} MB over the imports = {extra / size:.2f}x the file "
                  f"(frames {int(frames) / 1e6:.0f} MB = {int(frames) / size:.2f}x); {wall:.1f} s wall")
        if out["before"] != out["after"]:
            sys.exit("4. the loaded records differ between before and after")
        print("4. the same records before and after")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--encoder", action="store_true", help="also time the NG-T2 encoder with two threads and one")
    ap.add_argument("--chapter", action="store_true", help="also run the chapter from cold, before and after")
    ap.add_argument("--baseline-ref", default="6a8b4ed", help="git commit of the 'before' chapter")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--memory", action="store_true", help="only the records loader's peak memory, before and after")
    ap.add_argument("--memory-mb", type=float, default=80.0)
    ap.add_argument("--memory-ref", default="461039b", help="git commit of the 'before' loader")
    args = ap.parse_args()
    if args.memory:
        loader_memory(args.memory_ref, args.memory_mb)
        return
    scoring()
    single, _ = battles.single_turn(loader.load_battles("sample", seed=0))
    records = simulate_nuggets(single, seed=0).records
    steps(single, records)
    if args.encoder:
        encoder(records)
    if args.chapter:
        chapter(args.baseline_ref, args.rounds)


if __name__ == "__main__":
    main()
