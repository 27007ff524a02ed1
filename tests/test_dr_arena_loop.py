"""DR-Arena evolvement loop: Table 2 transcribed independently, the framework's stop rules and start state on
hand-made sequences, tree-aware actions on a hand-made tree, and the released match traces replayed."""

from __future__ import annotations

import itertools

import polars as pl
import pytest

from analysis_lib import dr_arena as d
from analysis_lib.dr_arena import match_log
from analysis_lib.dr_arena.match_log import published_traces

V, F = d.Verdict, d.loop.FailureType

# Table 2 as printed, (verdict row, signal) -> action; nominal (d_depth, d_width) of each action.
PD, PW, PT, BT = "depth+1", "width+1", "depth+1 & width+1", "parent"
TABLE2 = {
    ("Tie (High Quality)", "N/A"): PT, ("Tie (Low Quality)", "N/A"): BT, ("Winner Decided", "Deep"): PD,
    ("Winner Decided", "Wide"): PW, ("Winner Decided", "Both"): PT, ("Winner Decided", "None"): PT,
}
EXPECTED_DELTA = {PD: (1, 0), PW: (0, 1), PT: (1, 1), BT: (-1, 0)}
ROW_OF = {"A_MUCH_BETTER": "Winner Decided", "A_BETTER": "Winner Decided", "B_BETTER": "Winner Decided",
          "B_MUCH_BETTER": "Winner Decided", "TIE_HIGH": "Tie (High Quality)", "TIE_LOW": "Tie (Low Quality)"}
NO_STOP_KEEP = d.LoopConfig(max_rounds=99, gap_threshold=99, backtrack_width="keep")
# other rules than the framework's: gap 3, 5 rounds, a stop on any Much Better, start at the root with width 1
OTHER_RULES = d.LoopConfig(name="other rules", gap_threshold=3.0, max_rounds=5, stop_on_much_better=True,
                           start_depth=1, start_width=1, min_width=1, backtrack_width="keep")


@pytest.mark.parametrize("verdict,failure", list(itertools.product(V, [*F, None])))
def test_transition_every_verdict_and_failure_type(verdict, failure):
    row = ROW_OF[verdict.name]
    if row != "Winner Decided":
        expected = TABLE2[(row, "N/A")]
    elif failure is None:
        with pytest.raises(ValueError, match="failure type is required"):
            d.transition(verdict, failure)
        return
    else:
        expected = TABLE2[(row, failure.value)]
    assert d.transition(verdict, failure).delta == EXPECTED_DELTA[expected]
    s = d.step(d.loop.LoopState(depth=3, width=3), verdict, failure, NO_STOP_KEEP)
    assert (s.depth - 3, s.width - 3) == EXPECTED_DELTA[expected]


def test_framework_defaults():
    c = d.LoopConfig()
    assert (c.min_rounds, c.max_rounds, c.gap_threshold, c.stop_on_much_better) == (1, 10, 2.0, False)
    assert (c.much_better_points, c.better_points, c.tie_points) == (2, 1, 0)
    s = d.loop.start_state(c)
    assert (s.depth, s.width, s.round) == (2, 2, 0)
    assert d.transition_table().height == 4 * 4 + 2


def test_much_better_from_level_scores_stops_by_the_gap_not_by_its_own_rule():
    s = d.loop.run_match([(V.A_MUCH_BETTER, F.BOTH), (V.B_BETTER, F.DEEP)])
    assert s.round == 1 and s.stopped is d.loop.StopReason.SCORE_GAP and (s.score_a, s.score_b) == (2, 0)
    # B leads by 1; A's Much Better leaves a gap of 1: the match goes on (no stop on Much Better)
    s = d.loop.run_match([(V.B_BETTER, F.NONE), (V.A_MUCH_BETTER, F.BOTH)])
    assert s.stopped is None and s.round == 2 and s.gap == 1


def test_two_betters_in_a_row_trigger_the_mercy_rule():
    s = d.loop.run_match([(V.A_BETTER, F.WIDE)] * 5)
    assert s.round == 2 and s.stopped is d.loop.StopReason.SCORE_GAP


def test_max_rounds_and_min_rounds():
    alternate = [(V.A_BETTER, F.DEEP), (V.B_BETTER, F.WIDE)] * 8
    s = d.loop.run_match(alternate)
    assert s.round == 10 and s.stopped is d.loop.StopReason.MAX_ROUNDS and s.gap == 0
    s = d.loop.run_match([(V.A_MUCH_BETTER, F.BOTH)] * 5, d.LoopConfig(min_rounds=3))
    assert s.round == 3 and s.stopped is d.loop.StopReason.SCORE_GAP


def test_stopped_state_is_final_and_decided_round_needs_failure():
    s = d.loop.run_match([(V.A_MUCH_BETTER, F.BOTH)])
    with pytest.raises(ValueError, match="already stopped"):
        d.step(s, V.A_BETTER, F.DEEP)
    with pytest.raises(ValueError, match="failure type"):
        d.step(d.loop.start_state(), V.B_BETTER, None)


def test_backtrack_lowers_the_width_by_one_and_resets_it_at_the_root():
    # the framework's _backtrack: width max(2, width - 1); at the root (no parent) the loop sets it to 2
    s = d.loop.run_match([(V.TIE_HIGH, None), (V.TIE_LOW, None)])
    assert [(r.depth, r.width) for r in s.history] == [(2, 2), (3, 3)] and (s.depth, s.width) == (2, 2)
    widen_then_back = [(V.B_BETTER, F.WIDE), (V.A_BETTER, F.WIDE), (V.TIE_LOW, None), (V.TIE_LOW, None)]
    s = d.loop.run_match(widen_then_back)
    assert [(r.depth, r.width) for r in s.history] == [(2, 2), (2, 3), (2, 4), (1, 3)]
    assert (s.depth, s.width) == (1, 2)  # root: no parent, width reset
    assert s.history[-1].applied == "at the root: width reset"
    reset = d.loop.run_match(widen_then_back[:3], d.LoopConfig(backtrack_width="reset"))
    keep = d.loop.run_match(widen_then_back[:3], d.LoopConfig(backtrack_width="keep"))
    assert ((reset.depth, reset.width), (keep.depth, keep.width)) == ((1, 2), (1, 4))


def test_stop_on_much_better_rule():
    s = d.loop.run_match([(V.B_BETTER, F.NONE), (V.A_MUCH_BETTER, F.BOTH)], OTHER_RULES)
    assert s.stopped is d.loop.StopReason.MUCH_BETTER and s.round == 2
    s = d.loop.run_match([(V.B_BETTER, F.NONE), (V.A_MUCH_BETTER, F.BOTH), (V.A_BETTER, F.WIDE)])
    assert s.stopped is d.loop.StopReason.SCORE_GAP and s.round == 3  # the framework: gap 2 only


# root -> [a -> [a1 -> []], b -> []]
def _n(*children):
    return {"children": list(children)}


TREE = _n(_n(_n()), _n())


def test_tree_aware_descent_falls_back_to_width():
    start = d.loop.start_state(path=(0,))  # at a (depth 2)
    s = d.step(start, V.A_BETTER, F.DEEP, tree=TREE)  # a has a child: descend to a1
    assert (s.depth, s.width, s.path) == (3, 2, (0, 0))
    s = d.step(s, V.B_BETTER, F.DEEP, tree=TREE)  # a1 is a leaf: width + 1 instead
    assert (s.depth, s.width, s.path) == (3, 3, (0, 0)) and s.history[-1].applied == "no child: width + 1"
    s = d.step(s, V.TIE_HIGH, None, tree=TREE)  # pressure test at a leaf: width only
    assert (s.depth, s.width, s.path) == (3, 4, (0, 0))
    s = d.step(s, V.TIE_LOW, None, tree=TREE)  # backtrack: back to a, width 4 - 1
    assert (s.depth, s.width, s.path) == (2, 3, (0,))
    stay = d.LoopConfig(no_child="stay")
    s = d.step(d.loop.start_state(path=(1,)), V.A_BETTER, F.DEEP, stay, tree=TREE)
    assert (s.depth, s.width, s.path) == (2, 2, (1,))


def test_chooser_picks_the_child():
    tree = _n(_n(_n(), _n(), _n()))
    s = d.step(d.loop.start_state(path=(0,)), V.TIE_HIGH, None, tree=tree, choose=lambda n: n - 1)
    assert s.path == (0, 2) and (s.depth, s.width) == (3, 3)


def test_verdict_codes_round_trip():
    for v in V:
        assert d.Verdict.from_code(v.code, v.tie_quality) is v
    with pytest.raises(ValueError, match="tie_quality"):
        d.Verdict.from_code("TIE")
    with pytest.raises(ValueError, match="unknown verdict"):
        d.Verdict.from_code("A_WINS")


@pytest.fixture(scope="module")
def traces():
    return published_traces()


def test_published_traces_replay_to_their_logged_end_state(traces):
    assert traces["match_id"].n_unique() == 3
    for (mid,), g in traces.group_by("match_id", maintain_order=True):
        r = d.replay_trace(g)
        assert r.height == g.height, mid  # the loop stops at the logged last round
        for col in ("depth", "width", "score_a", "score_b"):
            assert r[col].to_list() == r[f"logged_{col}"].to_list(), (mid, col)
        logged = g.sort("round")["evolution_kind"].to_list()
        stop = r["stop"][-1]
        assert stop == ("SCORE_GAP" if logged[-1] == "mercy_rule" else "MAX_ROUNDS"), mid
        # every logged action but a final mercy rule is the action Table 2 gives
        kinds = r["action"].to_list()
        assert [k for k, lg in zip(kinds, logged, strict=True) if lg != "mercy_rule"] == [
            lg for lg in logged if lg != "mercy_rule"], mid


def test_published_trace_end_states(traces):
    ends = {mid: (r["round"][-1], r["score_a"][-1], r["score_b"][-1], r["stop"][-1])
            for (mid,), g in traces.group_by("match_id") for r in [d.replay_trace(g)]}
    assert ends["tree_0020_glm47_vs_pplsonar_1302"] == (10, 2.0, 1.0, "MAX_ROUNDS")
    assert ends["tree_0030_glm47_vs_pplsonar_1301"] == (7, 3.0, 1.0, "SCORE_GAP")
    assert ends["tree_0022_glm47_vs_pplsonar_1300"] == (5, 3.0, 1.0, "SCORE_GAP")


def test_other_rules_do_not_reproduce_the_published_traces(traces):
    g = traces.filter(pl.col("match_id") == "tree_0020_glm47_vs_pplsonar_1302")
    r = d.replay_trace(g, OTHER_RULES)
    assert r.height < g.height  # it stops at the first Much Better (round 8), the framework plays 10


def test_start_on_tree_descends_to_the_start_depth_or_a_leaf():
    s = d.loop.start_on_tree(TREE, choose=lambda n: n - 1)  # root's last child b is a leaf
    assert (s.depth, s.width, s.path) == (2, 2, (1,))
    deep = d.loop.start_on_tree(TREE, d.LoopConfig(start_depth=4))  # a -> a1 is a leaf at depth 3
    assert (deep.depth, deep.path) == (3, (0, 0))
    assert d.loop.start_on_tree(_n(), d.FRAMEWORK).depth == 1  # a lone root
    assert d.loop.start_on_tree(TREE, OTHER_RULES).path == ()


# the project page's 5-round trace (docs/cases.html): the active node at depth 2 has no child, so every pressure
# test and widening stays at depth 2 (a one-child chain: root -> the depth-2 node)
CASES_TREE = match_log.CASES_TREE


def test_the_project_page_trace_replays_to_its_published_end_state():
    from analysis_lib.dr_arena.match_log import cases_trace

    g = cases_trace()
    start = d.loop.start_on_tree(CASES_TREE)
    assert (start.depth, start.width) == (2, 2)
    r = d.replay_trace(g, tree=CASES_TREE, start=start)
    # the page: five rounds at depth 2, widths 2..6, and "MERCY RULE TRIGGERED (Game Over)" after round 5
    assert r.height == 5 and r["depth"].to_list() == g["depth"].to_list() == [2] * 5
    assert r["width"].to_list() == g["width"].to_list() == [2, 3, 4, 5, 6]
    assert r["stop"].to_list() == [None] * 4 + ["SCORE_GAP"]
    # scores by Table 2's points (the page prints none): A +1, B +1, A +1, B +2, B +2
    assert (r["score_a"].to_list(), r["score_b"].to_list()) == ([1, 1, 2, 2, 2], [0, 1, 1, 3, 5])
    assert r["logged_score_a"].is_null().all()
    # the page's actions: pressure tests in rounds 1 and 3 (no child: width + 1), Wide+1 in rounds 2 and 4
    assert r["action"].to_list()[:4] == ["pressure_test", "increase_width", "pressure_test", "increase_width"]
    # BOTH in place of NONE (the page names only the pressure test) replays the same
    both = d.replay_trace(g.with_columns(pl.col("failure_type").replace("NONE", "BOTH")), tree=CASES_TREE,
                          start=start)
    assert both.select("depth", "width", "stop").equals(r.select("depth", "width", "stop"))
    # without the tree every pressure test would descend: the published depths need the childless node
    assert d.replay_trace(g)["depth"].to_list() != [2] * 5
    assert match_log.replay_cases_trace().equals(r)
