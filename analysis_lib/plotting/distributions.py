"""Figure kinds for distributions: kernel densities per group, integer histograms, vote counts per category.

Every function takes plain arrays or a polars frame, returns the matplotlib ``Figure`` and labels its axes with
units.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import polars as pl
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, MaxNLocator, NullFormatter
from scipy.stats import gaussian_kde

from analysis_lib.plotting.style import ACCENT, SMALL_PT, VOTE_COLORS


def kde(
    samples: dict[str, np.ndarray],
    *,
    xlabel: str,
    title: str = "",
    colors: dict[str, str] | None = None,
    log_x: bool = False,
    bw_adjust: float = 1.0,
    clip: tuple[float, float] | None = None,
) -> Figure:
    """Kernel density per group (Gaussian, Scott's bandwidth times ``bw_adjust``), means in the legend."""
    fig, ax = plt.subplots()
    colors = colors or {}
    for name, values in samples.items():
        values = np.asarray(values, dtype=float)
        values = values[np.isfinite(values)]
        data = np.log10(np.clip(values, 1, None)) if log_x else values
        if data.size < 2 or np.ptp(data) == 0:
            continue
        k = gaussian_kde(data)
        k.set_bandwidth(k.factor * bw_adjust)
        lo, hi = clip if clip else (data.min(), data.max())
        grid = np.linspace(lo, hi, 400)
        ax.plot(
            10**grid if log_x else grid,
            k(grid),
            label=f"{name} (mean {values.mean():.1f}, n={values.size:,})",
            color=colors.get(name),
        )
    if log_x:
        ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("density" + (" (per log10 unit)" if log_x else ""))
    ax.legend()
    if title:
        ax.set_title(title)
    return fig

def vote_distribution(
    long: pl.DataFrame, *, by: str = "intent", order: Sequence[str] | None = None, title: str = "",
    ylabel: str = "battles",
) -> Figure:
    """Grouped bars of vote counts per category (Figure 8): one bar per ``vote`` (search, non-search, tie),
    labelled with its share of the category's battles. ``long`` has columns ``by``, ``vote``, ``count``, ``share``."""
    cats = list(order) if order is not None else long[by].unique(maintain_order=True).to_list()
    cats = [c for c in cats if c in set(long[by].to_list())]
    votes = [v for v in VOTE_COLORS if v in set(long["vote"].to_list())]
    fig, ax = plt.subplots(figsize=(max(6.0, 0.9 * len(cats) + 1.5), 3.8))
    width = 0.8 / max(len(votes), 1)
    x = np.arange(len(cats))
    for k, vote in enumerate(votes):
        sub = {r[by]: r for r in long.filter(pl.col("vote") == vote).iter_rows(named=True)}
        counts = np.array([sub[c]["count"] if c in sub else 0 for c in cats], dtype=float)
        shares = [sub[c]["share"] if c in sub else float("nan") for c in cats]
        pos = x + (k - (len(votes) - 1) / 2) * width
        ax.bar(pos, counts, width, label=vote, color=VOTE_COLORS[vote], edgecolor="black", linewidth=0.5)
        for xi, c, s in zip(pos, counts, shares, strict=True):
            if np.isfinite(s):
                ax.text(xi, c, f"{s:.0%}", ha="center", va="bottom", fontsize=SMALL_PT)
    ax.set_xticks(x, cats, rotation=30, ha="right")
    ax.set_ylabel(ylabel)
    # headroom for the legend; polars types Series.max() as any Python literal, an integer column gives an int
    ax.set_ylim(0, max(1.0, float(long["count"].max() or 0)) * 1.22)  # type: ignore[arg-type]
    ax.legend(loc="upper right", fontsize=SMALL_PT, ncols=len(votes))
    ax.grid(axis="x", visible=False)
    if title:
        ax.set_title(title)
    return fig

#: A count panel goes logarithmic when its tallest bar is this many times its shortest (the short bar would
#: be under 2% of a linear axis).
LOG_COUNT_RATIO = 50


def count_histograms(
    panels: Sequence[tuple[np.ndarray, str]],
    *,
    ylabel: str = "count",
    log_y: bool | None = None,
    title: str = "",
) -> Figure:
    """Side-by-side bar histograms of integer values, one bin per integer (``panels``: ``(values, xlabel)``;
    DR-Arena Fig 8: tree depth and width), each bar labelled with its count.

    The y axis is linear from 0 unless a panel's tallest bar is :data:`LOG_COUNT_RATIO` times its shortest or
    more (or ``log_y`` is True): then it is logarithmic from 0.5, so a bar of 1 still shows, with plain integer
    tick labels, and the axis label says "log scale". ``log_y=False`` keeps every panel linear."""
    fig, axes = plt.subplots(1, len(panels), figsize=(4.5 * len(panels), 3.8), squeeze=False)
    for ax, (values, xlabel) in zip(axes[0], panels, strict=True):
        v = np.asarray(values, dtype=int)
        counts = np.bincount(v)
        xs = np.nonzero(counts)[0]
        ax.bar(xs, counts[xs], color=ACCENT, width=0.8)
        for x, c in zip(xs, counts[xs], strict=True):
            ax.annotate(str(c), (x, c), ha="center", va="bottom", fontsize=SMALL_PT)
        log = counts[xs].max() >= LOG_COUNT_RATIO * counts[xs].min() if log_y is None else log_y
        if log:
            ax.set_yscale("log")
            ax.set_ylim(0.5, counts.max() * 2.0)
            ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:,.0f}"))
            ax.yaxis.set_minor_formatter(NullFormatter())
        else:
            ax.set_ylim(0, counts.max() * 1.12)
            ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xticks(np.arange(v.min(), v.max() + 1))
        ax.set_xlabel(xlabel)
        ax.set_ylabel(f"{ylabel} (log scale)" if log else ylabel)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig
