"""Benchmark: Bradley–Terry at arena scale, ``analysis_lib.ranking`` beside arena-rank on the same data in one run.

Run: ``python benchmarks/bench_arena_scale.py`` (the issue's size: 1.6M battles, 130 models, for plain and
contextual BT; ``--small`` for a quick run at a tenth of it; ``--contextual-only`` skips the plain part). The load
average of the machine is printed at the start and the end: measure when it is low. Printed, not a timed test.
Data: simulated battles among ``--models`` models with
Zipf(``--zipf``) popularity (a few models take most battles, the tail has a few thousand each), planted strengths
(SD 0.3 log10-odds ≈ 120 Elo), 20% ties; the contextual part simulates its own battles with ``--features`` style
features (per-side gamma values, planted effects of their normalised differences).

1. Plain BT, each timed from the battle frame (data preparation included; arena-rank from a pandas frame,
   converted beforehand): point fit, ``--rounds`` bootstrap (arena-rank: its multiprocessing pool, 2 spawned
   workers, start-up included), sandwich fit. Exactness: the largest distance in Elo of every rating from an
   L-BFGS fit converged to gtol 1e-10 (scipy, on the mean loss per battle, ftol 0, restarted on the loss
   difference until the gradient meets the tolerance), for ours, arena-rank's and the
   Search Arena authors' kind of fit (scipy L-BFGS-B from 0, gtol 1e-6, 100 iterations). Memory: the peak traced
   allocation of our bootstrap beside the size of one dense battles × models design.
2. Contextual BT (penalty ``reg = 0.5`` on the summed loss, the authors'), ``--rounds`` bootstrap: ours against
   the authors' serial loop (one scipy L-BFGS-B per round with their defaults, ``fit_logistic_lbfgs``, on the
   dense design, BLAS held to one thread, its best time; timed on ``--serial-rounds`` rounds plus the full-data
   fit and extrapolated to all rounds, labelled) and arena-rank's ``ContextualBradleyTerry`` (coefficient
   penalty ``0.5 / n`` on its mean loss, the same weight; its ratings are unpenalised; bootstrap with 2 workers).

   The contextual full-data fit is compared with a tightly converged reference (scipy L-BFGS-B on the mean
   penalised loss, restarted on the loss difference until ``‖∇‖∞ ≤ 1e-11``): every rating (Elo) and coefficient.
   Sandwich intervals for contextual BT are timed from the battle frame too. Each of our contextual timings is
   printed with the process's CPU seconds (all threads) and the load average beside it: on a shared machine the
   wall time is the load's as much as ours.

``--threads 2`` pins the run to two cores on a larger machine: the process's CPU affinity is set to two of its
cores and BLAS, OpenMP and polars are started with two threads (the script re-executes itself with those
settings); the library's thread pools follow the affinity (:data:`analysis_lib.ranking._blas.THREADS`).

Targets (2 cores): point fit ≤ 0.5 s, bootstrap ≤ 5 s, sandwich ≥ 10× faster than arena-rank's, every rating
within 0.01 Elo of the converged reference; contextual (1.6M battles, 8 features, 100 rounds): bootstrap ≤ 15 s
and ≥ 150× the serial loop, full-data fit within 1e-5 of the reference, sandwich ≤ 2 s, and ≥ 3× arena-rank.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing as mp
import os
import sys
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np
import polars as pl
from scipy.optimize import minimize
from threadpoolctl import threadpool_limits

from analysis_lib import ranking
from analysis_lib.ranking import _blas as blas
from analysis_lib.ranking import reference as solver
from analysis_lib.ranking._pairs import PairData, competitors, incidence, pair_indices

REG = 0.5


def simulate(n: int, m: int, zipf: float, seed: int, k: int = 0) -> pl.DataFrame:
    """``n`` battles among ``m`` models (module docstring); ``k`` style features ``f<j>_a``, ``f<j>_b``."""
    rng = np.random.default_rng(seed)
    strength = rng.normal(0.0, 0.3, m)
    pop = 1.0 / np.arange(1, m + 1) ** zipf
    pop /= pop.sum()
    a, b = rng.choice(m, n, p=pop), rng.choice(m, n, p=pop)
    while (same := a == b).any():
        b[same] = rng.choice(m, int(same.sum()), p=pop)
    eta = math.log(10) * (strength[a] - strength[b])
    cols: dict[str, Any] = {}
    for j in range(k):
        xa, xb = rng.gamma(2.0 + j, 50.0, n), rng.gamma(2.0 + j, 50.0, n)
        d = (xa - xb) / (xa + xb + 1.0)
        eta = eta + 0.2 * (j + 1) / k * (d - d.mean()) / d.std()
        cols[f"f{j}_a"], cols[f"f{j}_b"] = xa, xb
    u, t = rng.random(n), rng.random(n)
    win = np.where(u < 1.0 / (1.0 + np.exp(-eta)), 0, 1)
    label = np.array(["model_a", "model_b", "tie", "tie (bothbad)"])[np.where(t < 0.1, 2, np.where(t < 0.2, 3, win))]
    names = np.array([f"model-{i:03d}" for i in range(m)])
    return pl.DataFrame({"model_a": names[a], "model_b": names[b], "winner": label, **cols})


CPU: dict[str, float] = {}


def timed(fn: Callable[[], Any], label: str = "") -> tuple[Any, float]:
    """``(result, wall seconds)``; with a ``label``, the process's CPU seconds (all threads) go to ``CPU[label]``."""
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    if label:
        CPU[label] = time.process_time() - c0
    return out, time.perf_counter() - t0


def load() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def reference_fit(data: PairData, gtol: float = 1e-10) -> tuple[np.ndarray, dict[str, float]]:
    """Elo ratings (mean 1000) of scipy L-BFGS-B on the mean negative log-likelihood per battle, ``‖∇‖∞ ≤ gtol``.

    Near the optimum the loss changes by less than its own rounding error and the line search stalls; each restart
    therefore minimises the loss *difference* to the previous iterate ``r0``, summed term by term
    (``softplus(η) − softplus(η0) = log1p(σ(η0) expm1(η − η0))``), until the gradient meets ``gtol``."""
    a, b, y, c = data.pairs[:, 0], data.pairs[:, 1], data.outcomes, data.counts
    m, total = len(data.models), data.counts.sum()
    r0, iterations, grad = np.zeros(m), 0, math.inf
    for _ in range(20):
        eta0 = math.log(10) * (r0[a] - r0[b])
        s0 = 1.0 / (1.0 + np.exp(-eta0))

        def nll(r: np.ndarray, eta0: np.ndarray = eta0, s0: np.ndarray = s0) -> tuple[float, np.ndarray]:
            eta = math.log(10) * (r[a] - r[b])
            d = eta - eta0
            g_eta = c * (1.0 / (1.0 + np.exp(-eta)) - y) * math.log(10) / total
            value = float(np.sum(c * (np.log1p(s0 * np.expm1(d)) - y * d)) / total)
            return value, np.bincount(a, g_eta, m) - np.bincount(b, g_eta, m)

        res = minimize(nll, r0, jac=True, method="L-BFGS-B",
                       options={"gtol": gtol, "ftol": 0.0, "maxiter": 200_000, "maxcor": 30, "maxfun": 400_000})
        iterations += res.nit
        r0 = res.x - res.x.mean()
        grad = float(np.abs(nll(r0)[1]).max())
        if grad <= gtol:
            break
    return 400 * r0 + 1000, {"iterations": iterations, "grad": grad}


def reference_contextual(a: np.ndarray, b: np.ndarray, z: np.ndarray, y: np.ndarray, m: int, reg: float,
                         gtol: float = 1e-11) -> tuple[np.ndarray, dict[str, float]]:
    """``θ = (r, β)`` of scipy L-BFGS-B on the mean penalised contextual loss ``(Σ_i softplus(η_i) − y_i η_i +
    reg/2 ‖θ‖²) / n``, ``η = ln 10 (r_a − r_b) + zβ``, from 0, restarted on the loss difference (as
    :func:`reference_fit`) until ``‖∇‖∞ ≤ gtol``."""
    n, alpha = len(y), math.log(10)
    p = m + z.shape[1]
    t0, iterations, grad = np.zeros(p), 0, math.inf

    def eta_of(t: np.ndarray) -> np.ndarray:
        return alpha * (t[a] - t[b]) + z @ t[m:]

    for _ in range(30):
        eta0 = eta_of(t0)
        s0 = 1.0 / (1.0 + np.exp(-eta0))

        def f(t: np.ndarray, eta0: np.ndarray = eta0, s0: np.ndarray = s0, t0: np.ndarray = t0
              ) -> tuple[float, np.ndarray]:
            eta = eta_of(t)
            d = eta - eta0
            res = 1.0 / (1.0 + np.exp(-eta)) - y
            value = (np.sum(np.log1p(s0 * np.expm1(d)) - y * d) + 0.5 * reg * (t @ t - t0 @ t0)) / n
            g = np.concatenate([alpha * (np.bincount(a, res, m) - np.bincount(b, res, m)), z.T @ res]) + reg * t
            return float(value), g / n

        res = minimize(f, t0, jac=True, method="L-BFGS-B",
                       options={"gtol": gtol, "ftol": 0.0, "maxiter": 100_000, "maxcor": 30, "maxfun": 200_000})
        iterations += res.nit
        t0 = res.x
        grad = float(np.abs(f(t0)[1]).max())
        if grad <= gtol:
            break
    return t0, {"iterations": iterations, "grad": grad}


def arena_rank_available() -> bool:
    try:
        import arena_rank  # noqa: F401
    except ImportError:
        return False
    return True


def line(label: str, seconds: float, extra: str = "") -> None:
    print(f"  {label:<46}: {seconds:8.2f} s{extra}")


def target(label: str, ok: bool, value: str) -> tuple[str, bool, str]:
    return label, ok, value


def plain(args: argparse.Namespace, with_ar: bool) -> list[tuple[str, bool, str]]:
    frame = simulate(args.battles, args.models, args.zipf, args.seed)
    data = PairData.from_frame(ranking.Battles.from_frame(frame).fit_frame())
    per_model = data.battles_per_model()
    print(f"[plain BT] {frame.height:,} battles, {len(data.models)} models, {len(data.counts):,} unique (a, b, outcome)"
          f" rows; battles per model: min {per_model.min():,.0f}, median {np.median(per_model):,.0f}, "
          f"max {per_model.max():,.0f}")
    ours_point, t_point = timed(lambda: ranking.leaderboard(frame, ci="none"))
    ours_boot, t_boot = timed(lambda: ranking.leaderboard(frame, rounds=args.rounds, progress=False))
    ours_sw, t_sw = timed(lambda: ranking.leaderboard(frame, ci="sandwich"))
    line("ours: point fit", t_point, f"   ({ours_point.convergence.iterations} Newton iterations)")
    line(f"ours: {args.rounds}-round bootstrap", t_boot,
         f"   (rounds: at most {ours_boot.convergence.round_iterations} Newton iterations)")
    line("ours: sandwich fit", t_sw)
    ref, info = reference_fit(data)
    ref_of = dict(zip(data.models, ref, strict=True))
    d_ours = max(abs(r - ref_of[m]) for m, r in zip(ours_point.models, ours_point.rating, strict=True))
    authors = solver.fit_logistic_lbfgs(data.design(), data.outcomes, data.counts[None, :])[0]
    d_auth = float(np.abs(400 * (authors - authors.mean()) + 1000 - ref).max())
    t_ar_sw = math.nan
    if with_ar:
        from arena_rank.models.bradley_terry import BradleyTerry
        from arena_rank.utils.data_utils import PairDataset

        pdf = frame.to_pandas()

        def ar_fit() -> tuple[Any, Any]:
            ds = PairDataset.from_pandas(pdf)
            return ds, BradleyTerry(n_competitors=len(ds.competitors)).fit(ds)

        (ds, model), t_ar_point = timed(ar_fit)
        _, t_ar_boot = timed(lambda: BradleyTerry(n_competitors=len(ds.competitors)).compute_ratings_and_cis(
            PairDataset.from_pandas(pdf), ci_method="bootstrap", num_bootstrap=args.rounds, n_jobs=2))
        ar_sw, t_ar_sw = timed(lambda: BradleyTerry(n_competitors=len(ds.competitors)).compute_ratings_and_cis(
            PairDataset.from_pandas(pdf), ci_method="sandwich"))
        line("arena-rank: point fit", t_ar_point, f"   ratio {t_ar_point / t_point:5.1f}x")
        line(f"arena-rank: {args.rounds}-round bootstrap (2 workers)", t_ar_boot,
             f"   ratio {t_ar_boot / t_boot:5.1f}x")
        line("arena-rank: sandwich fit", t_ar_sw, f"   ratio {t_ar_sw / t_sw:5.1f}x")
        ar_elo = np.asarray(model.params["ratings"]) * model.alpha + model.init_rating
        d_ar = float(max(abs(r - ref_of[m]) for m, r in zip(ds.competitors, ar_elo, strict=True)))
        half = dict(zip(ds.competitors, (np.asarray(ar_sw["rating_upper"]) - np.asarray(ar_sw["rating_lower"])) / 2,
                        strict=True))
        ours_half = (ours_sw.ci_upper - ours_sw.ci_lower) / 2
        rel = np.array([ours_half[i] / half[m] - 1 for i, m in enumerate(ours_sw.models)])
        rare = int(np.argmin(ours_sw.num_battles))
        print(f"  sandwich half-widths, ours (exact Σr = 0) vs arena-rank (hessian_reg 1e-5 · N): median "
              f"{np.median(rel):+.1%}, largest {rel.max():+.1%}; the rarest model ({ours_sw.num_battles[rare]:,.0f} "
              f"battles): ±{ours_half[rare]:.1f} vs ±{half[ours_sw.models[rare]]:.1f} Elo")
    print(f"  reference: L-BFGS-B, mean loss, gtol 1e-10: {info['iterations']:,} iterations, |grad|∞ "
          f"{info['grad']:.1e} ({'converged' if info['grad'] <= 1e-10 else 'NOT converged: distances unreliable'})")
    print(f"  max |Δ Elo| from the reference: ours {d_ours:.1e}" + (f", arena-rank {d_ar:.2f}" if with_ar else "")
          + f", authors' L-BFGS (gtol 1e-6, 100 iterations) {d_auth:.2f}")
    tracemalloc.start()
    ranking.leaderboard(frame, rounds=args.rounds, progress=False)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(f"  peak traced memory of our bootstrap: {peak / 1e6:,.0f} MB (one dense battles × models design: "
          f"{frame.height * len(data.models) * 8 / 1e6:,.0f} MB)")
    out = [target("point fit ≤ 0.5 s", t_point <= 0.5, f"{t_point:.2f} s"),
           target(f"{args.rounds}-round bootstrap ≤ 5 s", t_boot <= 5.0, f"{t_boot:.2f} s"),
           target("every rating within 0.01 Elo of the reference", d_ours <= 0.01, f"{d_ours:.1e} Elo")]
    if with_ar:
        out.append(target("sandwich ≥ 10× faster than arena-rank", t_ar_sw / t_sw >= 10, f"{t_ar_sw / t_sw:.1f}x"))
    return out


def contextual(args: argparse.Namespace, with_ar: bool) -> list[tuple[str, bool, str]]:
    k = args.features
    frame = simulate(args.contextual_battles, args.models, args.zipf, args.seed + 1, k=k)
    feats = [f"f{j}" for j in range(k)]
    n = frame.height
    print(f"\n[contextual BT] {n:,} battles, {args.models} models, {k} style features, reg {REG} (summed loss), "
          f"{args.rounds} rounds")
    print(f"  load average before ours (1, 5, 15 min): {load()}")
    ours, t_ours = timed(lambda: ranking.leaderboard(frame, features=feats, reg=REG, rounds=args.rounds,
                                                     progress=False), "boot")
    line(f"ours: {args.rounds}-round bootstrap", t_ours,
         f"   CPU {CPU['boot']:.2f} s ({blas.THREADS} threads); rounds: at most "
         f"{ours.convergence.round_iterations} iterations; load {load()}")
    sw, t_sw = timed(lambda: ranking.leaderboard(frame, features=feats, reg=REG, ci="sandwich"), "sandwich")
    line("ours: sandwich intervals", t_sw, f"   CPU {CPU['sandwich']:.2f} s; load {load()}")
    _, t_none = timed(lambda: ranking.leaderboard(frame, features=feats, reg=REG, ci="none"), "none")
    line("  of which the full-data fit and its preparation", t_none, f"   CPU {CPU['none']:.2f} s")
    models = competitors(frame)
    pr = pair_indices(frame, models)
    z, _ = ranking.style_features(frame, feats, "float")
    y = frame["winner"].replace_strict(ranking.OUTCOME_OF_WINNER, return_dtype=pl.Float64).to_numpy()
    m = len(models)
    ref, info = reference_contextual(pr[:, 0], pr[:, 1], z, y, m, REG)
    d_rating = float(np.abs(400 * (ours.theta[:m] - ref[:m])).max())
    d_coef = float(np.abs(ours.coef_ml - ref[m:]).max())
    print(f"  reference: L-BFGS-B, mean loss, gtol 1e-11: {info['iterations']:,} iterations, |grad|∞ "
          f"{info['grad']:.1e}; max |Δ| of our full-data fit: ratings {d_rating:.1e} Elo, coefficients {d_coef:.1e}")
    cores = blas.THREADS
    out = [target(f"contextual {args.rounds}-round bootstrap ≤ 15 s", t_ours <= 15.0,
                  f"{t_ours:.2f} s (CPU {CPU['boot']:.1f} s, / {cores} = {CPU['boot'] / cores:.1f} s)"),
           target("contextual full fit within 1e-5 of the reference", max(d_rating, d_coef) <= 1e-5,
                  f"{max(d_rating, d_coef):.1e}"),
           target("contextual sandwich intervals ≤ 2 s", t_sw <= 2.0,
                  f"{t_sw:.2f} s (CPU {CPU['sandwich']:.2f} s, / {cores} = {CPU['sandwich'] / cores:.2f} s)")]
    kk = min(args.serial_rounds, args.rounds)
    if kk > 0:
        x = np.hstack([ranking.ALPHA * incidence(pr, m), z])
        w, t_draw = timed(lambda: ranking.bootstrap_counts(n, kk, seed=0))
        with threadpool_limits(1):  # its best time: a multi-threaded BLAS mostly waits on its threads here
            fits, t_fits = timed(lambda: solver.fit_logistic_lbfgs(x, y, np.vstack([np.ones(n), w]), reg=REG))
        del x
        t_serial = t_draw * args.rounds / kk + t_fits * (args.rounds + 1) / (kk + 1)
        d_auth = float(np.abs(fits[0, m:] - ours.coef_ml).max())
        line(f"authors' serial loop (L-BFGS, {kk + 1} of {args.rounds + 1} fits timed)", t_serial,
             f"   ratio {t_serial / t_ours:5.1f}x   max |Δβ| full fit {d_auth:.1e} (their tolerances)")
        out.append(target("contextual bootstrap ≥ 150× the serial loop", t_serial / t_ours >= 150,
                          f"{t_serial / t_ours:.1f}x"))
    if with_ar:
        from arena_rank.models.contextual_bradley_terry import ContextualBradleyTerry
        from arena_rank.utils.data_utils import ContextualPairDataset

        pdf = frame.select("model_a", "model_b", "winner").with_columns(
            [pl.Series(f"z{j}", z[:, j]) for j in range(k)]).to_pandas()
        rr = min(args.arena_rank_rounds, args.rounds)

        def ar_boot() -> Any:
            ds = ContextualPairDataset.from_pandas(pdf, feature_cols=[f"z{j}" for j in range(k)], reweighted=False,
                                                   normalize_features=False)
            model = ContextualBradleyTerry(n_competitors=len(ds.competitors), n_features=k, reg=REG / n)
            return model.compute_ratings_and_cis(ds, ci_method="bootstrap", num_bootstrap=rr, n_jobs=2)

        _, t_ar = timed(ar_boot)
        t_ar_all = t_ar * args.rounds / rr
        note = "" if rr == args.rounds else f" ({rr} rounds timed, scaled)"
        line(f"arena-rank ContextualBradleyTerry (2 workers){note}", t_ar_all, f"   ratio {t_ar_all / t_ours:5.1f}x")
        out.append(target("contextual bootstrap ≥ 3× arena-rank", t_ar_all / t_ours >= 3, f"{t_ar_all / t_ours:.1f}x"))
    return out


PINNED = "BENCH_ARENA_SCALE_THREADS"


def pin_threads(threads: int) -> None:
    """Re-execute this script on ``threads`` of its cores, with BLAS, OpenMP and polars on ``threads`` threads
    (their pools are sized when the libraries load, so the settings must be in place before Python starts)."""
    if os.environ.get(PINNED) == str(threads):
        return
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    if len(cores) < threads:
        raise SystemExit(f"--threads {threads}: only {len(cores) or os.cpu_count()} cores available to this process")
    os.sched_setaffinity(0, cores[:threads])
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "POLARS_MAX_THREADS", PINNED):
        os.environ[var] = str(threads)
    sys.stdout.flush()
    os.execv(sys.executable, [sys.executable, *sys.argv])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--battles", type=int, default=1_600_000)
    ap.add_argument("--models", type=int, default=130)
    ap.add_argument("--zipf", type=float, default=1.2, help="popularity exponent (default 1.2: ~38k unique rows)")
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--contextual-battles", type=int, default=1_600_000)
    ap.add_argument("--features", type=int, default=8)
    ap.add_argument("--serial-rounds", type=int, default=2, help="serial L-BFGS rounds timed (then scaled; 0: skip)")
    ap.add_argument("--arena-rank-rounds", type=int, default=100, help="arena-rank contextual rounds timed")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--small", action="store_true", help="a tenth of the battles (a quick run)")
    ap.add_argument("--skip-arena-rank", action="store_true")
    ap.add_argument("--contextual-only", action="store_true", help="skip the plain BT part")
    ap.add_argument("--threads", type=int, default=0,
                    help="pin the run to this many cores and threads (BLAS, polars, the library's pools); 0: as is")
    args = ap.parse_args()
    if args.threads:
        pin_threads(args.threads)
    if args.small:
        args.battles //= 10
        args.contextual_battles //= 10
    mp.set_start_method("spawn", force=True)  # arena-rank forks a pool after JAX started threads: fork can hang
    with_ar = not args.skip_arena_rank and arena_rank_available()
    if not with_ar:
        print("arena-rank: not run (--skip-arena-rank, or not installed)")
    print(f"load average at the start (1, 5, 15 min): {', '.join(f'{x:.2f}' for x in os.getloadavg())} on "
          f"{os.cpu_count()} cores; this run: {blas.THREADS} library threads, {pl.thread_pool_size()} polars threads"
          f"{f', pinned to {args.threads} cores' if args.threads else ''}")
    results = ([] if args.contextual_only else plain(args, with_ar)) + contextual(args, with_ar)
    print(f"\nload average at the end (1, 5, 15 min): {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("[targets]")
    for label, ok, value in results:
        print(f"  {'met    ' if ok else 'NOT MET'}  {label:<50} {value}")
    print("(on a shared machine the wall times are the load's as much as ours: CPU seconds / threads is the wall time"
          " the work needs on idle cores)")


if __name__ == "__main__":
    main()
