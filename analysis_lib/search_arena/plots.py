"""Figures of the preference analyses that need more than the shared kinds of :mod:`analysis_lib.plotting`.

:func:`distribution_by_group` draws Search Arena Figure 5 as the paper does, a *distribution* per intent
(not only its mean): one horizontal box per group (box = quartiles, line = median, whiskers = 5th and 95th
percentiles, outliers not drawn) with the mean and its 95% t-interval overlaid and the mean written right of
the whisker. :func:`provider_colors` colours models by provider and returns the legend. Fitted results:
:func:`coefficient_forest` (coefficients per subset or feature), :func:`score_against_feature` (Fig 4),
:func:`per_model_means` (Fig D.6), :func:`rating_slopes` (Fig E.4).

The methods-validation figures, in text of at least 11 pt in a figure at most 7 in wide (:data:`READABLE`,
:func:`readable_text` for the shared kinds): :func:`rating_errors` (each model's rating error against its target,
the anchor-free error and the shared offset of one fit), :func:`offset_by_seed` (the shared offset of every
simulated release), :func:`coverage_bars` (interval coverage per family) and :func:`tie_effect` (fitted against
planted coefficients under each tie model).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import polars as pl
import seaborn as sns
from matplotlib.container import BarContainer
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from analysis_lib import plotting
from analysis_lib.plotting import Reference
from analysis_lib.plotting.display import draw_reference
from analysis_lib.plotting.style import ACCENT, PROVIDER_COLORS, VOTE_COLORS, contrast_text_color
from analysis_lib.search_arena.models import provider_of


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
    reference: Reference | None = None,
) -> Figure:
    """Box per value of ``by`` over the per-response ``column`` of ``values``, in the order of ``summary``
    (a :func:`analysis_lib.search_arena.preference.mean_ci` frame with ``by, mean, ci``), first row on top; the mean ±
    its 95% t-interval is a black diamond with a bar, labelled "mean <value>" right of the 95th percentile;
    ``reference`` (the paper's values) is drawn with its entry in the legend under the axes."""
    groups = summary[by].to_list()
    data = [values.filter(pl.col(by) == g)[column].drop_nulls().to_numpy().astype(float) for g in groups]
    fig, ax = plt.subplots(figsize=(7.0, max(2.8, 0.42 * len(groups) + 1.2)))
    y = np.arange(len(groups))[::-1]
    ax.boxplot(data, positions=y, orientation="horizontal", whis=(5, 95), showfliers=False, widths=0.55,
               patch_artist=True,
               boxprops={"facecolor": ACCENT, "alpha": 0.35, "edgecolor": ACCENT},
               medianprops={"color": ACCENT, "linewidth": 1.5}, whiskerprops={"color": "#555555"},
               capprops={"color": "#555555"})
    mean, half = summary["mean"].to_numpy(), summary["ci"].to_numpy()
    ax.errorbar(mean, y, xerr=half, fmt="D", color="black", ms=4, capsize=2, zorder=4)
    p95 = np.array([np.percentile(d, 95) if d.size else np.nan for d in data])
    for yi, m, right in zip(y, mean, p95, strict=True):
        ax.annotate("mean " + fmt.format(m), (right, yi), xytext=(4, 0), textcoords="offset points",
                    va="center", fontsize=10)
    if log_x:
        ax.set_xscale("log")
    ax.set_xlim(right=ax.get_xlim()[1] * (1.5 if log_x else 1.3))
    ax.set_yticks(y, groups)
    ax.set_xlabel(xlabel)
    ax.grid(axis="y", visible=False)
    handles: list[Any] = [Patch(facecolor=ACCENT, alpha=0.35, label="quartiles (line: median)"),
                          Line2D([], [], color="#555555", label="5th–95th percentile"),
                          Line2D([], [], marker="D", color="black", ms=4, label="mean ± 95% CI (its value at right)")]
    if reference is not None:  # drawn here, so that its entry joins this legend below the axes
        draw_reference(fig, reference)
        drawn = ax.get_legend()
        if drawn is not None:
            handles.append(drawn.legend_handles[-1])
            drawn.remove()
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2, fontsize=10,
              frameon=False)
    if title:
        ax.set_title(title)
    return fig


def matrix_heatmap(matrix: np.ndarray, row_labels: Sequence[str], col_labels: Sequence[str], *, cbar_label: str,
                   fmt: str = "{:.0f}", cmap: str = "Blues", center: float | None = None, title: str = "") -> Figure:
    """An annotated model-by-model matrix (Fig D.2, D.4, E.2, E.3) sized for the page: 7 in wide (the column, so it
    is shown unshrunk), every text 10 pt, cells at least about 0.3 in so a three-digit value fits in its cell;
    NaN cells blank; ``center`` makes a diverging scale symmetric about it."""
    matrix = np.asarray(matrix, dtype=float)
    n_rows, n_cols = matrix.shape
    fig, ax = plt.subplots(figsize=(WIDTH, max(2.4, 0.34 * n_rows + 2.6)), layout="constrained")
    finite = matrix[np.isfinite(matrix)]
    vmin, vmax = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    if center is not None:
        half = max(abs(vmax - center), abs(center - vmin)) or 1.0
        vmin, vmax = center - half, center + half
    im = ax.imshow(np.ma.masked_invalid(matrix), cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
    ax.set_xticks(np.arange(n_cols), col_labels, rotation=45, ha="right", rotation_mode="anchor", fontsize=10)
    ax.set_yticks(np.arange(n_rows), row_labels, fontsize=10)
    ax.grid(False)
    for (i, j), v in np.ndenumerate(matrix):
        if np.isfinite(v):
            ax.text(j, i, fmt.format(v), ha="center", va="center", fontsize=10,
                    color=contrast_text_color(im.cmap(im.norm(v))))
    bar = fig.colorbar(im, ax=ax, fraction=0.04, pad=0.02)
    bar.set_label(cbar_label, fontsize=10)
    bar.ax.tick_params(labelsize=10)
    if title:
        ax.set_title(title, fontsize=11)
    return fig


def vote_bars(long: pl.DataFrame, order: Sequence[str], *, title: str = "", by: str = "intent") -> Figure:
    """Figure 8 sized for the page: per category (``order``, first on top) one horizontal bar per vote (search,
    non-search, tie) with its count (``seaborn.barplot``, dodged by vote), labelled with its share of the
    category's battles right of the bar; every text 10 pt in a 7 in figure (vertical bars three to a category
    left their 10 pt labels overlapping). ``long`` has columns ``by``, ``vote``, ``count``, ``share``
    (:func:`~analysis_lib.search_arena.cross_arena.vote_shares_long`)."""
    present = set(long[by].to_list())
    cats = [c for c in order if c in present]
    votes = [v for v in VOTE_COLORS if v in set(long["vote"].to_list())]
    shown = long.filter(pl.col(by).is_in(cats) & pl.col("vote").is_in(votes))
    fig, ax = plt.subplots(figsize=(WIDTH, 0.62 * len(cats) + 1.6))
    sns.barplot(x=shown["count"].to_numpy(), y=shown[by].to_list(), hue=shown["vote"].to_list(), order=cats,
                hue_order=votes, palette=VOTE_COLORS, saturation=1, orient="h", errorbar=None, width=0.8, gap=0.08,
                edgecolor="black", linewidth=0.4, ax=ax)
    groups = [c for c in ax.containers if isinstance(c, BarContainer)]  # one per vote, its bars in ``cats`` order
    for vote, bars in zip(votes, groups, strict=True):
        share = {r[by]: r["share"] for r in shown.filter(pl.col("vote") == vote).iter_rows(named=True)}
        ax.bar_label(bars, labels=[f"{share[c]:.0%}" if c in share else "" for c in cats], padding=3, fontsize=10)
    ax.tick_params(axis="y", labelsize=10)
    ax.set_ylabel("")
    ax.set_xlim(0, max(1.0, float(long["count"].max() or 0)) * 1.15)  # type: ignore[arg-type]
    ax.set_xlabel("battles (label: share of the intent's battles)", fontsize=10)
    ax.tick_params(axis="x", labelsize=10)
    ax.grid(axis="y", visible=False)
    sns.move_legend(ax, "upper center", bbox_to_anchor=(0.5, -0.1), ncol=len(votes), fontsize=10, frameon=False,
                    title=None)
    if title:
        ax.set_title(title, fontsize=11)
    return fig


def provider_colors(models: Sequence[str], providers: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    """Colour per model from its provider (:data:`analysis_lib.plotting.style.PROVIDER_COLORS`) and the legend
    (provider -> colour) of the providers present."""
    colors = [PROVIDER_COLORS.get(p, PROVIDER_COLORS["other"]) for p in providers]
    present = dict.fromkeys(providers)
    return colors, {p: PROVIDER_COLORS.get(p, PROVIDER_COLORS["other"]) for p in present}


FIT_COLORS = {"plain": "#1f77b4", "controlled": "#d62728", "plain, expected votes": "#7f7f7f"}
#: The methods-validation figures' text sizes: at least 11 pt, in figures whose labels and legends fit inside their
#: 7 in width (:func:`fit_to_width`), so that every text stays at 10 pt or more when the page shows a figure at its
#: column width (a legend or long tick labels outside the axes widen the saved figure, which the page then
#: shrinks, text and all: 688 px for a 783 px figure in a 1280 px window).
READABLE: dict[str, Any] = {"font.size": 11, "axes.titlesize": 12, "axes.labelsize": 11, "xtick.labelsize": 11,
                            "ytick.labelsize": 11, "legend.fontsize": 11, "legend.title_fontsize": 11}
WIDTH = 7.0
#: Height (in) kept free above the axes for the simulated-data stamp.
STAMP_ROOM = 0.3


def readable_text() -> None:
    """Set :data:`READABLE` for the figures that follow (call after ``plotting.apply_style()``)."""
    plt.rcParams.update(READABLE)  # type: ignore[arg-type]


def fit_to_width(fig: Figure) -> Figure:
    """Lay ``fig`` out within its own width and height (constrained layout: tick labels, titles and legends inside
    the figure), with :data:`STAMP_ROOM` free at the top for the simulated-data stamp."""
    top = 1.0 - STAMP_ROOM / fig.get_figheight()
    fig.set_layout_engine("constrained", rect=(0.0, 0.0, 1.0, top))
    return fig


def _legend_below(ax, ncol: int = 2) -> None:
    """The legend under the axes, inside the figure (:func:`fit_to_width` makes room for it)."""
    handles, labels = ax.get_legend_handles_labels()
    ax.figure.legend(handles, labels, loc="outside lower center", ncol=ncol, fontsize=READABLE["legend.fontsize"],
                     frameon=False)


def rating_errors(decomposition: pl.DataFrame, *, title: str = "", xlabel: str = "error (Elo)") -> Figure:
    """Errors of estimated ratings per model (rows of
    :func:`analysis_lib.search_arena.methods_validation.error_decomposition` with a ``fit`` column): a filled dot for
    the error against the target, an open circle for the anchor-free error (the error minus the fit's shared offset) and
    a dashed line at each fit's shared offset. Legend under the axes, text of :data:`READABLE` size."""
    fits = decomposition["fit"].unique(maintain_order=True).to_list()
    models = decomposition.filter(pl.col("fit") == fits[0]).sort("truth")["model"].to_list()
    fig, ax = plt.subplots(figsize=(WIDTH, max(3.0, 0.36 * len(models) + 1.4) + 1.2))
    y = {m: i for i, m in enumerate(models)}
    for k, fit in enumerate(fits):
        sub = decomposition.filter(pl.col("fit") == fit)
        ys = np.array([y[m] for m in sub["model"]]) + (k - (len(fits) - 1) / 2) * 0.22
        color = FIT_COLORS.get(fit, ACCENT)
        ax.scatter(sub["error"], ys, color=color, zorder=3, label=f"{fit}: error")
        ax.scatter(sub["anchor_free_error"], ys, facecolors="none", edgecolors=color, zorder=3,
                   label=f"{fit}: anchor-free error")
        ax.axvline(sub["shared_offset"][0], color=color, ls="--", lw=1,
                   label=f"{fit}: shared offset {sub['shared_offset'][0]:+.1f}")
    ax.axvline(0, color="grey", lw=0.8)
    ax.set_yticks(range(len(models)), models, fontsize=READABLE["ytick.labelsize"])
    ax.tick_params(axis="x", labelsize=READABLE["xtick.labelsize"])
    ax.set_xlabel(xlabel, fontsize=READABLE["axes.labelsize"])
    ax.grid(axis="y", visible=False)
    fit_to_width(fig)
    _legend_below(ax, ncol=len(fits))
    if title:
        ax.set_title(title, fontsize=READABLE["axes.titlesize"])
    return fig


def offset_by_seed(study: pl.DataFrame, *, highlight: int | None = None, title: str = "") -> Figure:
    """Shared offset of every simulated release of :func:`analysis_lib.search_arena.methods_validation.offset_study`,
    one marker per fit, with the mean over releases as a line; ``highlight`` rings the release (seed) the caller's
    main fit used. Legend under the axes, text of :data:`READABLE` size."""
    per_seed = study.group_by("fit", "seed", maintain_order=True).agg(pl.col("shared_offset").first())
    seeds = sorted(per_seed["seed"].unique().to_list())
    pos = {s: i + 1 for i, s in enumerate(seeds)}
    fig, ax = plt.subplots(figsize=(WIDTH, 4.8))
    for k, fit in enumerate(per_seed["fit"].unique(maintain_order=True)):
        sub = per_seed.filter(pl.col("fit") == fit).sort("seed")
        color = FIT_COLORS.get(fit, ACCENT)
        xs = np.array([pos[s] for s in sub["seed"]]) + (k - 1) * 0.2
        ax.scatter(xs, sub["shared_offset"], color=color, zorder=3, label=fit)
        mean = float(np.mean(sub["shared_offset"].to_numpy()))
        ax.axhline(mean, color=color, ls="--", lw=1, label=f"{fit}: mean {mean:+.1f} Elo")
        if highlight is not None and highlight in pos:
            v = float(sub.filter(pl.col("seed") == highlight)["shared_offset"][0])
            ax.scatter([pos[highlight] + (k - 1) * 0.2], [v], s=140, facecolors="none", edgecolors="black", zorder=4)
    ax.axhline(0, color="grey", lw=0.8)
    ax.set_xticks(range(1, len(seeds) + 1))
    ax.tick_params(labelsize=READABLE["xtick.labelsize"])
    ax.set_xlabel("simulated release" + (" (ringed: this build's)" if highlight is not None else ""),
                  fontsize=READABLE["axes.labelsize"])
    ax.set_ylabel("shared offset (Elo)", fontsize=READABLE["axes.labelsize"])
    fit_to_width(fig)
    _legend_below(ax, ncol=2)
    if title:
        ax.set_title(title, fontsize=READABLE["axes.titlesize"])
    return fig


METHOD_COLORS = {"bootstrap": "#1f77b4", "sandwich": "#ff7f0e"}


def coverage_bars(summary: pl.DataFrame, *, nominal: float = 0.95, title: str = "") -> Figure:
    """Coverage of each interval family (rows of :func:`analysis_lib.ranking.coverage_summary` with ``fit,
    method, kind``): one bar per (fit, kind) and method with its Wilson interval, and the nominal level as a line."""
    groups = summary.select("fit", "kind").unique(maintain_order=True).rows()
    methods = summary["method"].unique(maintain_order=True).to_list()
    fig, ax = plt.subplots(figsize=(WIDTH, 0.8 * len(groups) * len(methods) / 2 + 2.4))
    height = 0.8 / len(methods)
    for j, method in enumerate(methods):
        sub = {(r["fit"], r["kind"]): r for r in summary.filter(pl.col("method") == method).iter_rows(named=True)}
        ys: list[float] = []
        cov: list[float] = []
        err: list[list[float]] = [[], []]
        for i, g in enumerate(groups):
            if g in sub:
                r = sub[g]
                ys.append(i + (j - (len(methods) - 1) / 2) * height)
                cov.append(100 * r["coverage"])
                err[0].append(100 * (r["coverage"] - r["ci_lower"]))
                err[1].append(100 * (r["ci_upper"] - r["coverage"]))
        ax.barh(ys, cov, height=height * 0.9, xerr=err, color=METHOD_COLORS.get(method, ACCENT), label=method,
                error_kw={"lw": 1, "capsize": 2})
    ax.axvline(100 * nominal, color="black", ls="--", lw=1, label=f"nominal {nominal:.0%}")
    names = ["\n".join([*k.split(", ", 1), f"({f} BT)"]) for f, k in groups]
    ax.set_yticks(range(len(groups)), names, fontsize=READABLE["ytick.labelsize"])
    ax.invert_yaxis()
    lo = min(100 * float(summary["ci_lower"].min()), 100 * nominal) - 5  # type: ignore[arg-type]
    ax.set_xlim(max(0.0, lo), 100)
    ax.tick_params(axis="x", labelsize=READABLE["xtick.labelsize"])
    ax.set_xlabel("% of intervals covering the truth (Wilson 95% CI)", fontsize=READABLE["axes.labelsize"])
    ax.grid(axis="y", visible=False)
    fit_to_width(fig)
    _legend_below(ax, ncol=len(methods) + 1)
    if title:
        ax.set_title(title, fontsize=READABLE["axes.titlesize"])
    return fig


TIE_COLORS = {"closeness": "#1b7837", "independent": "#b35806"}


def tie_effect(ties: pl.DataFrame, *, labels: dict[str, str] | None = None, title: str = "") -> Figure:
    """Fitted against planted style coefficients under each tie model (rows ``tie_model, feature, estimate,
    planted`` of a seed study's ``ties``: the mean over releases per feature), with the identity line; ``labels``
    names the tie models in the legend."""
    mean = ties.group_by("tie_model", "feature", maintain_order=True).agg(pl.col("estimate").mean(),
                                                                          pl.col("planted").first())
    fig, ax = plt.subplots(figsize=(WIDTH * 0.75, WIDTH * 0.75 + 0.6))
    values = np.concatenate([mean["planted"].to_numpy(), mean["estimate"].to_numpy()])
    lim = (float(values.min()) - 0.03, float(values.max()) + 0.03)
    ax.plot(lim, lim, color="grey", lw=1, label="fitted = planted")
    for t in mean["tie_model"].unique(maintain_order=True):
        sub = mean.filter(pl.col("tie_model") == t)
        ax.scatter(sub["planted"], sub["estimate"], color=TIE_COLORS.get(t, ACCENT), zorder=3,
                   label=(labels or {}).get(t, t))
    ax.set_xlim(lim)
    ax.set_ylim(lim)
    ax.tick_params(labelsize=READABLE["xtick.labelsize"])
    ax.set_xlabel("planted coefficient", fontsize=READABLE["axes.labelsize"])
    ax.set_ylabel("fitted coefficient (mean over releases)", fontsize=READABLE["axes.labelsize"])
    fit_to_width(fig)
    _legend_below(ax, ncol=1)
    if title:
        ax.set_title(title, fontsize=READABLE["axes.titlesize"])
    return fig


# --------------------------------------------------------------------------------------------------------------
# figures of fitted results (coefficients per subset, score against a feature, ...)
# --------------------------------------------------------------------------------------------------------------


def coefficient_forest(coef: pl.DataFrame, label: str, *, xlabel: str, title: str = "") -> Figure:
    """A forest of style coefficients: one row per value of ``label`` (e.g. ``subset`` of
    :func:`analysis_lib.search_arena.bt.style_by_subset`, ``feature`` of ``Ranking.coefficients()``), the
    ``estimate`` with its ``ci_lower`` … ``ci_upper`` interval, in the frame's order."""
    return plotting.forest(coef[label].to_list(), *(coef[c].to_numpy() for c in ("estimate", "ci_lower", "ci_upper")),
                           xlabel=xlabel, title=title)


def _provider_colours(models: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    providers = pl.DataFrame({"model": list(models)}).select(provider_of(pl.col("model")))["model"].to_list()
    return provider_colors(list(models), providers)


def score_against_feature(merged: pl.DataFrame, line: Any, *, xlabel: str, title: str = "") -> Figure:
    """Search Arena Fig 4, one panel: each model's BT ``score`` against its ``mean`` of a feature, coloured by
    provider, with the OLS line and its band (``merged``, ``line``: one entry of
    :func:`analysis_lib.search_arena.preference.score_vs_features`)."""
    colors, legend = _provider_colours(merged["model"].to_list())
    return plotting.scatter_fit(merged["mean"].to_numpy(), merged["score"].to_numpy(), merged["model"].to_list(),
                                xlabel=xlabel, ylabel="BT score (Elo)", band=line.band, colors=colors, legend=legend,
                                title=title)


def per_model_means(per_model: pl.DataFrame, *, xlabel: str, title: str = "") -> Figure:
    """Search Arena Fig D.6, one panel: the ``mean`` ± ``ci`` (half-width) of a per-response feature per model
    (:func:`analysis_lib.search_arena.preference.mean_ci`), coloured by provider."""
    colors, legend = _provider_colours(per_model["model"].to_list())
    return plotting.barh(per_model["model"].to_list(), per_model["mean"].to_numpy(),
                         xerr=np.vstack([per_model["ci"].to_numpy()] * 2), xlabel=xlabel, color=colors, legend=legend,
                         title=title)


def rating_slopes(ratings: pl.DataFrame, *, ylabel: str, title: str = "") -> Figure:
    """Search Arena Fig E.4: each model's rating ``before`` and ``after`` control joined by a line, coloured by
    provider (``ratings``: :attr:`analysis_lib.search_arena.bt.ControlEffect.ratings`)."""
    colors, legend = _provider_colours(ratings["model"].to_list())
    return plotting.slope_chart(ratings["model"].to_list(), ratings["before"].to_numpy(), ratings["after"].to_numpy(),
                                colors=colors, legend=legend, ylabel=ylabel, names=("original", "controlled"),
                                title=title)
