"""DR-Arena: tree loader and shape, Table 8/9 comparison, Table 3 correlations, evolvement loop (Table 2)."""

from __future__ import annotations

import itertools
import json

import numpy as np
import polars as pl
import pytest

from analysis_lib import dr_arena as d
from analysis_lib.fetch import published


def node(*children, **fields):
    base = {"url": "u", "domain": "x.org", "title": "t", "description": "", "content": None}
    base.update(fields)
    base["children"] = list(children)
    return base


# root(0) -> a(1) -> a1(2) -> a1x(3)
#         -> b(1) -> b1(2), b2(2), b3(2)
#         -> c(1)
SMALL = node(node(node(node())), node(node(), node(), node()), node())


def test_tree_shape_small_hand_made_tree():
    s = d.tree_shape(SMALL)
    assert s.n_nodes == 9
    assert s.depth == 3  # root depth 0: three edges to the deepest node
    assert s.nodes_by_depth == (1, 3, 4, 1)
    assert s.level_width == 4  # most nodes on one level (level 2)
    assert s.max_branching == 3  # largest sibling group (root's and b's children)
    assert s.n_leaves == 5


def test_tree_shape_single_node_and_chain():
    assert d.tree_shape(node()) == d.TreeShape(1, 0, (1,), 1, 0, 1)
    chain = node(node(node(node(node()))))
    s = d.tree_shape(chain)
    assert (s.depth, s.level_width, s.max_branching, s.n_leaves) == (4, 1, 1, 1)


def test_tree_nodes_and_sibling_groups():
    n = d.tree_nodes(SMALL, "t")
    assert n.height == 9 and set(n["tree_id"]) == {"t"}
    assert sorted(d.sibling_group_sizes(n).tolist()) == [1, 1, 3, 3]
    table = d.tree_table({"t2": SMALL, "t1": node(node())})
    assert table["tree_id"].to_list() == ["t1", "t2"]
    assert table["depth"].to_list() == [1, 3]


def test_loader_accepts_valid_file(tmp_path):
    p = tmp_path / "tree_0099.json"
    p.write_text(json.dumps(SMALL))
    assert d.tree_shape(d.load_tree(p)).n_nodes == 9


@pytest.mark.parametrize("field", d.REQUIRED_FIELDS)
def test_loader_names_file_node_path_and_missing_field(tmp_path, field):
    bad = json.loads(json.dumps(SMALL))
    del bad["children"][1]["children"][2][field]
    p = tmp_path / "tree_0042.json"
    p.write_text(json.dumps(bad))
    with pytest.raises(d.TreeValidationError) as e:
        d.load_tree(p)
    msg = str(e.value)
    assert "tree_0042.json" in msg and "root.children[1].children[2]" in msg and repr(field) in msg


def test_loader_rejects_bad_children_non_object_and_bad_json(tmp_path):
    p = tmp_path / "a.json"
    p.write_text(json.dumps(node(children=None) | {"children": 3}))
    with pytest.raises(d.TreeValidationError, match=r"a.json: node root field 'children' is a int"):
        d.load_tree(p)
    p.write_text(json.dumps(node(node(), "oops")))
    with pytest.raises(d.TreeValidationError, match=r"node root.children\[1\] is a str"):
        d.load_tree(p)
    p.write_text("{not json")
    with pytest.raises(d.TreeValidationError, match="a.json: not valid JSON"):
        d.load_tree(p)


def test_first_violation_in_document_order():
    bad = node(node(node(title=None) | {}), node())
    del bad["children"][0]["children"][0]["url"]
    del bad["children"][1]["url"]
    with pytest.raises(d.TreeValidationError, match=r"root\.children\[0\]\.children\[0\] lacks"):
        d.validate_tree(bad, "x")


def test_counts_tables_and_comparison():
    summary = {"trees_by_domain": {"b.org": 1, "a.org": 2, "c.org": 1}, "trees_by_topic": {"T": 4}, "trees": [
        {"root_url": "https://a.org/x"}, {"root_url": "https://a.org/y"}, {"root_url": "https://b.org/"},
        {"root_url": "http://c.org/z?q=1"}]}
    assert d.domain_table(summary)["domain"].to_list() == ["a.org", "b.org", "c.org"]
    assert d.root_domains(summary) == summary["trees_by_domain"]
    cmp = d.compare_counts({"a": 2, "b": 1}, {"a": 2, "c": None}, "k")
    assert cmp["k"].to_list() == ["a", "c", "b"]
    assert cmp["agree"].to_list() == [True, False, False]
    assert cmp["in_paper"].to_list() == [True, True, False]


def test_paper_table8_sums_to_30():
    assert sum(d.PAPER_TABLE8.values()) == d.N_TREES_PAPER
    assert d.PAPER_TABLE8["en.wikipedia.org"] == 8


def test_table3_correlations_from_published_csv():
    t3 = pl.read_csv(published("dr_arena_table3_leaderboards"))
    r = d.leaderboard_correlations(t3)
    assert r.n_models == 6
    assert r.spearman == pytest.approx(1 - 6 * 2 / (6 * 35))  # one adjacent swap: 1 - 6*sum(d^2)/(n(n^2-1))
    assert round(r.spearman, 2) == 0.94
    assert round(r.pearson, 2) == 0.74
    assert r.pearson == pytest.approx(np.corrcoef(t3["search_arena_elo"], t3["dr_arena_elo"])[0, 1])
    assert r.spearman_published_ranks == pytest.approx(r.spearman)
    assert r.n_rank_swaps == 1


# ---- evolvement loop. Table 2 transcribed independently of the module, as (verdict row, signal) -> action.
PD, PW, PT, BT = "depth+1", "width+1", "depth+1 & width+1", "parent"
TABLE2 = {
    ("Tie (High Quality)", "N/A"): PT,
    ("Tie (Low Quality)", "N/A"): BT,
    ("Winner Decided", "Deep"): PD,
    ("Winner Decided", "Wide"): PW,
    ("Winner Decided", "Both"): PT,
    ("Winner Decided", "None"): PT,
}
EXPECTED_DELTA = {PD: (1, 0), PW: (0, 1), PT: (1, 1), BT: (-1, 0)}
ROW_OF = {
    "A_MUCH_BETTER": "Winner Decided", "A_BETTER": "Winner Decided", "B_BETTER": "Winner Decided",
    "B_MUCH_BETTER": "Winner Decided", "TIE_HIGH": "Tie (High Quality)", "TIE_LOW": "Tie (Low Quality)",
}


@pytest.mark.parametrize("verdict,failure", list(itertools.product(d.Verdict, [*d.FailureType, None])))
def test_transition_every_verdict_and_failure_type(verdict, failure):
    row = ROW_OF[verdict.name]
    if row != "Winner Decided":
        expected = TABLE2[(row, "N/A")]  # ties: the failure type is not applicable and is ignored
    elif failure is None:
        with pytest.raises(ValueError, match="failure type is required"):
            d.transition(verdict, failure)
        return
    else:
        expected = TABLE2[(row, failure.value)]
    action = d.transition(verdict, failure)
    assert action.delta == EXPECTED_DELTA[expected]
    # and step applies that change to (depth, width) from a state away from the floor
    s = d.step(d.LoopState(depth=3, width=3), verdict, failure, d.LoopConfig(max_rounds=99, gap_threshold=99, stop_on_much_better=False))
    assert (s.depth - 3, s.width - 3) == EXPECTED_DELTA[expected]


def test_transition_table_covers_all_combinations():
    t = d.transition_table()
    assert t.height == 4 * 4 + 2
    assert t.select("verdict", "failure_type").unique().height == t.height


def test_failure_taxonomy_table1():
    assert [f.value for f in d.FailureType] == ["Deep", "Wide", "Both", "None"]
    assert d.FAILURE_CRITERIA[d.FailureType.NONE].startswith("Soft Gap")


def test_tiered_verdict_points_and_winner():
    c = d.LoopConfig(much_better_points=2, better_points=1, tie_points=0.5)
    assert c.points(d.Verdict.A_MUCH_BETTER) == (2, 0)
    assert c.points(d.Verdict.B_BETTER) == (0, 1)
    assert c.points(d.Verdict.TIE_LOW) == (0.5, 0.5)
    assert d.Verdict.B_MUCH_BETTER.winner == "B" and d.Verdict.TIE_HIGH.winner is None


def test_stop_on_much_better():
    s = d.run_match([(d.Verdict.A_BETTER, d.FailureType.DEEP), (d.Verdict.B_MUCH_BETTER, d.FailureType.WIDE),
                     (d.Verdict.A_BETTER, d.FailureType.DEEP)])
    assert s.stopped is d.StopReason.MUCH_BETTER and s.round == 2


def test_stop_on_score_gap_and_max_rounds():
    c = d.LoopConfig(gap_threshold=3, max_rounds=5)
    better_a = (d.Verdict.A_BETTER, d.FailureType.WIDE)
    s = d.run_match([better_a] * 10, c)
    assert s.stopped is d.StopReason.SCORE_GAP and s.round == 3 and s.gap == 3
    alternate = [better_a, (d.Verdict.B_BETTER, d.FailureType.DEEP)] * 5
    s = d.run_match(alternate, c)
    assert s.stopped is d.StopReason.MAX_ROUNDS and s.round == 5
    ties = [(d.Verdict.TIE_HIGH, None)] * 2
    s = d.run_match(ties, c)
    assert s.stopped is None and s.round == 2 and (s.depth, s.width) == (3, 3)


def test_much_better_takes_precedence_and_stopped_state_is_final():
    c = d.LoopConfig(gap_threshold=2, max_rounds=1)
    s = d.step(d.LoopState(), d.Verdict.A_MUCH_BETTER, d.FailureType.BOTH, c)
    assert s.stopped is d.StopReason.MUCH_BETTER
    with pytest.raises(ValueError, match="already stopped"):
        d.step(s, d.Verdict.A_BETTER, d.FailureType.DEEP, c)


def test_backtrack_floors_at_min_depth_and_trace():
    s = d.run_match([(d.Verdict.TIE_LOW, None)] * 3, d.LoopConfig(max_rounds=3))
    assert s.depth == 1 and s.stopped is d.StopReason.MAX_ROUNDS
    tr = d.trace_table(s, d.LoopConfig(max_rounds=3))
    assert tr["round"].to_list() == [1, 2, 3] and tr["stop"].to_list()[-1] == d.StopReason.MAX_ROUNDS.value


def test_topology_summary_on_hand_made_frames():
    shapes = pl.DataFrame({"depth": [2, 2, 4]})
    nodes = pl.DataFrame({"depth": [0, 1, 1, 2, 2, 2], "n_children": [2, 3, 0, 5, 0, 0]})
    topo = d.topology_summary(shapes, nodes)
    assert (topo.max_tree_depth, topo.modal_tree_depth, topo.trees_at_modal_depth) == (4, 2, 2)
    assert (topo.modal_node_depth, topo.modal_node_depth_share) == (2, 0.5)
    assert (topo.modal_group_size, topo.groups, topo.groups_4_to_7) == (2, 3, 1)
    assert topo.share_groups_4_to_7 == 1 / 3
