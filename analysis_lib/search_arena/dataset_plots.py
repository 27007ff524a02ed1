"""Figures of the dataset and prompt analyses (SA §2, App. A, App. B.1) and the paper's numbers drawn on them.

Most of those figures are drawn with the shared kinds of :mod:`analysis_lib.plotting` and add the paper's values
here, each with a legend entry "paper": :func:`mark_paper_bars` (a black diamond on the bar whose label matches)
and :func:`mark_paper_means` (a dotted vertical line per curve of a density plot, in the curve's colour). The
figures of this module: :func:`daily_traffic` (Fig A.2, with the paper's range and the real release's mean) and
:func:`style_differences` (App. A.2: each model's rating in the standardised minus the original citation style).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import matplotlib.dates as mdates
import matplotlib.pyplot as plt
import numpy as np
import polars as pl
from matplotlib.artist import Artist
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from analysis_lib.plotting.style import ACCENT
from analysis_lib.search_arena.platform import TIME_ZONE

PAPER = "black"
RELEASE = "#b2182b"


def _add_to_legend(ax: plt.Axes, handles: list[Artist], **kwargs: Any) -> None:
    """The axes' own legend entries followed by ``handles``."""
    own, _ = ax.get_legend_handles_labels()
    ax.legend(handles=[*own, *handles], **kwargs)


def mark_paper_bars(fig: Figure, values: Mapping[str, float | None], *, label: str = "paper") -> Figure:
    """A black diamond at the paper's value on each bar of a horizontal bar chart whose tick label is a key of
    ``values`` (None values and unknown labels are skipped), and a legend entry ``label``."""
    ax = fig.axes[0]
    position = {t.get_text(): y for t, y in zip(ax.get_yticklabels(), ax.get_yticks(), strict=True)}
    marks = [(v, position[k]) for k, v in values.items() if v is not None and k in position]
    if not marks:
        return fig
    xs, ys = zip(*marks, strict=True)
    ax.scatter(xs, ys, marker="D", s=34, color=PAPER, edgecolors="white", linewidths=0.7, zorder=4)
    ax.set_xlim(right=max(ax.get_xlim()[1], 1.1 * max(xs)))
    _add_to_legend(ax, [Line2D([], [], marker="D", ls="", color=PAPER, label=label)], loc="lower right",
                   fontsize=8)
    return fig


def mark_paper_means(fig: Figure, means: Mapping[str, float | None], *, label: str = "paper: mean",
                     **legend: Any) -> Figure:
    """A dotted vertical line at the paper's mean of each curve of a density plot whose legend label starts
    with a key of ``means`` (drawn in the curve's colour), and one legend entry ``label``; ``legend`` places
    the legend (``loc``, ``bbox_to_anchor``, ...)."""
    ax = fig.axes[0]
    drawn = False
    for line in list(ax.get_lines()):
        name = str(line.get_label())
        for key, value in means.items():
            if value is not None and name.startswith(key):
                ax.axvline(value, color=line.get_color(), ls=":", lw=1.6)
                drawn = True
    if drawn:
        _add_to_legend(ax, [Line2D([], [], color=PAPER, ls=":", lw=1.6, label=label)], **{"fontsize": 8, **legend})
    return fig


def daily_traffic(
    days: pl.DataFrame,
    *,
    paper_range: tuple[float, float] | None,
    release_mean: float | None,
    title: str = "",
    time_zone: str = TIME_ZONE,
) -> Figure:
    """Conversations per day (bars; the voted ones darker, weekends shaded), the paper's range of recorded
    conversations per day (band, "paper") and the real release's mean per day (dashed, when known). ``time_zone``:
    the zone whose calendar days ``days`` counts (:func:`analysis_lib.search_arena.platform.daily_traffic`), named
    on the axis."""
    fig, ax = plt.subplots(figsize=(8.0, 4.0))
    x = days["day"].to_numpy()
    ax.bar(x, days["conversations"], width=0.9, color=ACCENT, alpha=0.45, label="conversations")
    ax.bar(x, days["voted"], width=0.9, color=ACCENT, alpha=0.9, label="with a vote")
    for day in days.filter(pl.col("weekend"))["day"].to_numpy():
        centre = mdates.date2num(np.datetime64(day, "D"))
        ax.axvspan(centre - 0.5, centre + 0.5, color="grey", alpha=0.12, lw=0)
    handles: list[Artist] = [Patch(facecolor="grey", alpha=0.25, label="weekend")]
    if paper_range is not None:
        low, high = paper_range
        ax.axhspan(low, high, color=PAPER, alpha=0.10, lw=0)
        handles.append(Patch(facecolor=PAPER, alpha=0.2, label=f"paper: {low:,.0f}–{high:,.0f} per day recorded"))
    if release_mean is not None:
        ax.axhline(release_mean, color=RELEASE, ls="--", lw=1.2)
        handles.append(Line2D([], [], color=RELEASE, ls="--",
                              label=f"real release: mean {release_mean:,.0f} per day"))
    ax.xaxis.set_major_locator(mdates.WeekdayLocator(byweekday=mdates.MO))
    ax.xaxis.set_major_formatter(mdates.DateFormatter("%d %b"))
    ax.set_ylabel(f"conversations per day ({time_zone})")
    ax.set_xlabel("day (weeks start on Monday)")
    ax.grid(axis="x", visible=False)
    top = max(float(days["conversations"].max() or 0), paper_range[1] if paper_range else 0.0)  # type: ignore[arg-type]
    ax.set_ylim(0, 1.3 * top)
    _add_to_legend(ax, handles, loc="upper left", fontsize=8, ncol=3)
    if title:
        ax.set_title(title)
    return fig


def style_differences(table: pl.DataFrame, *, title: str = "") -> Figure:
    """Per model, the rating difference standardised − original style (Elo) with its 95% interval
    (:func:`analysis_lib.search_arena.citation_style.style_ratings`), and the paper's finding, no significant
    difference, as the line at 0 ("paper")."""
    ordered = table.sort("difference")
    fig, ax = plt.subplots(figsize=(7.0, max(3.0, 0.34 * ordered.height + 1.3)))
    y = np.arange(ordered.height)
    d, lo, hi = (ordered[c].to_numpy() for c in ("difference", "ci_lower", "ci_upper"))
    significant = (lo > 0) | (hi < 0)
    ax.errorbar((lo + hi) / 2, y, xerr=np.abs(hi - lo) / 2, fmt="none", ecolor="#555555", capsize=3, lw=1)
    ax.scatter(d[~significant], y[~significant], color=ACCENT, zorder=3, label="this build (95% interval)")
    if significant.any():
        ax.scatter(d[significant], y[significant], color=RELEASE, zorder=3, label="interval excludes 0")
    ax.axvline(0, color=PAPER, lw=1.2, ls="--", label="paper: no significant difference")
    ax.set_yticks(y, ordered["model"].to_list())
    ax.set_xlabel("rating in the standardised style − rating in the original style (Elo)")
    ax.grid(axis="y", visible=False)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=3, fontsize=8)
    if title:
        ax.set_title(title)
    return fig
