"""The DR-Arena chapter's sections on the released information trees: the data banner's text, DR-T89 (Tables 8
and 9) and DR-F8 (Fig 8: tree topology, and the task at the end of each match from the chapter's match logs).

Each section function returns a :class:`~bookbuild.sections.Section` (numbers, figures, tables); the
paper's values are in ``resources/paper_values/dr.csv``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from analysis_lib.plotting import barh, count_histograms
from bookbuild import paper_values
from bookbuild.sections import Figure, Number, Section, Table

from . import diagnostics
from .trees import (
    COMPARISON_COLUMNS,
    all_nodes,
    compare_counts,
    domain_table,
    paper_table8,
    paper_table9,
    root_domains,
    sibling_group_sizes,
    summary_check,
    topic_table,
    topology_summary,
    tree_table,
)

#: Upstream commits of the tree files (the data manifest pins the first).
TREES_COMMIT = "08f38351"
FORK_COMMIT = "175901c8"

#: The published inputs of the chapter, for its data banner.
PUBLISHED_DETAIL = (
    "Leaderboards (DR-T3, DR-T4): Table 3 of the paper; Table 4 as far as its prose states it. Human studies "
    "(DR-T5, DR-T7): Tables 5 and 7 as printed. Match traces (DR-L): three released by the framework and the "
    "5-round trace of its project page."
)


#: The summary check's columns as the page shows them.
CHECK_COLUMNS = {"tree_id": "tree", "n_nodes": "nodes (file)", "summary_total_nodes": "nodes (summary)",
                 "depth": "depth (file)", "summary_max_depth": "depth (summary)",
                 "nodes_by_depth_agree": "nodes per level agree", "agree": "all agree"}


def missing_trees(summary: Mapping[str, Any], trees: Mapping[str, Any]) -> list[str]:
    """Trees listed in ``summary.json`` without a tree file, sorted."""
    return sorted({t["tree_id"] for t in summary["trees"]} - set(trees))


def trees_detail(trees: Mapping[str, Any], missing: list[str]) -> str:
    """The data banner's text for the information trees: where they come from and which are missing."""
    n = len(trees)
    return (
        f"Information trees: `summary.json` and {n} tree files from github.com/iNLP-Lab/DR-Arena at commit "
        f"{TREES_COMMIT} (`web_tree/data/trees/`), every node validated. The framework's README says the 30 trees "
        f"of the paper are kept under `web_tree/data/dataset/trees/`; the repository holds tree files for {n} of "
        f"them: the {n} mirrored here at commit {TREES_COMMIT}, and the same {n} under the README's path in the "
        f"copy of the framework at commit {FORK_COMMIT} (fork pmcconville-hub/DR-Arena). The other {len(missing)} "
        f"trees listed in `summary.json` ({', '.join(missing)}) have no file, so per-tree statistics cover {n} trees."
    )


def t89_section(summary: dict[str, Any]) -> Section:
    """DR-T89: trees by source domain and by topic from ``summary.json`` beside Tables 8 and 9, the domain counts
    recounted from each tree's ``root_url``."""
    domains, topics = domain_table(summary), topic_table(summary)
    t8 = compare_counts(summary["trees_by_domain"], paper_table8(), "domain")
    t9 = compare_counts(summary["trees_by_topic"], paper_table9(), "topic")
    absent = t9.filter(~pl.col("in_paper"))
    fig = barh(domains["domain"].to_list(), domains["count"].to_numpy(), xlabel="trees",
               title="Table 8: information trees by source domain (summary.json)", annotate="{:.0f}")
    recount = "yes" if root_domains(summary) == summary["trees_by_domain"] else "no"
    numbers = [
        Number("DR-T89", "trees in the dataset", summary["dataset_info"]["total_trees"]),
        Number("DR-T89", "trees in summary.json's per-tree list", len(summary["trees"])),
        Number("DR-T89", "en.wikipedia.org trees", summary["trees_by_domain"].get("en.wikipedia.org")),
        Number("DR-T89", "source domains", domains.height),
        Number("DR-T89", "domains whose count equals Table 8", int(t8["agree"].sum())),
        Number("DR-T89", "trees by domain: summary equals recount from root_url", recount),
        Number("DR-T89", "trees summed over topics", int(topics["count"].sum())),
        Number("DR-T89", "topics", topics.height),
        Number("DR-T89", "Table 9 topics whose count equals ours", int(t9.filter(pl.col("in_paper"))["agree"].sum())),
        Number("DR-T89", "summary topics absent from Table 9", absent.height,
               note=f"{int(absent['ours'].sum())} trees: " + "; ".join(absent["topic"].to_list())),
    ]
    return Section(numbers, [Figure(fig, "real")],
                   [Table(t8.rename(COMPARISON_COLUMNS["domain"]), "Table 8: trees per source domain.", 0),
                    Table(t9.rename(COMPARISON_COLUMNS["topic"]), "Table 9: trees per topic.", 0)])


def f8_section(trees: Mapping[str, Any], summary: dict[str, Any], missing: list[str], rounds: pl.DataFrame,
               logs_kind: str) -> Section:
    """DR-F8: depth and width over the released trees (per tree and over all nodes) and over the task of each
    match's last round in ``rounds`` (the chapter's match logs, of kind ``logs_kind``). Every histogram has a log
    count axis, as the paper's Fig 8."""
    ends = diagnostics.match_ends(rounds)
    shapes, nodes = tree_table(trees), all_nodes(trees)
    groups = sibling_group_sizes(nodes)
    check = summary_check(shapes, summary)
    n = len(trees)
    per_tree = count_histograms([(shapes["depth"].to_numpy(), "tree depth (root = 0)"),
                                 (shapes["max_branching"].to_numpy(), "largest sibling group")],
                                ylabel="trees", log_y=True,
                                title=f"Fig 8 (released trees): per-tree depth and width, {n} trees")
    per_node = count_histograms([(nodes["depth"].to_numpy(), "node depth (root = 0)"),
                                 (groups, "sibling group size (children per internal node)")],
                                ylabel="nodes / sibling groups", log_y=True,
                                title=f"Fig 8 (released trees): all nodes of the {n} trees")
    at_end = count_histograms([(ends["depth"].to_numpy(), "depth of the last round (root = 1)"),
                               (ends["width"].to_numpy(), "width constraint of the last round")],
                              ylabel="matches", log_y=True,
                              title=f"Fig 8 (match logs): the task at the end of each of {ends.height} matches")
    topo = topology_summary(shapes, nodes)
    n_paper = int(paper_values.lookup("DR-T89", "trees in the dataset").paper)  # type: ignore[arg-type]
    numbers = [
        Number("DR-F8", "tree files available upstream", n, note=f"of {n_paper}; missing: {', '.join(missing)}"),
        Number("DR-F8", "trees whose file matches summary.json (nodes, depth, nodes per level)",
               int(check["agree"].sum()), note=f"of {check.height}"),
        Number("DR-F8", "largest tree depth, released trees (root = 0)", topo.max_tree_depth),
        Number("DR-F8", "most common tree depth, released trees", topo.modal_tree_depth,
               note=f"{topo.trees_at_modal_depth} of {n} trees"),
        Number("DR-F8", "most common node depth, all nodes", topo.modal_node_depth,
               note=f"share {topo.modal_node_depth_share:.1%}"),
        Number("DR-F8", "most common sibling group size", topo.modal_group_size),
        Number("DR-F8", "share of sibling groups of size 4-7 (%)", 100 * topo.share_groups_4_to_7,
               note=f"{topo.groups_4_to_7} of {topo.groups} groups"),
        Number("DR-F8", "most common match-end depth (root = 1), match logs", diagnostics.mode(ends["depth"]),
               data=logs_kind),
        Number("DR-F8", "largest match-end depth (root = 1), match logs", ends["depth"].max(), data=logs_kind),
        Number("DR-F8", "most common match-end width constraint, match logs", diagnostics.mode(ends["width"]),
               data=logs_kind),
    ]
    return Section(numbers, [Figure(per_tree, "real"), Figure(per_node, "real"), Figure(at_end, logs_kind)],
                   [Table(check.rename(CHECK_COLUMNS), "Each released tree file against its summary.json entry.", 0)])
