"""Figures of the nugget analyses, in the compendium's style (:mod:`analysis_lib.plotting`).

Legibility: a page shows a figure at its natural size up to the display column
(:data:`analysis_lib.plotting.display.DISPLAY_WIDTH_PX`) and scales wider ones down, so these figures are at most
:data:`FIGURE_WIDTH_IN` wide and small multiples stack (one or two panels per row); the tests hold every figure
here to 10 pt as displayed (:func:`analysis_lib.plotting.display.smallest_font_pt`). Where the paper states the
numbers a figure shows, the figure draws them too, labelled ``paper`` in its legend.
"""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np
import polars as pl
import seaborn as sns
from matplotlib.figure import Figure

from analysis_lib import plotting
from analysis_lib.nuggets.agreement import NuggetConfusion
from analysis_lib.nuggets.battles import BattleShares
from analysis_lib.nuggets.perbattle import KDE_BW_ADJUST

ROW_LABELS = ["human: model_a", "human: tie", "human: model_b", "human: tie (bothbad)"]
PREFERENCE_NAMES = ("model_a", "tie", "model_b")
COL_LABELS = [f"nuggets: {c}" for c in PREFERENCE_NAMES]
#: the width of these figures: within the display column (plotting.display.DISPLAY_WIDTH_PX), shown unscaled
FIGURE_WIDTH_IN = 6.0
PAPER_COLOR = "#b2182b"
TICK_PT, LABEL_PT, TITLE_PT = 9.5, 10.0, 11.0


def _legible_cells(fig: Figure) -> Figure:
    """The cell counts of a :func:`analysis_lib.plotting.heatmap` at these figures' label size."""
    for text in fig.axes[0].texts:
        text.set_fontsize(LABEL_PT)
    return fig


def confusion_heatmap(m: NuggetConfusion, title: str) -> Figure:
    """Human vote × preference counts (NG Figures 4, 5, 6), the columns labelled by the confusion's preference
    (``nuggets: model_a``, ``LLM judge: model_a``, ...)."""
    columns = COL_LABELS if m.preference == "nuggets" else [f"{m.preference}: {c}" for c in PREFERENCE_NAMES]
    return _legible_cells(plotting.heatmap(m.counts, ROW_LABELS, columns, cbar_label="battles", fmt="{:.0f}",
                                           cmap="Blues", title=title))


def decided_heatmap(m: NuggetConfusion, title: str, preference: str = "ROUGE-L") -> Figure:
    """The decided block of a confusion (human A/B × preference A/B, ties excluded), as NG Figure 8."""
    return _legible_cells(plotting.heatmap(m.decided, ["human: model_a", "human: model_b"],
                                           [f"{preference}: model_a", f"{preference}: model_b"],
                                           cbar_label="battles", fmt="{:.0f}", cmap="Blues", title=title))


def shares_figure(shares: BattleShares, title: str, paper: Mapping[str, float | None]) -> Figure:
    """NG Figure 9: the vote shares and the language shares (% of single-turn battles) in two panels, each bar
    with the paper's share beside it (``paper``: vote or language -> the paper's %, None where it has none)."""
    groups = {"votes": shares.votes, "languages": shares.languages}
    fig, axes = plt.subplots(2, 1, figsize=(FIGURE_WIDTH_IN, 5.6), layout="constrained")
    for ax, (name, frame) in zip(axes, groups.items(), strict=True):
        labels = frame[frame.columns[0]].to_list()
        y = np.arange(len(labels))[::-1]
        ours = frame["percent"].to_numpy()
        ax.barh(y, ours, color=plotting.style.ACCENT, height=0.6, label="this build")
        ref = np.array([np.nan if paper.get(k) is None else paper[k] for k in labels], dtype=float)
        ax.plot(ref, y, "D", color=PAPER_COLOR, markersize=6, label="paper")
        right = float(np.nanmax(np.r_[ours, ref]))
        for yi, v, r in zip(y, ours, ref, strict=True):
            ax.text(np.nanmax([v, r]) + 0.02 * right, yi, f"{v:.1f}", va="center", fontsize=TICK_PT)
        ax.set_yticks(y, labels, fontsize=TICK_PT)
        ax.tick_params(axis="x", labelsize=TICK_PT)
        ax.set_xlim(0, 1.18 * right)
        ax.set_xlabel(f"% of single-turn battles ({name})", fontsize=LABEL_PT)
        ax.grid(axis="y", visible=False)
        ax.legend(fontsize=TICK_PT, loc="lower right")
    fig.suptitle(title, fontsize=TITLE_PT)
    return fig


def kde_by_vote(groups: dict[str, np.ndarray], title: str) -> Figure:
    """NG Figure 3: the kernel density of score_B − score_A per human vote, drawn by ``seaborn.kdeplot`` with the
    library's bandwidth (:data:`~analysis_lib.nuggets.perbattle.KDE_BW_ADJUST` × Scott's factor, the densities
    :func:`~analysis_lib.nuggets.perbattle.kde_curves` computes with scipy) on −1…1, the range of a score
    difference. A vote with fewer than two distinct finite differences has no density and no curve."""
    fig, ax = plt.subplots(figsize=(FIGURE_WIDTH_IN, 4.0), layout="constrained")
    for vote, values in groups.items():
        v = np.asarray(values, dtype=float)
        v = v[np.isfinite(v)]
        if v.size < 2 or np.ptp(v) == 0:
            continue
        sns.kdeplot(x=v, bw_adjust=KDE_BW_ADJUST, clip=(-1.0, 1.0), color=plotting.style.OUTCOME_COLORS.get(vote),
                    label=f"human: {vote} (n={np.asarray(values).size:,})", ax=ax)
    ax.axvline(0, color="#444444", lw=0.8)
    ax.set_xlabel("nugget score difference, All_B − All_A (score units)")
    ax.set_ylabel("density")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=2, fontsize=TICK_PT)
    ax.set_title(title)
    return fig


def _ks_location(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float] | None:
    """Where the two ECDFs are furthest apart: (value, F_x, F_y) at the largest |F_x − F_y|; None when a group is
    empty."""
    if x.size == 0 or y.size == 0:
        return None
    grid = np.union1d(x, y)
    fx = np.searchsorted(np.sort(x), grid, side="right") / max(1, x.size)
    fy = np.searchsorted(np.sort(y), grid, side="right") / max(1, y.size)
    k = int(np.argmax(np.abs(fx - fy)))
    return float(grid[k]), float(fx[k]), float(fy[k])


def ecdf_panels(groups: dict[str, np.ndarray], ks: pl.DataFrame, title: str,
                paper_d: Mapping[tuple[str, str], float] | None = None) -> Figure:
    """NG Figure 2: ECDFs of score_B − score_A for each pair of vote groups (``seaborn.ecdfplot``), one panel per row,
    with this build's
    K-S D drawn where the curves are furthest apart and the paper's D (``paper_d``, by group pair) beside it as a
    dashed segment of its length."""
    fig, axes = plt.subplots(ks.height, 1, figsize=(FIGURE_WIDTH_IN, 2.7 * ks.height + 0.6), sharex=True,
                             layout="constrained", squeeze=False)
    for ax, r in zip(axes[:, 0], ks.iter_rows(named=True), strict=True):
        g1, g2 = r["group_1"], r["group_2"]
        for g in (g1, g2):
            sns.ecdfplot(x=groups[g], color=plotting.style.OUTCOME_COLORS.get(g), label=f"human: {g}", ax=ax)
        where = _ks_location(groups[g1], groups[g2])
        ref = (paper_d or {}).get((g1, g2))
        if where is not None:
            at, f1, f2 = where
            lo, hi = min(f1, f2), max(f1, f2)
            ax.plot([at, at], [lo, hi], color="black", lw=2.2, label=f"D = {r['ks_statistic']:.3f} (this build)")
            if ref is not None:
                ax.plot([at + 0.06] * 2, [lo, lo + ref], color=PAPER_COLOR, lw=2.2, ls="--",
                        label=f"D = {ref:.3f} (paper)")
        ax.set_title(f"{g1} vs {g2}: p = {r['p_value']:.1e} (n = {r['n_1']:,} and {r['n_2']:,})", fontsize=LABEL_PT)
        ax.set_ylabel("cumulative share", fontsize=LABEL_PT)
        ax.tick_params(labelsize=TICK_PT)
        ax.legend(fontsize=TICK_PT, loc="upper left")
    axes[-1, 0].set_xlabel("All_B − All_A (score units)", fontsize=LABEL_PT)
    fig.suptitle(title, fontsize=TITLE_PT)
    return fig


def sweep_figure(sweep: pl.DataFrame, title: str, paper_range: tuple[float, float] | None = None,
                 paper_kappa: tuple[float, float] | None = None) -> Figure:
    """NG-F4 sweep: weighted κ against the tie threshold, on a κ axis from 0 (no agreement beyond chance) to at
    least 0.5, so a change of 0.01 looks like one; ``paper_range`` (lowest, highest κ the paper reports over the
    sweep) is shaded and ``paper_kappa`` (threshold, κ) marked, both labelled ``paper``."""
    fig, ax = plt.subplots(figsize=(FIGURE_WIDTH_IN, 3.6))
    t = sweep["threshold"].to_numpy()
    ax.plot(t, sweep["kappa"], marker="o", color=plotting.style.ACCENT, label="this build")
    if paper_range is not None:
        ax.axhspan(*paper_range, xmin=0, xmax=1, color=PAPER_COLOR, alpha=0.15, lw=0,
                   label=f"paper: κ {paper_range[0]:.2f}–{paper_range[1]:.2f} over the sweep")
    if paper_kappa is not None:
        ax.plot(*paper_kappa, "D", color=PAPER_COLOR, label=f"paper: κ {paper_kappa[1]:.2f} at {paper_kappa[0]:g}")
    top = max(0.5, 1.2 * float(np.nanmax(sweep["kappa"].to_numpy())))
    ax.set_ylim(0, top)
    ax.set_xlabel("tie threshold on |All_B − All_A| (score units)")
    ax.set_ylabel("weighted κ (quadratic)")
    ax.legend(loc="lower right", fontsize=TICK_PT)
    ax.set_title(title)
    return fig


def histogram(values: np.ndarray, xlabel: str, title: str, bins: int = 30, paper_mean: float | None = None) -> Figure:
    """Histogram of one per-battle quantity in ``bins`` equal bins (``seaborn.histplot``; nuggets per battle, NG-T2
    similarities), with this build's mean and the paper's (``paper_mean``) as vertical lines."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    fig, ax = plt.subplots(figsize=(FIGURE_WIDTH_IN, 3.6))
    if v.size:
        sns.histplot(x=v, bins=bins, color=plotting.style.ACCENT, alpha=1.0, ax=ax)
        ax.axvline(float(v.mean()), color="black", lw=1.5, label=f"mean {v.mean():.2f} (this build)")
    if paper_mean is not None:
        ax.axvline(paper_mean, color=PAPER_COLOR, lw=1.8, ls="--", label=f"mean {paper_mean:g} (paper)")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("battles")
    if v.size or paper_mean is not None:
        ax.legend(fontsize=TICK_PT)
    ax.set_title(title)
    return fig


def confusion_grid(
    confusions: Mapping[tuple[str, str], NuggetConfusion], subset_type: str, title: str, ncols: int = 2
) -> Figure:
    """NG Figures 11 / 12: one human × nugget confusion heatmap per query class or language, κ in each title,
    ``ncols`` panels per row (two, so each panel's labels and counts read at display size)."""
    items = [(s, m) for (t, s), m in confusions.items() if t == subset_type]
    nrows = max(1, -(-len(items) // ncols))
    fig, axes = plt.subplots(nrows, ncols, figsize=(FIGURE_WIDTH_IN, 2.5 * nrows + 0.9), squeeze=False,
                             layout="constrained")
    fig.get_layout_engine().set(h_pad=0.08, w_pad=0.1)  # type: ignore[union-attr, call-arg]
    short_rows, short_cols = ["A", "tie", "B", "both-bad"], ["A", "tie", "B"]
    for ax in axes.ravel()[len(items):]:
        ax.set_visible(False)
    for ax, (subset, m) in zip(axes.ravel(), items, strict=False):
        share = m.counts / np.clip(m.counts.sum(axis=1, keepdims=True), 1, None)
        im = ax.imshow(share, cmap="Blues", vmin=0, vmax=1, aspect="auto")
        for (i, j), v in np.ndenumerate(m.counts):
            ax.text(j, i, f"{v}", ha="center", va="center", fontsize=LABEL_PT,
                    color=plotting.style.contrast_text_color(im.cmap(im.norm(share[i, j]))))
        ax.set_xticks(range(3), short_cols, fontsize=TICK_PT)
        ax.set_yticks(range(4), short_rows, fontsize=TICK_PT)
        ax.grid(False)
        ax.set_title(f"{subset} (n={m.n:,}, κ={m.kappa:.2f})", fontsize=LABEL_PT)
    fig.supxlabel("nugget preference (counts; shading = share of the human-vote row)", fontsize=LABEL_PT)
    fig.supylabel("human vote", fontsize=LABEL_PT)
    fig.suptitle(title, fontsize=TITLE_PT)
    return fig


def rating_histograms(hist: pl.DataFrame, title: str, ncols: int = 2) -> Figure:
    """NG Figure 10: one bar chart per Researchy-Questions attribute of how many battles got each score 0–10
    (``hist``: :func:`analysis_lib.nuggets.llm_analyses.rating_histogram`); the class threshold (7) marked."""
    attributes = hist["attribute"].unique(maintain_order=True).to_list()
    nrows = max(1, -(-len(attributes) // ncols))
    fig, axes = plt.subplots(nrows, ncols, figsize=(FIGURE_WIDTH_IN, 2.0 * nrows + 0.9), squeeze=False,
                             sharex=True, layout="constrained")
    for ax in axes.ravel()[len(attributes):]:
        ax.set_visible(False)
    for ax, a in zip(axes.ravel(), attributes, strict=False):
        g = hist.filter(pl.col("attribute") == a)
        ax.bar(g["score"], g["battles"], color=plotting.style.ACCENT, width=0.85)
        ax.axvline(6.5, color="#444444", lw=0.8, ls="--")
        ax.set_xticks(range(0, 11, 2))
        ax.tick_params(labelsize=TICK_PT)
        ax.set_title(a, fontsize=LABEL_PT)
    fig.supxlabel("score 0–10 (dashed: the class threshold, 7)", fontsize=LABEL_PT)
    fig.supylabel("battles", fontsize=LABEL_PT)
    fig.suptitle(title, fontsize=TITLE_PT)
    return fig
