"""DR-Arena match logs (format, validating loader), Swiss pairing and byes, BT ratings, diagnostics and the
simulation study, on hand-made cases."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import polars as pl
import pytest
from scipy import stats as sps

from analysis_lib import ranking
from analysis_lib.dr_arena import diagnostics as dg
from analysis_lib.dr_arena import match_log as ml
from analysis_lib.dr_arena import simulate as sim
from analysis_lib.dr_arena import tournament as tn
from analysis_lib.reading import DataValidationError


def rec(match_id="m1", rnd=1, verdict="A_BETTER", failure="DEEP", tie=None, sa=1.0, sb=0.0, a="x", b="y", **kw):
    base = {"match_id": match_id, "tournament_round": 1, "tree_id": "tree_0002", "model_a": a, "model_b": b,
            "round": rnd, "depth": 2, "width": 2, "question": "q", "answer_a_id": None, "answer_b_id": None,
            "verdict": verdict, "tie_quality": tie, "failure_type": failure, "score_a": sa, "score_b": sb,
            "action": None, "stop": None}
    base.update(kw)
    return base


def test_write_and_load_round_trip(tmp_path):
    rows = [rec(), rec(rnd=2, verdict="TIE", failure=None, tie="low", sa=1.0, sb=0.0, stop="MAX_ROUNDS"),
            rec("m2", a="y", b="z", verdict="B_MUCH_BETTER", failure="BOTH", sa=0.0, sb=2.0, stop="SCORE_GAP")]
    ml.write_match_log(tmp_path / "logs" / "t1.jsonl", rows[:2])
    ml.write_match_log(tmp_path / "logs" / "sub" / "t2.jsonl", rows[2:])
    frame = ml.load_match_logs(tmp_path / "logs")
    assert frame.height == 3 and frame.columns == list(ml.SCHEMA)
    m = ml.matches(frame).sort("match_id")
    assert m["n_rounds"].to_list() == [2, 1]
    assert m["winner"].to_list() == ["model_a", "model_b"]
    assert m["stop"].to_list() == ["MAX_ROUNDS", "SCORE_GAP"]


@pytest.mark.parametrize("bad,field", [
    ({"verdict": "A_WINS"}, "verdict"),
    ({"round": 0}, "round"),
    ({"depth": "2"}, "depth"),
    ({"model_a": ""}, "model_a"),
    ({"failure_type": None}, "failure_type"),
    ({"verdict": "TIE", "failure_type": None, "tie_quality": None}, "tie_quality"),
    ({"tie_quality": "high"}, "tie_quality"),
    ({"score_a": "1"}, "score_a"),
    ({"stop": "EARLY"}, "stop"),
])
def test_loader_names_file_line_and_field(tmp_path, bad, field):
    p = tmp_path / "log.jsonl"
    p.write_text(json.dumps(rec()) + "\n" + json.dumps(rec(rnd=2) | bad) + "\n")
    with pytest.raises(DataValidationError) as e:
        ml.load_match_logs(p)
    assert "log.jsonl, line 2" in str(e.value) and repr(field) in str(e.value)


def test_loader_rejects_gaps_duplicates_and_bad_json(tmp_path):
    p = tmp_path / "a.jsonl"
    p.write_text(json.dumps(rec()) + "\n" + json.dumps(rec(rnd=3)) + "\n")
    with pytest.raises(DataValidationError, match="line 2, field 'round'.*round 2 was expected"):
        ml.load_match_logs(p)
    p.write_text(json.dumps(rec()) + "\n")
    (tmp_path / "b.jsonl").write_text(json.dumps(rec()) + "\n")
    with pytest.raises(DataValidationError, match="also appears in"):
        ml.load_match_logs(tmp_path)
    p.write_text("{oops\n")
    with pytest.raises(DataValidationError, match=r"a.jsonl, line 1, column \d+: not valid JSON"):
        ml.read_match_log(p)
    with pytest.raises(DataValidationError, match="no such file or folder"):
        ml.load_match_logs(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataValidationError, match="holds no .jsonl or .json or .ndjson file to read"):
        ml.load_match_logs(tmp_path / "empty")


def test_round_one_pairs_in_random_order_with_a_bye():
    rng = np.random.default_rng(3)
    p = tn.swiss_pairs(["a", "b", "c", "d", "e"], None, set(), rng)
    order = [m for pair in p.pairs for m in pair] + [p.bye]
    assert sorted(order) == ["a", "b", "c", "d", "e"] and len(p.pairs) == 2 and p.bye is not None
    perm = np.random.default_rng(3).permutation(5)
    assert order == [["a", "b", "c", "d", "e"][i] for i in perm]


def test_later_rounds_sort_by_elo_and_avoid_repeats():
    ratings = {"a": 1200, "b": 1100, "c": 1000, "d": 900}
    p = tn.swiss_pairs(list(ratings), ratings, set(), np.random.default_rng(0))
    assert p.pairs == (("a", "b"), ("c", "d")) and p.bye is None
    met = {frozenset(("a", "b")), frozenset(("c", "d"))}
    p = tn.swiss_pairs(list(ratings), ratings, met, np.random.default_rng(0))
    assert p.pairs == (("a", "c"), ("b", "d"))
    # a has met everyone: falls back to the next unpaired model
    met |= {frozenset(("a", "c")), frozenset(("a", "d"))}
    p = tn.swiss_pairs(list(ratings), ratings, met, np.random.default_rng(0))
    assert p.pairs[0] == ("a", "b")
    p = tn.swiss_pairs(["a", "b", "c"], {"a": 3, "b": 2, "c": 1}, set(), np.random.default_rng(0))
    assert p.pairs == (("a", "b"),) and p.bye == "c"
    with pytest.raises(ValueError, match="no rating"):
        tn.swiss_pairs(["a", "z"], {"a": 1}, set(), np.random.default_rng(0))


def test_ratings_match_the_closed_form_for_two_models():
    # a beats b 3 times out of 4: MLE r_a - r_b = log10(3), Elo gap = 400 log10 3
    m = pl.DataFrame({"model_a": ["a"] * 4, "model_b": ["b"] * 4, "winner": ["model_a"] * 3 + ["model_b"]})
    board = tn.ratings(m, rounds=0)
    gap = board["rating"][0] - board["rating"][1]
    assert board["model"].to_list() == ["a", "b"] and gap == pytest.approx(400 * math.log10(3), rel=1e-6)
    assert board["rating"].mean() == pytest.approx(1000) and board["ridge"][0] == 0 and board["mle"].all()


def test_ratings_fall_back_to_ridge_when_the_mle_does_not_exist():
    m = pl.DataFrame({"model_a": ["a", "c"], "model_b": ["b", "d"], "winner": ["model_a", "tie"]})
    board = tn.ratings(m, rounds=20)
    assert board["ridge"][0] == ranking.RIDGE and board["model"][0] == "a" and not board["mle"].any()
    # pieces {a}, {b} (a beat b) and {c, d} (a tie): the ridge sets the ratings outside the largest, {c, d}
    assert sorted(board.filter(pl.col("ridge_set"))["model"].to_list()) == ["a", "b"]
    assert board["ridge_resamples"][0] == 20  # two pieces in every resample
    assert np.isfinite(board["ci_lower"].to_numpy()).all()


def _toy_play(strength):
    def play(a, b, t):
        winner_a = strength[a] > strength[b]
        v = "A_BETTER" if winner_a else "B_BETTER"
        return [rec(f"{t}:{a}:{b}", 1, v, "WIDE", sa=float(winner_a), sb=float(not winner_a), a=a, b=b,
                    tournament_round=t)]
    return play


def test_run_swiss_no_repeats_while_possible_and_one_bye_each_round():
    strength = {m: i for i, m in enumerate("abcdefg")}
    rounds, plan = tn.run_swiss(list(strength), _toy_play(strength), n_rounds=4, seed=1)
    games = plan.filter(pl.col("model_b").is_not_null())
    pairs = [frozenset(p) for p in games.select("model_a", "model_b").rows()]
    assert len(pairs) == len(set(pairs)) == 12  # 7 models: 3 games a round, none repeated
    assert plan.filter(pl.col("model_b").is_null()).height == 4
    assert ml.matches(rounds).height == 12


def test_diagnostics_on_a_hand_made_log():
    rows = [
        rec("m1", 1, "A_BETTER", "DEEP", sa=1, sb=0, a="x", b="y"),
        rec("m1", 2, "TIE", None, tie="high", sa=1, sb=0, a="x", b="y"),
        rec("m1", 3, "B_MUCH_BETTER", "WIDE", sa=1, sb=2, a="x", b="y"),
        rec("m2", 1, "A_MUCH_BETTER", "BOTH", sa=2, sb=0, a="y", b="z"),
    ]
    r = ml.rounds_frame(rows)
    prof = dg.failure_profile(r).sort("model")
    x = prof.row(0, named=True)
    assert (x["rounds"], x["wins"], x["losses"], x["ties"]) == (3, 1, 1, 1)
    assert x["failure_rate"] == pytest.approx(2 / 3) and x["share_WIDE"] == 1.0
    y = prof.row(1, named=True)
    assert (y["rounds"], y["wins"], y["losses"]) == (4, 2, 1) and y["share_DEEP"] == 1.0
    v = dg.verdict_summary(r)
    assert (v.rounds, v.much_better, v.better, v.tie, v.top_tier) == (4, 0.5, 0.25, 0.25, "Much Better")
    assert v.deep == pytest.approx(1 / 3) and v.wide == pytest.approx(1 / 3)
    ends = pl.DataFrame({"depth": [3, 2, 3, 5], "width": [4, 4, 6, 6]})
    assert dg.end_summary(ends) == (3, 5, 4)  # the smallest of the most common widths
    assert ml.truncated_matches(r, 1).filter(pl.col("match_id") == "m1")["winner"][0] == "model_a"
    assert ml.matches(r).filter(pl.col("match_id") == "m1")["winner"][0] == "model_b"
    assert dg.mean_rounds(r) == 2.0


def test_rounds_vs_gap_pearson_matches_scipy():
    rows = []
    for i, (a, b, n) in enumerate([("p", "q", 4), ("p", "r", 2), ("q", "r", 3), ("p", "s", 1)]):
        for k in range(1, n + 1):
            rows.append(rec(f"m{i}", k, "TIE" if k < n else "A_BETTER", None if k < n else "NONE",
                            tie="low" if k < n else None, sa=float(k == n), sb=0, a=a, b=b))
    board = pl.DataFrame({"model": ["p", "q", "r", "s"], "rating": [1100.0, 1080.0, 1000.0, 800.0]})
    g = dg.rounds_vs_gap(ml.rounds_frame(rows), board)
    gaps, means = [20, 100, 80, 300], [4, 2, 3, 1]
    order = np.argsort(gaps)
    assert g.pairs["elo_gap"].to_list() == [float(gaps[i]) for i in order]
    assert g.pearson == pytest.approx(sps.pearsonr(gaps, means).statistic)


def test_simulated_examiner_failure_types_and_ties():
    cfg = sim.SimConfig(examiner_noise=0.0, soft_sd=0.0)
    rng = np.random.default_rng(0)
    assert sim.judge((True, True), (False, True), cfg, rng) == (sim.Verdict.A_BETTER, sim.FailureType.DEEP)
    assert sim.judge((True, False), (True, True), cfg, rng) == (sim.Verdict.B_BETTER, sim.FailureType.WIDE)
    assert sim.judge((True, True), (False, False), cfg, rng) == (sim.Verdict.A_MUCH_BETTER, sim.FailureType.BOTH)
    assert sim.judge((True, True), (True, True), cfg, rng) == (sim.Verdict.TIE_HIGH, None)
    assert sim.judge((False, True), (True, False), cfg, rng) == (sim.Verdict.TIE_LOW, None)


def test_simulated_match_follows_the_loop_on_a_tree():
    tree = {"children": [{"children": [{"children": []}]}, {"children": []}]}
    a, b = sim.SimAgent("a", 3.0, 3.0), sim.SimAgent("b", -3.0, -3.0)
    recs = sim.simulate_match(a, b, tree, "t", np.random.default_rng(0))
    for r in recs:  # the records follow the format
        ml._check(r, "sim")
    assert recs[-1]["stop"] in ml.STOP_CODES and all(r["depth"] <= 3 for r in recs)
    assert recs[-1]["score_a"] - recs[-1]["score_b"] >= 2  # a much stronger agent wins by the mercy rule


def test_simulation_recovers_the_planted_ranking():
    tree = {"children": [{"children": [{"children": []}] * 3}] * 3}
    agents = sim.make_agents(6, seed=1)
    tour = sim.simulate_tournament(agents, {f"t{i}": tree for i in range(6)}, n_rounds=3, seed=2)
    rounds, planted = tour.rounds, tour.planted
    assert planted == sim.planted_strength(agents) and tour.agents == tuple(agents)
    board = tn.ratings(ml.matches(rounds), rounds=0)
    rho = sps.spearmanr(board["rating"].to_numpy(), [planted[m] for m in board["model"]]).statistic
    assert rho > 0.6
    by_k = dg.correlation_by_rounds(rounds, planted, max_k=3)
    assert by_k["k"].to_list() == [1, 2, 3] and by_k["n_models"].to_list() == [6, 6, 6]


def test_search_avoids_a_repeat_the_greedy_pass_makes():
    ratings = {"a": 4, "b": 3, "c": 2, "d": 1}
    met = {frozenset(("a", "b")), frozenset(("b", "d"))}
    rng = np.random.default_rng(0)
    assert tn.swiss_pairs(list(ratings), ratings, met, rng, rule="greedy").pairs == (("a", "c"), ("b", "d"))
    assert tn.swiss_pairs(list(ratings), ratings, met, rng).pairs == (("a", "d"), ("b", "c"))
    # odd count: the greedy pass skips a met pair and leaves d for the bye
    r5 = {"a": 5, "b": 4, "c": 3, "d": 2, "e": 1}
    p = tn.swiss_pairs(list(r5), r5, {frozenset(("c", "d"))}, rng)
    assert p.pairs == (("a", "b"), ("c", "e")) and p.bye == "d"
    # odd count where the greedy pass repeats b-d (b has met a, d and e); the search keeps e's bye and pairs
    # a-d, b-c instead
    met5 = {frozenset(("a", "b")), frozenset(("b", "d")), frozenset(("b", "e"))}
    greedy = tn.swiss_pairs(list(r5), r5, met5, rng, rule="greedy")
    assert greedy.pairs == (("a", "c"), ("b", "d")) and greedy.bye == "e"
    searched = tn.swiss_pairs(list(r5), r5, met5, rng)
    assert not any(frozenset(q) in met5 for q in searched.pairs) and searched.bye is not None
    assert searched.pairs == (("a", "d"), ("b", "c")) and searched.bye == "e"
    # everyone has met everyone: the greedy pairing is the fallback
    full = {frozenset(p) for p in itertools.combinations("abcd", 2)}
    assert tn.swiss_pairs(list(ratings), ratings, full, rng).pairs == (("a", "b"), ("c", "d"))


def test_match_source_reads_a_user_folder_and_finds_table3_models(tmp_path):
    from analysis_lib.dr_arena import loader as source

    rows = [rec("m1", 1, "A_MUCH_BETTER", "BOTH", sa=2, sb=0, a="GPT-5.1-Search", b="my-agent", stop="SCORE_GAP")]
    ml.write_match_log(tmp_path / "logs" / "m1.jsonl", rows)
    src = source.load_match_source(str(tmp_path / "logs"), {})
    assert src.kind == "user" and src.rounds.height == 1 and src.pairings is None
    assert list(src.reference) == ["GPT-5.1-Search"] and src.n_matches == 1


def test_match_source_simulates_by_default():
    from analysis_lib.dr_arena import loader as source

    tree = {"children": [{"children": []}, {"children": []}]}
    src = source.load_match_source("", {"t1": tree, "t2": tree}, n_agents=4, n_rounds=2, seed=0)
    assert src.kind == "simulated" and set(src.reference) == {a.name for a in src.agents}
    assert ml.matches(src.rounds).height == 2 * 2 * 2  # 2 pairs x 2 rounds x 2 trees


def _random_rounds(rng, n, n_rounds, rule, met_share=0.0):
    """Byes handed out over ``n_rounds`` rounds of ``swiss_pairs`` with random ratings, random earlier meetings
    and the pairs it chose; yields (pairing with the history, pairing without it, history before the round)."""
    models = [f"m{i}" for i in range(n)]
    met = {frozenset(p) for p in itertools.combinations(models, 2) if rng.random() < met_share}
    byes: list[str] = []
    for t in range(n_rounds):
        ratings = None if t == 0 else dict(zip(models, rng.normal(1000, 100, n), strict=True))
        state = rng.bit_generator.state
        with_history = tn.swiss_pairs(models, ratings, met, rng, rule, byes)
        rng.bit_generator.state = state
        without = tn.swiss_pairs(models, ratings, met, rng, rule)
        yield with_history, without, list(byes)
        met |= {frozenset(p) for p in with_history.pairs}
        byes.append(with_history.bye)


@pytest.mark.parametrize("rule", ["greedy", "search"])
def test_no_second_bye_while_another_model_has_none(rule):
    rng = np.random.default_rng(11)
    moved = 0
    for trial in range(400):
        n = int(rng.choice([3, 5, 7, 9]))
        n_rounds = int(rng.integers(1, n + 1))
        for with_history, without, history in _random_rounds(rng, n, n_rounds, rule, met_share=0.3 * (trial % 3)):
            assert with_history.bye not in history  # rounds <= N: nobody needs a second bye
            paired = [m for p in with_history.pairs for m in p]
            assert len(set(paired)) == len(paired) == n - 1 and with_history.bye not in paired
            if without.bye not in history:  # the framework's bye is allowed: nothing changes
                assert with_history == without
            else:
                moved += 1
    assert moved > 50  # the history mattered in many rounds


def test_byes_beyond_n_rounds_stay_even_and_even_counts_have_none():
    rng = np.random.default_rng(2)
    for rule in ("greedy", "search"):
        byes = [p.bye for p, _, _ in _random_rounds(rng, 5, 12, rule)]
        counts = [byes.count(m) for m in sorted(set(byes))]
        assert len(counts) == 5 and max(counts) - min(counts) <= 1
        assert all(p.bye is None for p, _, _ in _random_rounds(rng, 6, 4, rule))


def test_run_swiss_gives_each_of_seven_models_one_bye_in_seven_rounds():
    strength = {m: i for i, m in enumerate("abcdefg")}
    for seed in range(3):
        _, plan = tn.run_swiss(list(strength), _toy_play(strength), n_rounds=7, seed=seed)
        byes = plan.filter(pl.col("model_b").is_null())["model_a"].to_list()
        assert sorted(byes) == sorted(strength)


def test_leaderboard_table_whole_elo_and_readable_columns():
    board = pl.DataFrame({"model": ["x", "y"], "rating": [1266.16, 733.4], "ci_lower": [1191.97, np.nan],
                          "ci_upper": [1373.5, np.nan], "rank": [1, 2], "num_battles": [76, 70],
                          "mle": [True, True]})
    shown = tn.leaderboard_table(board, {"x": 1.8234}, "planted strength")
    assert shown.columns == ["model", "rating (Elo)", "95% interval", "rank", "matches", "planted strength"]
    assert shown.row(0) == ("x", 1266, "1192 to 1374", 1, 76, 1.82)
    assert shown.row(1) == ("y", 733, None, 2, 70, None)  # no bootstrap interval, no reference rating


def test_ratings_equal_up_to_rounding_are_a_tie_broken_by_name():
    """Two winners of identical round-1 matches get the same rating, up to the last bits of a float (the old dense
    solver gave 1185.873989958829 and 1185.873989958828): the documented rule (ties by name) must decide, not the
    rounding noise."""
    ratings = {"b": 1185.873989958829, "a": 1185.873989958828, "c": 1000.0, "d": 900.0}
    p = tn.swiss_pairs(list(ratings), ratings, set(), np.random.default_rng(0))
    assert p.pairs == (("a", "b"), ("c", "d"))
    ratings["b"] += 1e-3  # a real difference still orders them
    assert tn.swiss_pairs(list(ratings), ratings, set(), np.random.default_rng(0)).pairs[0] == ("b", "a")
