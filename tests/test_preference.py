"""Preference helpers with known answers: Table D.1 subsets, Fig 4 score-vs-feature, source shares (SA-D5, SA-F4,
SA-E2, SA-E3)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
import statsmodels.api as sm
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint
from test_bt import MODELS, synthetic_battles

from analysis_lib.search_arena import bt, preference
from analysis_lib.search_arena.domains import DOMAIN_GROUPS


def _with_subset_columns(battles: pl.DataFrame, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    n = battles.height
    language = rng.choice(np.array(["English", "Russian", "Chinese", None], dtype=object), n, p=[0.5, 0.25, 0.2, 0.05])
    intent = rng.choice(
        np.array(["Factual Lookup", "Info Synthesis", "Analysis", "Other", None], dtype=object), n,
        p=[0.25, 0.2, 0.3, 0.2, 0.05]
    )
    return battles.with_columns(pl.Series("language", language, dtype=pl.String),
                                pl.Series("primary_intent", intent, dtype=pl.String))


def test_leaderboard_subsets_definitions():
    frame = pl.DataFrame(
        {
            "id": list(range(7)),
            "language": ["English", "Russian", None, "English", "Chinese", "English", None],
            "primary_intent": ["Factual Lookup", "Info Synthesis", "Analysis", None, "Other", "Recommendation",
                               "Factual Lookup"],
        }
    )
    subsets = {k: sorted(v["id"].to_list()) for k, v in preference.leaderboard_subsets(frame).items()}
    assert subsets["all"] == list(range(7))
    assert subsets["english"] == [0, 3, 5]
    assert subsets["non_english"] == [1, 4]  # a conversation without a language is in neither
    assert subsets["factual"] == [0, 1, 6]  # Factual Lookup + Info Synthesis
    assert subsets["non_factual"] == [2, 3, 4, 5]  # everything else, the null intent included (pandas ~isin)


def test_table_d1_is_the_leaderboard_of_each_subset():
    battles = _with_subset_columns(synthetic_battles(n=3000, seed=4))
    d1 = preference.table_d1(battles, rounds=8, seed=2)
    assert d1.columns == [
        "model", "rating", "rank", "rating_english", "rank_english", "rating_non_english", "rank_non_english",
        "rating_factual", "rank_factual", "rating_non_factual", "rank_non_factual",
    ]
    assert d1["rating"].to_list() == sorted(d1["rating"].to_list(), reverse=True)
    for name, frame in preference.leaderboard_subsets(battles).items():
        suffix = "" if name == "all" else f"_{name}"
        lb = bt.leaderboard(frame, rounds=8, seed=2).to_frame()
        ours = d1.select("model", f"rating{suffix}", f"rank{suffix}").sort("model")
        assert ours.rows() == lb.select("model", "rating", "rank").sort("model").rows()


def test_table_d1_has_every_column_and_nulls_for_a_subset_the_data_cannot_form():
    battles = _with_subset_columns(synthetic_battles(n=600, seed=4)).with_columns(
        pl.lit(None, pl.String).alias("primary_intent"))
    d1 = preference.table_d1(battles, rounds=0)
    assert d1.columns[-4:] == ["rating_factual", "rank_factual", "rating_non_factual", "rank_non_factual"]
    assert d1.select(pl.col("^(rating|rank)_(non_)?factual$").is_null().all()).row(0) == (True,) * 4
    assert d1["rating_english"].is_not_null().all() and d1["rank_factual"].dtype == d1["rank"].dtype


@pytest.fixture(scope="module")
def fig4_battles() -> pl.DataFrame:
    """Battles among MODELS and gpt-4o-search-high-loc, with per-side response lengths and citation counts."""
    rng = np.random.default_rng(9)
    models = [*MODELS, "gpt-4o-search-high-loc"]
    n = 3000
    a = rng.integers(0, len(models), n)
    b = (a + rng.integers(1, len(models), n)) % len(models)
    verbosity = np.linspace(150, 400, len(models))
    return pl.DataFrame(
        {
            "model_a": [models[i] for i in a],
            "model_b": [models[i] for i in b],
            "winner": rng.choice(["model_a", "model_b", "tie"], n, p=[0.45, 0.4, 0.15]),
            "response_length_a": rng.gamma(4.0, verbosity[a] / 4.0),
            "response_length_b": rng.gamma(4.0, verbosity[b] / 4.0),
            "citation_count_a": rng.poisson(3.0, n) * rng.integers(0, 2, n).astype(float),
            "citation_count_b": rng.poisson(3.0, n) * rng.integers(0, 2, n).astype(float),
        }
    )


@pytest.fixture(scope="module")
def fig4(fig4_battles) -> dict:
    return preference.score_vs_features(fig4_battles, rounds=10, seed=1)


def test_score_vs_features_fits_the_leaderboard_once(fig4_battles, monkeypatch):
    calls = []
    fit = bt.leaderboard
    monkeypatch.setattr(bt, "leaderboard", lambda *a, **k: calls.append(1) or fit(*a, **k))
    got = preference.score_vs_features(fig4_battles, rounds=3, seed=1)
    assert list(got) == list(preference.FIG4_COLUMNS) and len(calls) == 1


@pytest.mark.parametrize("column", ["response_length", "citation_count"])
def test_score_vs_feature_same_battles_and_statsmodels_band(fig4, fig4_battles, column):
    merged, line = fig4[column]
    assert "gpt-4o-search-high-loc" not in merged["model"].to_list()
    kept = fig4_battles.filter(
        (pl.col("model_a") != "gpt-4o-search-high-loc") & (pl.col("model_b") != "gpt-4o-search-high-loc")
    )
    # the BT score is the leaderboard of the kept battles ...
    lb = dict(bt.leaderboard(kept, rounds=10, seed=1).to_frame().select("model", "rating").iter_rows())
    assert dict(merged.select("model", "score").iter_rows()) == pytest.approx(lb)
    # ... while the per-model means come from all the battles, those against high-loc included, as the authors'
    # notebook computes them (citations: responses that cite)
    resp = pl.concat(
        [fig4_battles.select(pl.col(f"model_{s}").alias("model"), pl.col(f"{column}_{s}").alias("x")) for s in "ab"]
    )
    if column == "citation_count":
        resp = resp.filter(pl.col("x") != 0)
    means = dict(resp.group_by("model").agg(pl.col("x").mean()).iter_rows())
    assert means.pop("gpt-4o-search-high-loc") > 0  # it has a mean but no score: not a point
    assert dict(merged.select("model", "mean").iter_rows()) == pytest.approx(means)
    # OLS band = statsmodels get_prediction().conf_int() on the grid
    x, y = merged["mean"].to_numpy(), merged["score"].to_numpy()
    res = sm.OLS(y, sm.add_constant(x)).fit()
    grid = np.linspace(x.min(), x.max(), 100)
    pred = res.get_prediction(sm.add_constant(grid))
    band = pred.conf_int(alpha=0.05)
    np.testing.assert_allclose(line.grid, grid)
    np.testing.assert_allclose(line.fit, pred.predicted_mean, rtol=1e-10)
    np.testing.assert_allclose(line.lower, band[:, 0], rtol=1e-10)
    np.testing.assert_allclose(line.upper, band[:, 1], rtol=1e-10)
    assert line.slope == pytest.approx(res.params[1]) and line.r2 == pytest.approx(res.rsquared)


def _source_frame() -> pl.DataFrame:
    """sonar cites wiki in 3 of 4 citing responses, gpt-4o-search in 1 of 3; one gpt response cites nothing."""
    wiki_a, wiki_b = [1, 1, 0, 1, 0], [1, 0, 0, 0, 0]
    yt_a, yt_b = [0, 0, 1, 0, 0], [0, 1, 1, 0, 0]
    return pl.DataFrame(
        {
            "model_a": ["sonar"] * 4 + ["gpt-4o-search-high-loc"],
            "model_b": ["gpt-4o-search"] * 4 + ["sonar"],
            "cites_wiki_a": wiki_a, "cites_wiki_b": wiki_b, "cites_youtube_a": yt_a, "cites_youtube_b": yt_b,
        }
    ).with_columns(pl.lit(0).alias(f"cites_{g}_{s}")
                   for g in DOMAIN_GROUPS if g not in ("wiki", "youtube") for s in "ab")


def test_source_shares_wilson_and_family():
    frame = _source_frame()
    shares = preference.source_shares(frame, by="model")
    assert shares.columns == ["model", "group", "share", "n", "ci_lower", "ci_upper"]
    assert "other" not in shares["group"].to_list()
    row = shares.filter((pl.col("model") == "sonar") & (pl.col("group") == "wiki")).row(0, named=True)
    # sonar: responses citing a non-other group = rows 0-3 as A (row 4: sonar as B cites nothing) -> 3 of 4
    assert (row["share"], row["n"]) == (pytest.approx(0.75), 4)
    lo, hi = proportion_confint(3, 4, alpha=0.05, method="wilson")
    assert (row["ci_lower"], row["ci_upper"]) == (pytest.approx(lo), pytest.approx(hi))
    gpt = shares.filter((pl.col("model") == "gpt-4o-search") & (pl.col("group") == "youtube")).row(0, named=True)
    assert (gpt["share"], gpt["n"]) == (pytest.approx(2 / 3), 3)  # as B in rows 0-2: wiki, youtube, youtube
    none = shares.filter((pl.col("model") == "sonar") & (pl.col("group") == "retail")).row(0, named=True)
    assert none["share"] == 0.0 and none["ci_lower"] == pytest.approx(0.0)
    assert none["ci_upper"] == pytest.approx(proportion_confint(0, 4, alpha=0.05, method="wilson")[1])
    assert none["ci_upper"] > 0.3  # a share of 0 still has a non-degenerate interval (Wald: zero width)
    assert ((shares["share"] >= 0) & (shares["share"] <= 1)).all()  # fractions, not percent
    fam = preference.source_shares(frame, by="family")
    assert set(fam["family"]) == {"Perplexity", "OpenAI"}  # high-loc excluded, providers from model_names.csv


def test_source_share_difference():
    frame = _source_frame()
    diff = preference.source_share_difference(frame, "sonar", "gpt-4o-search")
    row = diff.filter(pl.col("group") == "wiki").row(0, named=True)
    # gpt-4o-search as B: citing responses rows 0, 1, 2 (wiki, youtube, youtube) -> wiki 1 of 3
    assert row["difference"] == pytest.approx(0.75 - 1 / 3)
    lo, hi = confint_proportions_2indep(3, 4, 1, 3, method="newcomb", compare="diff")
    assert (row["ci_lower"], row["ci_upper"]) == (pytest.approx(lo), pytest.approx(hi))
    assert (row["n"], row["n_baseline"]) == (4, 3)
