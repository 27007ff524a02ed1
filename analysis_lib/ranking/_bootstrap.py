"""Bootstrap draws and the runner that fits rounds in chunks on threads (internal to :mod:`analysis_lib.ranking`).

Resampling battles with replacement is a multinomial draw of ``N`` battles: over the unique ``(a, b, outcome)``
rows with probabilities ``counts / N`` for plain BT, over the ``N`` battle rows with probability ``1/N`` each for
contextual BT (the same distribution of resampled battle sets as drawing battle indices). One
``numpy.random.default_rng(seed)`` generator draws the rounds in order, ``rng.multinomial(N, p, size=…)`` per
chunk (:func:`count_chunks`), so the rounds are exactly those of :func:`bootstrap_counts` (all rounds at once:
the draws of the book's numbers) however they are chunked. Chunks bound memory (``rounds × rows``); they are
fitted on two threads while the next chunk is drawn, each chunk's rounds batched and warm-started from the
full-data optimum (:func:`bootstrap_pairs` here; the contextual rounds in :mod:`~analysis_lib.ranking._contextual`).

Arena scale (contextual BT on at least :data:`~analysis_lib.ranking._contextual.LARGE_BATTLES` battles).
``rng.multinomial`` over ``N`` equally likely battles costs one binomial draw per battle (0.2 s a round at 1.6M
battles); there each round is drawn as the counts of ``N`` indices drawn uniformly with replacement
(``bincount(rng.integers(0, N, N))``, :func:`draw_round`) over the battles sorted by pair, the same multinomial
distribution at a tenth of the cost. Each round has its own generator, seeded by
``SeedSequence(seed).spawn(rounds)`` (:func:`round_draws`), and is drawn by the thread that fits it: the draws run
in parallel, and the rounds are reproducible by seed whatever the number of threads (not the same draws as below
that size: the book's fits are smaller and keep theirs).

A round without an MLE (an unpenalised fit whose resampled beat graph is not strongly connected:
:mod:`analysis_lib.ranking.graph`) is decided before fitting: it is fitted with the ridge when one is given (the
leaderboard always gives one when the full data have an MLE: a skewed arena's rare model that lost every battle
a resample kept must not stop the leaderboard), else it raises
:class:`~analysis_lib.ranking.graph.NotIdentifiableError`. Every such round is counted, and so is, per model, each
round in which that model was outside the largest strongly connected group of the resample (its rating in that
round set by the ridge's prior, not by the data): the second value the bootstrap functions return, a
``(rounds, models)`` boolean array. A round whose fit does not converge raises
:class:`~analysis_lib.ranking._newton.ConvergenceError`; no NaN passes silently.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

import numpy as np
from tqdm import tqdm

from analysis_lib.ranking._blas import THREADS, one_blas_thread
from analysis_lib.ranking._newton import NewtonReport, PairStats, check_converged, fit_pairs
from analysis_lib.ranking.graph import NotIdentifiableError, diagnose, mle_exists

#: Most ``rounds × rows`` weights in one chunk of rounds (unique rows for plain BT, battles for contextual BT).
CHUNK_CELLS = 250_000
CONTEXTUAL_CHUNK_CELLS = 500_000
#: Threads fitting chunks of rounds at once (:data:`~analysis_lib.ranking._blas.THREADS`; numpy's element-wise work
#: releases the GIL), for bootstraps of at least :data:`MIN_THREADED_CELLS` ``rounds × rows``; smaller ones run on
#: one thread, where starting and feeding the threads costs more than they save (1,500 battles × 100 rounds:
#: 0.06 s on one thread, 0.11 s on two).
MIN_THREADED_CELLS = 1_000_000

ChunkResult = tuple[np.ndarray, np.ndarray, NewtonReport]
W = TypeVar("W")  # what a chunk is fitted from: its resample counts, or the seed its round draws them from


def bootstrap_counts(n: int, rounds: int, seed: int, p: np.ndarray | None = None) -> np.ndarray:
    """``(rounds, n)`` multinomial counts: the bootstrap draws of every leaderboard below arena scale.

    With ``p = None`` each of ``n`` battles is equally likely (contextual BT: the checked battles in their order);
    with ``p`` the unique-row shares ``counts / Σ counts`` and ``n = Σ counts`` draws (plain BT: the unique
    ``(model_a, model_b, y)`` rows, models indexed in sorted order, rows sorted by ``(a, b, y)``), which is the
    same distribution of resampled battle sets. ``leaderboard(…, seed=s)`` fits exactly these rounds."""
    return next(count_chunks(n, rounds, seed, p, max(1, rounds)))[1] if rounds else np.zeros((0, n))


def count_chunks(n: int, rounds: int, seed: int, p: np.ndarray | None,
                 chunk: int) -> Iterator[tuple[int, np.ndarray]]:
    """``(first round, counts)``: the counts of :func:`bootstrap_counts`, ``chunk`` rounds at a time, from one
    generator (module docstring)."""
    rng = np.random.default_rng(seed)
    probs = np.full(n, 1.0 / n) if p is None else p
    for start in range(0, rounds, chunk):
        yield start, rng.multinomial(n, probs, size=min(chunk, rounds - start)).astype(float)


def _bar(rounds: int, progress: bool | None) -> tqdm:
    # progress=None: tqdm's own rule (a bar only on an interactive terminal)
    return tqdm(total=rounds, desc="bootstrap", unit="round", disable=None if progress is None else not progress,
                leave=False)


def _no_mle_error(models: tuple[str, ...], pairs: np.ndarray, y: np.ndarray, w: np.ndarray, exists: np.ndarray,
                  start: int, rounds: int) -> NotIdentifiableError:
    first = int(np.argmin(exists))
    diag = diagnose(models, pairs, y, w[first])
    return NotIdentifiableError(
        f"{int((~exists).sum())} of bootstrap rounds {start}–{start + len(exists) - 1} (of {rounds} rounds) have no "
        f"Bradley–Terry MLE; round {start + first}: {diag.message()}"
    )


def ridge_outside(models: tuple[str, ...], pairs: np.ndarray, y: np.ndarray, w: np.ndarray,
                  exists: np.ndarray) -> np.ndarray:
    """``(B, m)`` booleans: for each round (row of ``w``) without an MLE, the models outside the largest strongly
    connected group of its beat graph (:func:`~analysis_lib.ranking.graph.diagnose`), whose ratings the ridge sets
    in that round; all false for rounds with an MLE."""
    out = np.zeros((w.shape[0], len(models)), dtype=bool)
    for j in np.flatnonzero(~exists):
        main = set(diagnose(models, pairs, y, w[j]).main)
        out[j] = [m not in main for m in models]
    return out


def _run(
    weights: Iterator[tuple[int, W]], fit_chunk: Callable[[int, W], ChunkResult], rounds: int,
    width: int, n_models: int,
    progress: bool | None, threads: int,
) -> tuple[np.ndarray, np.ndarray, NewtonReport]:
    """Fit the chunks of ``weights`` in order on ``threads`` threads (BLAS held to one thread each), drawing the
    next chunk while the others are fitted; at most ``threads`` chunks in flight."""
    results: list[ChunkResult] = []
    with _bar(rounds, progress) as bar, one_blas_thread():
        if threads <= 1:
            for start, w in weights:
                results.append(fit_chunk(start, w))
                bar.update(results[-1][0].shape[0])
        else:
            with ThreadPoolExecutor(threads) as pool:
                pending: deque[Future[ChunkResult]] = deque()
                for start, w in weights:
                    pending.append(pool.submit(fit_chunk, start, w))
                    while len(pending) >= threads:
                        results.append(pending.popleft().result())
                        bar.update(results[-1][0].shape[0])
                while pending:
                    results.append(pending.popleft().result())
                    bar.update(results[-1][0].shape[0])
    if not results:
        return np.zeros((0, width)), np.zeros((0, n_models), dtype=bool), NewtonReport.concat([])
    return (np.vstack([r[0] for r in results]), np.vstack([r[1] for r in results]),
            NewtonReport.concat([r[2] for r in results]))


def _threads(threads: int | None, rounds: int, rows: int) -> int:
    """The caller's thread count, else :data:`THREADS` for large bootstraps and one for small ones."""
    if threads is not None:
        return threads
    return THREADS if rounds * rows >= MIN_THREADED_CELLS else 1


def _chunk_size(rounds: int, rows: int, threads: int, cells: int, params: int) -> int:
    """Rounds per chunk: at most ``cells`` weights and ``cells`` Hessian entries (``params²`` per round), and no
    more than an equal share of the rounds per thread."""
    return max(1, min(cells // max(1, rows), cells // max(1, params * params), -(-rounds // max(1, threads))))


def bootstrap_pairs(
    stats: PairStats,
    models: tuple[str, ...],
    pairs: np.ndarray,
    outcomes: np.ndarray,
    counts: np.ndarray,
    theta_hat: np.ndarray,
    rounds: int,
    seed: int,
    *,
    reg: float = 0.0,
    ridge: float | None = None,
    progress: bool | None = None,
    threads: int | None = None,
) -> tuple[np.ndarray, np.ndarray, NewtonReport]:
    """``(θ per round (rounds, m), models set by the ridge per round (rounds, m), report)`` for plain BT on unique
    rows.

    Rounds are warm-started from ``theta_hat``; with ``reg = 0`` each resample's MLE existence is checked first
    and a resample without one is fitted with ``ridge`` (or raises when ``ridge`` is None).
    """
    total = counts.sum()
    threads = _threads(threads, rounds, len(counts))

    def fit_chunk(start: int, w: np.ndarray) -> ChunkResult:
        n, s = stats.totals(w)
        theta = np.empty((w.shape[0], stats.n_models))
        exists = np.ones(w.shape[0], dtype=bool) if reg else mle_exists(pairs, outcomes, len(models), w)
        if not exists.all():
            if ridge is None:
                raise _no_mle_error(models, pairs, outcomes, w, exists, start, rounds)
            theta[~exists], rep_r = fit_pairs(stats, n[~exists], s[~exists], reg=ridge, theta0=theta_hat)
            check_converged(rep_r, "bootstrap (ridge)")
        theta[exists], rep = fit_pairs(stats, n[exists], s[exists], reg=reg, theta0=theta_hat)
        check_converged(rep, "bootstrap")
        return theta, ridge_outside(models, pairs, outcomes, w, exists), rep

    chunk = _chunk_size(rounds, len(counts), threads, CHUNK_CELLS, stats.n_models)
    weights = count_chunks(int(total), rounds, seed, counts / total, chunk)
    return _run(weights, fit_chunk, rounds, stats.n_models, len(models), progress, threads)


def round_draws(rounds: int, seed: int) -> list[np.random.SeedSequence]:
    """The seeds of ``rounds`` arena-scale rounds: round ``j`` draws its counts from its own
    generator, ``numpy.random.default_rng(SeedSequence(seed).spawn(rounds)[j])`` (:func:`draw_round`), so a
    round's draw does not depend on which thread draws it or in what order."""
    return np.random.SeedSequence(seed).spawn(rounds)


def draw_round(n: int, seq: np.random.SeedSequence) -> np.ndarray:
    """``(n,)`` int64 counts: how often each of ``n`` equally likely battles is drawn in ``n`` uniform draws with
    replacement (one multinomial resample)."""
    rng = np.random.default_rng(seq)
    return np.bincount(rng.integers(0, n, size=n, dtype=np.int64), minlength=n)
