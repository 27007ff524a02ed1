"""Figures of the Answer Engine Evaluation (Fig 7, Fig 8a and 8b, Table 2), in the project's plotting
style (``analysis_lib.plotting``).

Legibility: every figure here fits the display column (:data:`analysis_lib.plotting.display.DISPLAY_WIDTH_PX`),
so the page shows it unscaled, and no text in it is smaller than the display's minimum
(:func:`analysis_lib.plotting.display.smallest_font_pt` measures it). The paper's own values are drawn
on each figure that has them, with the legend entry "paper". The usability-study figures are in
:mod:`.plots_study`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import polars as pl
from matplotlib.figure import Figure
from matplotlib.patches import Patch, Rectangle

from analysis_lib.plotting import figures
from analysis_lib.plotting.style import ACCENT

from .metrics import METRICS
from .scorecard import BASIC_STATISTICS, METRIC_GROUPS, METRIC_LABELS, Threshold, classify, display_name

#: Widest figure, in inches: within the display column (``plotting.display.DISPLAY_WIDTH_PX`` / 96 = 7.2 in, one
#: figure inch shown as one CSS inch) with room for the labels beside it.
MAX_WIDTH_IN = 5.7
FONT = 10.0
SCORECARD_COLORS = {"acceptable": "#8fd19e", "borderline": "#ffe08a", "problematic": "#f4a3a3"}
CONFIDENCE_COLORS = ("#b2182b", "#ef8a62", "#d9d9d9", "#67a9cf", "#2166ac")  # 1 … 5
PAPER_STYLE: dict[str, Any] = {"marker": "D", "facecolors": "none", "edgecolors": "black", "label": "paper",
                               "zorder": 3}
#: Fig 7 cell codes (citation + 2 × support) → legend name and colour.
FIG7_CODES = {0: ("neither", "#f7f7f7"), 1: ("cited, not supported", "#f4a3a3"),
              2: ("supported, not cited", "#9ecae1"), 3: ("cited and supported", "#2166ac")}


def _width(n_columns: int, per_column: float, fixed: float) -> float:
    """A figure width in inches that fits the text column (at the style's 110 dpi)."""
    return min(MAX_WIDTH_IN, fixed + per_column * n_columns)


def figure7_matrices(citations: np.ndarray, support: np.ndarray, relevant: np.ndarray, *, title: str = "") -> Figure:
    """The Fig 7 example's citation and factual-support matrices in one grid (statements × sources), each cell
    coloured by one of four categories (:data:`FIG7_CODES`) with a categorical legend."""
    code = np.asarray(citations, int) + 2 * np.asarray(support, int)
    n, m = code.shape
    fig, ax = plt.subplots(figsize=(5.6, 0.42 * n + 1.9))
    for i in range(n):
        for j in range(m):
            ax.add_patch(Rectangle((j, n - 1 - i), 1, 1, facecolor=FIG7_CODES[int(code[i, j])][1], edgecolor="white",
                                   lw=2))
    ax.set_xlim(0, m)
    ax.set_ylim(0, n)
    ax.set_xticks(np.arange(m) + 0.5, [f"source {j + 1}" for j in range(m)], fontsize=FONT)
    ax.xaxis.tick_top()
    ax.set_yticks(np.arange(n)[::-1] + 0.5, [f"statement {i + 1}" + ("" if r else " (not relevant)")
                                             for i, r in enumerate(relevant)], fontsize=FONT)
    ax.tick_params(length=0)
    ax.grid(False)
    for side in ax.spines.values():
        side.set_visible(False)
    handles = [Patch(facecolor=c, edgecolor="#999999", label=name) for name, c in FIG7_CODES.values()]
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.02), ncol=2, fontsize=FONT)
    if title:
        ax.set_title(title, fontsize=11, pad=28)
    fig.tight_layout()
    return fig


def _scorecard_rows(card: pl.DataFrame, engines: list[str], thresholds: Mapping[str, Threshold]) -> list[tuple]:
    """Fig 8a's rows: ``("header", text)``, ``("value", label, values, categories or None)`` and
    ``("dots", label, per-engine category lists)``, in the published table's order."""
    look = {r["metric"].removeprefix("pct_"): r for r in card.iter_rows(named=True)}
    rows: list[tuple] = []
    if any(k in look for k in BASIC_STATISTICS):
        rows.append(("header", "Basic statistics"))
        rows += [("value", label, [look[k][e] for e in engines], None) for k, label in BASIC_STATISTICS.items()
                 if k in look]
    cats = {(k, e): classify(k, look[k][e], thresholds) for k in METRICS for e in engines}
    for group, keys in METRIC_GROUPS.items():
        rows.append(("header", f"{group} metrics"))
        rows += [("value", f"% {METRIC_LABELS[k]}", [look[k][e] for e in engines], [cats[(k, e)] for e in engines])
                 for k in keys]
    rows.append(("header", "Score card (one dot per metric)"))
    rows += [("dots", group, [[cats[(k, e)] for k in keys] for e in engines]) for group, keys in METRIC_GROUPS.items()]
    return rows


def scorecard_figure(card: pl.DataFrame, thresholds: Mapping[str, Threshold],
                     names: Mapping[str, str] | None = None, *, title: str = "") -> Figure:
    """Fig 8a as a table: per engine (column) the basic statistics, the eight metrics coloured by their Table 7
    category (acceptable / borderline / problematic) in the paper's three groups, and the score-card rows that
    summarise each group with one coloured dot per metric. ``card`` has the layout of
    ``published/aee_figure8_scorecard.csv`` (``metric`` = ``pct_<name>`` or a basic statistic, one column per
    engine); ``names`` maps column names to display names (default :func:`.scorecard.display_name`)."""
    engines = [c for c in card.columns if c != "metric"]
    rows = _scorecard_rows(card, engines, thresholds)
    n, m = len(rows), len(engines)
    fig, ax = plt.subplots(figsize=(_width(m, 1.15, 2.6), 0.3 * n + 1.3))
    for i, row in enumerate(rows):
        y = n - 1 - i
        if row[0] == "value":
            for j, (v, cat) in enumerate(zip(row[2], row[3] or [None] * m)):
                ax.add_patch(Rectangle((j, y), 1, 1, facecolor=SCORECARD_COLORS.get(cat, "#f2f2f2"), edgecolor="white"))
                ax.text(j + 0.5, y + 0.5, f"{v:.1f}", ha="center", va="center", fontsize=FONT)
        elif row[0] == "dots":
            for j, cats in enumerate(row[2]):
                xs = j + 0.5 + 0.16 * (np.arange(len(cats)) - (len(cats) - 1) / 2)
                ax.scatter(xs, np.full(len(cats), y + 0.5), s=90, c=[SCORECARD_COLORS[c] for c in cats],
                           edgecolors="#555555", linewidths=0.6, zorder=3)
    ax.set_xlim(0, m)
    ax.set_ylim(0, n)
    ax.set_xticks(np.arange(m) + 0.5, [(names or {}).get(e, display_name(e)) for e in engines], fontsize=FONT)
    ax.xaxis.tick_top()
    ax.set_yticks(np.arange(n)[::-1] + 0.5, [r[1] for r in rows], fontsize=FONT)
    for tick, row in zip(ax.get_yticklabels(), rows):
        if row[0] == "header":
            tick.set_fontweight("bold")
    ax.grid(False)
    for side in ax.spines.values():
        side.set_visible(False)
    ax.tick_params(length=0)
    handles = [Patch(facecolor=c, label=k) for k, c in SCORECARD_COLORS.items()]
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.4, -0.01), ncol=3, fontsize=FONT,
              title="Table 7 category", title_fontsize=FONT)
    if title:
        ax.set_title(title, fontsize=11, pad=24)
    fig.tight_layout()
    return fig


def _engine_ticks(ax: plt.Axes, x: np.ndarray, labels: list[str]) -> None:
    long = len(labels) > 3 or max(map(len, labels)) > 10
    ax.set_xticks(x, labels, fontsize=FONT, rotation=30 if long else 0, ha="right" if long else "center")


def scorecard_intervals(long: pl.DataFrame, published: pl.DataFrame, thresholds: Mapping[str, Threshold],
                        names: Mapping[str, str], *, planted: pl.DataFrame | None = None, level: float = 0.95,
                        title: str = "") -> Figure:
    """One panel per metric (four rows of two): the recomputed percentage per engine with its bootstrap interval
    at ``level`` (dots and bars), the published Fig 8 value ("paper", open diamonds) and, when given, the
    planted value (crosses), over the Table 7 bands coloured acceptable / borderline / problematic. Engines the
    paper did not evaluate have no diamond."""
    engines = list(dict.fromkeys(long["engine"].to_list()))
    # published columns (you_com, ...) matched to the engines by the paper's names (YouCom, you_com → You.com)
    pub = {r["metric"].removeprefix("pct_"): {display_name(k): v for k, v in r.items() if k != "metric"}
           for r in published.iter_rows(named=True)}
    fig, axes = plt.subplots(4, 2, figsize=(_width(2, 0.0, 6.0), 10.0), sharex=True)
    x = np.arange(len(engines))
    for ax, metric in zip(axes.flat, METRICS):
        for cat, (lo, hi) in thresholds[metric].intervals.items():
            ax.axhspan(lo, hi, color=SCORECARD_COLORS[cat], alpha=0.45, lw=0)
        sub = {r["engine"]: r for r in long.filter(pl.col("metric") == metric).iter_rows(named=True)}
        val = np.array([sub[e]["value"] for e in engines])
        lower, upper = (np.array([sub[e][side] for e in engines]) for side in ("lo", "hi"))
        figures.intervals(ax, x, val, lower, upper, vertical=True, label=f"recomputed ({100 * level:g}% bootstrap CI)")
        if metric in pub:
            ax.scatter(x + 0.2, [pub[metric].get(display_name(e), np.nan) for e in engines], **PAPER_STYLE)
        if planted is not None:
            pl_sub = dict(zip(*planted.filter(pl.col("metric") == metric).select("engine", "planted")))
            ax.scatter(x - 0.2, [pl_sub.get(e, np.nan) for e in engines], marker="x", color="#444444",
                       label="planted", zorder=3)
        ax.set_title(f"{METRIC_LABELS[metric]} (%)", fontsize=FONT + 0.5)
        ax.set_ylim(0, 100)
        ax.set_xlim(-0.5, len(engines) - 0.5)
        ax.set_yticks([0, 50, 100], ["0", "50", "100"], fontsize=FONT)
        _engine_ticks(ax, x, [names.get(e, display_name(e)) for e in engines])
        ax.grid(False)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    order = {"paper": 1, "planted": 2}
    handles = [h for _, h in sorted(zip(labels, handles), key=lambda p: order.get(p[0], 0))]
    handles += [Patch(facecolor=c, alpha=0.45, label=f"Table 7: {k}") for k, c in SCORECARD_COLORS.items()]
    fig.legend(handles=handles, loc="lower center", ncol=2, fontsize=FONT, bbox_to_anchor=(0.5, 0.0))
    if title:
        fig.suptitle(title, fontsize=11)
    fig.tight_layout(rect=(0, 0.08, 1, 0.98))
    return fig


def confidence_bars(dist: pl.DataFrame, names: Mapping[str, str], *, reference: Mapping[str, float] | None = None,
                    title: str = "") -> Figure:
    """Fig 8b: stacked horizontal bars, one per (engine, query type), of the share of answers at each
    confidence level 1 (strongly not confident) to 5 (strongly confident). ``reference`` (display name → the
    paper's lower bound on the share at level 5, in %) is drawn as "paper" diamonds where the level-5 part of
    the engine's bars should start at the latest (at 100 − bound)."""
    groups = dist.select("engine", "query_type").unique(maintain_order=True).rows()
    fig, ax = plt.subplots(figsize=(_width(1, 0.0, 6.0), 0.45 * len(groups) + 1.9))
    left = np.zeros(len(groups))
    for level, color in zip(range(1, 6), CONFIDENCE_COLORS):
        share = np.array([dist.filter((pl.col("engine") == e) & (pl.col("query_type") == q)
                                      & (pl.col("confidence") == level))["share"].item() for e, q in groups])
        ax.barh(np.arange(len(groups)), 100 * share, left=left, color=color, label=str(level))
        left += 100 * share
    marks = [(k, 100 - (reference or {})[names.get(e, e)]) for k, (e, _) in enumerate(groups)
             if names.get(e, e) in (reference or {})]
    if marks:
        ax.scatter([x for _, x in marks], [k for k, _ in marks], s=70, **(PAPER_STYLE | {"facecolors": "white"}))
    ax.set_yticks(np.arange(len(groups)), [f"{names.get(e, e)} · {q}" for e, q in groups], fontsize=FONT)
    ax.tick_params(axis="x", labelsize=FONT)
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel("share of answers (%)", fontsize=FONT)
    handles, labels = ax.get_legend_handles_labels()
    levels = [(h, lab) for h, lab in zip(handles, labels) if lab != "paper"]
    legend = ax.legend([h for h, _ in levels], [lab for _, lab in levels], ncol=5, loc="upper center",
                       title="confidence (1 = strongly not confident, 5 = strongly confident)",
                       bbox_to_anchor=(0.45, -0.2), fontsize=FONT, title_fontsize=FONT)
    if marks:
        ax.add_artist(legend)
        ax.legend([h for h, lab in zip(handles, labels) if lab == "paper"],
                  ["paper: the level-5 part starts here at the latest"], loc="upper center",
                  bbox_to_anchor=(0.45, -0.48), fontsize=FONT)
    if title:
        ax.set_title(title, fontsize=11)
    fig.tight_layout()
    return fig


def sources_bars(t2: pl.DataFrame, *, title: str = "") -> Figure:
    """Table 2: per engine (and all engines) the mean number of sources displayed and cited, side by side, each
    cited bar labelled with the share of displayed sources cited as the paper prints it. ``t2`` is
    :func:`.scorecard.table2_cited_share` output (its ``engine`` column holds ``all`` and the engine ids)."""
    rows = t2.rows(named=True)
    fig, ax = plt.subplots(figsize=(_width(1, 0.0, 6.0), 0.75 * len(rows) + 1.6))
    y = np.arange(len(rows))
    ax.barh(y - 0.19, [r["displayed"] for r in rows], height=0.38, color="#9ecae1", label="displayed")
    ax.barh(y + 0.19, [r["cited"] for r in rows], height=0.38, color=ACCENT, label="cited")
    for k, r in enumerate(rows):
        ax.text(r["displayed"] + 0.05, k - 0.19, f"{r['displayed']:.2f}", va="center", fontsize=FONT)
        ax.text(r["cited"] + 0.05, k + 0.19, f"{r['cited']:.2f} ({r['cited_pct_reported']:g}% cited)", va="center",
                fontsize=FONT)
    ax.set_yticks(y, ["all three engines" if r["engine"] == "all" else display_name(r["engine"]) for r in rows],
                  fontsize=FONT)
    ax.invert_yaxis()
    ax.set_xlim(0, 1.45 * max(r["displayed"] for r in rows))
    ax.tick_params(axis="x", labelsize=FONT)
    ax.set_xlabel("sources per answer (mean)", fontsize=FONT)
    ax.grid(axis="y", visible=False)
    ax.legend(loc="lower right", fontsize=FONT)
    if title:
        ax.set_title(title, fontsize=11)
    fig.tight_layout()
    return fig

