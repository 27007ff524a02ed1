"""DR-Arena information trees: loading and validation, shape, Tables 8 and 9, Fig 8 topology.

Trees
-----
The upstream repository (iNLP-Lab/DR-Arena at 08f38351, ``web_tree/data/``) holds ``summary.json`` (the 30
trees' topics, domains and per-tree crawl statistics) and some of the 30 tree files (the data manifest lists
19 at that commit: tree_0001, 0005, 0010, 0012, 0013, 0014, 0017, 0019, 0021, 0026 and 0029 are absent), so
every per-tree statistic covers only the released trees. Its README says the 30 trees of the paper are kept
under ``web_tree/data/dataset/trees/``; that folder, in the copy of the framework at commit 175901c8 (fork
pmcconville-hub/DR-Arena), holds the same 19 files. The released files are the trees after the matches'
on-the-fly expansions: 13 of the 19 are larger and deeper than the initial crawl that ``summary.json`` records
(:func:`summary_check`). Each node is a JSON object with at least
``url, domain, title, description, content, children`` (:data:`REQUIRED_FIELDS`); :func:`load_tree` checks this
for every node and names the file and node path (``root.children[2].children[0]``) of the first violation.

Conventions, the upstream crawler's own (each node stores ``depth``, 0 at the root; ``summary.json`` stores
``max_depth`` and ``nodes_by_depth`` on that scale):

- **depth** of a tree: the largest number of edges from the root to a node (root depth 0);
- **level width**: the largest number of nodes on one level (the graph-theoretic width);
- **branching width** (``max_branching``): the largest number of children of one node, i.e. the largest
  sibling group. The paper's "width constraint" is "the number of sibling information units required for
  aggregation" (App. I.2), which is this quantity; the summary's ``max_width_at_depth`` is it, per level.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import numpy as np
import polars as pl

from analysis_lib import fetch as _fetch

REQUIRED_FIELDS: tuple[str, ...] = ("url", "domain", "title", "description", "content", "children")
SUMMARY_ID = "dr_arena/summary"
TREE_PREFIX = "dr_arena/trees/"

# --------------------------------------------------------------------------------------------- trees


class TreeValidationError(ValueError):
    """A tree file does not have the expected node structure; the message names the file and node path."""


def validate_tree(root: object, source: str = "<tree>") -> None:
    """Check every node has :data:`REQUIRED_FIELDS` and a list of children; raise on the first violation."""
    stack: list[tuple[object, str]] = [(root, "root")]
    while stack:
        node, path = stack.pop()
        if not isinstance(node, dict):
            raise TreeValidationError(f"{source}: node {path} is a {type(node).__name__}, expected a JSON object")
        missing = [f for f in REQUIRED_FIELDS if f not in node]
        if missing:
            raise TreeValidationError(
                f"{source}: node {path} lacks field(s) {missing} (required: {list(REQUIRED_FIELDS)})"
            )
        children = node["children"]
        if not isinstance(children, list):
            raise TreeValidationError(
                f"{source}: node {path} field 'children' is a {type(children).__name__}, expected a list"
            )
        # reversed so that the first violation in document order is reported first
        stack.extend((c, f"{path}.children[{i}]") for i, c in reversed(list(enumerate(children))))


def load_tree(path: str | Path) -> dict:
    """Read and validate one tree file; returns its root node."""
    path = Path(path)
    try:
        root = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise TreeValidationError(f"{path}: not valid JSON ({exc})") from exc
    validate_tree(root, str(path))
    return root


def _data_cache(cache_dir: str | Path | None) -> Path | None:
    """A notebook's ``cache_dir`` holds downloaded inputs under ``data/`` (the library default's layout)."""
    return None if cache_dir is None else Path(cache_dir) / "data"


def tree_ids(manifest: str | Path | None = None) -> list[str]:
    """Manifest ids of the available tree files (``dr_arena/trees/tree_00NN``), sorted."""
    return sorted(k for k in _fetch.read_manifest(manifest) if k.startswith(TREE_PREFIX))


def load_trees(cache_dir: str | Path | None = None, manifest: str | Path | None = None) -> dict[str, dict]:
    """Every available tree, validated, keyed by tree id (``tree_0002``); inputs cached under ``cache_dir/data``."""
    out = {}
    for data_id in tree_ids(manifest):
        out[data_id.removeprefix(TREE_PREFIX)] = load_tree(
            _fetch.fetch(data_id, cache_dir=_data_cache(cache_dir), manifest=manifest)
        )
    return out


def load_summary(cache_dir: str | Path | None = None, manifest: str | Path | None = None) -> dict:
    """``summary.json``: ``dataset_info``, ``trees_by_topic``, ``trees_by_domain`` and per-tree ``trees``."""
    summary = json.loads(
        Path(_fetch.fetch(SUMMARY_ID, cache_dir=_data_cache(cache_dir), manifest=manifest)).read_text()
    )
    for key in ("trees_by_topic", "trees_by_domain", "trees"):
        if key not in summary:
            raise TreeValidationError(f"{SUMMARY_ID}: summary.json lacks key {key!r}")
    return summary


def tree_nodes(root: dict, tree_id: str = "") -> pl.DataFrame:
    """One row per node: ``tree_id, depth`` (root 0, from the node's position), ``n_children, domain, crawled``."""
    depth: list[int] = []
    n_children: list[int] = []
    domain: list[str | None] = []
    crawled: list[bool | None] = []
    stack = [(root, 0)]
    while stack:
        node, d = stack.pop()
        depth.append(d)
        n_children.append(len(node["children"]))
        domain.append(node.get("domain"))
        crawled.append(node.get("crawled"))
        stack.extend((c, d + 1) for c in node["children"])
    return pl.DataFrame(
        {"tree_id": [tree_id] * len(depth), "depth": depth, "n_children": n_children, "domain": domain,
         "crawled": crawled},
        schema={"tree_id": pl.String, "depth": pl.Int64, "n_children": pl.Int64, "domain": pl.String,
                "crawled": pl.Boolean},
    )


@dataclass(frozen=True)
class TreeShape:
    """Shape of one tree (conventions in the module docstring)."""

    n_nodes: int
    depth: int
    nodes_by_depth: tuple[int, ...]
    level_width: int
    max_branching: int
    n_leaves: int


def tree_shape(root: dict) -> TreeShape:
    """Depth (root 0), nodes per level, level width, largest sibling group and leaf count of one tree."""
    nodes = tree_nodes(root)
    counts = np.bincount(nodes["depth"].to_numpy())
    nc = nodes["n_children"].to_numpy()
    return TreeShape(
        n_nodes=int(nodes.height),
        depth=int(len(counts) - 1),
        nodes_by_depth=tuple(int(c) for c in counts),
        level_width=int(counts.max()),
        max_branching=int(nc.max()),
        n_leaves=int((nc == 0).sum()),
    )


def tree_table(trees: Mapping[str, dict]) -> pl.DataFrame:
    """Per-tree shape: ``tree_id, root_domain, n_nodes, depth, level_width, max_branching, n_leaves,
    nodes_by_depth``."""
    rows = []
    for tid, root in sorted(trees.items()):
        s = tree_shape(root)
        rows.append(
            {
                "tree_id": tid,
                "root_domain": root.get("domain"),
                "n_nodes": s.n_nodes,
                "depth": s.depth,
                "level_width": s.level_width,
                "max_branching": s.max_branching,
                "n_leaves": s.n_leaves,
                "nodes_by_depth": list(s.nodes_by_depth),
            }
        )
    return pl.DataFrame(rows)


def all_nodes(trees: Mapping[str, dict]) -> pl.DataFrame:
    """:func:`tree_nodes` of every tree, stacked."""
    return pl.concat([tree_nodes(root, tid) for tid, root in sorted(trees.items())])


def sibling_group_sizes(nodes: pl.DataFrame) -> np.ndarray:
    """Number of children of every internal node (the sizes of the sibling groups a wide task can aggregate)."""
    return nodes.filter(pl.col("n_children") > 0)["n_children"].to_numpy()


@dataclass(frozen=True)
class TopologySummary:
    """What the released trees say about the quantities of Fig 8 (depth, width constraint)."""

    max_tree_depth: int
    modal_tree_depth: int
    trees_at_modal_depth: int
    modal_node_depth: int
    modal_node_depth_share: float
    modal_group_size: int
    groups: int
    groups_4_to_7: int

    @property
    def share_groups_4_to_7(self) -> float:
        return self.groups_4_to_7 / self.groups if self.groups else float("nan")


def topology_summary(shapes: pl.DataFrame, nodes: pl.DataFrame) -> TopologySummary:
    """Modes and tails of tree depth, node depth and sibling-group size (``shapes``: :func:`tree_table`,
    ``nodes``: :func:`all_nodes`). Modes are the smallest most frequent value."""
    tree_depth = np.bincount(shapes["depth"].to_numpy())
    node_depth = np.bincount(nodes["depth"].to_numpy())
    groups = sibling_group_sizes(nodes)
    return TopologySummary(
        max_tree_depth=int(shapes["depth"].to_numpy().max()),
        modal_tree_depth=int(tree_depth.argmax()),
        trees_at_modal_depth=int(tree_depth.max()),
        modal_node_depth=int(node_depth.argmax()),
        modal_node_depth_share=float(node_depth.max() / node_depth.sum()),
        modal_group_size=int(np.bincount(groups).argmax()),
        groups=int(groups.size),
        groups_4_to_7=int(((groups >= 4) & (groups <= 7)).sum()),
    )


def summary_check(table: pl.DataFrame, summary: dict) -> pl.DataFrame:
    """Our per-tree node count, depth and nodes per level beside ``summary.json``'s ``stats`` for the same tree."""
    stats = {t["tree_id"]: t["stats"] for t in summary["trees"]}
    rows = []
    for r in table.iter_rows(named=True):
        st = stats.get(r["tree_id"])
        if st is None:
            continue
        by_depth = [int(st["nodes_by_depth"][k]) for k in sorted(st["nodes_by_depth"], key=int)]
        rows.append(
            {
                "tree_id": r["tree_id"],
                "n_nodes": r["n_nodes"],
                "summary_total_nodes": int(st["total_nodes"]),
                "depth": r["depth"],
                "summary_max_depth": int(st["max_depth"]),
                "nodes_by_depth_agree": list(r["nodes_by_depth"]) == by_depth,
            }
        )
    return pl.DataFrame(rows).with_columns(
        agree=(pl.col("n_nodes") == pl.col("summary_total_nodes"))
        & (pl.col("depth") == pl.col("summary_max_depth"))
        & pl.col("nodes_by_depth_agree")
    )


def counts_table(counts: Mapping[str, int], key: str) -> pl.DataFrame:
    """A ``{name: count}`` mapping as a frame sorted by count (descending), then name."""
    return pl.DataFrame({key: list(counts), "count": [int(v) for v in counts.values()]}).sort(
        ["count", key], descending=[True, False]
    )


def domain_table(summary: dict) -> pl.DataFrame:
    """Table 8: trees per source domain, from ``summary.json``'s ``trees_by_domain``."""
    return counts_table(summary["trees_by_domain"], "domain")


def topic_table(summary: dict) -> pl.DataFrame:
    """Table 9: trees per topic hierarchy, from ``summary.json``'s ``trees_by_topic``."""
    return counts_table(summary["trees_by_topic"], "topic")


def root_domains(summary: dict) -> dict[str, int]:
    """Trees per domain recounted from each tree's ``root_url`` (a cross-check of ``trees_by_domain``)."""
    out: dict[str, int] = {}
    for t in summary["trees"]:
        host = urlparse(t["root_url"]).netloc
        out[host] = out.get(host, 0) + 1
    return out


def missing_trees(summary: Mapping[str, Any], trees: Mapping[str, Any]) -> list[str]:
    """Trees listed in ``summary.json`` without a tree file, sorted."""
    return sorted({t["tree_id"] for t in summary["trees"]} - set(trees))
