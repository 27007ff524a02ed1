"""The book's side of the DR-Arena chapter's sections on the released information trees: the data banner's text
and DR-F8's check of each tree file against ``summary.json`` as the page shows it. The numbers of DR-T89 (Tables 8
and 9, one row per domain and per topic) and DR-F8 are recorded by path (``bookbuild/resources/paper_values/dr.csv``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from bookbuild.sections import Table

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


def f8_tables(check: pl.DataFrame) -> list[Table]:
    """Each released tree file against its ``summary.json`` entry."""
    return [Table(check.rename(CHECK_COLUMNS), "Each released tree file against its summary.json entry.", 0)]
