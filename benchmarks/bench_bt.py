"""Benchmark: batched bootstrap fits of analysis_lib.search_arena.bt against serial L-BFGS and against arena-rank.

Run: ``OPENBLAS_NUM_THREADS=1 python benchmarks/bench_bt.py [--rounds 1000] [--serial-rounds K] [--skip-arena-rank]``
(one BLAS thread gives the serial loop its best and most stable times on a shared machine; the batched solver
threads over rounds itself). Prints measured times and ratios from
one run. Data: the project simulator when ``analysis_lib.search_arena.simulate`` / ``analysis_lib.search_arena.loader``
exist (24,069 conversations, the voted battles kept), else synthetic battles of the same size built here with numpy
(12 models, planted strengths, length / citation / 11 source-group features, 15% ties).

1. Contextual BT, citation count + 11 source indicators (SA-F6L), ``n_rounds`` bootstrap rounds: the library's
   sparse batched solver (``ranking._contextual.chord_rounds``; the whole ``bt.style_control`` call beside
   it) vs a serial loop of scipy L-BFGS-B fits (the authors' approach), on the *same* resampling weights; max
   |Δ coefficient| reported. The serial loop is run with tolerances tight
   enough to agree to 1e-6 (``gtol=1e-9, ftol=1e-13``) and, for reference, with the authors' settings.
2. BT bootstrap, ``n_rounds`` rounds: the library's batched Newton vs ``arena_rank`` (JAX L-BFGS, multiprocessing
   over 2 spawned workers; their start-up is included) on the same battles; point ratings compared after anchoring.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
import polars as pl

from analysis_lib import ranking
from analysis_lib.ranking import _contextual as contextual_solver
from analysis_lib.ranking._pairs import incidence
from analysis_lib.ranking.reference import fit_logistic_lbfgs
from analysis_lib.search_arena import bt, models
from analysis_lib.search_arena.domains import DOMAIN_GROUPS


def synthetic(n: int, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    models = [f"model-{i:02d}" for i in range(11)] + ["gpt-4o-search"]
    strength = np.linspace(-0.15, 0.2, len(models))
    m = len(models)
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    ca, cb = rng.poisson(6.0, n) + rng.random(n), rng.poisson(6.0, n) + rng.random(n)
    dc = (ca - cb) / (ca + cb + 1)
    eta = math.log(10) * (strength[a] - strength[b]) + 0.2 * (dc - dc.mean()) / dc.std()
    cols: dict[str, object] = {"model_a": [models[i] for i in a], "model_b": [models[i] for i in b]}
    cols["citation_count_a"], cols["citation_count_b"] = ca, cb
    for g in DOMAIN_GROUPS:
        cols[f"cites_{g}_a"] = (rng.random(n) < 0.3).astype(int)
        cols[f"cites_{g}_b"] = (rng.random(n) < 0.3).astype(int)
    winner = np.where(rng.random(n) < 1 / (1 + np.exp(-eta)), "model_a", "model_b").astype(object)
    winner[rng.random(n) < 0.15] = "tie"
    cols["winner"] = winner
    return pl.DataFrame(cols)


def load(n_battles: int) -> tuple[pl.DataFrame, str]:
    try:
        from analysis_lib.search_arena.loader import load_battles

        frame = load_battles("sample:24069")
        return frame, "simulator (sample:24069)"
    except Exception as exc:  # noqa: BLE001 - the data layer may not exist yet
        return synthetic(n_battles), f"synthetic numpy battles ({type(exc).__name__} from the data layer)"


def contextual_design(frame: pl.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    prep = bt.prepare_battles(frame).frame
    models = sorted(set(prep["model_a"]) | set(prep["model_b"]))
    idx = {m: i for i, m in enumerate(models)}
    pairs = np.column_stack(
        [prep["model_a"].replace_strict(idx).to_numpy(), prep["model_b"].replace_strict(idx).to_numpy()]
    )
    z, _ = ranking.style_features(prep, bt.SOURCES, "paper")
    y = ranking.Battles.from_frame(prep).fit_frame()["y"].to_numpy()
    return np.hstack([ranking.ALPHA * incidence(pairs, len(models)), z]), y


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=1000)
    ap.add_argument("--battles", type=int, default=12600)
    ap.add_argument("--serial-rounds", type=int, default=None, help="serial L-BFGS rounds (default: all)")
    ap.add_argument("--skip-arena-rank", action="store_true", help="skip the (slow) arena-rank bootstrap")
    args = ap.parse_args()
    frame, source = load(args.battles)
    print(f"data: {source}; {bt.prepare_battles(frame).summary()}")

    # ---- 1. contextual BT bootstrap ------------------------------------------------------------------------
    x, y = contextual_design(frame)
    n = len(y)
    print(f"\n[contextual BT] {n:,} battles, {x.shape[1]} parameters (citation count + 11 source groups), "
          f"{args.rounds} rounds")
    w = ranking.bootstrap_counts(n, args.rounds, seed=0)
    m = x.shape[1] - len(bt.SOURCES)
    sides = np.column_stack([np.argmax(x[:, :m] > 0, axis=1), np.argmax(x[:, :m] < 0, axis=1)])
    design = contextual_solver.ContextualDesign.build(sides, x[:, m:], y, m)
    theta, _ = contextual_solver.newton(design, np.ones(n), bt.REG)
    t0 = time.perf_counter()
    h0 = design.hessian(theta, np.ones(n), bt.REG)
    batched, _ = contextual_solver.chord_rounds(design, w, theta, h0, bt.REG)
    t_batched = time.perf_counter() - t0
    t0 = time.perf_counter()
    whole = bt.style_control(frame, bt.SOURCES, rounds=args.rounds, seed=0, progress=False)
    t_whole = time.perf_counter() - t0
    assert whole.rounds is not None
    k = args.serial_rounds or args.rounds
    t0 = time.perf_counter()
    serial = fit_logistic_lbfgs(x, y, w[:k], reg=bt.REG, gtol=1e-9, ftol=1e-13, max_iter=2000)
    t_serial = (time.perf_counter() - t0) * args.rounds / k
    t0 = time.perf_counter()
    serial_paper = fit_logistic_lbfgs(x, y, w[:k], reg=bt.REG)  # gtol=1e-6, maxiter=100
    t_paper = (time.perf_counter() - t0) * args.rounds / k
    d_tight = np.abs(batched[:k, m:] - serial[:, m:]).max()
    d_paper = np.abs(batched[:k, m:] - serial_paper[:, m:]).max()
    print(f"  sparse batched Newton         : {t_batched:7.2f} s")
    d_whole = np.abs(whole.rounds[:, m:] - batched[:, m:]).max()
    print(f"  bt.style_control (whole call) : {t_whole:7.2f} s   max |Δβ| {d_whole:.1e}")
    print(f"  serial L-BFGS (tight)         : {t_serial:7.2f} s   ratio {t_serial / t_whole:5.1f}x   "
          f"max |Δβ| = {d_tight:.1e}" + (f"  (extrapolated from {k} rounds)" if k < args.rounds else ""))
    print(f"  serial L-BFGS (authors' tol)  : {t_paper:7.2f} s   ratio {t_paper / t_whole:5.1f}x   "
          f"max |Δβ| = {d_paper:.1e}")

    # ---- 2. BT bootstrap vs arena-rank ------------------------------------------------------------------------
    prep = bt.prepare_battles(frame).frame
    print(f"\n[BT] {prep.height:,} battles, {args.rounds} rounds")
    t0 = time.perf_counter()
    lb = bt.leaderboard(prep, rounds=args.rounds, seed=0).to_frame()
    t_ours = time.perf_counter() - t0
    print(f"  analysis_lib.search_arena.bt.leaderboard   : {t_ours:7.2f} s")
    if args.skip_arena_rank:
        return
    try:
        from arena_rank.models.bradley_terry import BradleyTerry
        from arena_rank.utils.data_utils import PairDataset
    except ImportError:
        print("  arena-rank not installed")
        return
    import multiprocessing as mp

    mp.set_start_method("spawn", force=True)  # arena-rank forks a pool after JAX started threads: fork can hang
    ds = PairDataset.from_pandas(prep.to_pandas())
    t0 = time.perf_counter()
    model = BradleyTerry(n_competitors=len(ds.competitors))
    res = model.compute_ratings_and_cis(ds, ci_method="bootstrap", num_bootstrap=args.rounds, n_jobs=2)
    t_ar = time.perf_counter() - t0
    theirs = np.asarray(res["ratings"])
    theirs = dict(zip(ds.competitors, theirs - theirs[ds.competitors.index(models.ANCHOR)] + 1000.0, strict=True))
    ours = dict(lb.select("model", "rating_ml").iter_rows())
    diff = max(abs(ours[mm] - theirs[mm]) for mm in ours)
    print(f"  arena-rank (bootstrap, 2 jobs): {t_ar:7.2f} s   ratio {t_ar / t_ours:5.1f}x   "
          f"max |Δ point rating| = {diff:.1e} Elo")


if __name__ == "__main__":
    main()
