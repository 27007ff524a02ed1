"""Methods validation (VAL): the shared-offset decomposition of rating errors, the study over seeds (offsets and the
tie model), the coverage study (bootstrap and sandwich, plain and contextual) and the chapter's claim checks."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from analysis_lib import ranking
from analysis_lib.fetch import published
from analysis_lib.search_arena import bt, loader, methods_validation
from analysis_lib.search_arena.models import ANCHOR, non_leaderboard_models
from analysis_lib.search_arena.simulate import simulate_release
from analysis_lib.search_arena.simulate.battles import simulate_battles
from bookbuild.papers import search_arena_validation as report


def test_error_decomposition_recovers_a_planted_shared_offset():
    rng = np.random.default_rng(0)
    models = [f"m{i}" for i in range(8)]
    truth = dict(zip(models, rng.normal(1000, 50, 8), strict=True)) | {ANCHOR: 1000.0}
    own = rng.normal(0, 5, 8)
    own -= own.mean()  # the models' own errors, centred
    estimate = {m: truth[m] - 12.5 + e for m, e in zip(models, own, strict=True)} | {ANCHOR: 1000.0}
    dec = methods_validation.error_decomposition(estimate, truth)
    assert ANCHOR not in dec["model"].to_list()
    assert np.allclose(dec["shared_offset"], -12.5)
    assert np.allclose(dec["anchor_free_error"], own)
    assert np.allclose(dec["error"], dec["shared_offset"] + dec["anchor_free_error"])
    summary = methods_validation.error_summary(dec).row(0, named=True)
    assert summary["shared_offset"] == pytest.approx(-12.5)
    assert summary["max_abs_anchor_free_error"] == pytest.approx(np.abs(own).max())
    assert summary["max_abs_error"] == pytest.approx(np.abs(own - 12.5).max())
    with pytest.raises(ValueError, match="anchor"):
        methods_validation.error_decomposition({ANCHOR: 1000.0}, truth)


def test_offset_summary_matches_numpy():
    rng = np.random.default_rng(2)
    offsets = rng.normal(-3, 7, 10)
    rows = []
    for seed, off in enumerate(offsets):
        own = rng.normal(0, 4, 5)
        own -= own.mean()
        for k, e in enumerate(own):
            rows.append({"seed": seed, "fit": "plain", "model": f"m{k}", "error": off + e, "shared_offset": off,
                         "anchor_free_error": e})
    study = pl.DataFrame(rows)
    s = methods_validation.offset_summary(study).row(0, named=True)
    assert s["seeds"] == 10
    assert s["mean_shared_offset"] == pytest.approx(offsets.mean())
    assert s["sd_shared_offset"] == pytest.approx(offsets.std(ddof=1))
    assert s["se_shared_offset"] == pytest.approx(offsets.std(ddof=1) / np.sqrt(10))
    err = study["error"].to_numpy()
    free = study["anchor_free_error"].to_numpy()
    assert s["share_shared"] == pytest.approx(1 - free.var(ddof=1) / err.var(ddof=1))
    per_model = study.group_by("model").agg(pl.col("anchor_free_error").mean())
    worst = per_model.sort(pl.col("anchor_free_error").abs(), descending=True).row(0, named=True)
    assert s["model"] == worst["model"] and s["max_abs_model_bias"] == pytest.approx(worst["anchor_free_error"])


def test_table_d1_target_puts_the_anchor_at_1000():
    d1 = pl.DataFrame({"model": [ANCHOR, "x"], "rating": [999.2, 1100.0]})
    target = methods_validation.table_d1_target(d1)
    assert target[ANCHOR] == pytest.approx(1000.0) and target["x"] == pytest.approx(1100.8)


def test_expected_outcome_fit_recovers_the_ratings_behind_the_probabilities():
    # soft labels equal to the BT model's own win probabilities: the ML fit returns the ratings exactly
    ratings = {ANCHOR: 1000.0, "a": 1080.0, "b": 1030.0, "c": 960.0, "outside": 1200.0}
    rng = np.random.default_rng(5)
    names = list(ratings)
    ia, ib = rng.integers(0, len(names), 400), rng.integers(0, len(names), 400)
    ma, mb = [names[i] for i in ia], [names[i] for i in ib]
    diff = np.array([ratings[x] - ratings[y] for x, y in zip(ma, mb, strict=True)])
    truth = pl.DataFrame({"model_a": ma, "model_b": mb, "voted": rng.random(400) < 0.8,
                          "p_a": 1 / (1 + 10 ** (-diff / 400))})
    fit = methods_validation.expected_outcome_fit(truth, [ANCHOR, "a", "b", "c"])
    assert set(fit) == {ANCHOR, "a", "b", "c"}  # "outside" and its battles are left out
    for m, v in fit.items():
        assert v == pytest.approx(ratings[m], abs=1e-4)


# --- offset_study: each seed's fits, decomposed --------------------------------------------------------------


@pytest.fixture(scope="module")
def d1_target() -> dict[str, float]:
    return methods_validation.table_d1_target(pl.read_csv(published("search_arena_table_d1_leaderboard")))


@pytest.fixture(scope="module")
def study(d1_target) -> pl.DataFrame:
    return methods_validation.offset_study([3, 4], 1500, d1_target, progress=False)


def test_offset_study_holds_each_seeds_three_fits_as_fitted_by_hand(study, d1_target):
    """Known answer: for each seed, the plain fit, the thirteen-control fit and the expected-vote fit of that
    seed's simulated release, recomputed here through the public API, against their targets."""
    assert study["seed"].unique().sort().to_list() == [3, 4]
    assert set(study["fit"]) == {"plain", "controlled", "plain, expected votes"}
    for seed in (3, 4):
        sim = simulate_release(1500, seed=seed)
        battles = bt.prepare_battles(loader.load_battles(sim.raw)).frame
        by_hand = {
            "plain": (dict(bt.leaderboard(battles, rounds=0).to_frame().select("model", "rating").iter_rows()),
                      d1_target),
            "controlled": (dict(bt.style_control(battles, bt.ALL_CONTROLS, rounds=0, seed=seed).to_frame()
                                .select("model", "rating_ml").iter_rows()), sim.planted.ratings),
            "plain, expected votes": (methods_validation.expected_outcome_fit(sim.planted.truth, d1_target),
                                      d1_target),
        }
        for fit, (estimate, truth) in by_hand.items():
            rows = study.filter((pl.col("seed") == seed) & (pl.col("fit") == fit))
            models = [m for m in estimate if m != ANCHOR and m in truth]
            assert sorted(rows["model"]) == sorted(models), fit
            for r in rows.iter_rows(named=True):
                assert r["estimate"] == pytest.approx(estimate[r["model"]], abs=1e-9)
                assert r["truth"] == truth[r["model"]]
            errors = np.array([estimate[m] - truth[m] for m in models])
            assert rows["shared_offset"].to_numpy() == pytest.approx(np.full(len(models), errors.mean()))
            assert rows["anchor_free_error"].sum() == pytest.approx(0.0, abs=1e-9)


def test_offset_study_moves_the_shared_offset_with_the_target_and_nothing_else(study, d1_target):
    """Raising every non-anchor target by 25 Elo lowers the plain fits' shared offset by exactly 25 and leaves
    their anchor-free errors and the controlled fit (whose target is the planted ratings) unchanged."""
    raised = {m: v + (25.0 if m != ANCHOR else 0.0) for m, v in d1_target.items()}
    moved = methods_validation.offset_study([3, 4], 1500, raised, progress=False)
    key = ["seed", "fit", "model"]
    both = study.join(moved, on=key, suffix="_moved")
    plain = both.filter(pl.col("fit") != "controlled")
    assert (plain["shared_offset"] - plain["shared_offset_moved"]).to_numpy() == pytest.approx(25.0)
    assert plain["anchor_free_error_moved"].to_numpy() == pytest.approx(plain["anchor_free_error"].to_numpy())
    controlled = both.filter(pl.col("fit") == "controlled")
    assert controlled["error_moved"].to_numpy() == pytest.approx(controlled["error"].to_numpy())


# --- the centred (anchor-free) intervals and the coverage study ---------------------------------------------


@pytest.fixture(scope="module")
def replicate() -> tuple[pl.DataFrame, dict[str, float]]:
    sim = simulate_release(3000, seed=21)
    battles = bt.prepare_battles(loader.load_battles(sim.raw)).frame
    return battles, sim.planted.ratings


def _centred(battles: pl.DataFrame, truth: dict[str, float], ci: str = "bootstrap", seed: int = 1) -> pl.DataFrame:
    fit = bt.style_control(battles, bt.ALL_CONTROLS, rounds=40, seed=seed, ci=ci)
    cov = ranking.result_coverage(fit, truth, {}, ANCHOR)
    return cov.filter(pl.col("kind") == "rating, anchor-free (centred)")


@pytest.mark.parametrize("ci", ["bootstrap", "sandwich"])
def test_centred_coverage_known_answers(replicate, ci):
    """A truth equal to the data's own estimate lies inside every model's interval; one 5,000 Elo off for one model
    moves every centred truth (that one by +5000 (k-1)/k, the others by -5000/k) outside every interval; adding a
    constant to every truth changes nothing (the ratings are centred: anchor-free)."""
    battles, planted = replicate
    fit = bt.style_control(battles, bt.ALL_CONTROLS, rounds=0, seed=0)
    own = dict(zip(fit.models, fit.rating_ml.tolist(), strict=True))
    cover = _centred(battles, own, ci)
    assert cover["covered"].all() and cover.height == len(own)
    assert cover["truth"].sum() == pytest.approx(0.0, abs=1e-6)  # the truth is centred
    assert ((cover["ci_upper"] - cover["ci_lower"]) < 400).all()  # intervals far narrower than 5000 / k
    far = own | {"sonar-pro": own["sonar-pro"] + 5000.0}
    assert not _centred(battles, far, ci)["covered"].any()
    shifted = {m: v + 321.0 for m, v in planted.items()}
    same = [_centred(battles, t, ci) for t in (planted, shifted)]
    assert same[0]["covered"].to_list() == same[1]["covered"].to_list()
    assert same[0]["truth"].to_numpy() == pytest.approx(same[1]["truth"].to_numpy())


def test_centred_intervals_are_the_percentiles_of_the_centred_rounds(replicate):
    """Known answer: the 2.5 / 97.5 percentiles (numpy) of the bootstrap rounds of the same contextual fit, each
    round centred over the models with a truth; for the sandwich, ± 1.96 SD of the centred covariance P Σ Pᵀ."""
    battles, planted = replicate
    fit = bt.style_control(battles, bt.ALL_CONTROLS, rounds=30, seed=7)
    got = fit.centred([m for m in fit.models if m in planted])
    assert fit.rounds is not None
    idx = [i for i, m in enumerate(fit.models) if m in planted]
    rounds = 400 * fit.rounds[:, idx]
    centred = rounds - rounds.mean(axis=1, keepdims=True)
    lo, hi = np.percentile(centred, [2.5, 97.5], axis=0)
    assert got["model"].to_list() == [fit.models[i] for i in idx]
    assert got["ci_lower"].to_numpy() == pytest.approx(lo) and got["ci_upper"].to_numpy() == pytest.approx(hi)
    sand = bt.style_control(battles, bt.ALL_CONTROLS, ci="sandwich")
    assert sand.covariance is not None
    sub = ["sonar", "sonar-pro", ANCHOR]
    j = [sand.models.index(m) for m in sub]
    proj = np.eye(3) - 1 / 3
    sd = 400 * np.sqrt(np.diag(proj @ sand.covariance[np.ix_(j, j)] @ proj))
    c = sand.centred(sub)
    assert (c["ci_upper"] - c["ci_lower"]).to_numpy() == pytest.approx(2 * 1.959963984540054 * sd)
    assert c["rating"].sum() == pytest.approx(0.0, abs=1e-9)
    with pytest.raises(ValueError, match="need intervals"):
        bt.style_control(battles, bt.ALL_CONTROLS, rounds=0).centred()


def test_coverage_study_is_each_replicate_fitted_four_ways():
    """Known answer: the rows of replicate k are those of result_coverage for the four fits of that replicate's
    battles, recomputed here through the public API (the full release and the loader, not the study's own path)."""
    cov = methods_validation.coverage_study(2, 1500, rounds=20, seed=3, first_seed=40, progress=False)
    assert set(cov["replicate"]) == {0, 1}
    assert set(zip(cov["fit"], cov["method"], strict=True)) == set(methods_validation.COVERAGE_FITS)
    sim = simulate_release(1500, seed=41)
    battles = bt.prepare_battles(loader.load_battles(sim.raw)).frame
    on_board = [m for m in sim.planted.ratings if m not in non_leaderboard_models()]  # the plain fit's models
    plain_truth = methods_validation.expected_outcome_fit(sim.planted.truth, on_board)
    by_hand = {
        ("contextual", "bootstrap"): ranking.result_coverage(
            bt.style_control(battles, bt.ALL_CONTROLS, rounds=20, seed=4), sim.planted.ratings, sim.planted.betas,
            ANCHOR),
        ("contextual", "sandwich"): ranking.result_coverage(
            bt.style_control(battles, bt.ALL_CONTROLS, ci="sandwich"), sim.planted.ratings, sim.planted.betas,
            ANCHOR),
        ("plain", "bootstrap"): ranking.result_coverage(
            bt.leaderboard(battles, rounds=20, seed=4), plain_truth, {}, ANCHOR),
        ("plain", "sandwich"): ranking.result_coverage(bt.leaderboard(battles, ci="sandwich"), plain_truth, {}, ANCHOR),
    }
    for (fit, method), want in by_hand.items():
        got = cov.filter((pl.col("replicate") == 1) & (pl.col("fit") == fit) & (pl.col("method") == method))
        assert got.drop("fit", "replicate").equals(want.drop("replicate")), (fit, method)
    assert set(cov.filter(pl.col("fit") == "plain")["kind"]) == {"rating", "rating, anchored per round",
                                                                 "rating, anchor-free (centred)"}


# --- the tie model ----------------------------------------------------------------------------------------------


def test_coefficient_scale_closed_form():
    planted = np.array([0.3, -0.2, 0.0, 0.1])
    assert methods_validation.coefficient_scale(0.6 * planted, planted) == pytest.approx(0.6)
    noisy = planted + np.array([0.0, 0.0, 0.5, 0.0])  # an unplanted feature's estimate does not move the scale
    assert methods_validation.coefficient_scale(noisy, planted) == pytest.approx(1.0)


def test_tie_summary_matches_numpy():
    rng = np.random.default_rng(4)
    spreads, ties = [], []
    for t, shrink in (("closeness", 1.0), ("independent", 0.6)):
        for seed in range(5):
            spreads.append({"seed": seed, "tie_model": t, "sd_controlled": 40 * shrink + rng.normal(),
                            "sd_planted": 40.0, "sd_plain": 60 * shrink + rng.normal(), "sd_table_d1": 63.0})
            for f, b in (("x", 0.3), ("y", -0.1)):
                ties.append({"seed": seed, "tie_model": t, "feature": f, "estimate": shrink * b + rng.normal(0, .01),
                             "planted": b})
    study = methods_validation.SeedStudy(pl.DataFrame(), pl.DataFrame(ties), pl.DataFrame(spreads))
    out = methods_validation.tie_summary(study)
    assert out["tie_model"].to_list() == ["closeness", "independent"]
    ind = out.row(1, named=True)
    sds = np.array([r["sd_controlled"] for r in spreads if r["tie_model"] == "independent"])
    assert ind["sd_controlled"] == pytest.approx(sds.mean()) and ind["sd_controlled_se"] == pytest.approx(
        sds.std(ddof=1) / np.sqrt(5))
    scales = [methods_validation.coefficient_scale(
        np.array([r["estimate"] for r in ties if r["tie_model"] == "independent" and r["seed"] == s]),
        np.array([0.3, -0.1])) for s in range(5)]
    assert ind["coef_scale"] == pytest.approx(np.mean(scales)) and ind["seeds"] == 5
    assert report.tie_verdict(out.row(0, named=True)) == "recovered" and report.tie_verdict(ind) == "compressed"


def test_val_is_recorded_part_by_part_with_the_planted_values_beside(tmp_path):
    """Every VAL row reads one of the chapter's parts; a part its section has not reached is not run, and a section
    shows its own rows; the tie rows read the planted side from the summary's own shape."""
    from bookbuild import fieldpath, paper_values
    from bookbuild.recorder import Recorder

    assert {fieldpath.parse(r.result).steps[0].name for r in paper_values.rows_of("VAL")} == set(report.PARTS)
    ties = pl.DataFrame({"tie_model": ["closeness"], "sd_controlled": [30.0], "sd_controlled_se": [0.5],
                         "sd_planted": [31.0], "sd_plain": [50.0], "sd_plain_se": [0.7], "sd_table_d1": [52.0],
                         "coef_scale": [0.98], "coef_scale_se": [0.02], "seeds": [3]})
    rec = Recorder(tmp_path, "06_methods_validation", data="simulated")
    rec.record("VAL", {**report.PARTS, "ties": ties}, planted={"ties": report.tie_targets(ties)})
    by = {r.quantity: r for r in rec.results}
    spread = by["SD of controlled ratings, ties among close battles (Elo)"]
    assert (spread.ours, spread.planted) == (30.0, 31.0)
    assert spread.note == "mean over 3 releases, standard error 0.5; planted column: SD of the planted ratings"
    assert by["scale of the style coefficients, ties among close battles"].planted == 1.0
    assert by["SD of plain ratings, ties independent of strength (Elo)"].status == "not run"  # no such row yet
    ran = {q for q, r in by.items() if r.status != "not run"}
    assert ran == {q for q in by if report.part_of("ties")(q) and "close battles" in q}
    assert not any(report.part_of("coverage", "offsets")(q) for q in ran)


def test_seed_study_refits_the_same_releases_under_both_tie_models(d1_target):
    study = methods_validation.seed_study([2], 6000, d1_target, progress=False)
    assert set(study.offsets["fit"]) == set(methods_validation.FITS)
    assert study.spreads["tie_model"].to_list() == ["closeness", "independent"]
    assert study.ties.height == 2 * len(bt.ALL_CONTROLS)
    sims = simulate_battles(6000, 2, ("closeness", "independent"))
    for t, sim in sims.items():  # by hand
        fit = bt.style_control(bt.prepare_battles(sim.battles).frame, bt.ALL_CONTROLS, rounds=0)
        got = study.ties.filter(pl.col("tie_model") == t)
        assert got["estimate"].to_numpy() == pytest.approx(fit.coef_ml)
        row = study.spreads.filter(pl.col("tie_model") == t).row(0, named=True)
        assert row["sd_controlled"] == pytest.approx(np.std(fit.rating_ml, ddof=1))


# --- the chapter's claims ------------------------------------------------------------------------------------


def _summary(exp_sd: float, ctrl_bias: float) -> pl.DataFrame:
    base = {"mean_shared_offset": -2.0, "se_shared_offset": 2.0, "sd_shared_offset": 8.0, "seeds": 12,
            "sd_anchor_free": 6.0, "share_shared": 0.6, "model": "m", "max_abs_model_bias": 3.0, "model_bias_se": 3.0}
    return pl.DataFrame([
        base | {"fit": "controlled", "max_abs_model_bias": ctrl_bias},
        base | {"fit": "plain"},
        base | {"fit": "plain, expected votes", "sd_shared_offset": exp_sd, "max_abs_model_bias": -5.0,
                "model_bias_se": 0.4},
    ])


def test_offset_reading_decides_its_claims_by_the_thresholds():
    this = {"plain": -9.7, "controlled": -10.2}
    good = report.offset_reading(_summary(1.3, 3.0), this)
    assert "so it is the vote-sampling error of the anchor" in good and "no common bias" in good
    assert "the estimator shows no bias beyond sampling error" in good and "a calibration residual" in good
    bad = report.offset_reading(_summary(6.0, 3.0 * (report.BIAS_Z + 0.5)), this)
    assert "not only the anchor's vote-sampling error" in bad
    assert "a bias of the estimator for that model" in bad


def test_coverage_reading_follows_the_wilson_intervals():
    rows = []
    for fit, method in methods_validation.COVERAGE_FITS:
        for kind in ranking.coverage.KINDS:
            cov = 0.79 if kind == "rating" else 0.95
            rows.append({"fit": fit, "method": method, "kind": kind, "coverage": cov, "intervals": 1000,
                         "ci_lower": cov - 0.02, "ci_upper": cov + 0.02})
    summary = pl.DataFrame(rows)
    text = report.coverage_reading(summary, 100, 100, 3000)
    assert "too narrow for what the leaderboard reports" in text and "reaches 95%" in text
    short = summary.with_columns(
        pl.when(pl.col("kind") == "coefficient").then(0.90).otherwise(pl.col("ci_upper")).alias("ci_upper"))
    assert "fall short of 95% with their whole Wilson interval" in report.coverage_reading(short, 100, 100, 3000)


# --- the chapter as a reader gets it ----------------------------------------------------------------------------


def _figures():
    import matplotlib

    matplotlib.use("Agg")
    from analysis_lib.search_arena import plots

    dec = pl.DataFrame({"model": ["a", "b", "c"] * 2, "estimate": [0.0] * 6, "truth": [1.0, 2.0, 3.0] * 2,
                        "error": [-3.0, 1.0, 2.0, 0.5, -1.0, 0.5], "shared_offset": [0.0] * 3 + [0.1] * 3,
                        "anchor_free_error": [-3.0, 1.0, 2.0, 0.4, -1.1, 0.4],
                        "fit": ["plain"] * 3 + ["controlled"] * 3})
    study = pl.DataFrame({"seed": [0, 0, 1, 1], "fit": ["plain", "controlled"] * 2, "model": ["a"] * 4,
                          "shared_offset": [-1.0, 2.0, 0.5, 1.0]})
    summary = pl.DataFrame([{"fit": f, "method": m, "kind": k, "coverage": 0.93, "intervals": 100, "ci_lower": 0.9,
                             "ci_upper": 0.96} for f, m in methods_validation.COVERAGE_FITS
                            for k in ("rating, anchor-free (centred)", "coefficient")])
    ties = pl.DataFrame({"tie_model": ["closeness", "independent"] * 2, "feature": ["x", "x", "y", "y"],
                         "estimate": [0.3, 0.2, -0.1, -0.07], "planted": [0.3, 0.3, -0.1, -0.1]})
    yield plots.rating_errors(dec, title="Rating errors and the shared offset of one release")
    yield plots.offset_by_seed(study, highlight=0, title="Shared offset of all non-anchor ratings, 12 releases")
    yield plots.coverage_bars(summary, title="Coverage over 100 releases of 3,000 conversations")
    yield plots.tie_effect(ties, labels=report.TIE_LABELS, title="Style coefficients under two tie models")


def test_validation_figures_keep_every_text_readable_at_the_page_width():
    """The reader's complaint: the error plot's legend was about 5 px on the page (7 pt, in a figure widened by a
    legend to its right). Every text of the chapter's own figures is at least 11 pt and the saved figure, labels
    and legend included, is at most 7 in wide: shown at the book's column width (688 px for 783 px at 110 dpi in a
    1280 px window) that is 10 pt or more."""
    import io

    import matplotlib.pyplot as plt
    from matplotlib.text import Text

    from analysis_lib.search_arena import plots

    plots.readable_text()
    for fig in _figures():
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
        width = int.from_bytes(buf.getvalue()[16:20], "big") / 100
        texts = [t for t in fig.findobj(Text) if t.get_text().strip() and t.get_visible()]
        assert width <= plots.WIDTH + 0.2, width  # savefig adds 0.1 in of padding on each side
        assert min(t.get_fontsize() for t in texts) >= 11, [(t.get_text(), t.get_fontsize()) for t in texts]
        plt.close(fig)


def test_the_chapter_is_thin_and_does_not_read_the_release():
    """Chapter 06 declares no ``data_source`` (a new release must not rerun it) and no code cell is longer than 25
    lines (the logic is in the library)."""
    import ast
    import json
    from pathlib import Path

    nb = json.loads((Path(__file__).resolve().parents[1] / "notebooks" / "06_methods_validation.ipynb").read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    params = next(c for c in code if "parameters" in c["metadata"].get("tags", []))
    declared = {t.id for node in ast.parse("".join(params["source"])).body if isinstance(node, ast.Assign)
                for t in node.targets if isinstance(t, ast.Name)}
    assert "data_source" not in declared and {"seed", "n_bootstrap", "n_replicates"} <= declared
    assert max(len("".join(c["source"]).splitlines()) for c in code) <= 25


def test_tie_reading_checks_the_closed_form_bound():
    """Under independent ties the coefficients' scale must come out at most 1 − q (the slope of the half-win logit
    at an even battle); the reading says so, or says that it does not."""
    rows = [{"tie_model": "closeness", "sd_controlled": 38.2, "sd_controlled_se": 0.5, "sd_planted": 38.4,
             "sd_plain": 63.7, "sd_plain_se": 0.7, "sd_table_d1": 63.5, "coef_scale": 1.01, "coef_scale_se": 0.02,
             "seeds": 12},
            {"tie_model": "independent", "sd_controlled": 24.8, "sd_controlled_se": 0.5, "sd_planted": 38.4,
             "sd_plain": 42.0, "sd_plain_se": 0.4, "sd_table_d1": 63.5, "coef_scale": 0.65, "coef_scale_se": 0.01,
             "seeds": 12}]
    text = report.tie_reading(pl.DataFrame(rows), tie_share=0.319)
    assert "holds under the simulator's tie model and fails under the other one" in text
    assert "a little below 0.68" in text and "32% of the votes" in text
    rows[1]["coef_scale"] = 0.75
    assert "not below 0.68" in report.tie_reading(pl.DataFrame(rows), tie_share=0.319)
