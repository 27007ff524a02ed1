"""The sparse solvers: plain BT on unique pairs (:mod:`analysis_lib.ranking._newton`) and contextual BT on battle rows
(:mod:`analysis_lib.ranking._contextual`).

Known answers: the dense row-wise loss, gradient and Hessian (``ranking.solver``), scikit-learn's penalised
logistic regression, statsmodels' unpenalised GLM, an independent scipy L-BFGS fit converged to gtol 1e-10, and
one exact Newton fit per bootstrap round. Memory: no array of size battles × models (nor unique rows × models).
"""

from __future__ import annotations

import math
import tracemalloc

import numpy as np
import polars as pl
import pytest
import statsmodels.api as sm
from scipy.optimize import minimize
from sklearn.linear_model import LogisticRegression

from analysis_lib import ranking
from analysis_lib.ranking import _contextual as cs
from analysis_lib.ranking import _newton as newton
from analysis_lib.ranking import _pairs as pairs
from analysis_lib.ranking import reference as solver


def arena(n: int, m: int, s: float = 1.2, seed: int = 0, k: int = 0) -> tuple[pl.DataFrame, np.ndarray]:
    """Battles among ``m`` models with Zipf(``s``) popularity, planted strengths, 20% ties, ``k`` style features."""
    rng = np.random.default_rng(seed)
    strength = rng.normal(0.0, 0.3, m)
    pop = 1.0 / np.arange(1, m + 1) ** s
    pop /= pop.sum()
    a, b = rng.choice(m, n, p=pop), rng.choice(m, n, p=pop)
    while (same := a == b).any():
        b[same] = rng.choice(m, int(same.sum()), p=pop)
    eta = math.log(10) * (strength[a] - strength[b])
    cols: dict[str, object] = {}
    for j in range(k):
        xa, xb = rng.gamma(2.0 + j, 50.0, n), rng.gamma(2.0 + j, 50.0, n)
        d = (xa - xb) / (xa + xb + 1)
        eta = eta + 0.2 * (d - d.mean()) / d.std()
        cols[f"f{j}_a"], cols[f"f{j}_b"] = xa, xb
    u, t = rng.random(n), rng.random(n)
    win = np.where(u < 1 / (1 + np.exp(-eta)), 0, 1)
    label = np.array(["model_a", "model_b", "tie", "tie (bothbad)"])[np.where(t < 0.1, 2, np.where(t < 0.2, 3, win))]
    names = np.array([f"m{i:03d}" for i in range(m)])
    return pl.DataFrame({"model_a": names[a], "model_b": names[b], "winner": label, **cols}), strength


def _rows(n_rows: int = 400, m: int = 6, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Random unique-row data: pairs (some reversed duplicates), fractional outcomes, positive counts."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, m, n_rows)
    b = (a + rng.integers(1, m, n_rows)) % m
    y = rng.choice([0.0, 0.5, 1.0, 0.3], n_rows)
    return np.column_stack([a, b]), y, rng.integers(1, 20, n_rows).astype(float)


# ------------------------------------------------------------------------------------------------ plain BT


def test_pair_folding_gives_the_row_wise_loss_gradient_and_hessian():
    pr, y, c = _rows()
    m = 6
    stats = newton.PairStats.from_rows(pr, y, m)
    x = pairs.ALPHA * pairs.incidence(pr, m)
    theta = np.random.default_rng(1).normal(scale=0.3, size=(3, m))
    w = np.vstack([c, c * 2, np.roll(c, 5)])
    n, s = stats.totals(w)
    for reg in (0.0, 0.7):
        loss = stats.loss(theta, n, s, reg)
        grad = stats.gradient(theta, n, s, reg)
        hess = stats.hessian(theta, n, reg)
        for k in range(3):
            ref_loss, ref_grad = solver.logistic_loss_and_grad(theta[k], x, y, w[k], reg)
            p = 1 / (1 + np.exp(-x @ theta[k]))
            ref_hess = x.T @ (x * (w[k] * p * (1 - p))[:, None]) + reg * np.eye(m)
            assert loss[k] == pytest.approx(ref_loss, rel=1e-12)
            np.testing.assert_allclose(grad[k], ref_grad, atol=1e-9)
            np.testing.assert_allclose(hess[k], ref_hess, atol=1e-9)


def test_batched_newton_matches_one_dense_lbfgs_fit_per_round_and_keeps_sum_zero():
    pr, y, c = _rows(seed=2)
    stats = newton.PairStats.from_rows(pr, y, 6)
    w = ranking.bootstrap_counts(int(c.sum()), 8, seed=3, p=c / c.sum())
    n, s = stats.totals(w)
    theta, report = newton.fit_pairs(stats, n, s)
    # the reference: scipy L-BFGS on the dense row-wise loss, one fit per round from 0 (its steps keep Σ r = 0)
    dense = solver.fit_logistic_lbfgs(pairs.ALPHA * pairs.incidence(pr, 6), y, w, gtol=1e-10, ftol=0.0,
                                      max_iter=10_000)
    assert report.converged.all() and report.iterations.max() < 15
    np.testing.assert_allclose(theta, dense - dense.mean(axis=1, keepdims=True), atol=1e-6)
    assert np.abs(theta.sum(axis=1)).max() < 1e-12
    warm, warm_report = newton.fit_pairs(stats, n, s, theta0=theta[0])  # warm start: round 0 is done at once
    assert warm_report.iterations[0] == 1 and warm_report.iterations.max() <= report.iterations.max()
    np.testing.assert_allclose(warm, theta, atol=1e-9)


def test_penalised_newton_matches_sklearn():
    pr, y, c = _rows(seed=4)
    stats = newton.PairStats.from_rows(pr, y, 6)
    n, s = stats.totals(c)
    theta, _ = newton.fit_pairs(stats, n, s, reg=2.0)
    x = pairs.ALPHA * pairs.incidence(pr, 6)
    xx, yy = np.vstack([x, x]), np.concatenate([np.ones(len(y)), np.zeros(len(y))])
    ww = np.concatenate([c * y, c * (1 - y)])
    keep = ww > 0
    ref = LogisticRegression(C=1 / 2.0, fit_intercept=False, tol=1e-12, max_iter=10_000)
    ref.fit(xx[keep], yy[keep], sample_weight=ww[keep])
    np.testing.assert_allclose(theta[0], ref.coef_[0], atol=1e-6)


def _lbfgs_reference(data: pairs.PairData, gtol: float = 1e-10) -> np.ndarray:
    """Independent fit: scipy L-BFGS-B on the mean negative log-likelihood per battle, to ``‖∇‖∞ ≤ gtol``.

    Near the optimum the loss changes by less than its rounding error, so a restart minimises the loss *difference*
    to the previous iterate ``r0``, computed term by term (``softplus(η) − softplus(η0) = log1p(σ(η0) expm1(η −
    η0))``), which the line search can resolve."""
    a, b, y, c = data.pairs[:, 0], data.pairs[:, 1], data.outcomes, data.counts
    m, total = len(data.models), data.counts.sum()
    r0 = np.zeros(m)
    for _ in range(10):
        eta0 = math.log(10) * (r0[a] - r0[b])
        s0 = 1 / (1 + np.exp(-eta0))

        def f(r, eta0=eta0, s0=s0):
            eta = math.log(10) * (r[a] - r[b])
            d = eta - eta0
            g_eta = c * (1 / (1 + np.exp(-eta)) - y) * math.log(10) / total
            value = np.sum(c * (np.log1p(s0 * np.expm1(d)) - y * d)) / total
            return value, np.bincount(a, g_eta, m) - np.bincount(b, g_eta, m)

        res = minimize(f, r0, jac=True, method="L-BFGS-B",
                       options={"gtol": gtol, "ftol": 0.0, "maxiter": 100_000, "maxfun": 200_000, "maxcor": 30})
        r0 = res.x - res.x.mean()
        if np.abs(f(r0)[1]).max() <= gtol:
            return r0
    raise AssertionError("the reference fit did not converge")


def test_arena_scale_fit_is_within_a_hundredth_of_an_elo_of_a_converged_lbfgs_fit():
    battles, strength = arena(200_000, 60, seed=5)
    result = ranking.leaderboard(battles, ci="none")
    data = pairs.PairData.from_frame(ranking.Battles.from_frame(battles).fit_frame())
    ref = 400 * _lbfgs_reference(data) + 1000
    ours = dict(zip(result.models, result.rating, strict=True))
    assert max(abs(ours[mm] - r) for mm, r in zip(data.models, ref, strict=True)) < 0.01
    assert result.convergence.iterations < 20 and result.convergence.step < 1e-10


def _peak(fit) -> int:
    tracemalloc.start()
    try:
        fit()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_no_array_of_size_unique_rows_times_models():
    battles, _ = arena(300_000, 300, seed=6)
    checked = ranking.Battles.from_frame(battles)
    data = pairs.PairData.from_frame(checked.fit_frame())
    dense = len(data.counts) * len(data.models) * 8  # bytes of one unique rows × models design
    peak = _peak(lambda: ranking.leaderboard(checked, rounds=30, on_separation="ridge"))
    assert peak < dense / 3  # a battles × models design would be another 10× larger
    assert _peak(lambda: ranking.leaderboard(checked, ci="sandwich", on_separation="ridge")) < dense / 10


# ------------------------------------------------------------------------------------------- contextual


def _contextual(n: int = 3000, m: int = 5, k: int = 3, seed: int = 7):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    z = rng.normal(size=(n, k))
    eta = math.log(10) * 0.1 * (a - b) + z @ np.linspace(0.2, -0.3, k)
    y = np.where(rng.random(n) < 0.1, 0.5, (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float))
    pr = np.column_stack([a, b])
    return pr, z, y, np.hstack([pairs.ALPHA * pairs.incidence(pr, m), z])


def test_contextual_design_matches_the_dense_design():
    pr, z, y, x = _contextual()
    design = cs.ContextualDesign.build(pr, z, y, 5)
    rng = np.random.default_rng(8)
    theta = rng.normal(scale=0.2, size=(2, 8))
    w = rng.poisson(1.0, (2, len(y))).astype(float)
    loss, grad = design.loss(theta, w.T, 0.5), design.gradient(theta, w.T, 0.5)
    for k in range(2):
        ref_loss, ref_grad = solver.logistic_loss_and_grad(theta[k], x, y, w[k], 0.5)
        assert loss[k] == pytest.approx(ref_loss, rel=1e-12)
        np.testing.assert_allclose(grad[k], ref_grad, atol=1e-9)
        p = 1 / (1 + np.exp(-x @ theta[k]))
        ref_hess = x.T @ (x * (w[k] * p * (1 - p))[:, None]) + 0.5 * np.eye(8)
        np.testing.assert_allclose(design.hessian(theta[k], w[k], 0.5), ref_hess, atol=1e-9)


def test_contextual_newton_matches_sklearn_and_statsmodels():
    pr, z, y, x = _contextual(seed=9)
    design = cs.ContextualDesign.build(pr, z, y, 5)
    theta, report = cs.newton(design, np.ones(len(y)), 0.5)
    xx, yy = np.vstack([x, x]), np.concatenate([np.ones(len(y)), np.zeros(len(y))])
    ww = np.concatenate([y, 1 - y])
    keep = ww > 0
    ref = LogisticRegression(C=1 / 0.5, fit_intercept=False, tol=1e-12, max_iter=10_000)
    ref.fit(xx[keep], yy[keep], sample_weight=ww[keep])
    assert report.converged[0]
    np.testing.assert_allclose(theta, ref.coef_[0], atol=1e-6)
    free, _ = cs.newton(design, np.ones(len(y)), 0.0)  # unpenalised: statsmodels GLM, model 0 as the base
    glm = sm.GLM(y, np.delete(x, 0, axis=1) / np.r_[np.full(4, pairs.ALPHA), np.ones(3)],
                 family=sm.families.Binomial()).fit(tol=1e-12)
    np.testing.assert_allclose(free[5:], glm.params[4:], atol=1e-7)
    np.testing.assert_allclose(pairs.ALPHA * (free[1:5] - free[0]), glm.params[:4], atol=1e-7)
    assert abs(free[:5].sum()) < 1e-12


@pytest.mark.parametrize("reg", [0.5, 0.0])
def test_chord_rounds_reach_each_rounds_exact_optimum(reg):
    pr, z, y, _ = _contextual(n=2000, seed=10)
    design = cs.ContextualDesign.build(pr, z, y, 5)
    theta, _ = cs.newton(design, np.ones(len(y)), reg)
    w = ranking.bootstrap_counts(len(y), 12, seed=11)
    rounds, report = cs.chord_rounds(design, w, theta, design.hessian(theta, np.ones(len(y)), reg), reg)
    assert report.converged.all() and report.iterations.max() < cs.CHORD_ITER  # no exact-Newton fallback needed
    for k in (0, 6, 11):
        exact, _ = cs.newton(design, w[k], reg, xtol=1e-12)
        np.testing.assert_allclose(rounds[k], exact, atol=1e-9)


def test_sorted_battles_give_the_dense_designs_loss_gradient_and_hessian():
    """The arena-scale layout (battles oriented lo -> hi, sorted by pair, features feature-major) against the dense
    design x = (α (e_a − e_b), z) with the input's sides and outcomes, for random θ and weights."""
    from scipy.special import expit

    from analysis_lib.ranking import _sorted as sb

    pr, z, y, x = _contextual(seed=21)
    battles = sb.SortedBattles.build(pr, z, y, 5)
    rng = np.random.default_rng(22)
    theta = rng.normal(scale=0.2, size=8)
    w_in = rng.poisson(1.0, len(y)).astype(float)
    block = battles.block(w_in[battles.order])  # the same battles' weights, in sorted order
    eta = block.eta(theta)
    p = expit(eta)
    ref_loss, ref_grad = solver.logistic_loss_and_grad(theta, x, y, w_in, 0.5)
    assert block.loss(eta, p, theta, 0.5) == pytest.approx(ref_loss, rel=1e-12)
    np.testing.assert_allclose(block.gradient(p, theta, 0.5), ref_grad, atol=1e-9)
    q = 1 / (1 + np.exp(-x @ theta))
    np.testing.assert_allclose(block.outer_sum(block.w * p * (1 - p)), x.T @ (x * (w_in * q * (1 - q))[:, None]),
                               atol=1e-9)


@pytest.mark.parametrize("reg", [0.5, 0.0])
def test_sorted_fit_and_rounds_reach_the_exact_optimum(reg):
    """The arena-scale full fit and bootstrap round (sorted_battles) against exact Newton on the input's design,
    each round's weights mapped back to the input rows."""
    from scipy.special import expit

    from analysis_lib.ranking import _sorted as sb

    pr, z, y, _ = _contextual(n=2000, seed=13)
    design = cs.ContextualDesign.build(pr, z, y, 5)
    ref, _ = cs.newton(design, np.ones(len(y)), reg, xtol=1e-12)
    battles = sb.SortedBattles.build(pr, z, y, 5)
    full = battles.full()
    theta, report = sb.fit(full, reg)
    assert report.converged[0]
    np.testing.assert_allclose(theta, ref, atol=1e-9)
    far, report = sb.fit(full, reg, np.array([4.0, -4.0, 3.0, -3.0, 0.0, 6.0, -6.0, 5.0]))  # full steps overshoot
    assert report.converged[0]
    np.testing.assert_allclose(far - far[:5].mean() * (reg == 0) * np.r_[np.ones(5), np.zeros(3)],
                               ref - ref[:5].mean() * (reg == 0) * np.r_[np.ones(5), np.zeros(3)], atol=1e-9)
    p_hat = expit(full.eta(theta))
    h0 = full.outer_sum(p_hat * (1 - p_hat)) + reg * np.eye(8)
    w = ranking.bootstrap_counts(len(y), 4, seed=14)
    for k in range(4):
        got, report = sb.fit_round(battles, w[k], theta, h0, p_hat, reg)
        w_in = np.empty_like(w[k])
        w_in[battles.order] = w[k]
        exact, _ = cs.newton(design, w_in, reg, xtol=1e-12)
        assert report.converged[0] and report.iterations[0] < sb.CHORD_ITER
        np.testing.assert_allclose(got, exact, atol=1e-9)


@pytest.mark.parametrize("reg", [0.5, 0.0])
def test_the_arena_scale_path_gives_the_small_paths_fit_and_sandwich(reg, monkeypatch):
    """A leaderboard through the arena-scale path (threshold lowered) against the ordinary path on the same
    battles: the same full-data fit and sandwich intervals; its bootstrap converges in every round."""
    battles, _ = arena(6000, 8, seed=31, k=3)
    feats = [f"f{j}" for j in range(3)]
    small = {ci: ranking.leaderboard(battles, features=feats, reg=reg, ci=ci) for ci in ("none", "sandwich")}
    monkeypatch.setattr(cs, "LARGE_BATTLES", 1)
    for ci in ("none", "sandwich"):
        large = ranking.leaderboard(battles, features=feats, reg=reg, ci=ci)
        np.testing.assert_allclose(large.theta, small[ci].theta, atol=1e-9)
        if ci == "sandwich":
            np.testing.assert_allclose(large.ci_lower, small[ci].ci_lower, atol=1e-7)
            np.testing.assert_allclose(large.coef_upper, small[ci].coef_upper, atol=1e-9)
    boot = ranking.leaderboard(battles, features=feats, reg=reg, rounds=20, progress=False)
    assert boot.rounds is not None and np.isfinite(boot.rounds).all() and boot.rounds.shape[0] == 20
    assert (boot.ci_lower < boot.rating_ml).all() and (boot.rating_ml < boot.ci_upper).all()


def test_arena_scale_features_are_the_style_features_sorted_and_oriented():
    """sorted_style_features (one feature per task, no (n, k) arrays) against style_features laid out by
    SortedBattles.build, on both conventions, with a zero-spread feature; a non-finite transform raises the same
    error."""
    from analysis_lib.ranking import _sorted as sb
    from analysis_lib.ranking.features import sorted_style_features

    battles, _ = arena(3000, 7, seed=41, k=3)
    frame = ranking.Battles.from_frame(battles, features=[f"f{j}" for j in range(3)]).fit_frame(
        [f"f{j}" for j in range(3)])
    frame = frame.with_columns(pl.lit(2.0).alias("c_a"), pl.lit(2.0).alias("c_b"))  # zero spread
    feats = ["f0", "c", "f1", "f2"]
    models = pairs.competitors(frame)
    pr = pairs.pair_indices(frame, models)
    y = frame["y"].to_numpy()
    for convention in ("float", "paper"):
        z, d = ranking.style_features(frame, feats, convention)
        ref = sb.SortedBattles.build(pr, z, y, len(models))
        got, sd = sb.SortedBattles.from_frame(frame, pr, y, feats, convention, len(models), threads=2)
        np.testing.assert_allclose(got.zt, ref.zt, rtol=0, atol=1e-12)
        assert got.zt[1].tolist() == [0.0] * len(y) and sd[1] == 0.0
        np.testing.assert_allclose(sd, d.std(axis=0), rtol=1e-12)
        for name in ("order", "lo", "hi", "pair", "starts", "y"):
            np.testing.assert_array_equal(getattr(got, name), getattr(ref, name))
    bad = frame.with_columns(pl.Series("f1_a", np.where(np.arange(len(y)) == 7, -1.0, frame["f1_a"].to_numpy())),
                             pl.Series("f1_b", np.where(np.arange(len(y)) == 7, 0.0, frame["f1_b"].to_numpy())))
    lay = sb.Layout.of(pr, len(models))
    with pytest.raises(ranking.InvalidBattlesError) as small:
        ranking.style_features(bad, feats, "float")
    with pytest.raises(ranking.InvalidBattlesError) as large:
        sorted_style_features(bad, feats, "float", lay.order, lay.sign, threads=2)
    assert str(large.value) == str(small.value) and "row 7" in str(large.value)


@pytest.mark.parametrize("reg", [0.5, 0.0])
def test_arena_scale_passes_split_over_threads_give_the_one_block_sums(reg):
    """The passes over all battles are split into parts cut at pair boundaries: the start Hessian and the sandwich
    sums against the same sums on the one block (up to rounding), and the full-data fit, those sums and the parts
    the same on one thread as on two, bit for bit."""
    from scipy.special import expit

    from analysis_lib.ranking import _sorted as sb

    pr, z, y, _ = _contextual(n=3000, seed=17)
    full = sb.SortedBattles.build(pr, z, y, 5).full()
    parts = full.split(3)
    assert len(parts) == 3 and sum(p.w.size for p in parts) == full.w.size
    assert all(p.starts[0] == 0 and p.starts[-1] + p.lens[-1] == p.w.size for p in parts)
    one, rep1 = sb.fit(full, reg)
    two, rep2 = sb.fit(full, reg, threads=2)
    assert rep1.converged[0] and rep2.converged[0]
    np.testing.assert_array_equal(two, one)
    p = expit(full.eta(one))
    ref = {"hessian": (p, full.outer_sum(p * (1 - p))),
           "sandwich": (full.outer_sum(p * (1 - p)), full.outer_sum((full.y - p) ** 2))}
    for name, fn in (("hessian", sb.hessian_at), ("sandwich", sb.sandwich_sums)):
        single, double = fn(full, one), fn(full, one, 2)
        for a, b, r in zip(single, double, ref[name], strict=True):
            np.testing.assert_array_equal(a, b)
            np.testing.assert_allclose(a, r, rtol=1e-12, atol=1e-9)


def test_arena_scale_rounds_do_not_depend_on_the_threads():
    """Each arena-scale round draws its counts from its own generator (SeedSequence children): the rounds on one
    thread and on two are the same arrays, every round resamples all battles, and another seed gives other rounds."""
    from analysis_lib.ranking import _bootstrap as bs
    from analysis_lib.ranking import _sorted as sb

    pr, z, y, _ = _contextual(n=2000, seed=19)
    battles = sb.SortedBattles.build(pr, z, y, 5)
    theta, _ = sb.fit(battles.full(), 0.5)
    models = tuple("abcde")
    one = cs.bootstrap_sorted(battles, models, theta, 6, seed=3, reg=0.5, threads=1)
    two = cs.bootstrap_sorted(battles, models, theta, 6, seed=3, reg=0.5, threads=2)
    np.testing.assert_array_equal(one[0], two[0])
    assert len({tuple(r) for r in one[0]}) == 6
    counts = [bs.draw_round(len(y), s) for s in bs.round_draws(6, 3)]
    assert all(c.sum() == len(y) and c.min() >= 0 for c in counts)
    other = cs.bootstrap_sorted(battles, models, theta, 6, seed=4, reg=0.5, threads=2)
    assert not np.array_equal(other[0], one[0])


def test_pair_indices_through_an_enum_match_the_name_map():
    """pair_indices (a polars Enum of the model names) against index_expr's name -> position map, for a model list
    in any order; names outside the list are refused by name, a null name too."""
    battles, _ = arena(500, 9, seed=23)
    models = tuple(reversed(pairs.competitors(battles)))
    ref = battles.select(pairs.index_expr("model_a", models), pairs.index_expr("model_b", models)).to_numpy()
    np.testing.assert_array_equal(pairs.pair_indices(battles, models), ref)
    cat = battles.with_columns(pl.col("model_a").cast(pl.Categorical))
    np.testing.assert_array_equal(pairs.pair_indices(cat, models), ref)
    with pytest.raises(ValueError, match="outside the model list: \\['m000'\\]"):
        pairs.pair_indices(battles, models[:-1])
    with pytest.raises(ValueError, match="outside the model list: \\[None\\]"):
        pairs.pair_indices(battles.with_columns(pl.lit(None, pl.String).alias("model_b")), models)


def test_contextual_memory_does_not_grow_with_battles_times_models():
    """Peak memory of a contextual bootstrap is set by rounds × battles chunks, not by the models: four times the
    models (a dense design four times larger) leave it almost unchanged."""
    peaks = {}
    for m in (60, 240):
        battles, _ = arena(100_000, m, seed=12, k=4)
        peaks[m] = _peak(lambda b=battles: ranking.leaderboard(b, features=[f"f{j}" for j in range(4)], rounds=20,
                                                                 reg=0.5))
    assert peaks[240] < 1.3 * peaks[60]
    assert peaks[240] < 100_000 * 240 * 8 / 2
