"""Figure kinds for distributions, drawn by seaborn: kernel densities per group (``seaborn.kdeplot``) and integer
histograms (``seaborn.histplot``).

seaborn draws on the figure's own axes under the compendium's rcParams (:func:`~analysis_lib.plotting.style.
apply_style`; no seaborn theme is set), so these figures look like the others. Every function takes plain arrays,
returns the matplotlib ``Figure`` and labels its axes with units.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, MaxNLocator, NullFormatter

from analysis_lib.plotting.style import ACCENT, SMALL_PT


def plain_numbers() -> FuncFormatter:
    """Tick labels of a log axis as plain numbers (1, 10, 1,000); one per axis (matplotlib binds it to its axis)."""
    return FuncFormatter(lambda value, _: f"{value:,.0f}")


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
    """Kernel density per group over the group's range (``seaborn.kdeplot``: Gaussian, Scott's bandwidth times
    ``bw_adjust``), each group's mean and size in the legend. With ``log_x`` the density is that of log10 of the
    values (clipped to at least 1), per log10 unit, on a log axis; ``clip`` bounds the curves (in log10 units with
    ``log_x``). A group with fewer than two distinct finite values has no density and is left out."""
    fig, ax = plt.subplots()
    colors = colors or {}
    for name, values in samples.items():
        values = np.asarray(values, dtype=float)
        values = values[np.isfinite(values)]
        data = np.clip(values, 1, None) if log_x else values
        if data.size < 2 or np.ptp(data) == 0:
            continue
        sns.kdeplot(x=data, ax=ax, log_scale=log_x, bw_adjust=bw_adjust, cut=0, clip=clip, color=colors.get(name),
                    label=f"{name} (mean {values.mean():.1f}, n={values.size:,})")
    if log_x:  # the style turns mathtext off: the default labels would read "$\\mathdefault{10^{1}}$"
        ax.xaxis.set_major_formatter(plain_numbers())
        ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(xlabel)
    ax.set_ylabel("density" + (" (per log10 unit)" if log_x else ""))
    ax.legend()
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
    """Side-by-side histograms of integer values, one bar per integer (``seaborn.histplot`` with ``discrete=True``;
    ``panels``: ``(values, xlabel)``; DR-Arena Fig 8: tree depth and width), each bar labelled with its count and
    integers that do not occur left without a bar.

    The y axis is linear from 0 unless a panel's tallest bar is :data:`LOG_COUNT_RATIO` times its shortest or
    more (or ``log_y`` is True): then it is logarithmic from 0.5, so a bar of 1 still shows, with plain integer
    tick labels, and the axis label says "log scale". ``log_y=False`` keeps every panel linear."""
    fig, axes = plt.subplots(1, len(panels), figsize=(4.5 * len(panels), 3.8), squeeze=False)
    for ax, (values, xlabel) in zip(axes[0], panels, strict=True):
        v = np.asarray(values, dtype=int)
        sns.histplot(x=v, discrete=True, shrink=0.8, color=ACCENT, alpha=1.0, linewidth=0, ax=ax)
        for bar in list(ax.patches):
            if bar.get_height() == 0:
                bar.remove()  # an integer between the values that does not occur
        counts = np.array([bar.get_height() for bar in ax.patches])
        for bar, c in zip(ax.patches, counts, strict=True):
            ax.annotate(f"{c:.0f}", (bar.get_x() + bar.get_width() / 2, c), ha="center", va="bottom",
                        fontsize=SMALL_PT)
        log = counts.max() >= LOG_COUNT_RATIO * counts.min() if log_y is None else log_y
        if log:
            ax.set_yscale("log")
            ax.set_ylim(0.5, counts.max() * 2.0)
            ax.yaxis.set_major_formatter(plain_numbers())
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
