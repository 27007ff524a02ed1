"""The Search Arena release simulator's promises: the real release's schema, the same output for the same seed and
another for another seed, shares calibrated to the paper within sampling error, planted values an estimator
recovers, and a planted truth that matches an independent recomputation from the emitted rows."""

from __future__ import annotations

import math
import re

import numpy as np
import polars as pl
import pyarrow.parquet as pq
import pytest

from analysis_lib.fetch import fetch
from analysis_lib.search_arena import bt, loader
from analysis_lib.search_arena.domains import DOMAIN_GROUPS
from analysis_lib.search_arena.simulate import Planted, simulate_release

NONSEARCH = "gemini-2.5-pro-exp-03-25-wo-search"
MODERATION = "$MODERATION$ YOUR TEXT VIOLATES OUR CONTENT MODERATION GUIDELINES."


@pytest.fixture(scope="module")
def small() -> tuple[pl.DataFrame, Planted]:
    sim = simulate_release(n=400, seed=3)
    return sim.raw, sim.planted


@pytest.fixture(scope="module")
def moderate() -> tuple[pl.DataFrame, Planted]:
    sim = simulate_release(n=6000, seed=11)
    return sim.raw, sim.planted


# ---------------------------------------------------------------------------------------------- schema


def _real_columns(text: str) -> list[tuple[str, str, str]]:
    """(path, physical_type, logical_type) of every leaf column in the parquet-tools dump of the release."""
    out = []
    for block in re.split(r"\n############ Column\(", text)[1:]:
        fields = dict(re.findall(r"^(\w[\w ()]*?): (.*)$", block, flags=re.M))
        out.append((fields["path"], fields["physical_type"], fields["logical_type"]))
    return out


def test_schema_matches_real_release(small, tmp_path, monkeypatch):
    monkeypatch.setenv("ANALYSIS_DATA_MIRROR", "/work/shared/data")
    monkeypatch.setenv("ANALYSIS_DATA_CACHE", str(tmp_path / "cache"))
    real = _real_columns(fetch("search_arena_24k/parquet_schema").read_text())
    assert len(real) == 53

    raw, _ = small
    out = tmp_path / "sim.parquet"
    raw.write_parquet(out)
    ours = {c.path: c for c in pq.ParquetFile(out).schema}
    for path, physical, logical in real:
        assert path in ours, f"missing column path {path}"
        assert ours[path].physical_type == physical, path
        if logical.startswith("String"):
            assert str(ours[path].logical_type) == "String", path
        if path == "timestamp":
            assert "nanoseconds" in str(ours[path].logical_type).lower() or "NANOS" in str(ours[path].logical_type)
    # same top-level column order as the real file
    top = []
    for path, _, _ in real:
        if path.split(".")[0] not in top:
            top.append(path.split(".")[0])
    assert raw.columns == top
    assert pq.read_schema(out).names == top


# ---------------------------------------------------------------------------------------- determinism


def test_same_seed_same_release_other_seed_another():
    a, b, c = (simulate_release(n=300, seed=s) for s in (5, 5, 6))
    assert a.raw.equals(b.raw) and a.planted.truth.equals(b.planted.truth)
    assert a.planted.feature_mean == b.planted.feature_mean and a.planted.params == b.planted.params
    assert not a.raw.equals(c.raw) and not a.planted.truth.equals(c.planted.truth)
    assert a.planted.ratings == c.planted.ratings and a.planted.betas == c.planted.betas  # the truth is fixed
    with pytest.raises(ValueError, match="at least 2"):
        simulate_release(n=1)


def test_planted_record(small):
    raw, planted = small
    assert planted.ratings[planted.anchor[0]] == planted.anchor[1]
    assert planted.features[:2] == ("response_length", "citation_count")
    assert set(planted.features[2:]) == {f"cites_{g}" for g in DOMAIN_GROUPS}
    assert set(planted.betas) == set(planted.features)
    models = set(loader.load_battles(raw)["model_a"]) | set(loader.load_battles(raw)["model_b"])
    assert models <= set(planted.ratings)  # every model in the release has a planted rating
    assert planted.n == raw.height == planted.truth.height and planted.seed == 3
    with pytest.raises(Exception):
        planted.n = 5  # frozen


def test_contextual_fit_recovers_the_planted_values(moderate):
    """The paper's estimator (contextual BT with the 13 controls on all voted battles, ties half a win) is the
    simulator's vote model, so it recovers the planted coefficients within sampling error: 4 bootstrap SDs
    (a correct simulator breaks this with probability ~1e-4 per coefficient) and the planted ratings of the
    models with at least 200 voted battles within 4 bootstrap SDs too."""
    raw, planted = moderate
    battles = bt.prepare_battles(loader.load_battles(raw), exclude=[]).frame
    fit = bt.style_control(battles, planted.features, rounds=40, seed=0)
    assert fit.rounds is not None
    coef = fit.coefficients()
    sd = fit.rounds[:, len(fit.models):].std(axis=0)
    truth = np.array([planted.betas[f] for f in coef["feature"]])
    assert (np.abs(coef["estimate_ml"].to_numpy() - truth) < 4 * sd).all(), (coef, truth, sd)
    ratings = fit.to_frame()
    counts = pl.concat([battles["model_a"], battles["model_b"]]).value_counts()
    busy = set(counts.filter(pl.col("count") >= 200)["model_a"]) - {planted.anchor[0]}
    rows = ratings.filter(pl.col("model").is_in(list(busy)))
    half_width = (rows["ci_upper"] - rows["ci_lower"]).to_numpy() / 3.92  # the bootstrap SD of a normal interval
    errors = rows["rating_ml"].to_numpy() - np.array([planted.ratings[m] for m in rows["model"]])
    assert rows.height >= 8 and (np.abs(errors) < 4 * half_width).all(), (rows, errors)


# ---------------------------------------------------------------------------------------- calibration


def test_calibration_shares(moderate):
    raw, _ = moderate
    n = raw.height
    # binomial standard errors at n = 6000 are <= 0.0065; tolerances are ~4-5 of them
    assert raw["winner"].is_not_null().mean() == pytest.approx(0.525, abs=0.03)
    assert (raw["turn"] > 1).mean() == pytest.approx(0.224, abs=0.025)
    # English: SE 0.0064, plus up to 71/6000 rows forced to carry every language once
    assert (raw["languages"].list.first() == "English").mean() == pytest.approx(0.583, abs=0.035)
    assert (raw["languages"].list.len() > 1).mean() == pytest.approx(0.11, abs=0.02)
    voted = raw.filter(pl.col("winner").is_not_null())
    ties = voted["winner"].is_in(["tie"]).mean()
    both = (voted["winner"] == "tie (bothbad)").mean()
    assert ties == pytest.approx(0.205, abs=0.03)  # SE 0.007 over ~3,150 votes
    assert both == pytest.approx(0.114, abs=0.025)
    assert set(raw["model_a"].unique()) | set(raw["model_b"].unique()) >= {NONSEARCH, "sonar", "gpt-4o-search-preview"}
    assert n == 6000


def test_citations_per_turn_by_intent_ordering(moderate):
    raw, _ = moderate
    parts = []
    for s in "ab":
        parts.append(
            raw.select(
                "primary_intent",
                model=pl.col(f"model_{s}"),
                per_turn=pl.col(f"system_{s}_metadata").struct.field("web_search_trace"),
            )
        )
    long = pl.concat(parts).filter(pl.col("model") != NONSEARCH).explode("per_turn").drop_nulls("per_turn")
    means = dict(
        long.group_by("primary_intent").agg(pl.col("per_turn").list.len().mean()).drop_nulls().iter_rows()
    )
    # planted 6.9 / 6.8 > 5.7 > 4.2; standard errors of these means are <= ~0.35 at this size
    assert means["Recommendation"] > means["Factual Lookup"] + 0.3
    assert means["Info Synthesis"] > means["Factual Lookup"] + 0.3
    assert means["Factual Lookup"] > means["Text Processing"] + 0.3


def test_response_length_by_intent_ordering(moderate):
    _, planted = moderate
    raw, _ = moderate
    t = planted.truth.with_columns(raw["primary_intent"])
    m = dict(t.group_by("primary_intent").agg(pl.col("response_length_a").mean()).drop_nulls().iter_rows())
    assert m["Creative Generation"] > m["Factual Lookup"] * 1.8
    assert m["Analysis"] > m["Factual Lookup"] * 1.8


def test_nonsearch_model_never_cites_nor_meets_gpt(moderate):
    raw, _ = moderate
    for s, o in (("a", "b"), ("b", "a")):
        ns = raw.filter(pl.col(f"model_{s}") == NONSEARCH)
        assert ns.height > 50
        trace = ns[f"system_{s}_metadata"].struct.field("web_search_trace")
        assert trace.list.len().sum() == 0
        assert not ns[f"model_{o}"].str.starts_with("gpt").any()
        assert (ns[f"model_{o}"] != NONSEARCH).all()


# --------------------------------------------------------------------------- independent feature check


def _category(host: str) -> str:
    """The authors' substring rule, written out independently of analysis_lib.search_arena.domains."""
    us = ["cnn.com", "apnews.com", "cnbc.com", "bloomberg.com", "economist.com", "nytimes.com",
          "washingtonpost.com", "wsj.com", "nbcnews.com", "abcnews.go.com", "usatoday.com", "npr.org", "latimes.com",
          "vox.com", "huffpost.com", "ft.com", "foxnews.com", "axios.com", "time.com", "buzzfeed.com", "cbsnews.com",
          "politico.co", "newsweek.com", "fortune.com", "theatlantic.com", "whattowatch.com", "scrippsnews.com",
          "investopedia.com", "yahoo.com", "breitbart.com", "washingtontimes.com", "dailycaller.com",
          "thefederalist.com", "townhall.com", "pjmedia.com", "westernjournal.com", "forbes.com"]
    foreign = ["reuters.com", "bbc.com", "aljazeera.com", "dw.com", "france24.com", "as.com", "elpais.com", "cbc.ca",
               "theglobeandmail.com", "smh.com.au", "abc.net.au", "japantimes.co.jp", "straitstimes.com",
               "hindustantimes.com", "thehindu.com", "economictimes.indiatimes.com", "indianexpress.com",
               "independent.co.uk", "theguardian.com", "cadenaser.com", "lemonde.fr", "vnexpress.net", "ndtv.com"]
    rules = [
        ("youtube", ["youtube.com"]),
        ("gov_edu", [".gov", ".edu", ".mil"]),
        ("wiki", ["wikipedia", "wikihow", "wikimedia"]),
        ("us_news", us),
        ("foreign_news", foreign),
        ("social_media", ["tiktok.com", "facebook.com", "instagram.com", "x.com", "twitter.com", "linkedin.com",
                          "snapchat.com", "pinterest.com"]),
        ("community_blog", ["reddit.com", "quora.com", "blog", "medium.com", "wordpress.com", "substack.com",
                            "tumblr.com"]),
        ("tech_coding", ["github.com", "gitlab.com", "stackexchange.com", "microsoft.com", "dev.to", "codecademy.com",
                         "stackoverflow.com"]),
        ("academic_journal", ["jstor.org", "springer.com", "sciencedirect.com", "nature.com", "arxiv.org",
                              "researchgate.com", "biorxiv.org"]),
        ("retail", ["amazon.com", "ebay.com", "walmart.com", "target.com", "bestbuy.com", "costco.com"]),
    ]
    for group, patterns in rules:
        if any(p in host for p in patterns):
            return group
    return "other"


def _side_features(messages, metadata) -> dict[str, float]:
    lengths = [len(m["content"].split()) for m in messages if m["role"] == "assistant"]
    trace = metadata["web_search_trace"]
    n_urls = sum(len(t) for t in trace)
    feats = {
        "response_length": float(np.mean(lengths)),
        "citation_count": n_urls / len(trace) if len(trace) > 0 else 0,
    }
    counts = {g: 0 for g in DOMAIN_GROUPS}
    for turn in trace:
        for _, url in turn:
            counts[_category(url.split("/")[2])] += 1
    for g in DOMAIN_GROUPS:
        feats[f"cites_{g}"] = 1 if counts[g] > 0 else 0
        feats[f"num_cites_{g}"] = counts[g]
    return feats


def test_planted_features_match_independent_computation(small):
    raw, planted = small
    features = list(planted.features)
    xa = np.zeros((raw.height, len(features)), dtype=np.int32)
    xb = np.zeros_like(xa)
    for i, row in enumerate(raw.iter_rows(named=True)):
        fa = _side_features(row["messages_a"], row["system_a_metadata"])
        fb = _side_features(row["messages_b"], row["system_b_metadata"])
        xa[i] = [fa[f] for f in features]  # int32 cast, as preprocess_for_style
        xb[i] = [fb[f] for f in features]
        for g in DOMAIN_GROUPS:
            assert fa[f"num_cites_{g}"] == planted.truth[i, f"num_cites_{g}_a"]
            assert fb[f"num_cites_{g}"] == planted.truth[i, f"num_cites_{g}_b"]
    truth = planted.truth
    for j, f in enumerate(features):
        np.testing.assert_array_equal(xa[:, j], truth[f"{f}_a"].to_numpy(), err_msg=f)
        np.testing.assert_array_equal(xb[:, j], truth[f"{f}_b"].to_numpy(), err_msg=f)

    # z-scores over the voted battles and the outcome logit
    voted = raw["winner"].is_not_null().to_numpy()
    assert (voted == truth["voted"].to_numpy()).all()
    d = (xa - xb).astype(float) / (xa + xb + 1.0)
    mu, sd = d[voted].mean(axis=0), d[voted].std(axis=0)
    z = np.where(sd > 0, (d - mu) / np.where(sd > 0, sd, 1.0), 0.0)
    for j, f in enumerate(features):
        assert planted.feature_mean[f] == pytest.approx(mu[j], abs=1e-12)
        np.testing.assert_allclose(truth[f"z_{f}"].to_numpy()[voted], z[voted, j], atol=1e-9)
    name = dict(
        zip(
            ["sonar", "sonar-pro", "sonar-pro-high", "sonar-reasoning", "sonar-reasoning-pro-high",
             "gemini-2.0-flash-grounding", "gemini-2.5-flash-preview-04-17-grounding",
             "gemini-2.0-pro-exp-02-05-grounding", "gemini-2.5-pro-exp-03-25-grounding", NONSEARCH,
             "gpt-4o-mini-search-preview", "gpt-4o-search-preview", "gpt-4o-search-preview-high",
             "gpt-4o-search-preview-high-loc"],
            ["sonar", "sonar-pro", "sonar-pro-high", "sonar-reasoning", "sonar-reasoning-pro-high",
             "gemini-2.0-flash-grounding", "gemini-2.5-flash-grounding", "gemini-2.5-pro-grounding",
             "gemini-2.5-pro-grounding", "gemini-2.5-pro", "gpt-4o-mini-search", "gpt-4o-search",
             "gpt-4o-search-high", "gpt-4o-search-high-loc"],
        )
    )
    ra = np.array([planted.ratings[name[m]] for m in raw["model_a"]])
    rb = np.array([planted.ratings[name[m]] for m in raw["model_b"]])
    beta = np.array([planted.betas[f] for f in features])
    logit = math.log(10) / 400 * (ra - rb) + z @ beta
    np.testing.assert_allclose(truth["logit"].to_numpy()[voted], logit[voted], atol=1e-9)


def test_structure_and_surprises(small):
    raw, planted = small
    # shared user messages, alternating roles, prompt first
    for row in raw.head(60).iter_rows(named=True):
        ua = [m["content"] for m in row["messages_a"] if m["role"] == "user"]
        ub = [m["content"] for m in row["messages_b"] if m["role"] == "user"]
        assert ua == ub
        roles = [m["role"] for m in row["messages_a"]]
        assert roles[0] == "user"
        assert all(r1 != r2 for r1, r2 in zip(roles, roles[1:]))
        assert row["system_a_metadata"]["conv_id"] == row["system_b_metadata"]["conv_id"]
        assert len(row["system_a_metadata"]["web_search_trace"]) in (0, row["turn"])
    assert (raw["model_a"] == raw["model_b"]).sum() == 1
    assert raw["primary_intent"].null_count() == 1
    ts = raw["timestamp"]
    assert str(ts.min()) >= "2025-03-18" and str(ts.max()) < "2025-05-09"
    assert raw["turn"].dtype == pl.Int64


@pytest.mark.slow
def test_full_size_release_facts():
    raw = simulate_release().raw
    n = raw.height
    assert n == 24_069
    voted = raw["winner"].is_not_null().sum()
    assert abs(voted - 12_652) < 250  # binomial SD ~78
    assert raw["languages"].list.first().n_unique() == 71
    assert raw["system_a_metadata"].struct.field("client_country").drop_nulls().n_unique() == 136
    odd = ((raw["messages_a"].list.len() != 2 * raw["turn"]) | (raw["messages_b"].list.len() != 2 * raw["turn"])).sum()
    assert abs(odd - 1_359) < 150  # binomial SD ~36
    assert (raw["messages_a"].list.first().struct.field("content") == MODERATION).sum() > 40
    ns_voted = raw.filter(
        ((pl.col("model_a") == NONSEARCH) | (pl.col("model_b") == NONSEARCH)) & pl.col("winner").is_not_null()
    ).height
    assert abs(ns_voted - 315) < 60  # binomial SD ~14 on top of the pairing draw
    assert raw["system_a_metadata"].struct.field("client_country").is_null().mean() == pytest.approx(0.08, abs=0.01)


def test_planted_p_a_is_the_expected_half_win_score():
    """``p_a`` = σ(logit) = P(A wins) + P(tie)/2, not P(A wins | decisive): over many voted battles with similar
    p_a, the half-win score matches the mean p_a while the decisive win share is further from 1/2."""
    sim = simulate_release(n=20_000, seed=4)
    raw, planted = sim.raw, sim.planted
    t = planted.truth.with_columns(raw["winner"]).filter(pl.col("voted"))
    assert np.allclose(t["p_a"], 1 / (1 + np.exp(-t["logit"].to_numpy())))
    strong = t.filter(pl.col("p_a") > 0.65)
    half = (strong["winner"] == "model_a").mean() + 0.5 * strong["winner"].str.starts_with("tie").mean()
    decisive = strong.filter(~pl.col("winner").str.starts_with("tie"))
    win_decisive = (decisive["winner"] == "model_a").mean()
    se = math.sqrt(0.25 / strong.height)
    assert abs(half - strong["p_a"].mean()) < 4 * se
    assert win_decisive > strong["p_a"].mean() + 4 * se
