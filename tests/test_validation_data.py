"""The methods validation's simulated battles (``search_arena.simulate.battles``) and the simulator's tie option.

Known answers: the loaded simulated release (the full text and the loader: an independent path to the same
battles), the simulator's own output byte for byte under its default, and, for the tie model, the expected score of
a battle in closed form: ``p`` when ties are likelier between close responses, ``q/2 + (1 − q) p`` when they are
independent of strength, whose logit has slope ``1 − q`` in the logit of ``p`` at ``p = ½``.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from analysis_lib import ranking
from analysis_lib.search_arena import bt, loader
from analysis_lib.search_arena.simulate import simulate_release
from analysis_lib.search_arena.simulate.battles import simulate_battles
from analysis_lib.search_arena.simulate.calibration import P_BOTHBAD, P_TIE, calibrated_models
from analysis_lib.search_arena.simulate.content import draw_content
from analysis_lib.search_arena.simulate.population import draw_population

Q = P_TIE + P_BOTHBAD  # the voted share of ties of either kind


@pytest.mark.parametrize(("n", "seed"), [(1500, 3), (4000, 11)])
def test_simulated_battles_are_the_loaded_releases_battles(n, seed):
    """The fits see the same battles, votes and (int32, the paper's convention) features as from the full release
    read by the loader, in the same order, and the planted values of the release."""
    sim = simulate_release(n, seed)
    full = bt.prepare_battles(loader.load_battles(sim.raw)).frame
    lean = simulate_battles(n, seed)["closeness"]
    kept = bt.prepare_battles(lean.battles).frame
    for col in ("model_a", "model_b", "winner"):
        assert kept[col].to_list() == full[col].to_list()
    z_full, _ = ranking.style_features(full, bt.ALL_CONTROLS, "paper")
    z_lean, _ = ranking.style_features(kept, bt.ALL_CONTROLS, "paper")
    np.testing.assert_array_equal(z_lean, z_full)
    voted = sim.planted.truth.filter(pl.col("voted"))
    np.testing.assert_array_equal(lean.battles["p_a"].to_numpy(), voted["p_a"].to_numpy())
    assert lean.ratings == sim.planted.ratings and lean.betas == sim.planted.betas
    assert lean.battles.height == voted.height and (lean.n, lean.seed, lean.tie_model) == (n, seed, "closeness")


def test_content_without_text_makes_the_same_draws():
    models = calibrated_models()
    out = []
    for text in (True, False):
        rng = np.random.default_rng(8)
        pop = draw_population(rng, 2500, models)
        content = draw_content(rng, pop, models, text=text)
        out.append((content, rng.random(3)))
    (with_text, after_text), (without, after_none) = out
    assert with_text.a.features is not None and without.a.features is not None
    for side in ("a", "b"):
        f1, f2 = getattr(with_text, side).features, getattr(without, side).features
        assert f1.keys() == f2.keys() and all(np.array_equal(f1[k], f2[k]) for k in f1)
    np.testing.assert_array_equal(after_text, after_none)  # the generator is left in the same state
    assert "url" in with_text.a.urls and "url" not in without.a.urls


def test_the_tie_option_leaves_the_default_unchanged_and_changes_only_the_outcomes():
    default = simulate_release(1200, seed=5)
    assert default.raw.equals(simulate_release(1200, seed=5, tie_model="closeness").raw)
    assert default.planted.params["tie_model"] == "closeness"
    other = simulate_release(1200, seed=5, tie_model="independent")
    changed = [c for c in default.raw.columns if not default.raw[c].equals(other.raw[c])]
    assert changed == ["winner"] and other.planted.params["tie_model"] == "independent"
    assert (default.raw["winner"].is_null() == other.raw["winner"].is_null()).all()  # the same voters
    lean = simulate_battles(1200, 5, ("closeness", "independent"))
    for t, sim in (("closeness", default), ("independent", other)):
        assert lean[t].battles["winner"].to_list() == sim.raw["winner"].drop_nulls().to_list()
    with pytest.raises(ValueError, match="tie_model"):
        simulate_release(100, seed=0, tie_model="sometimes")  # type: ignore[arg-type]


def _half_win(frame: pl.DataFrame) -> np.ndarray:
    return frame["winner"].replace_strict(ranking.OUTCOME_OF_WINNER, return_dtype=pl.Float64).to_numpy()


def test_vote_shares_and_expected_scores_follow_the_tie_model():
    """Over the voted battles of a full-size release: a third of the votes are ties under both models; under
    independent ties the tie share does not depend on how close the battle is, and the mean half-win score of
    A equals q/2 + (1 − q) p (its closed form) within 4 binomial standard errors."""
    sims = simulate_battles(24_069, 1, ("closeness", "independent"))
    for t, sim in sims.items():
        b = sim.battles
        tie = b["winner"].is_in(["tie", "tie (bothbad)"]).to_numpy()
        assert abs(tie.mean() - Q) < 4 * math.sqrt(Q * (1 - Q) / b.height), t
        p = b["p_a"].to_numpy()
        expected = p if t == "closeness" else Q / 2 + (1 - Q) * p
        score = _half_win(b)
        assert abs(score.mean() - expected.mean()) < 4 * score.std() / math.sqrt(b.height), t
        close = np.abs(p - 0.5) < 0.1
        gap = tie[close].mean() - tie[~close].mean()
        assert (gap > 0.05) if t == "closeness" else abs(gap) < 0.03, (t, gap)


def _contextual_on_expected_scores(sim, expected: np.ndarray) -> np.ndarray:
    """The population values of the contextual fit: fitted on each battle's expected half-win score."""
    b = bt.prepare_battles(sim.battles.with_columns(pl.Series("e", expected))).frame
    return ranking.leaderboard(b, fmt=ranking.BattleFormat(outcome="e"), features=bt.ALL_CONTROLS, ci="none",
                               reg=bt.REG, convention="paper").coef_ml


def test_the_half_win_estimator_recovers_the_planted_coefficients_only_under_the_default_tie_model():
    """Population values (expected scores, no vote noise): under the default the coefficients are the planted ones
    (up to the z-scale of the leaderboard battles and the penalty); under independent ties they shrink, by a
    factor a little below 1 − q: the fitted logit is logit(q/2 + (1 − q) σ(η)), whose slope in η is 1 − q at
    η = 0 and smaller away from it."""
    from analysis_lib.search_arena.methods_validation import coefficient_scale

    sims = simulate_battles(24_069, 0, ("closeness", "independent"))
    planted = np.array([sims["closeness"].betas[f] for f in bt.ALL_CONTROLS])
    p = sims["closeness"].battles["p_a"].to_numpy()
    default = coefficient_scale(_contextual_on_expected_scores(sims["closeness"], p), planted)
    shrunk = coefficient_scale(_contextual_on_expected_scores(sims["independent"], Q / 2 + (1 - Q) * p), planted)
    assert default == pytest.approx(1.0, abs=0.03)
    assert (1 - Q) * default - 0.06 < shrunk < (1 - Q) * default
    # the sampled votes of the same release: a recovered scale under the default, the shrunk one under independence
    sampled = {t: coefficient_scale(bt.style_control(bt.prepare_battles(s.battles).frame, bt.ALL_CONTROLS,
                                                     rounds=0).coef_ml, planted) for t, s in sims.items()}
    assert sampled["closeness"] == pytest.approx(1.0, abs=0.1)
    assert sampled["independent"] == pytest.approx(shrunk, abs=0.06)
