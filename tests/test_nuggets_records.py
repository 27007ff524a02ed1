"""Nugget records (format, loader, exclusions), per-battle scores, published Figure 5 / K-S checks, simulator."""

import json
import math

import matplotlib.pyplot as plt
import numpy as np
import polars as pl
import pytest
from scipy import stats as sps

from analysis_lib import nuggets as ng
from analysis_lib.nuggets import battles as ng_battles
from analysis_lib.nuggets import diversity
from analysis_lib.nuggets.perbattle import cap_frame
from analysis_lib.nuggets.published import ks_pvalue
from analysis_lib.nuggets.scores import ASSIGNMENT_ORDER, score_frame
from analysis_lib.nuggets.simulate import quality as sim
from analysis_lib.reading import DataValidationError
from analysis_lib.search_arena.schema import VOTES_BY_SIDE


def _run(*args, **kwargs):
    """The nugget simulator's records and planted values."""
    out = sim.simulate_nuggets(*args, **kwargs)
    return out.records, out.planted


def _side(qid, side, nuggets, winner="model_a", **extra):
    return {"qid": qid, "side": side, "winner": winner,
            "nuggets": [{"text": t, "importance": i, "assignment": a} for t, i, a in nuggets], **extra}


BATTLE_1 = [("n0", "vital", "support"), ("n1", "vital", "partial_support"), ("n2", "okay", "not_support")]
BATTLE_1B = [("n0", "vital", "not_support"), ("n1", "vital", "support"), ("n2", "okay", "support")]
# hand computation, side a: values 1, .5, 0 -> All .5, Vital .75, Strict-All 1/3, Strict-Vital .5
#                   side b: values 0, 1, 1 -> All 2/3, Vital .5, Strict-All 2/3, Strict-Vital .5


def _write(tmp_path, objs, name="r.jsonl"):
    p = tmp_path / name
    p.write_text("\n".join(json.dumps(o) for o in objs) + "\n")
    return p


def test_load_and_score_hand_example(tmp_path):
    p = _write(tmp_path, [_side("q1", "a", BATTLE_1, language="English", query_categories=["subjective"]),
                          _side("q1", "b", BATTLE_1B, language="English", query_categories=["subjective"])])
    recs = ng.load_nugget_records(p)
    assert recs.n_battles == 1 and sum(recs.excluded.values()) == 0
    s = ng.battle_scores(recs).row(0, named=True)
    assert s["all_a"] == pytest.approx(0.5) and s["vital_a"] == pytest.approx(0.75)
    assert s["strict_all_a"] == pytest.approx(1 / 3) and s["strict_vital_a"] == pytest.approx(0.5)
    assert s["all_b"] == pytest.approx(2 / 3) and s["vital_b"] == pytest.approx(0.5)
    assert s["diff"] == pytest.approx(2 / 3 - 0.5)
    assert s["query_categories"] == ["subjective"] and s["n_nuggets"] == 3 and not s["capped"]


def test_roundtrip_jsonl(tmp_path):
    recs = ng.records.records_from_dicts([_side("q1", "a", BATTLE_1, model="m1"),
                                          _side("q1", "b", BATTLE_1B, model="m2")])
    back = ng.load_nugget_records(recs.to_jsonl(tmp_path / "out.jsonl"))
    assert back.nuggets.equals(recs.nuggets)
    assert back.battles()["model_b"].to_list() == ["m2"]


@pytest.mark.parametrize("obj,field", [
    ({"qid": "q", "side": "c", "winner": "model_a", "nuggets": []}, "side"),
    ({"qid": "q", "side": "a", "winner": "draw", "nuggets": []}, "winner"),
    ({"qid": "q", "side": "a", "winner": "model_a"}, "nuggets"),
    (_side("q", "a", [("t", "important", "support")]), "nuggets[0].importance"),
    (_side("q", "a", [("t", "vital", "yes")]), "nuggets[0].assignment"),
])
def test_bad_records_name_file_line_field(tmp_path, obj, field):
    p = _write(tmp_path, [_side("ok", "a", BATTLE_1), obj])
    with pytest.raises(DataValidationError) as err:
        ng.load_nugget_records(p)
    assert str(p) in str(err.value) and "line 2" in str(err.value) and repr(field) in str(err.value)


def test_bad_json_and_duplicates(tmp_path):
    p = tmp_path / "bad.jsonl"
    p.write_text(json.dumps(_side("q", "a", BATTLE_1)) + "\n{not json\n")
    with pytest.raises(DataValidationError, match=r"line 2, column \d+: not valid JSON"):
        ng.load_nugget_records(p)
    with pytest.raises(DataValidationError, match="already given on line 1"):
        ng.records.records_from_dicts([_side("q", "a", BATTLE_1), _side("q", "a", BATTLE_1)])


def test_exclusions_are_counted():
    failed = [("n0", "vital", "failed")]
    recs = ng.records.records_from_dicts([
        _side("ok", "a", BATTLE_1), _side("ok", "b", BATTLE_1B),
        _side("one", "a", BATTLE_1),
        _side("fail", "a", failed), _side("fail", "b", failed),
        _side("diff", "a", BATTLE_1), _side("diff", "b", [("other", "vital", "support")]),
        _side("vote", "a", BATTLE_1, winner="model_a"), _side("vote", "b", BATTLE_1B, winner="model_b"),
    ])
    assert recs.sides["qid"].unique().to_list() == ["ok"]
    assert recs.excluded["battles with only one side"] == 1
    assert recs.excluded["battles whose two sides give different winners"] == 1
    assert recs.excluded["battles whose sides list different nuggets"] == 1
    assert recs.excluded["battles with a failed nuggetizer step (importance or assignment 'failed')"] == 1


@pytest.mark.parametrize("chunk", [1, 3, 2048])
def test_differing_nugget_lists_across_frame_chunks(tmp_path, monkeypatch, chunk):
    """Battles whose sides list other nuggets (a text, an importance, a longer list; the order of the lines
    shuffled) are excluded whatever the loader's chunk size, by the loader's list digests as by the join the
    simulator's frames take; the expected set is computed here from the lists."""
    monkeypatch.setattr("analysis_lib.nuggets.records.CHUNK_SIDES", chunk)
    rng = np.random.default_rng(3)
    lists = {"same": (BATTLE_1, BATTLE_1B), "text": (BATTLE_1, [("x", *BATTLE_1B[0][1:]), *BATTLE_1B[1:]]),
             "importance": (BATTLE_1, [(BATTLE_1B[0][0], "okay", "support"), *BATTLE_1B[1:]]),
             "longer": (BATTLE_1, [*BATTLE_1B, ("n3", "okay", "support")]), "shorter": (BATTLE_1, BATTLE_1B[:2]),
             "b empty": (BATTLE_1, []), "same 2": (BATTLE_1B, BATTLE_1)}
    objs = [_side(qid, side, nuggets) for qid, pair in lists.items() for side, nuggets in zip("ab", pair, strict=True)]
    objs = [objs[k] for k in rng.permutation(len(objs))]
    recs = ng.load_nugget_records(_write(tmp_path, objs))
    differ = {q for q, (a, b) in lists.items() if a and b and [n[:2] for n in a] != [n[:2] for n in b]}
    without = {q for q, (a, b) in lists.items() if not a and not b}
    assert recs.excluded["battles whose sides list different nuggets"] == len(differ) == 4
    assert set(recs.sides["qid"]) == set(lists) - differ - without
    kept = recs.nuggets.sort("qid", "side", "position")
    expected = sorted((q, s, k, *n) for q, pair in lists.items() if q not in differ
                      for s, nuggets in zip("ab", pair, strict=True) for k, n in enumerate(nuggets))
    assert kept.rows() == expected
    # the simulator's path (frames without the loader's list digests) finds the same battles by a join
    from analysis_lib.nuggets.records import NUGGET_SCHEMA, SIDE_SCHEMA, _exclude
    sides = pl.DataFrame([{k: o.get(k) for k in SIDE_SCHEMA} for o in objs], schema=SIDE_SCHEMA)
    rows = [(o["qid"], o["side"], k, n["text"], n["importance"], n["assignment"])
            for o in objs for k, n in enumerate(o["nuggets"])]
    joined = _exclude(sides, pl.DataFrame(rows, schema=NUGGET_SCHEMA, orient="row"), "test")
    assert joined.excluded == recs.excluded and joined.sides.equals(recs.sides)


def test_lmsys_nuggetize_layout(tmp_path):
    line = {"question_id": 7, "winner": "tie", "completion_a": "x", "completion_b": "y",
            "assigned_nuggets_a": [{"text": t, "importance": i, "assignment": a} for t, i, a in BATTLE_1],
            "assigned_nuggets_b": [{"text": t, "importance": i, "assignment": a} for t, i, a in BATTLE_1B]}
    (tmp_path / "assignments").mkdir()
    _write(tmp_path / "assignments", [line], "assigned_nuggets_0.json")
    recs = ng.load_nugget_records(tmp_path / "assignments")
    s = ng.battle_scores(recs)
    assert s["qid"].to_list() == ["7"] and s["all_b"][0] == pytest.approx(2 / 3)
    assert sorted(recs.sides["answer_text"].to_list()) == ["x", "y"]


def test_cap_frame_matches_cap_nuggets():
    rng = np.random.default_rng(0)
    rows = []
    expected = {}
    for b in range(20):
        n = int(rng.integers(1, 45))
        imp = rng.choice(["vital", "okay"], size=n, p=[0.4, 0.6])
        expected[str(b)] = [f"{b}-{k}" for k in range(n) if
                            any(x.text == f"{b}-{k}"
                                for x in ng.scores.cap_nuggets([ng.Nugget(f"{b}-{j}", imp[j]) for j in range(n)]))]
        rows += [{"qid": str(b), "side": "a", "position": k, "text": f"{b}-{k}", "importance": imp[k],
                  "assignment": "support"} for k in range(n)]
    capped = cap_frame(pl.DataFrame(rows))
    for b, texts in expected.items():
        assert capped.filter(pl.col("qid") == b)["text"].to_list() == texts


def test_cap_frame_with_more_vital_than_the_cap_keeps_only_the_vital():
    """32 vital + 8 okay: the cap keeps the 32 vital nuggets and no okay one (an unsigned vital count wrapped
    round and kept all 40)."""
    imp = ["vital"] * 32 + ["okay"] * 8
    frame = pl.DataFrame({"qid": "q", "side": "a", "position": range(40), "text": [str(k) for k in range(40)],
                          "importance": imp, "assignment": "support"})
    capped = cap_frame(frame)
    assert capped.height == 32 and set(capped["importance"]) == {"vital"}


def test_subset_confusions_match_direct_counts():
    recs, _ = _run(_battles(600), seed=2, texts=False)
    scores = ng.battle_scores(recs)
    conf = ng.subset_confusions(scores, min_battles=1)
    pref = ng.preferences(scores)
    assert conf[("overall", "all")].counts.sum() == scores.height
    eng = (scores["language"] == "English").to_numpy()
    assert np.array_equal(conf[("language", "English")].counts,
                          ng.confusion(scores["winner"].to_numpy()[eng], pref[eng]).counts)


# ---------------------------------------------------------------- published Figure 5 and K-S statistics


def test_figure5_shares():
    m = ng.responses_only_confusion()
    assert round(100 * m.agreement_share_a, 1) == 54.8 and round(100 * m.agreement_share_b, 1) == 52.4


def test_ks_pvalue_matches_scipy_on_attainable_d():
    rng = np.random.default_rng(5)
    x, y = rng.normal(size=40), rng.normal(0.5, 1, size=55)
    res = sps.ks_2samp(x, y, method="exact")
    assert ks_pvalue(res.statistic, 40, 55) == pytest.approx(res.pvalue, rel=1e-9)


def test_published_ks_p_follows_from_d():
    check = ng.ks_consistency()
    assert check.height == 6 and check["consistent"].all()
    wu = check.filter(
        (pl.col("variant") == "with_urls") & (pl.col("comparison") == "model_a vs model_b")
    ).row(0, named=True)
    assert (wu["n_1"], wu["n_2"]) == (1714, 1761)


# ---------------------------------------------------------------- single-turn battles and the simulator


def _battles(n, seed=0):
    rng = np.random.default_rng(seed)
    return pl.DataFrame({
        "conv_id": [f"c{i}" for i in range(n)], "turn": rng.choice([1, 2], size=n, p=[0.8, 0.2]).tolist(),
        "winner": rng.choice(["model_a", "model_b", "tie", "tie (bothbad)"], size=n,
                             p=[0.336, 0.345, 0.205, 0.114]).tolist(),
        "language": rng.choice(["English", "Russian", "German"], size=n).tolist(),
        "prompt": ["q"] * n, "model_a": ["m1"] * n, "model_b": ["m2"] * n,
    })


def test_single_turn_and_shares():
    b = _battles(500).with_columns(
        pl.when(pl.col("conv_id") == "c0").then(None).otherwise(pl.col("winner")).alias("winner")
    )
    one, left = ng_battles.single_turn(b)
    assert (one["turn"] == 1).all() and one["winner"].null_count() == 0
    assert left == (int((b["turn"] != 1).sum()), int(((b["turn"] == 1) & b["winner"].is_null()).sum()))
    shares = ng_battles.vote_and_language_shares(one)
    assert shares.votes["winner"].to_list() == list(ng_battles.WINNERS) and shares.battles == one.height
    assert shares.votes["percent"].sum() == pytest.approx(100.0) and shares.votes["battles"].sum() == one.height
    english = shares.languages.filter(pl.col("language") == "English")
    assert english["percent"].item() == pytest.approx(100 * (one["language"] == "English").sum() / one.height)


def test_simulator_reproduces_published_matrix_within_sampling_error():
    """At the published row totals, the simulated row-conditional preferences are consistent with Figure 4
    (chi-square homogeneity test per row of simulated vs published counts)."""
    target = sim.target_matrix().counts
    winners = np.repeat(np.array(VOTES_BY_SIDE), target.sum(axis=1) * 4)
    b = pl.DataFrame({"conv_id": [f"c{i}" for i in range(winners.size)], "winner": winners.tolist()})
    recs, planted = _run(b, seed=11, texts=False)
    scores = ng.battle_scores(recs)
    got = ng.subset_confusions(scores)[("overall", "all")].counts
    for row in range(4):
        _, p, _, _ = sps.chi2_contingency(np.stack([got[row], target[row]]))
        assert p > 0.001, (row, got[row], target[row])
    assert planted["mean_nuggets"] == 12.5
    assert 11.5 < scores["n_nuggets"].mean() < 13.5


def test_simulator_excludes_unvoted_and_validates():
    b = _battles(50).with_columns(
        pl.when(pl.col("conv_id") == "c1").then(None).otherwise(pl.col("winner")).alias("winner")
    )
    recs, _ = _run(b, seed=0, texts=False)
    assert recs.excluded["battles without a vote (winner null)"] == 1 and recs.n_battles == 49
    with pytest.raises(ValueError, match="conv_id"):
        sim.simulate_nuggets(b.drop("conv_id"))


def test_diversity_per_battle():
    rows = [{"qid": "1", "side": s, "position": k, "text": t, "importance": "vital", "assignment": "support"}
            for s in "ab" for k, t in enumerate(["a b", "b c", "c d"])]
    d = diversity.battle_diversity(pl.DataFrame(rows))
    assert d["jaccard"][0] == pytest.approx((1 / 3 + 0 + 1 / 3) / 3)


def test_v1_7k_layout_loads_and_keeps_single_turn(tmp_path):
    """A v1-7k-shaped parquet (the 24k columns plus precomputed cites_* / num_cites_*) goes through load_battles;
    single_turn keeps turn == 1 with a vote."""
    from raw_factory import conversation, make_raw

    from analysis_lib.search_arena.loader import load_battles

    rows = [conversation(conv_id="c0", winner="model_a"),
            conversation(conv_id="c1", winner="tie", user=["q1", "q2"], answers_a=["a1", "a2"], answers_b=["b1", "b2"]),
            conversation(conv_id="c2", winner=None)]
    raw = make_raw(rows).with_columns(pl.lit(1).alias("cites_wiki_a"), pl.lit(2).alias("num_cites_wiki_a"))
    path = tmp_path / "search-arena-v1-preference-7k.parquet"
    raw.write_parquet(path)
    one, left = ng_battles.single_turn(load_battles(path))
    assert one["conv_id"].to_list() == ["c0"]
    assert left == ng_battles.LeftOut(multi_turn=1, no_vote=1)


def test_calibration_stays_at_the_documented_fit():
    fitted, deviance = sim.calibrate(per_row=2000, seed=7)
    assert deviance < 20  # 12 cells, rows fixed: a good fit of the published Figure 4 matrix
    for name in sim._FITTED:
        assert getattr(fitted, name) > 0


def test_figures_name_the_paper_figure():
    from analysis_lib.nuggets import plots

    recs, _ = _run(_battles(300), seed=1, texts=False)
    scores = ng.battle_scores(recs)
    groups = ng.diffs_by_vote(scores)
    ks = ng.ks_by_vote(scores["diff"].to_numpy(), scores["winner"].to_numpy())
    figs = [plots.kde_by_vote(groups, "Figure 3"), plots.ecdf_panels(groups, ks, "Figure 2"),
            plots.confusion_grid(ng.published_confusions(), "language", "Figure 12")]
    assert figs[0].axes[0].get_title() == "Figure 3" and len(figs[0].axes[0].lines) == 4  # 3 votes + zero line
    assert len(figs[1].axes) == 3 and figs[1]._suptitle.get_text() == "Figure 2"
    assert sum(ax.get_visible() for ax in figs[2].axes) == 10  # nine languages + Others
    plt.close("all")


def _vote_groups(seed: int = 4) -> tuple[dict[str, np.ndarray], pl.DataFrame]:
    """Score differences per human vote without ties (continuous draws) and their K-S tests."""
    rng = np.random.default_rng(seed)
    groups = {"model_a": rng.normal(-0.2, 0.25, 300), "tie": rng.normal(0.0, 0.15, 120),
              "model_b": rng.normal(0.2, 0.25, 280)}
    d = np.concatenate(list(groups.values()))
    w = np.concatenate([[v] * g.size for v, g in groups.items()])
    return groups, ng.ks_by_vote(d, w)


def test_figure_3_draws_the_librarys_densities_with_its_bandwidth():
    """NG-F3's curves (seaborn's kdeplot) are the densities the library computes with scipy (kde_curves): a
    Gaussian KDE with bandwidth KDE_BW_ADJUST (0.5) × Scott's factor, at every x drawn, within −1…1."""
    from analysis_lib.nuggets import plots

    groups, _ = _vote_groups()
    fig = plots.kde_by_vote(groups, "Figure 3")
    curves = {str(line.get_label()).split()[1]: line for line in fig.axes[0].get_lines()
              if str(line.get_label()).startswith("human: ")}
    assert set(curves) == set(groups) and ng.perbattle.KDE_BW_ADJUST == 0.5
    for vote, line in curves.items():
        x, y = np.asarray(line.get_xdata()), np.asarray(line.get_ydata())
        assert -1 <= x.min() and x.max() <= 1 and x.size >= 200
        assert y == pytest.approx(ng.perbattle.kde_curves({vote: groups[vote]}, grid=x)["density"].to_numpy(), rel=1e-9)
        half_scott = sps.gaussian_kde(groups[vote], bw_method=lambda k: 0.5 * k.scotts_factor())
        assert y == pytest.approx(half_scott(x), rel=1e-9)
        assert not np.allclose(y, sps.gaussian_kde(groups[vote])(x), rtol=0.01)  # Scott's own bandwidth differs
    plt.close(fig)


def test_figure_2_draws_each_groups_ecdf():
    """NG-F2's curves (seaborn's ecdfplot) are each vote group's empirical CDF, #{d ≤ x} / n, as steps."""
    from analysis_lib.nuggets import plots

    groups, ks = _vote_groups()
    fig = plots.ecdf_panels(groups, ks, "Figure 2")
    for ax, r in zip(fig.axes, ks.iter_rows(named=True), strict=True):
        for g in (r["group_1"], r["group_2"]):
            line = next(ln for ln in ax.get_lines() if ln.get_label() == f"human: {g}")
            x, y = np.asarray(line.get_xdata()), np.asarray(line.get_ydata())
            finite = np.isfinite(x)
            assert np.sort(groups[g]) == pytest.approx(x[finite]) and line.get_drawstyle() == "steps-post"
            assert y[finite] == pytest.approx(np.arange(1, groups[g].size + 1) / groups[g].size)
    plt.close(fig)


# ---------------------------------------------------------------- conventions: tie boundary, empty sets, NaN


def test_tie_boundary_rules_match_the_authors_expressions():
    """|d| = t is reachable (10 nuggets, t = 0.1; 20 nuggets, t = 0.05). "paper": inclusive with a 1e-9 tolerance;
    "float": the Figure 4 script's ``abs(b - a) > t`` decides; "exclusive": Table 1's ``-t < d < t`` ties."""
    rng = np.random.default_rng(5)
    n = rng.choice([10, 20, 8], size=400)
    a, b = rng.integers(0, 21, size=400) / n, rng.integers(0, 21, size=400) / n
    a, b = np.minimum(a, 1), np.minimum(b, 1)
    for t in (0.05, 0.1, 0.15):
        d = b - a
        authors_fig4 = np.where(np.abs(b - a) > t, np.where(b > a, "model_b", "model_a"), "tie")
        authors_t1 = np.where((d > -t) & (d < t), "tie", np.where(d > 0, "model_b", "model_a"))
        assert (ng.scores.nugget_preference(a, b, t, boundary="float") == authors_fig4).all()
        assert (ng.scores.nugget_preference(a, b, t, boundary="exclusive") == authors_t1).all()
        paper = ng.scores.nugget_preference(a, b, t)
        assert (paper == np.where(np.isclose(np.abs(d), t) | (np.abs(d) < t), "tie",
                                  np.where(d > 0, "model_b", "model_a"))).all()
    # 0.8 − 0.7 in binary floats is 0.10000000000000009: a tie by the paper's words, a decision in float
    rules = ("paper", "float", "exclusive")
    got = [ng.scores.nugget_preference([0.7], [0.8], 0.1, boundary=r)[0] for r in rules]
    assert got == ["tie", "model_b", "model_b"]
    # 0.5 − 0.25 = 0.25 exactly: a tie unless the interval is open
    assert [ng.scores.nugget_preference([0.25], [0.5], 0.25, boundary=r)[0] for r in rules] == ["tie", "tie", "model_b"]
    with pytest.raises(ValueError, match="boundary must be"):
        ng.scores.nugget_preference([0.2], [0.3], 0.1, boundary="open")


def test_threshold_sweep_follows_the_boundary():
    a = np.array([0.2, 0.2, 0.5, 0.0])
    b = np.array([0.3, 0.25, 0.4, 0.05])
    human = ["model_b", "tie", "model_a", "tie"]
    for rule in ("paper", "float", "exclusive"):
        sw = ng.threshold_sweep(a, b, human, thresholds=[0.05, 0.1], boundary=rule)
        for t, row in zip((0.05, 0.1), sw.iter_rows(named=True), strict=True):
            m = ng.confusion(human, ng.scores.nugget_preference(a, b, t, boundary=rule))
            assert row["kappa"] == pytest.approx(m.kappa) and row["inversions"] == m.inversions


def test_empty_zero_is_nuggetizers_score():
    from nuggetizer.core.metrics import calculate_nugget_scores

    cases = [[("x", "okay", "support"), ("y", "okay", "partial_support")],  # no vital nugget
             [("x", "vital", "partial_support"), ("y", "okay", "not_support"), ("z", "vital", "support")]]
    for k, case in enumerate(cases):
        nz = calculate_nugget_scores(str(k), [{"text": t, "importance": i, "assignment": a} for t, i, a in case])
        ours = ng.scores.nugget_scores([ng.scores.AssignedNugget(ng.Nugget(t, i), a) for t, i, a in case], empty="zero")
        assert ours == pytest.approx({"all": nz.all_score, "vital": nz.vital_score,
                                      "strict_all": nz.strict_all_score, "strict_vital": nz.strict_vital_score})
        frame = pl.DataFrame({"battle_id": "b", "side": "a", "importance": [i for _, i, _ in case],
                              "assignment": [a for _, _, a in case]})
        row = score_frame(frame, empty="zero").row(0, named=True)
        assert row["vital"] == pytest.approx(nz.vital_score)
    assert math.isnan(ng.scores.nugget_scores([ng.scores.AssignedNugget(ng.Nugget("x", "okay"), "support")])["vital"])


def test_vital_preferences_need_the_zero_convention_and_ks_rejects_nan():
    objs = [_side("1", s, [("n", "okay", "support")]) for s in "ab"]
    objs += [_side("2", s, [("n", "vital", x)]) for s, x in (("a", "support"), ("b", "not_support"))]
    recs = ng.records.records_from_dicts(objs)
    with pytest.raises(ValueError, match="NaN"):
        ng.preferences(ng.battle_scores(recs), metric="vital")
    prefs = ng.preferences(ng.battle_scores(recs, empty="zero").sort("qid"), metric="vital")
    assert prefs.tolist() == ["tie", "model_a"]
    with pytest.raises(ValueError, match="contain 1 NaN value"):
        ng.ks_by_vote([0.1, float("nan"), -0.2, 0.0], ["model_a", "model_b", "tie", "model_a"])


def test_subset_confusions_on_english_only_records_have_no_empty_others():
    objs = [_side(str(q), s, [("n", "vital", "support" if s == "a" else "not_support")], language="English")
            for q in range(40) for s in "ab"]
    conf = ng.subset_confusions(ng.battle_scores(ng.records.records_from_dicts(objs)))
    assert set(conf) == {("overall", "all"), ("language", "English")}
    assert all(m.n > 0 for m in conf.values())


def _as_v1_7k(rows: list[dict]) -> pl.DataFrame:
    """Rows of raw_factory with each side's trace rewritten in v1-7k's layout: one record per turn with
    ``search_results: [{url, title}]`` (how lmsys_nuggetize's download_urls.py reads v1-7k)."""
    from raw_factory import RAW_SCHEMA

    result = pl.Struct({"url": pl.String, "title": pl.String})
    turn = pl.Struct({"query": pl.String, "search_results": pl.List(result)})
    meta = pl.Struct({"client_country": pl.String, "conv_id": pl.String, "web_search_trace": pl.List(turn)})
    out = []
    for r in rows:
        r = dict(r)
        for s in "ab":
            m = dict(r[f"system_{s}_metadata"])
            m["web_search_trace"] = [
                {"query": "q", "search_results": [{"url": u, "title": "t"} for _, u in pairs] or None}
                for pairs in m["web_search_trace"]
            ]
            m.pop("citation_format_standardized")
            r[f"system_{s}_metadata"] = m
        out.append(r)
    schema = dict(RAW_SCHEMA) | {"system_a_metadata": meta, "system_b_metadata": meta}
    return pl.DataFrame(out, schema=schema)


def test_v1_7k_search_traces_read_like_the_24k_pairs(tmp_path):
    from raw_factory import conversation, make_raw

    from analysis_lib.reading import DataValidationError
    from analysis_lib.search_arena.loader import load_battles_report

    trace = [[["1", "https://en.wikipedia.org/wiki/X"], ["2", "https://www.youtube.com/watch?v=1"]]]
    rows = [conversation(conv_id="c0", winner="model_a", trace_a=trace, trace_b=[[]]),
            conversation(conv_id="c1", winner="model_b", trace_a=[[["1", "https://reddit.com/r/x"]]], trace_b=trace)]
    path = tmp_path / "v1-7k.parquet"
    _as_v1_7k(rows).write_parquet(path)
    v1, report = load_battles_report(path)
    ref, _ = load_battles_report(make_raw(rows))
    features = [c for c in ref.columns if c.startswith(("citation_count", "num_cites_", "cites_"))]
    assert len(features) > 4 and v1.select(features).equals(ref.select(features))
    assert report.flags["rows with v1-7k search traces (search results read as citations)"] == 2
    # records without search_results / url are neither layout: a clear error naming the field
    bad = _as_v1_7k(rows).with_columns(pl.col("system_a_metadata").struct.with_fields(
        pl.field("web_search_trace").list.eval(pl.struct(q=pl.element().struct.field("query")))
        .alias("web_search_trace")))
    with pytest.raises(DataValidationError, match=r"system_a_metadata\.web_search_trace' holds records \(q\)"):
        load_battles_report(bad)


# fingerprints of the simulator's output for _battles(200, seed=3), seed=5, taken before response texts existed
_PRE_TEXT_NUGGETS = "a8ce47a0f28dbb69"
_PRE_TEXT_SIDES = "8c90a519fe98d170"


def _fingerprint(df):
    import hashlib
    return hashlib.sha256(df.write_csv().encode()).hexdigest()[:16]


def test_simulator_response_texts_leave_existing_output_unchanged():
    b = _battles(200, seed=3)
    recs, _ = _run(b, seed=5, texts=True)
    sides = recs.sides.with_columns(pl.col("query_categories").list.join("|")).drop("answer_text", "chunks")
    assert _fingerprint(recs.nuggets) == _PRE_TEXT_NUGGETS
    assert _fingerprint(sides) == _PRE_TEXT_SIDES
    bare, _ = _run(b, seed=5, texts=True, responses=False)
    assert bare.nuggets.equals(recs.nuggets)
    assert bare.sides["answer_text"].null_count() == bare.sides.height
    again, _ = _run(b, seed=5)
    assert again.sides.equals(recs.sides)
    other, _ = _run(b, seed=6)
    assert not other.sides["answer_text"].equals(recs.sides["answer_text"])
    with pytest.raises(ValueError, match="needs texts"):
        sim.simulate_nuggets(b, seed=5, texts=False, responses=True)


def test_simulator_response_texts_follow_the_assignments():
    recs, _ = _run(_battles(60, seed=4), seed=1)
    assert recs.sides["answer_text"].null_count() == 0
    assert (recs.sides["chunks"].list.len() > 0).all()
    for (qid, side), grp in recs.nuggets.group_by(["qid", "side"]):
        row = recs.sides.filter((pl.col("qid") == qid) & (pl.col("side") == side)).row(0, named=True)
        chunk_text = " ".join(row["chunks"]).lower()
        answer = row["answer_text"].lower()
        for text, label in grp.select("text", "assignment").iter_rows():
            assert text.lower() in chunk_text  # every nugget is in the chunks
            words = text.lower().split()
            if label == "support":
                assert text.lower() in answer
            elif label == "partial_support":
                assert " ".join(words[: (len(words) + 1) // 2]) in answer


def test_rouge_alignment_runs_on_simulated_records():
    from analysis_lib.nuggets import rouge
    recs, _ = _run(_battles(40, seed=5), seed=2)
    al = rouge.rouge_l_alignment(recs, progress=False)
    assert al.height == recs.n_battles
    assert al["rouge_a"].is_between(0, 1).all() and al["rouge_b"].is_between(0, 1).all()
    summary = rouge.alignment_test(rouge.rouge_confusion(al))
    assert 0 <= summary.agreement_pct <= 100 and summary.battles > 0


def test_second_assigner_planted_kappa():
    from analysis_lib.nuggets.llm_analyses import assignment_agreement
    from analysis_lib.nuggets.simulate import texts as nt
    n = 200_000
    rng = np.random.default_rng(0)
    shares = np.array([0.5, 0.2, 0.3])
    first = pl.DataFrame({"qid": [f"q{i // 10}" for i in range(n)], "side": ["a"] * n,
                          "position": [i % 10 for i in range(n)],
                          "assignment": rng.choice(list(ASSIGNMENT_ORDER), size=n, p=shares).tolist()})
    second = nt.second_assigner(first, keep=0.7, seed=3)
    kappa, table, unmatched = assignment_agreement(first, second)
    assert unmatched == 0
    # kept share and the split of changed labels between the two others
    assert np.trace(table) / n == pytest.approx(0.7, abs=0.005)
    assert table[0, 1] / (table[0, 1] + table[0, 2]) == pytest.approx(0.5, abs=0.01)
    # closed form vs an independent computation on the expected table
    m = np.array([[0.7, 0.15, 0.15], [0.15, 0.7, 0.15], [0.15, 0.15, 0.7]])
    from analysis_lib.stats import kappa_from_confusion
    expected = kappa_from_confusion(shares[:, None] * m * 1e6, weights="quadratic")
    assert nt.second_assigner_kappa(shares, 0.7) == pytest.approx(expected, abs=1e-9)
    assert kappa == pytest.approx(nt.second_assigner_kappa(table.sum(axis=1), 0.7), abs=0.01)
    assert nt.second_assigner_kappa(shares, 1.0) == pytest.approx(1.0)
    assert nt.second_assigner(first, keep=1.0)["assignment"].equals(first["assignment"])
