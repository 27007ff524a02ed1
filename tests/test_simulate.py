"""Tests of the Search Arena simulator: schema of the real release, determinism, calibration, planted truth."""

from __future__ import annotations

import math
import re

import numpy as np
import polars as pl
import pyarrow.parquet as pq
import pytest

from analysis_lib.domains import DOMAIN_GROUPS
from analysis_lib.fetch import fetch
from analysis_lib.simulate.search_arena import Planted, simulate

NONSEARCH = "gemini-2.5-pro-exp-03-25-wo-search"
MODERATION = "$MODERATION$ YOUR TEXT VIOLATES OUR CONTENT MODERATION GUIDELINES."


@pytest.fixture(scope="module")
def small() -> tuple[pl.DataFrame, Planted]:
    return simulate(n=400, seed=3)


@pytest.fixture(scope="module")
def moderate() -> tuple[pl.DataFrame, Planted]:
    return simulate(n=6000, seed=11)


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


def test_deterministic_for_seed():
    a, pa_ = simulate(n=300, seed=5)
    b, pb = simulate(n=300, seed=5)
    c, _ = simulate(n=300, seed=6)
    assert a.equals(b)
    assert pa_.truth.equals(pb.truth)
    assert not a.equals(c)


def test_planted_record(small):
    _, planted = small
    assert planted.ratings["gpt-4o-search"] == 1000.0
    assert planted.betas["response_length"] == 0.334 and planted.betas["citation_count"] == 0.209
    assert planted.betas["cites_wiki"] == -0.071 and planted.betas["cites_tech_coding"] == 0.073
    assert planted.features[:2] == ("response_length", "citation_count")
    assert set(planted.features[2:]) == {f"cites_{g}" for g in DOMAIN_GROUPS}
    assert "gemini-2.5-pro" in planted.ratings
    assert planted.alpha == pytest.approx(math.log(10) / 400)
    with pytest.raises(Exception):
        planted.n = 5  # frozen


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
    """The authors' substring rule, written out independently of analysis_lib.domains."""
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
    raw, planted = simulate()
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


# ------------------------------------------------------------------------------------- structure, reproducibility

#: sha256 of the simulator's output for (n, seed), recorded from the single-function simulator before it was split
#: into steps (commit 02bafe0): Arrow IPC bytes of the raw release and of ``Planted.truth``, then the Planted
#: scalars and ``params`` as sorted JSON. The steps draw from one generator in the original order, so the bytes match.
DIGESTS = {
    (300, 0): "99873a2a87b1ce07b8eef7538f9ecbc89d5de967882d48e6f36e89256891fe2c",
    (2000, 1): "fce7372995a8b91bec1efed339abbbbbe59b9cc483e6f136e306dc890795856c",
    (6000, 3): "c2f5dbf84e3bc09c0b5044783315c4b31c00b17782efa8c06db17cc2939d2c44",
}


def _digest(raw: pl.DataFrame, planted: Planted) -> str:
    import hashlib
    import io
    import json

    h = hashlib.sha256()
    for frame in (raw, planted.truth):
        buf = io.BytesIO()
        frame.write_ipc(buf, compression="uncompressed")
        h.update(buf.getvalue())
    fields = ("ratings", "betas", "features", "p_tie", "p_bothbad", "n", "seed", "feature_mean", "feature_std",
              "scale", "base", "anchor")
    h.update(json.dumps({k: getattr(planted, k) for k in fields}, sort_keys=True, default=str).encode())
    h.update(json.dumps(planted.params, sort_keys=True, default=str).encode())
    return h.hexdigest()


@pytest.mark.parametrize(("n", "seed"), list(DIGESTS))
def test_seed_reproduces_the_pre_split_output_byte_for_byte(n, seed):
    assert _digest(*simulate(n=n, seed=seed)) == DIGESTS[(n, seed)]


def test_import_gives_the_module_and_its_simulate_runs_it():
    import types

    import analysis_lib.simulate.search_arena as sa_module
    import analysis_lib.simulate.text_arena as ta_module
    from analysis_lib import simulate as sim_pkg

    assert isinstance(sa_module, types.ModuleType) and sa_module.__name__ == "analysis_lib.simulate.search_arena"
    assert isinstance(ta_module, types.ModuleType) and ta_module.__name__ == "analysis_lib.simulate.text_arena"
    assert sim_pkg.search_arena is sa_module and sim_pkg.text_arena is ta_module
    assert not callable(sa_module) and not callable(ta_module)
    raw_call, _ = sim_pkg.search_arena.simulate(50, 2)  # the chapters' call
    raw_fn, _ = sa_module.search_arena(n=50, seed=2)  # the former name
    assert raw_call.equals(raw_fn)
    rows_call, _ = sim_pkg.text_arena.simulate(n=20, seed=1)
    assert rows_call == ta_module.text_arena(n=20, seed=1)[0]


def test_planted_p_a_is_the_expected_half_win_score():
    """``p_a`` = σ(logit) = P(A wins) + P(tie)/2, not P(A wins | decisive): over many voted battles with similar
    p_a, the half-win score matches the mean p_a while the decisive win share is further from 1/2."""
    raw, planted = simulate(n=20_000, seed=4)
    t = planted.truth.with_columns(raw["winner"]).filter(pl.col("voted"))
    assert np.allclose(t["p_a"], 1 / (1 + np.exp(-t["logit"].to_numpy())))
    strong = t.filter(pl.col("p_a") > 0.65)
    half = (strong["winner"] == "model_a").mean() + 0.5 * strong["winner"].str.starts_with("tie").mean()
    decisive = strong.filter(~pl.col("winner").str.starts_with("tie"))
    win_decisive = (decisive["winner"] == "model_a").mean()
    se = math.sqrt(0.25 / strong.height)
    assert abs(half - strong["p_a"].mean()) < 4 * se
    assert win_decisive > strong["p_a"].mean() + 4 * se
