"""DR-Arena: tree loader and shape, Tables 8 and 9 in the paper values, Table 3 correlations (the loop:
test_dr_arena_loop.py)."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

from analysis_lib import dr_arena as d
from analysis_lib import stats
from analysis_lib.fetch import published
from bookbuild import paper_values


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
    s = d.trees.tree_shape(SMALL)
    assert s.n_nodes == 9
    assert s.depth == 3  # root depth 0: three edges to the deepest node
    assert s.nodes_by_depth == (1, 3, 4, 1)
    assert s.level_width == 4  # most nodes on one level (level 2)
    assert s.max_branching == 3  # largest sibling group (root's and b's children)
    assert s.n_leaves == 5


def test_tree_shape_single_node_and_chain():
    assert d.trees.tree_shape(node()) == d.trees.TreeShape(1, 0, (1,), 1, 0, 1)
    chain = node(node(node(node(node()))))
    s = d.trees.tree_shape(chain)
    assert (s.depth, s.level_width, s.max_branching, s.n_leaves) == (4, 1, 1, 1)


def test_tree_nodes_and_sibling_groups():
    n = d.trees.tree_nodes(SMALL, "t")
    assert n.height == 9 and set(n["tree_id"]) == {"t"}
    assert sorted(d.sibling_group_sizes(n).tolist()) == [1, 1, 3, 3]
    table = d.tree_table({"t2": SMALL, "t1": node(node())})
    assert table["tree_id"].to_list() == ["t1", "t2"]
    assert table["depth"].to_list() == [1, 3]


def test_loader_accepts_valid_file(tmp_path):
    p = tmp_path / "tree_0099.json"
    p.write_text(json.dumps(SMALL))
    assert d.trees.tree_shape(d.trees.load_tree(p)).n_nodes == 9


@pytest.mark.parametrize("field", d.trees.REQUIRED_FIELDS)
def test_loader_names_file_node_path_and_missing_field(tmp_path, field):
    bad = json.loads(json.dumps(SMALL))
    del bad["children"][1]["children"][2][field]
    p = tmp_path / "tree_0042.json"
    p.write_text(json.dumps(bad))
    with pytest.raises(d.trees.TreeValidationError) as e:
        d.trees.load_tree(p)
    msg = str(e.value)
    assert "tree_0042.json" in msg and "root.children[1].children[2]" in msg and repr(field) in msg


def test_loader_rejects_bad_children_non_object_and_bad_json(tmp_path):
    p = tmp_path / "a.json"
    p.write_text(json.dumps(node(children=None) | {"children": 3}))
    with pytest.raises(d.trees.TreeValidationError, match=r"a.json: node root field 'children' is a int"):
        d.trees.load_tree(p)
    p.write_text(json.dumps(node(node(), "oops")))
    with pytest.raises(d.trees.TreeValidationError, match=r"node root.children\[1\] is a str"):
        d.trees.load_tree(p)
    p.write_text("{not json")
    with pytest.raises(d.trees.TreeValidationError, match="a.json: not valid JSON"):
        d.trees.load_tree(p)


def test_first_violation_in_document_order():
    bad = node(node(node(title=None) | {}), node())
    del bad["children"][0]["children"][0]["url"]
    del bad["children"][1]["url"]
    with pytest.raises(d.trees.TreeValidationError, match=r"root\.children\[0\]\.children\[0\] lacks"):
        d.trees.validate_tree(bad, "x")


def test_counts_tables():
    summary = {"trees_by_domain": {"b.org": 1, "a.org": 2, "c.org": 1}, "trees_by_topic": {"T": 4}, "trees": [
        {"root_url": "https://a.org/x"}, {"root_url": "https://a.org/y"}, {"root_url": "https://b.org/"},
        {"root_url": "http://c.org/z?q=1"}]}
    assert d.domain_table(summary)["domain"].to_list() == ["a.org", "b.org", "c.org"]
    assert d.root_domains(summary) == summary["trees_by_domain"]


def test_tables_8_and_9_in_the_paper_values_agree_with_the_papers_totals():
    """Table 8's rows sum to the paper's 30 trees (App. F) over its 21 domains; Table 9 prints 19 topics, 18 of them
    counted summing to 21 trees and one whose count the extracted text lacks."""
    rows = paper_values.rows_of("DR-T89")
    t8 = [r for r in rows if r.source == "DR Table 8" and r.result.startswith("domains[domain=")]
    t9 = [r for r in rows if r.source == "DR Table 9" and r.result.startswith("topics[topic=")]
    assert sum(r.paper for r in t8) == paper_values.lookup("DR-T89", "trees in the dataset").paper  # type: ignore[misc]
    assert len(t8) == paper_values.lookup("DR-T89", "source domains").paper
    assert len(t9) == paper_values.lookup("DR-T89", "topics").paper == 19
    assert sum(r.paper for r in t9 if r.paper is not None) == 21  # type: ignore[misc]
    assert [r.quantity for r in t9 if r.paper is None] == [
        "Health > Mental Health > Learning & Developmental Disabilities trees"]


def test_table3_correlations_from_published_csv():
    t3 = pl.read_csv(published("dr_arena_table3_leaderboards"))
    r = stats.leaderboard_correlations(t3)
    assert r.n_models == 6
    assert r.spearman == pytest.approx(1 - 6 * 2 / (6 * 35))  # one adjacent swap: 1 - 6*sum(d^2)/(n(n^2-1))
    assert round(r.spearman, 2) == 0.94
    assert round(r.pearson, 2) == 0.74
    assert r.pearson == pytest.approx(np.corrcoef(t3["search_arena_elo"], t3["dr_arena_elo"])[0, 1])
    assert r.spearman_published_ranks == pytest.approx(r.spearman)
    assert r.n_rank_swaps == 1


def test_topology_summary_on_hand_made_frames():
    shapes = pl.DataFrame({"depth": [2, 2, 4]})
    nodes = pl.DataFrame({"depth": [0, 1, 1, 2, 2, 2], "n_children": [2, 3, 0, 5, 0, 0]})
    topo = d.topology_summary(shapes, nodes)
    assert (topo.max_tree_depth, topo.modal_tree_depth, topo.trees_at_modal_depth) == (4, 2, 2)
    assert (topo.modal_node_depth, topo.modal_node_depth_share) == (2, 0.5)
    assert (topo.modal_group_size, topo.groups, topo.groups_4_to_7) == (2, 3, 1)
    assert topo.share_groups_4_to_7 == 1 / 3


def test_leaderboard_agreement_matches_scipy_and_counts_swaps():
    from scipy import stats as sps

    from analysis_lib import stats

    a, b = [1.0, 2.0, 3.0, 4.0], [1.0, 3.0, 2.0, 10.0]
    r = stats.leaderboard_agreement(a, b)
    assert r.spearman == pytest.approx(sps.spearmanr(a, b).statistic)
    assert r.pearson == pytest.approx(sps.pearsonr(a, b).statistic)
    assert r.n_rank_swaps == 1 and r.n_models == 4
    with pytest.raises(ValueError, match="same length"):
        stats.leaderboard_agreement([1, 2, 3], [1, 2])
