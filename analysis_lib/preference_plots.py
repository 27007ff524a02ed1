"""Figures of the preference chapters that need more than the shared kinds of :mod:`analysis_lib.plotting`.

:func:`distribution_by_group` draws Search Arena Figure 5 as the paper does, a *distribution* per intent
(not only its mean): one horizontal box per group (box = quartiles, line = median, whiskers = 5th and 95th
percentiles, outliers not drawn) with the mean and its 95% t-interval overlaid and the mean written right of
the whisker.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import polars as pl
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from analysis_lib.plotting import ACCENT, PROVIDER_COLORS


def distribution_by_group(
    values: pl.DataFrame,
    by: str,
    column: str,
    summary: pl.DataFrame,
    *,
    xlabel: str,
    title: str = "",
    log_x: bool = False,
    fmt: str = "{:.1f}",
) -> Figure:
    """Box per value of ``by`` over the per-response ``column`` of ``values``, in the order of ``summary``
    (a :func:`analysis_lib.preference.mean_ci` frame with ``by, mean, ci``), first row on top; the mean ± its
    95% t-interval is a black diamond with a bar, labelled with the mean right of the 95th percentile."""
    groups = summary[by].to_list()
    data = [values.filter(pl.col(by) == g)[column].drop_nulls().to_numpy().astype(float) for g in groups]
    fig, ax = plt.subplots(figsize=(7.0, max(2.8, 0.42 * len(groups) + 1.2)))
    y = np.arange(len(groups))[::-1]
    ax.boxplot(data, positions=y, vert=False, whis=(5, 95), showfliers=False, widths=0.55, patch_artist=True,
               boxprops={"facecolor": ACCENT, "alpha": 0.35, "edgecolor": ACCENT},
               medianprops={"color": ACCENT, "linewidth": 1.5}, whiskerprops={"color": "#555555"},
               capprops={"color": "#555555"})
    mean, half = summary["mean"].to_numpy(), summary["ci"].to_numpy()
    ax.errorbar(mean, y, xerr=half, fmt="D", color="black", ms=4, capsize=2, zorder=4)
    p95 = np.array([np.percentile(d, 95) if d.size else np.nan for d in data])
    for yi, m, right in zip(y, mean, p95, strict=True):
        ax.annotate(fmt.format(m), (right, yi), xytext=(4, 0), textcoords="offset points", va="center",
                    fontsize=8)
    if log_x:
        ax.set_xscale("log")
    ax.set_xlim(right=ax.get_xlim()[1] * (1.25 if log_x else 1.1))
    ax.set_yticks(y, groups)
    ax.set_xlabel(xlabel)
    ax.grid(axis="y", visible=False)
    ax.legend(handles=[Patch(facecolor=ACCENT, alpha=0.35, label="quartiles (line: median)"),
                       Line2D([], [], color="#555555", label="5th–95th percentile"),
                       Line2D([], [], marker="D", color="black", ms=4, label="mean ± 95% CI (value at right)")],
              loc="lower right", fontsize=7)
    if title:
        ax.set_title(title)
    return fig


def provider_colors(models: Sequence[str], providers: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    """Colour per model from its provider (:data:`analysis_lib.plotting.PROVIDER_COLORS`) and the legend
    (provider -> colour) of the providers present."""
    colors = [PROVIDER_COLORS.get(p, PROVIDER_COLORS["other"]) for p in providers]
    present = dict.fromkeys(providers)
    return colors, {p: PROVIDER_COLORS.get(p, PROVIDER_COLORS["other"]) for p in present}
