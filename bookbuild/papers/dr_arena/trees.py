"""The book's side of the DR-Arena chapter's sections on the released information trees: the data banner's text,
DR-T89 (Tables 8 and 9) and DR-F8 (Fig 8: tree topology, and the task at the end of each match from the chapter's
match logs): the numbers recorded from :mod:`analysis_lib.dr_arena`'s tree analyses and the tables as the page
shows them; the paper's values are in ``bookbuild/resources/paper_values/dr.csv``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from analysis_lib.dr_arena import TopologySummary, root_domains
from analysis_lib.dr_arena.diagnostics import mode
from analysis_lib.dr_arena.trees import COMPARISON_COLUMNS
from bookbuild import paper_values
from bookbuild.sections import Number, Table

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


def t89_numbers(summary: dict[str, Any], domains: pl.DataFrame, topics: pl.DataFrame, t8: pl.DataFrame,
                t9: pl.DataFrame) -> list[Number]:
    """DR-T89: trees by source domain and by topic from ``summary.json`` (``domains``, ``topics``:
    :func:`analysis_lib.dr_arena.domain_table` / ``topic_table``) beside Tables 8 and 9 (``t8``, ``t9``:
    :func:`analysis_lib.dr_arena.compare_counts`), the domain counts recounted from each tree's ``root_url``."""
    absent = t9.filter(~pl.col("in_paper"))
    recount = "yes" if root_domains(summary) == summary["trees_by_domain"] else "no"
    return [
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


def t89_tables(t8: pl.DataFrame, t9: pl.DataFrame) -> list[Table]:
    """Tables 8 and 9 compared count by count."""
    return [Table(t8.rename(COMPARISON_COLUMNS["domain"]), "Table 8: trees per source domain.", 0),
            Table(t9.rename(COMPARISON_COLUMNS["topic"]), "Table 9: trees per topic.", 0)]


def f8_numbers(topo: TopologySummary, check: pl.DataFrame, ends: pl.DataFrame, n_trees: int, missing: list[str],
               logs_kind: str) -> list[Number]:
    """DR-F8: depth and width over the ``n_trees`` released trees (``topo``:
    :func:`analysis_lib.dr_arena.topology_summary`; ``check``: :func:`analysis_lib.dr_arena.summary_check`;
    ``missing``: the trees without a file) and over the task of each match's last round (``ends``:
    :func:`analysis_lib.dr_arena.match_ends` of the chapter's match logs, of kind ``logs_kind``)."""
    n_paper = int(paper_values.lookup("DR-T89", "trees in the dataset").paper)  # type: ignore[arg-type]
    return [
        Number("DR-F8", "tree files available upstream", n_trees,
               note=f"of {n_paper}; missing: {', '.join(missing)}"),
        Number("DR-F8", "trees whose file matches summary.json (nodes, depth, nodes per level)",
               int(check["agree"].sum()), note=f"of {check.height}"),
        Number("DR-F8", "largest tree depth, released trees (root = 0)", topo.max_tree_depth),
        Number("DR-F8", "most common tree depth, released trees", topo.modal_tree_depth,
               note=f"{topo.trees_at_modal_depth} of {n_trees} trees"),
        Number("DR-F8", "most common node depth, all nodes", topo.modal_node_depth,
               note=f"share {topo.modal_node_depth_share:.1%}"),
        Number("DR-F8", "most common sibling group size", topo.modal_group_size),
        Number("DR-F8", "share of sibling groups of size 4-7 (%)", 100 * topo.share_groups_4_to_7,
               note=f"{topo.groups_4_to_7} of {topo.groups} groups"),
        Number("DR-F8", "most common match-end depth (root = 1), match logs", mode(ends["depth"]),
               data=logs_kind),
        Number("DR-F8", "largest match-end depth (root = 1), match logs", ends["depth"].max(), data=logs_kind),
        Number("DR-F8", "most common match-end width constraint, match logs", mode(ends["width"]),
               data=logs_kind),
    ]


def f8_tables(check: pl.DataFrame) -> list[Table]:
    """Each released tree file against its ``summary.json`` entry."""
    return [Table(check.rename(CHECK_COLUMNS), "Each released tree file against its summary.json entry.", 0)]
