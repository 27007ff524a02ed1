"""Bradley–Terry leaderboard (SA-D5): checked against independent fits of the same likelihood.

Synthetic battles with planted strengths are built here with numpy; no simulator.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
import statsmodels.api as sm

from analysis_lib import ranking
from analysis_lib.ranking import _newton as newton
from analysis_lib.ranking import _pairs as pairs
from analysis_lib.ranking import reference as solver
from analysis_lib.search_arena import bt, domains, models, schema

MODELS = ["gpt-4o-search", "sonar", "sonar-pro", "gemini-2.0-flash-grounding", "gpt-4o-mini-search"]
STRENGTH = np.array([0.0, 0.20, 0.10, -0.05, -0.15])  # log10-odds units


def bt_fits(data: pairs.PairData, w: np.ndarray) -> np.ndarray:
    """Exact BT fits (``Σ r = 0``) of ``data`` for every row of weights ``w`` (the sparse Newton)."""
    stats = newton.PairStats.from_rows(data.pairs, data.outcomes, len(data.models))
    n, s = stats.totals(np.atleast_2d(w))
    theta, report = newton.fit_pairs(stats, n, s)
    assert report.converged.all()
    return theta - theta.mean(axis=1, keepdims=True)


def synthetic_battles(n: int = 4000, seed: int = 0, tie_rate: float = 0.15) -> pl.DataFrame:
    """Battles between MODELS with planted BT strengths; ties ~ tie_rate, half of them both-bad."""
    rng = np.random.default_rng(seed)
    m = len(MODELS)
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    p = 1.0 / (1.0 + 10.0 ** (-(STRENGTH[a] - STRENGTH[b])))
    u = rng.random(n)
    tie = rng.random(n)
    winner = np.where(u < p, "model_a", "model_b").astype(object)
    winner[tie < tie_rate / 2] = "tie"
    winner[(tie >= tie_rate / 2) & (tie < tie_rate)] = "tie (bothbad)"
    return pl.DataFrame({"model_a": [MODELS[i] for i in a], "model_b": [MODELS[i] for i in b], "winner": winner})


@pytest.fixture(scope="module")
def battles() -> pl.DataFrame:
    return synthetic_battles()


def _glm_elo(battles: pl.DataFrame, anchor: str = "gpt-4o-search") -> dict[str, float]:
    """Independent fit: statsmodels GLM Binomial, fractional outcomes (ties 0.5), ±1 design without the anchor."""
    models = sorted(set(battles["model_a"]) | set(battles["model_b"]))
    others = [m for m in models if m != anchor]
    a, b = battles["model_a"].to_list(), battles["model_b"].to_list()
    x = np.zeros((battles.height, len(others)))
    for j, m in enumerate(others):
        x[:, j] = (np.array(a) == m).astype(float) - (np.array(b) == m).astype(float)
    y = battles["winner"].replace_strict(schema.OUTCOME_OF_WINNER, return_dtype=pl.Float64).to_numpy()
    res = sm.GLM(y, x, family=sm.families.Binomial()).fit(tol=1e-12)
    # natural log-odds beta_j = ln10 (r_j - r_anchor); Elo = 1000 + 400 (r_j - r_anchor)
    out = {m: 1000.0 + 400.0 * beta / math.log(10.0) for m, beta in zip(others, res.params, strict=True)}
    out[anchor] = 1000.0
    return out


def _ml(battles: pl.DataFrame, anchor: str = "gpt-4o-search") -> dict[str, float]:
    """The Search Arena layer's full-data fit: model -> Elo with the anchor at 1000."""
    return dict(bt.leaderboard(battles, anchor=anchor, rounds=0).to_frame().select("model", "rating").iter_rows())


def test_bt_matches_statsmodels_glm(battles):
    ours = _ml(battles)
    ref = _glm_elo(battles)
    for m in MODELS:
        assert ours[m] == pytest.approx(ref[m], abs=1e-6)


def test_bt_matches_statsmodels_logit_with_duplicated_tie_rows(battles):
    """Ties as two rows (win and loss) of weight 0.5 each: the same likelihood through sm.Logit's freq weights."""
    y = battles["winner"].replace_strict(schema.OUTCOME_OF_WINNER, return_dtype=pl.Float64).to_numpy()
    tie = y == 0.5
    others = MODELS[1:]
    a, b = np.array(battles["model_a"].to_list()), np.array(battles["model_b"].to_list())
    x = np.column_stack([(a == m).astype(float) - (b == m).astype(float) for m in others])
    xx = np.vstack([x, x[tie]])
    yy = np.concatenate([np.where(tie, 1.0, y), np.zeros(tie.sum())])
    ww = np.concatenate([np.where(tie, 0.5, 1.0), np.full(tie.sum(), 0.5)])
    res = sm.GLM(yy, xx, family=sm.families.Binomial(), freq_weights=ww).fit(tol=1e-12)
    ours = _ml(battles)
    for m, beta in zip(others, res.params, strict=True):
        assert ours[m] == pytest.approx(1000.0 + 400.0 * beta / math.log(10.0), abs=1e-6)


def test_bt_matches_arena_rank(battles):
    pytest.importorskip("arena_rank")
    from arena_rank.models.bradley_terry import BradleyTerry
    from arena_rank.utils.data_utils import PairDataset

    ds = PairDataset.from_pandas(battles.to_pandas())
    model = BradleyTerry(n_competitors=len(ds.competitors))
    model.fit(ds)
    theirs = np.asarray(model.params["ratings"]) * model.alpha + model.init_rating
    theirs = dict(zip(ds.competitors, theirs - theirs[ds.competitors.index("gpt-4o-search")] + 1000.0, strict=True))
    ours = _ml(battles)
    for m in MODELS:
        assert ours[m] == pytest.approx(theirs[m], abs=0.01)


def test_planted_strengths_recovered():
    battles = synthetic_battles(n=40000, seed=3, tie_rate=0.0)
    ours = _ml(battles)
    for m, s in zip(MODELS, STRENGTH, strict=True):
        assert ours[m] == pytest.approx(1000.0 + 400.0 * s, abs=8.0)


def test_rank_rule_hand_made():
    #        A: [1100, 1120]  B: [1090, 1110]  C: [1050, 1080]  D: [1000, 1040]
    lower = np.array([1100.0, 1090.0, 1050.0, 1000.0])
    upper = np.array([1120.0, 1110.0, 1080.0, 1040.0])
    # A: nobody's lower > 1120 -> 1. B: A's 1100 > 1110? no -> 1. C: A, B above 1080 -> 3. D: A, B, C -> 4.
    assert ranking.result.rank_from_intervals(lower, upper).tolist() == [1, 1, 3, 4]
    # D's interval reaching C's lower bound (1050 > 1055? no) shares C's rank
    upper[3] = 1055.0
    assert ranking.result.rank_from_intervals(lower, upper).tolist() == [1, 1, 3, 3]


def test_leaderboard_columns_convention_and_determinism(battles):
    lb1 = bt.leaderboard(battles, rounds=30, seed=7).to_frame()
    lb2 = bt.leaderboard(battles, rounds=30, seed=7).to_frame()
    lb3 = bt.leaderboard(battles, rounds=30, seed=8).to_frame()
    assert lb1.columns[:6] == ["model", "rating", "ci_lower", "ci_upper", "rank", "num_battles"]
    assert lb1.equals(lb2)
    assert not lb1["rating"].equals(lb3["rating"])
    row = lb1.filter(pl.col("model") == "gpt-4o-search").row(0, named=True)
    assert row["rating_ml"] == pytest.approx(1000.0, abs=1e-9)  # full-data fit: anchor exactly 1000
    assert row["ci_lower"] < 1000.0 < row["ci_upper"]  # the anchor keeps an interval (paper: 999.2)
    assert (lb1["ci_lower"] <= lb1["rating"]).all() and (lb1["rating"] <= lb1["ci_upper"]).all()
    expected = ranking.result.rank_from_intervals(lb1["ci_lower"].to_numpy(), lb1["ci_upper"].to_numpy())
    assert lb1["rank"].to_list() == expected.tolist()
    counts = pl.concat([battles["model_a"], battles["model_b"]]).value_counts()
    assert dict(lb1.select("model", "num_battles").iter_rows()) == dict(counts.iter_rows())


def test_bootstrap_rounds_equal_resampled_refits(battles):
    """Weights over unique (pair, outcome) rows = refitting on battles resampled with replacement."""
    data = pairs.PairData.from_frame(ranking.Battles.from_frame(battles).fit_frame())
    rng = np.random.default_rng(5)
    for _ in range(2):
        resampled = battles[rng.integers(0, battles.height, battles.height)]
        sub = pairs.PairData.from_frame(ranking.Battles.from_frame(resampled).fit_frame(), data.models)
        key = {(int(a), int(b), float(y)): c for (a, b), y, c in zip(sub.pairs, sub.outcomes, sub.counts, strict=True)}
        w = np.array([key.get((int(a), int(b), float(y)), 0.0)
                      for (a, b), y in zip(data.pairs, data.outcomes, strict=True)])
        np.testing.assert_allclose(bt_fits(data, w)[0], bt_fits(sub, sub.counts)[0], atol=1e-10)
    w = ranking.bootstrap_counts(data.n_battles, 3, seed=1, p=data.counts / data.counts.sum())
    assert (w.sum(axis=1) == data.n_battles).all()
    batched = bt_fits(data, w)
    lbfgs = solver.fit_logistic_lbfgs(data.design(), data.outcomes, w)
    lbfgs -= lbfgs.mean(axis=1, keepdims=True)
    np.testing.assert_allclose(batched, lbfgs, atol=2e-4)  # the authors' L-BFGS settings stop near, not at, the optimum


def test_prepare_battles_reports_drops():
    frame = pl.DataFrame(
        {
            "model_a": ["sonar", "sonar", "gemini-2.5-pro", "sonar", "sonar", "sonar"],
            "model_b": ["sonar-pro", "sonar", "sonar", "sonar-pro", "sonar-pro", "sonar-pro"],
            "winner": ["model_a", "tie", "model_b", None, "tie (bothbad)", "both_bad"],
            "primary_intent": ["a", "b", "c", "d", "e", "f"],
        }
    )
    prep = bt.prepare_battles(frame)
    d = prep.dropped
    assert (prep.frame.height, d["no vote"], d["excluded model"], d["self-battle"]) == (2, 1, 1, 1)
    assert prep.frame.columns == frame.columns and prep.frame["primary_intent"].to_list() == ["a", "e"]
    # before: an unknown label was silently a battle "without a vote"; now it is counted and reported apart
    assert d["unknown outcome"] == 1 and "1 with an unknown winner label" in prep.summary()
    assert models.non_leaderboard_models() == ("gemini-2.5-pro",)
    decided = bt.prepare_battles(frame, decided_only=True)
    assert decided.frame["winner"].to_list() == ["model_a"] and decided.dropped["tie (decided only)"] == 1


def test_anchor_missing_raises(battles):
    with pytest.raises(ValueError, match="anchor"):
        _ml(battles.filter((pl.col("model_a") != "sonar") & (pl.col("model_b") != "sonar")), anchor="sonar")


# ---- preference helpers (SA-D1, SA-D3, SA-31, SA-F4/F5, SA-E2) ------------------------------------------------


def test_pairwise_win_fraction_and_average():
    from analysis_lib.search_arena import preference

    frame = pl.DataFrame(
        {
            "model_a": ["x", "x", "y", "y", "z", "x", "x"],
            "model_b": ["y", "y", "x", "z", "x", "z", "x"],
            "winner": ["model_a", "tie", "model_a", "model_b", "model_b", "model_a", "model_a"],
        }
    )
    models, frac = preference.pairwise_win_fraction(frame, order=["x", "y", "z"])
    # x-y decided: x won (as A), y won (as A) -> 0.5; x-z: x won as B and as A -> 1.0; y-z: z won -> 0
    np.testing.assert_allclose(frac, [[np.nan, 0.5, 1.0], [0.5, np.nan, 0.0], [0.0, 1.0, np.nan]])
    avg = dict(preference.average_win_rates(frame).iter_rows())
    assert avg == pytest.approx({"x": 0.75, "y": 0.25, "z": 0.5})
    _, counts = preference.pairwise_counts(frame, ["x", "y", "z"])
    assert counts[0, 1] == 3 and counts[0, 2] == 2 and counts[0, 0] == 1


def test_compare_win_rates_is_scipy_ttest():
    from scipy import stats

    from analysis_lib.search_arena import preference

    battles = synthetic_battles(n=3000, seed=11)
    res = preference.compare_win_rates(battles, "sonar", "sonar-pro")
    dec = battles.filter(pl.col("winner").is_in(["model_a", "model_b"]))

    def wins(m):
        rows = dec.filter((pl.col("model_a") == m) | (pl.col("model_b") == m))
        return np.array(
            [(r["model_a"] == m) == (r["winner"] == "model_a") for r in rows.iter_rows(named=True)], dtype=float
        )

    ref = stats.ttest_ind(wins("sonar"), wins("sonar-pro"), alternative="greater")
    assert res.p_value == pytest.approx(ref.pvalue) and res.win_rate_1 == pytest.approx(wins("sonar").mean())
    assert res.reason == ""
    gone = preference.compare_win_rates(battles, "sonar", "no-such-model")
    assert math.isnan(gone.p_value) and gone.reason == "no-such-model has no decided battle in this data"


def test_mean_ci_source_shares_and_ols():
    from scipy import stats

    from analysis_lib.search_arena import preference

    frame = pl.DataFrame(
        {
            "model_a": ["sonar", "sonar", "gpt-4o-search"],
            "model_b": ["gpt-4o-search", "gpt-4o-search", "sonar"],
            "primary_intent": ["Analysis", "Analysis", "Other"],
            "citation_count_a": [2.0, 0.0, 4.0],
            "citation_count_b": [6.0, 8.0, 1.0],
            **{f"cites_{g}_a": [1, 0, 0] for g in ("wiki", "youtube")},
            **{f"cites_{g}_b": [0, 1, 1] for g in ("wiki", "youtube")},
        }
    ).with_columns(*(pl.lit(0).alias(f"cites_{g}_{s}")
                     for g in domains.DOMAIN_GROUPS if g not in ("wiki", "youtube") for s in "ab"))
    mc = dict(preference.mean_ci(frame, "citation_count", nonzero=True).select("model", "mean").iter_rows())
    assert mc == pytest.approx({"sonar": 1.5, "gpt-4o-search": 6.0})
    row = preference.mean_ci(frame, "citation_count", by="primary_intent", skip=["Other"]).row(0, named=True)
    x = np.array([2.0, 0.0, 6.0, 8.0])
    assert row["ci"] == pytest.approx(stats.t.ppf(0.975, 3) * x.std(ddof=1) / 2)
    shares = preference.source_shares(frame, by="model")
    s = {(r["model"], r["group"]): r["share"] for r in shares.iter_rows(named=True)}
    assert s[("sonar", "wiki")] == pytest.approx(2 / 2) and s[("gpt-4o-search", "wiki")] == pytest.approx(2 / 2)
    assert "other" not in shares["group"].to_list()
    fit = preference.ols_band(np.array([1.0, 2.0, 3.0, 4.0]), np.array([2.0, 4.1, 5.9, 8.0]))
    assert fit.slope == pytest.approx(1.98) and (fit.lower <= fit.fit).all() and (fit.fit <= fit.upper).all()


def test_the_vote_vocabulary_is_rankings():
    """One home per fact: the Search Arena schema's winner labels, outcomes and decisive labels are the ranking
    package's (LMArena's), the very same objects, and the default battle format reads exactly these labels."""
    from analysis_lib.ranking import votes

    assert schema.WINNERS is votes.WINNERS and schema.OUTCOME_OF_WINNER is votes.OUTCOME_OF_WINNER
    assert schema.DECISIVE is votes.DECISIVE
    assert (schema.MODEL_A, schema.MODEL_B, schema.TIE, schema.BOTH_BAD) == votes.WINNERS
    fmt = ranking.votes.LMARENA
    assert (*fmt.a_wins, *fmt.b_wins, *fmt.ties) == votes.WINNERS
    assert fmt.outcome_of_label == votes.OUTCOME_OF_WINNER == {"model_a": 1.0, "model_b": 0.0, "tie": 0.5,
                                                                "tie (bothbad)": 0.5}


def test_the_search_arena_command_is_the_generic_leaderboard_with_the_papers_settings(tmp_path, capsys):
    """``python -m analysis_lib.search_arena``: a thin wrapper, its CSV is bt.leaderboard's frame (bootstrap or
    sandwich), and a bad anchor is one line on stderr with exit status 2."""
    from analysis_lib.search_arena import loader
    from analysis_lib.search_arena.__main__ import main

    battles = loader.load_battles("sample:1500", seed=2)
    for ci in ("bootstrap", "sandwich"):
        out = tmp_path / f"{ci}.csv"
        assert main(["sample:1500", "--seed", "2", "--rounds", "7", "--ci", ci, "--output", str(out)]) == 0
        want = bt.leaderboard(battles, rounds=7, seed=2, ci=ci).to_frame()
        got = pl.read_csv(out)
        assert got["model"].to_list() == want["model"].to_list()
        np.testing.assert_allclose(got["ci_lower"].to_numpy(), want["ci_lower"].to_numpy(), rtol=1e-12)
    capsys.readouterr()
    assert main(["sample:1500", "--anchor", "nobody", "--rounds", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "anchor 'nobody' has no battles" in err[0]


def test_a_release_without_an_mle_is_ranked_with_the_ridge_for_the_models_outside():
    """A small release where a model never lost has no MLE: the paper's leaderboard still ranks it (ranking's
    fallback ridge sets the ratings of the models outside the linked group, and the result names them), where
    ranking.leaderboard's own default refuses it."""
    battles = pl.DataFrame({"model_a": ["a", "a", "b", "c", "c"], "model_b": ["b", "c", "c", "a", "b"],
                            "winner": ["model_a", "model_a", "model_b", "model_b", "model_a"]})
    with pytest.raises(ranking.NotIdentifiableError):
        ranking.leaderboard(battles, rounds=5)
    fit = bt.leaderboard(battles, anchor=None, rounds=5)
    assert set(fit.ridge_models) == {"a", "b"} and fit.ridge > 0  # a never lost, b never won
    assert fit.to_frame()["model"].to_list() == ["a", "c", "b"]
