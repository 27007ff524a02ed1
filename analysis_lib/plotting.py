"""The one plotting style of the compendium, and the figure kinds the chapters share.

Every figure function takes plain arrays or a polars frame, returns the matplotlib ``Figure``, and labels
its axes with units (``words``, ``citations per turn``, ``% of prompts``, ``Elo``). Colours are fixed per
provider and per vote outcome so the same thing looks the same on every page.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib

matplotlib.use("Agg", force=False)
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import polars as pl  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

PROVIDER_COLORS = {"Perplexity": "#1f77b4", "Google": "#2ca02c", "OpenAI": "#d62728", "other": "#7f7f7f"}
OUTCOME_COLORS = {
    "model_a": "#4c72b0",
    "model_b": "#dd8452",
    "tie": "#8c8c8c",
    "tie (bothbad)": "#c44e52",
    "search": "#4c72b0",
    "non-search": "#dd8452",
}
DATASET_COLORS = {"Search Arena": "#1f77b4", "BrowseComp": "#9467bd", "SimpleQA": "#2ca02c"}
ACCENT = "#1f77b4"


def apply_style() -> None:
    """Set the shared rcParams (call once per notebook)."""
    plt.rcParams.update(
        {
            "figure.figsize": (7.0, 4.2),
            "figure.dpi": 110,
            "savefig.dpi": 150,
            "savefig.bbox": "tight",
            "axes.spines.top": False,
            "axes.spines.right": False,
            "axes.grid": True,
            "grid.alpha": 0.3,
            "axes.titlesize": 11,
            "axes.labelsize": 10,
            "xtick.labelsize": 9,
            "ytick.labelsize": 9,
            "legend.frameon": False,
            "font.family": "DejaVu Sans",
        }
    )


def barh(
    labels: Sequence[str],
    values: Sequence[float] | np.ndarray,
    *,
    xlabel: str,
    title: str = "",
    color: str | Sequence[str] = ACCENT,
    annotate: str | None = "{:.1f}",
    xerr: np.ndarray | None = None,
) -> Figure:
    """Horizontal bars, largest on top; ``xerr`` is a (2, n) array of lower/upper offsets."""
    values = np.asarray(values, dtype=float)
    fig, ax = plt.subplots(figsize=(7.0, max(2.5, 0.32 * len(labels) + 1.0)))
    y = np.arange(len(labels))[::-1]
    ax.barh(y, values, color=color, xerr=xerr, capsize=3 if xerr is not None else 0)
    ax.set_yticks(y, labels)
    ax.set_xlabel(xlabel)
    if title:
        ax.set_title(title)
    if annotate:
        for yi, v in zip(y, values, strict=True):
            ax.text(v, yi, " " + annotate.format(v), va="center", fontsize=8)
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
) -> Figure:
    """Annotated matrix (pairwise win fractions, battle counts, confusion matrices); NaN cells left blank."""
    matrix = np.asarray(matrix, dtype=float)
    size = max(4.0, 0.5 * len(col_labels) + 2.0)
    fig, ax = plt.subplots(figsize=(size + 1.0, max(3.0, 0.45 * len(row_labels) + 1.5)))
    finite = matrix[np.isfinite(matrix)]
    vmin, vmax = (finite.min(), finite.max()) if finite.size else (0.0, 1.0)
    if center is not None:
        half = max(abs(vmax - center), abs(center - vmin)) or 1.0
        vmin, vmax = center - half, center + half
    im = ax.imshow(np.ma.masked_invalid(matrix), cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
    ax.set_xticks(np.arange(len(col_labels)), col_labels, rotation=45, ha="right")
    ax.set_yticks(np.arange(len(row_labels)), row_labels)
    ax.grid(False)
    for (i, j), v in np.ndenumerate(matrix):
        if np.isfinite(v):
            ax.text(j, i, fmt.format(v), ha="center", va="center", fontsize=7)
    fig.colorbar(im, ax=ax, label=cbar_label)
    if title:
        ax.set_title(title)
    return fig


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
) -> Figure:
    """Point estimates with intervals, one row each (BT ratings, coefficients); ``marks`` adds paper values."""
    estimate, lower, upper = (np.asarray(a, dtype=float) for a in (estimate, lower, upper))
    fig, ax = plt.subplots(figsize=(7.0, max(2.5, 0.35 * len(labels) + 1.0)))
    y = np.arange(len(labels))[::-1]
    ax.errorbar(
        estimate, y, xerr=[estimate - lower, upper - estimate], fmt="o", color=ACCENT, capsize=3, label="this build"
    )
    if marks:
        pos = {lab: yi for lab, yi in zip(labels, y, strict=True)}
        xs = [v for k, v in marks.items() if k in pos]
        ys = [pos[k] for k in marks if k in pos]
        ax.scatter(xs, ys, marker="x", color="black", zorder=3, label="paper")
        ax.legend(loc="best")
    if reference is not None:
        ax.axvline(reference, color="grey", lw=0.8, ls="--")
    ax.set_yticks(y, labels)
    ax.set_xlabel(xlabel)
    ax.grid(axis="y", visible=False)
    if title:
        ax.set_title(title)
    return fig


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
    from scipy.stats import gaussian_kde

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
) -> Figure:
    """Points (optionally labelled) with a fitted line and band ``(grid, fit, lower, upper)``."""
    fig, ax = plt.subplots()
    ax.scatter(x, y, c=colors if colors is not None else ACCENT, zorder=3)
    if labels is not None:
        for xi, yi, lab in zip(x, y, labels, strict=True):
            ax.annotate(lab, (xi, yi), fontsize=7, xytext=(3, 3), textcoords="offset points")
    if band is not None:
        grid, fit, lo, hi = band
        ax.plot(grid, fit, color="grey")
        ax.fill_between(grid, lo, hi, color="grey", alpha=0.2, label="95% confidence band")
        ax.legend(loc="best")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    return fig


def stacked_shares(
    frame: pl.DataFrame,
    category: str,
    part: str,
    share: str,
    *,
    xlabel: str = "% of votes",
    title: str = "",
    colors: dict[str, str] | None = None,
) -> Figure:
    """Horizontal 100% stacked bars: one bar per ``category``, segments per ``part`` with ``share`` in %."""
    cats = frame[category].unique(maintain_order=True).to_list()
    parts = frame[part].unique(maintain_order=True).to_list()
    wide = {p: [0.0] * len(cats) for p in parts}
    for row in frame.iter_rows(named=True):
        wide[row[part]][cats.index(row[category])] = float(row[share])
    fig, ax = plt.subplots(figsize=(7.0, max(2.5, 0.4 * len(cats) + 1.2)))
    left = np.zeros(len(cats))
    y = np.arange(len(cats))[::-1]
    for p in parts:
        vals = np.asarray(wide[p])
        ax.barh(y, vals, left=left, label=str(p), color=(colors or OUTCOME_COLORS).get(str(p)))
        left += vals
    ax.set_yticks(y, cats)
    ax.set_xlabel(xlabel)
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(axis="y", visible=False)
    if title:
        ax.set_title(title)
    return fig
