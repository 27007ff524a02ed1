"""Nugget scores, the cap, tie thresholds, the human × nugget confusion matrix and the published numbers (NG)."""

import math

import numpy as np
import polars as pl
import pytest
from scipy import stats as sps
from sklearn.metrics import cohen_kappa_score

from analysis_lib import nuggets as ng
from analysis_lib.nuggets import Nugget
from analysis_lib.nuggets.agreement import NuggetConfusion
from analysis_lib.nuggets.diversity import mean_pairwise_cosine, mean_pairwise_jaccard, unigram_jaccard
from analysis_lib.nuggets.scores import (
    PREFERENCES,
    SWEEP_THRESHOLDS,
    AssignedNugget,
    Assignment,
    Importance,
    score_frame,
)
from analysis_lib.search_arena.schema import VOTES_BY_SIDE

V, OK = Importance.VITAL, Importance.OKAY
S, P, N = Assignment.SUPPORT, Assignment.PARTIAL_SUPPORT, Assignment.NOT_SUPPORT


def _assigned(pairs):
    return [AssignedNugget(Nugget(f"n{i}", imp), a) for i, (imp, a) in enumerate(pairs)]


# ---------------------------------------------------------------- scores

EXAMPLE = [(V, S), (V, P), (V, N), (OK, S), (OK, P)]
# hand computation: values 1, .5, 0, 1, .5 ; strict 1, 0, 0, 1, 0
#   All = 3/5 = 0.6 ; Vital = 1.5/3 = 0.5 ; Strict-All = 2/5 = 0.4 ; Strict-Vital = 1/3


def test_scores_hand_example():
    s = ng.scores.nugget_scores(_assigned(EXAMPLE))
    assert s["all"] == pytest.approx(0.6)
    assert s["vital"] == pytest.approx(0.5)
    assert s["strict_all"] == pytest.approx(0.4)
    assert s["strict_vital"] == pytest.approx(1 / 3)


def test_scores_empty_sets_are_nan():
    s = ng.scores.nugget_scores(_assigned([(OK, S), (OK, P)]))
    assert s["all"] == pytest.approx(0.75) and s["strict_all"] == pytest.approx(0.5)
    assert math.isnan(s["vital"]) and math.isnan(s["strict_vital"])
    assert all(math.isnan(v) for v in ng.scores.nugget_scores([]).values())


def test_records_coerce_strings_and_reject_unknown():
    a = AssignedNugget(Nugget("x", "vital"), "partial_support")
    assert a.nugget.importance is V and a.assignment is P
    with pytest.raises(ValueError):
        Nugget("x", "important")
    with pytest.raises(ValueError):
        AssignedNugget(Nugget("x", "okay"), "supported")


def test_score_frame_matches_nugget_scores():
    rows = []
    battles = {1: EXAMPLE, 2: [(OK, S), (OK, N)], 3: [(V, P)]}
    for b, pairs in battles.items():
        for imp, a in pairs:
            rows.append({"battle_id": b, "side": "a", "importance": imp.value, "assignment": a.value})
    frame = score_frame(pl.DataFrame(rows)).sort("battle_id")
    for r in frame.iter_rows(named=True):
        expected = ng.scores.nugget_scores(_assigned(battles[r["battle_id"]]))
        for key, v in expected.items():
            assert (math.isnan(v) and math.isnan(r[key])) or r[key] == pytest.approx(v)
    assert frame["n_nuggets"].to_list() == [5, 2, 1] and frame["n_vital"].to_list() == [3, 0, 1]
    with pytest.raises(ValueError):
        score_frame(pl.DataFrame([{"battle_id": 1, "side": "a", "importance": "vital", "assignment": "yes"}]))


# ---------------------------------------------------------------- cap


def test_cap_drops_okay_last_first_and_keeps_order():
    nuggets = [Nugget(f"v{i}", V) for i in range(20)] + [Nugget(f"o{i}", OK) for i in range(15)]
    nuggets = nuggets[::2] + nuggets[1::2]  # interleave vital and okay
    kept = ng.scores.cap_nuggets(nuggets)
    assert len(kept) == 30
    assert sum(n.importance is V for n in kept) == 20
    okay_in_order = [n.text for n in nuggets if n.importance is OK]
    assert [n.text for n in kept if n.importance is OK] == okay_in_order[:10]
    assert [n.text for n in kept] == [n.text for n in nuggets if n in kept]


def test_cap_never_drops_vital_and_leaves_short_lists():
    vitals = [Nugget(f"v{i}", V) for i in range(32)] + [Nugget("o", OK)]
    kept = ng.scores.cap_nuggets(vitals)
    assert len(kept) == 32 and all(n.importance is V for n in kept)
    short = [Nugget("a", OK), Nugget("b", V)]
    assert ng.scores.cap_nuggets(short) == short
    assert len(ng.scores.cap_nuggets([Nugget(str(i), OK) for i in range(30)])) == 30


# ---------------------------------------------------------------- preference and tie threshold


def test_preference_threshold_boundary_is_a_tie():
    a = np.array([0.50, 0.50, 0.50, 0.50, 0.10, 0.50, 0.0])
    b = np.array([0.57, 0.43, 0.5701, 0.4299, 0.17, 0.50, 1.0])
    pref = ng.scores.nugget_preference(a, b, 0.07)
    assert pref.tolist() == ["tie", "tie", "model_b", "model_a", "tie", "tie", "model_b"]
    # 0.17 - 0.10 is 0.07000000000000002 in binary: still a tie
    assert ng.scores.nugget_preference([0.5], [0.6], threshold=0.0).tolist() == ["model_b"]
    assert ng.scores.nugget_preference([0.5], [0.5], threshold=0.0).tolist() == ["tie"]
    with pytest.raises(ValueError):
        ng.scores.nugget_preference([np.nan], [0.1])


# ---------------------------------------------------------------- confusion, kappa, inversions

HUMAN_LABELS = {0: "model_a", 1: "tie", 2: "model_b"}


def _expand(m: np.ndarray):
    """Independent label lists from a 3x3 count table."""
    h, p = [], []
    for (i, j), c in np.ndenumerate(m):
        h += [HUMAN_LABELS[i]] * int(c)
        p += [HUMAN_LABELS[j]] * int(c)
    return h, p


def _random_battles(rng, n=400):
    human = rng.choice(VOTES_BY_SIDE, size=n, p=[0.34, 0.2, 0.35, 0.11])
    shift = np.select([human == "model_a", human == "model_b"], [-0.08, 0.08], 0.0)
    a = rng.uniform(0.2, 0.8, n)
    b = np.clip(a + shift + rng.normal(0, 0.1, n), 0, 1)
    return a, b, human


def test_confusion_kappa_inversions_against_independent_computation():
    rng = np.random.default_rng(3)
    a, b, human = _random_battles(rng)
    pref = ng.scores.nugget_preference(a, b)
    m = ng.confusion(human, pref)
    # independent counts
    for i, hv in enumerate(VOTES_BY_SIDE):
        for j, pv in enumerate(PREFERENCES):
            assert m.counts[i, j] == int(np.sum((human == hv) & (pref == pv)))
    keep = human != "tie (bothbad)"
    expected = cohen_kappa_score(human[keep], pref[keep], labels=list(PREFERENCES), weights="quadratic")
    assert m.kappa == pytest.approx(expected)
    opposite = ((human == "model_a") & (pref == "model_b")) | ((human == "model_b") & (pref == "model_a"))
    assert m.inversions == opposite.sum()
    assert m.inversion_rate == pytest.approx(opposite.mean())
    assert m.agreements_a == np.sum((human == "model_a") & (pref == "model_a"))
    merged = np.where(human == "tie (bothbad)", "tie", human)
    assert m.kappa_bothbad_as_tie == pytest.approx(
        cohen_kappa_score(merged, pref, labels=list(PREFERENCES), weights="quadratic"))
    with pytest.raises(ValueError):
        ng.confusion(["model_a", "draw"], ["tie", "tie"])


def test_threshold_sweep_matches_per_threshold_confusions():
    rng = np.random.default_rng(7)
    a, b, human = _random_battles(rng, 300)
    sweep = ng.threshold_sweep(a, b, human)
    assert sweep["threshold"].to_list() == list(SWEEP_THRESHOLDS)
    for r in sweep.iter_rows(named=True):
        m = ng.confusion(human, ng.scores.nugget_preference(a, b, r["threshold"]))
        assert r["kappa"] == pytest.approx(m.kappa)
        assert (r["agreements_a"], r["agreements_b"], r["inversions"]) == (m.agreements_a, m.agreements_b, m.inversions)
        assert r["tie_row_a"] + r["tie_row_tie"] + r["tie_row_b"] == pytest.approx(1.0)
    # wider tie band: monotonically fewer decided pairs, hence fewer inversions
    assert np.all(np.diff(sweep["inversions"].to_numpy()) <= 0)


def test_confusion_shape_validation():
    with pytest.raises(ValueError):
        NuggetConfusion(np.zeros((3, 3)))
    with pytest.raises(ValueError):
        NuggetConfusion(-np.ones((4, 3)))


# ---------------------------------------------------------------- published numbers (NG, seed 002)

TABLE1_CATEGORIES = {  # Table 1 (a): inversion %, query count
    "ambiguous": (19, 196), "assumptive": (18, 28), "multi-faceted": (18, 299), "incompleteness": (16, 631),
    "subjective": (15, 601), "knowledge-intensive": (15, 1142), "reasoning-intensive": (14, 288), "harmful": (9, 92),
}
TABLE1_LANGUAGES = {  # Table 1 (b)
    "German": (20, 244), "English": (17, 3117), "Chinese": (16, 328), "Portuguese": (16, 150),
    "Russian": (15, 460), "French": (13, 151), "Others": (16, 647),
}


@pytest.fixture(scope="module")
def published():
    return ng.published_confusions()


def test_published_overall(published):
    m = published[("overall", "all")]
    assert m.agreements_a == 938 and m.row_totals["model_a"] == 1714
    assert m.agreements_b == 924 and m.row_totals["model_b"] == 1761
    assert round(100 * m.agreement_share_a, 1) == 54.7 and round(100 * m.agreement_share_b, 1) == 52.5
    assert m.kappa == pytest.approx(0.298, abs=5e-4)
    assert round(m.kappa, 2) == 0.30
    h, p = _expand(m.ordered)
    assert m.kappa == pytest.approx(cohen_kappa_score(h, p, labels=list(PREFERENCES), weights="quadratic"))
    assert m.n == 5097  # 5,103 single-turn battles minus failures (paper: five excluded)
    assert m.inversions == 838


@pytest.mark.parametrize("subset_type,table", [("query_category", TABLE1_CATEGORIES), ("language", TABLE1_LANGUAGES)])
def test_published_table1(published, subset_type, table):
    for subset, (pct, count) in table.items():
        m = published[(subset_type, subset)]
        assert m.n == count, subset
        assert round(100 * m.inversion_rate) == pct, subset


def test_published_knowledge_intensive(published):
    m = published[("query_category", "knowledge-intensive")]
    assert round(m.kappa, 2) == 0.35
    assert round(100 * m.agreement_share_a, 1) == 58.8 and round(100 * m.agreement_share_b, 1) == 55.7


def test_inversion_and_kappa_tables(published):
    t = ng.inversion_table(published, "query_category")
    assert t["subset"][0] == "ambiguous" and t["subset"][-1] == "harmful"
    k = ng.kappa_table(published)
    assert k.height == len(published)
    overall = k.filter(pl.col("subset") == "all").row(0, named=True)
    assert overall["kappa"] > overall["kappa_bothbad_as_tie"]


# ---------------------------------------------------------------- NG-F2 and NG-T2 helpers


def test_ks_by_vote_matches_scipy():
    rng = np.random.default_rng(1)
    a, b, human = _random_battles(rng, 500)
    d = b - a
    ks = ng.ks_by_vote(d, human)
    first = ks.row(0, named=True)
    ref = sps.ks_2samp(d[human == "model_a"], d[human == "model_b"])
    assert (first["group_1"], first["group_2"]) == ("model_a", "model_b")
    assert first["ks_statistic"] == pytest.approx(ref.statistic) and first["p_value"] == pytest.approx(ref.pvalue)
    assert first["n_1"] + first["n_2"] + ks.row(1, named=True)["n_2"] == int(np.sum(human != "tie (bothbad)"))


def test_jaccard_and_cosine():
    assert unigram_jaccard("The cat sat", "the dog sat") == pytest.approx(2 / 4)
    assert unigram_jaccard("", "") == 0.0
    assert mean_pairwise_jaccard(["a b", "b c", "c d"]) == pytest.approx((1 / 3 + 0 + 1 / 3) / 3)
    assert math.isnan(mean_pairwise_jaccard(["only one"]))
    e = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    assert mean_pairwise_cosine(e) == pytest.approx((0 + 2 ** -0.5 + 2 ** -0.5) / 3)


def test_tables_without_subsets_keep_their_columns():
    """User records without query classes: Table 1 by class has no rows but its columns (the chapter filters
    and plots it)."""
    only_overall = {("overall", "all"): ng.confusion(["model_a", "model_b"], ["model_a", "tie"])}
    t = ng.inversion_table(only_overall, "query_category")
    assert t.height == 0 and "inversion_pct" in t.columns and t.schema["battles"] == pl.Int64
    assert ng.kappa_table({}).columns[:3] == ["subset_type", "subset", "battles"]
