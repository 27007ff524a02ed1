"""Figure kinds for estimates and comparisons: bars, annotated matrices, forest plots, scatter plots with a fit or
error bars, radar charts and slope charts (Search Arena Figures 8, F.1, F.2, E.4 and the other papers' equivalents).

Every function takes plain arrays or a polars frame, returns the matplotlib ``Figure`` and labels its axes with
units (``words``, ``citations per turn``, ``% of prompts``, ``Elo``).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import polars as pl
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.colors import BoundaryNorm, ListedColormap, to_hex
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.projections.polar import PolarAxes

from analysis_lib.plotting.labels import place_labels, spread_1d
from analysis_lib.plotting.style import ACCENT, SMALL_PT, add_legend, contrast_text_color


def barh(
    labels: Sequence[str],
    values: Sequence[float] | np.ndarray,
    *,
    xlabel: str,
    title: str = "",
    color: str | Sequence[str] = ACCENT,
    annotate: str | None = "{:.1f}",
    xerr: np.ndarray | None = None,
    legend: dict[str, str] | None = None,
) -> Figure:
    """Horizontal bars, first label on top; ``xerr`` is a (2, n) array of lower/upper offsets. Value labels
    sit right of the bar's error bar (never on it); ``legend`` (label -> colour) explains the bar colours."""
    values = np.asarray(values, dtype=float)
    fig, ax = plt.subplots(figsize=(7.0, max(2.5, 0.32 * len(labels) + 1.0)))
    y = np.arange(len(labels))[::-1]
    ax.barh(y, values, color=color, xerr=xerr, capsize=3 if xerr is not None else 0,
            error_kw={"elinewidth": 1, "ecolor": "#333333"})
    ax.set_yticks(y, labels)
    ax.set_xlabel(xlabel)
    if title:
        ax.set_title(title)
    if annotate:
        upper = np.zeros_like(values) if xerr is None else np.asarray(xerr, dtype=float)[1]
        ends = values + np.where(np.isfinite(upper), upper, 0.0)
        span = float(np.nanmax(np.abs(ends))) if values.size else 1.0
        for yi, v, end in zip(y, values, ends, strict=True):
            ax.text(end + 0.01 * span, yi, annotate.format(v), va="center", fontsize=SMALL_PT)
        ax.set_xlim(right=max(ax.get_xlim()[1], 1.14 * float(np.nanmax(ends))))
    if legend:
        add_legend(ax, legend, loc="lower right")
    ax.grid(axis="y", visible=False)
    return fig


def heatmap(
    matrix: np.ndarray,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    *,
    cbar_label: str,
    title: str = "",
    fmt: str = "{:.2f}",
    cmap: str = "RdBu_r",
    center: float | None = None,
    categories: dict[float, str] | None = None,
) -> Figure:
    """Annotated matrix (pairwise win fractions, battle counts, confusion matrices); NaN cells left blank.

    ``categories`` (code -> name) marks a matrix of category codes: each code gets its own colour from
    ``cmap`` and the figure a legend of the names instead of a continuous colourbar."""
    matrix = np.asarray(matrix, dtype=float)
    size = max(4.0, 0.5 * len(col_labels) + 2.0)
    fig, ax = plt.subplots(figsize=(size + 1.0, max(3.0, 0.45 * len(row_labels) + 1.5)))
    finite = matrix[np.isfinite(matrix)]
    vmin, vmax = (finite.min(), finite.max()) if finite.size else (0.0, 1.0)
    if center is not None:
        half = max(abs(vmax - center), abs(center - vmin)) or 1.0
        vmin, vmax = center - half, center + half
    if categories:
        codes = sorted(categories)
        base = plt.get_cmap(cmap)
        listed = ListedColormap([base(0.15 + 0.75 * k / max(len(codes) - 1, 1)) for k in range(len(codes))])
        edges = [codes[0] - 0.5] + [(a + b) / 2 for a, b in itertools.pairwise(codes)] + [codes[-1] + 0.5]
        im = ax.imshow(np.ma.masked_invalid(matrix), cmap=listed, norm=BoundaryNorm(edges, listed.N), aspect="auto")
    else:
        im = ax.imshow(np.ma.masked_invalid(matrix), cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
    ax.set_xticks(np.arange(len(col_labels)), col_labels, rotation=45, ha="right")
    ax.set_yticks(np.arange(len(row_labels)), row_labels)
    ax.grid(False)
    for (i, j), v in np.ndenumerate(matrix):
        if np.isfinite(v):
            ax.text(j, i, fmt.format(v), ha="center", va="center", fontsize=SMALL_PT,
                    color=contrast_text_color(im.cmap(im.norm(v))))
    if categories:
        colors = {name: to_hex(im.cmap(im.norm(np.array(code)))) for code, name in sorted(categories.items())}  # type: ignore[arg-type]
        add_legend(ax, colors, title=cbar_label, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    else:
        fig.colorbar(im, ax=ax, label=cbar_label)
    if title:
        ax.set_title(title)
    return fig


def intervals(ax: Axes, at: np.ndarray, estimate: np.ndarray, lower: np.ndarray, upper: np.ndarray, *,
              vertical: bool = False, color: str = ACCENT, label: str | None = None, capsize: float = 3,
              marker: str = "o") -> None:
    """Each interval ``[lower, upper]`` drawn as it is (a capped bar) and its estimate as a marker, at positions
    ``at`` (rows; columns with ``vertical``). A percentile-bootstrap interval need not contain its point estimate
    (few rounds, a skewed statistic), so the bar is not drawn as ``estimate ± error`` (matplotlib refuses a
    negative error): its centre is ``(lower + upper) / 2`` and its half-length ``(upper − lower) / 2``."""
    lower, upper, estimate = (np.asarray(a, dtype=float) for a in (lower, upper, estimate))
    centre, half = (lower + upper) / 2, np.abs(upper - lower) / 2
    if vertical:
        ax.errorbar(at, centre, yerr=half, fmt="none", ecolor=color, capsize=capsize)
        ax.plot(at, estimate, marker, color=color, linestyle="none", label=label)
    else:
        ax.errorbar(centre, at, xerr=half, fmt="none", ecolor=color, capsize=capsize)
        ax.plot(estimate, at, marker, color=color, linestyle="none", label=label)


def forest(
    labels: Sequence[str],
    estimate: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    *,
    xlabel: str,
    title: str = "",
    reference: float | None = 0.0,
    marks: dict[str, float] | None = None,
    marks_label: str = "paper",
) -> Figure:
    """Point estimates with intervals, one row each (BT ratings, coefficients); ``marks`` adds reference values
    (the paper's, or the simulator's planted ones: ``marks_label`` names them in the legend)."""
    estimate, lower, upper = (np.asarray(a, dtype=float) for a in (estimate, lower, upper))
    fig, ax = plt.subplots(figsize=(7.0, max(2.5, 0.35 * len(labels) + 1.0)))
    y = np.arange(len(labels))[::-1]
    intervals(ax, y, estimate, lower, upper, label="this build")
    if marks:
        pos = {lab: yi for lab, yi in zip(labels, y, strict=True)}
        xs = [v for k, v in marks.items() if k in pos]
        ys = [pos[k] for k in marks if k in pos]
        ax.scatter(xs, ys, marker="x", color="black", zorder=3, label=marks_label)
        ax.legend(loc="best")
    if reference is not None:
        ax.axvline(reference, color="grey", lw=0.8, ls="--")
    ax.set_yticks(y, labels)
    ax.set_xlabel(xlabel)
    ax.grid(axis="y", visible=False)
    if title:
        ax.set_title(title)
    return fig

def scatter_fit(
    x: np.ndarray,
    y: np.ndarray,
    labels: Sequence[str] | None = None,
    *,
    xlabel: str,
    ylabel: str,
    title: str = "",
    band: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None,
    colors: Sequence[str] | None = None,
    legend: dict[str, str] | None = None,
) -> Figure:
    """Points (optionally labelled, labels placed clear of each other) with a fitted line and band
    ``(grid, fit, lower, upper)``; ``legend`` (label -> colour) explains the point colours."""
    fig, ax = plt.subplots(figsize=(7.0, 4.8))
    ax.scatter(x, y, c=colors if colors is not None else ACCENT, zorder=3, edgecolors="black", linewidths=0.4)
    handles: list[Artist] = []
    if band is not None:
        grid, fit, lo, hi = band
        ax.plot(grid, fit, color="grey")
        handles.append(ax.fill_between(grid, lo, hi, color="grey", alpha=0.2, label="95% confidence band"))
    if legend:
        handles += [Patch(facecolor=c, label=lab) for lab, c in legend.items()]
    if handles:
        ax.legend(handles=handles, loc="upper left", fontsize=SMALL_PT)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    if labels is not None:
        place_labels(ax, x, y, list(labels))
    return fig

def radar(
    frame: pl.DataFrame, label: str, axes: Sequence[str], *, axis_labels: Sequence[str] | None = None,
    title: str = "", rmax: float = 100.0, unit: str = "%",
) -> Figure:
    """Radar chart (Figure F.1): one closed polygon per row of ``frame`` over the ``axes`` columns."""
    names = list(axis_labels) if axis_labels is not None else list(axes)
    angles = np.linspace(0, 2 * np.pi, len(axes), endpoint=False)
    closed = np.append(angles, angles[0])
    fig, ax = plt.subplots(figsize=(7.0, 5.6), subplot_kw={"projection": "polar"})
    assert isinstance(ax, PolarAxes)  # the "polar" projection; narrows Axes for mypy
    ax.set_theta_offset(np.pi / 2)
    ax.set_theta_direction(-1)
    cmap = plt.get_cmap("tab10")
    for i, row in enumerate(frame.iter_rows(named=True)):
        vals = np.array([row[a] for a in axes], dtype=float)
        ax.plot(closed, np.append(vals, vals[0]), color=cmap(i % 10), linewidth=1.5, label=str(row[label]))
    ax.set_xticks(angles, names, fontsize=SMALL_PT)
    ax.set_ylim(0, rmax)
    ax.set_yticks(np.linspace(0, rmax, 6)[1:], [f"{v:g}{unit}" for v in np.linspace(0, rmax, 6)[1:]], fontsize=SMALL_PT)
    ax.set_rlabel_position(360 / len(axes) / 2)
    ax.legend(loc="upper left", bbox_to_anchor=(1.2, 1.0), fontsize=SMALL_PT)
    if title:
        ax.set_title(title, pad=18)
    return fig


def error_scatter(
    x: np.ndarray, y: np.ndarray, *, xerr: np.ndarray | None = None, yerr: np.ndarray | None = None,
    labels: Sequence[str] | None = None, groups: Sequence[str] | None = None, xlabel: str, ylabel: str,
    title: str = "", fit: bool = False, colors: Sequence[str] | None = None, identity: bool = False,
) -> Figure:
    """Points with asymmetric error bars (``xerr``/``yerr``: (2, n) lower/upper offsets, positive), optional
    text labels (placed clear of each other), marker and colour per ``groups`` value, an ordinary
    least-squares line (``fit``) whose equation is in the legend and the line ``y = x`` (``identity``)
    (Figures F.1 scatter and F.2; ours against the paper's)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    fig, ax = plt.subplots()
    markers = ["o", "s", "^", "D", "v"]
    group_names = list(dict.fromkeys(groups)) if groups is not None else [None]
    for g_i, g in enumerate(group_names):
        if g is None or groups is None:  # g is None exactly when groups is None
            idx = np.arange(x.size)
        else:
            idx = np.array([i for i, gg in enumerate(groups) if gg == g])
        ax.errorbar(
            x[idx], y[idx],
            xerr=None if xerr is None else np.asarray(xerr)[:, idx],
            yerr=None if yerr is None else np.asarray(yerr)[:, idx],
            fmt=markers[g_i % len(markers)], ms=6, capsize=2, elinewidth=0.8, mec="black", mew=0.5,
            color=ACCENT if g is None else plt.get_cmap("tab10")(g_i % 10), ecolor="grey", label=g,
            linestyle="none", zorder=3,
        )
        if colors is not None:
            ax.scatter(x[idx], y[idx], c=[colors[int(i)] for i in idx], marker=markers[g_i % len(markers)], zorder=4,
                       edgecolors="black", linewidths=0.5)
    if fit:
        slope, intercept = np.polyfit(x, y, 1)
        grid = np.linspace(x.min(), x.max(), 50)
        ax.plot(grid, slope * grid + intercept, "k--", linewidth=1, label=f"fit: y = {slope:.2f}x {intercept:+.2f}")
    if identity:
        lo, hi = min(x.min(), y.min()), max(x.max(), y.max())
        ax.plot([lo, hi], [lo, hi], color="grey", lw=0.8, ls=":", label="y = x")
    if fit or identity or groups is not None:
        ax.legend(loc="best", fontsize=SMALL_PT)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    if labels is not None:
        place_labels(ax, x, y, list(labels))
    return fig


def slope_chart(
    labels: Sequence[str],
    before: np.ndarray,
    after: np.ndarray,
    *,
    ylabel: str,
    names: tuple[str, str] = ("before", "after"),
    title: str = "",
    colors: Sequence[str] | None = None,
    legend: dict[str, str] | None = None,
) -> Figure:
    """One line per item from its ``before`` to its ``after`` value (ratings before / after style control).
    The labels at the right end are spread apart so none overlaps (a thin line joins a moved label to its
    point); ``legend`` (label -> colour) explains the line colours."""
    before, after = np.asarray(before, dtype=float), np.asarray(after, dtype=float)
    fig, ax = plt.subplots(figsize=(7.0, max(4.5, 0.42 * len(labels) + 2.0)))
    for i in range(len(labels)):
        c = colors[i] if colors is not None else None
        ax.plot([0, 1], [before[i], after[i]], marker="o", color=c)
    ax.set_xticks([0, 1], list(names))
    ax.set_xlim(-0.15, 1.9)
    ax.set_ylabel(ylabel)
    ax.grid(axis="x", visible=False)
    if title:
        ax.set_title(title)
    if legend:
        add_legend(ax, legend, loc="upper center", bbox_to_anchor=(0.5, -0.08), ncols=len(legend))
    lo, hi = ax.get_ylim()
    height_px = max(ax.get_window_extent().height, 1.0)
    ys = np.asarray(after, dtype=float)
    for _ in range(4):  # spreading can widen the axis, which shrinks a text line in data units: iterate
        gap = 1.4 * SMALL_PT * fig.dpi / 72 / height_px * (hi - lo)  # one text line of the labels, in data units
        ys = spread_1d(after, gap)
        lo, hi = min(lo, float(ys.min()) - gap), max(hi, float(ys.max()) + gap)
    ax.set_ylim(lo, hi)
    for lab, ya, yl in zip(labels, after, ys, strict=True):
        ax.annotate(lab, (1, ya), xytext=(1.12, yl), textcoords="data", va="center", fontsize=SMALL_PT,
                    arrowprops={"arrowstyle": "-", "color": "grey", "lw": 0.5, "shrinkA": 0, "shrinkB": 2})
    return fig
