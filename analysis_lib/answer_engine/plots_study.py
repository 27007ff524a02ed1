"""Figures of the usability study (§3): the distributions implied by Table 3 (Fig 6) and the findings of Table 1,
on the legibility rules of :mod:`.plots` (at most the text column's width, no text under 10 pt)."""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np
import polars as pl
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from analysis_lib.plotting.style import ACCENT

from .findings import COMPONENTS
from .implied import ALL_ENGINES, F6_GROUPS, GOOGLE, Mixture, binned_density, group_label
from .plots import FONT, PAPER_STYLE, _width
from .usability import MEASURES

GROUP_COLORS = {ALL_ENGINES: "#6a51a3", GOOGLE: "#4d4d4d"}
COMPONENT_COLORS = dict(zip(COMPONENTS, ("#4393c3", "#d6604d", "#5aae61", "#9970ab"), strict=True))
MEASURE_LABELS = {"hovered": "citations hovered per participant", "clicked": "citations clicked per participant"}


def implied_violins(dists: Mapping[tuple[str, str], object], table: pl.DataFrame, *, family: str = "gamma",
                    coverage: float = 0.995, title: str = "") -> Figure:
    """Fig 6 as implied by Table 3: per measure (one panel each) a violin per group (:data:`.implied.F6_GROUPS`)
    drawn from the implied distribution (``dists``: :func:`.implied.implied_distributions`) up to its
    ``coverage`` quantile, with the implied median (white bar) and Table 3's median, min and max ("paper":
    diamond and grey range) from ``table`` (:func:`.implied.implied_table`). Violins are never observations,
    and the axis label says so."""
    fig, axes = plt.subplots(len(MEASURES), 1, figsize=(_width(1, 0.0, 6.0), 8.2))
    pub = {(r["group"], r["measure"]): r for r in table.iter_rows(named=True)}
    for ax, measure in zip(axes, MEASURES):
        for k, group in enumerate(F6_GROUPS):
            d = dists[(group, measure)]
            upper = float(d.ppf(coverage))  # type: ignore[attr-defined]
            y, dens = binned_density(d, upper)  # type: ignore[arg-type]
            half = 0.42 * dens / dens.max()
            color = GROUP_COLORS.get(group, ACCENT)
            ax.fill_betweenx(y, k - half, k + half, color=color, alpha=0.45, lw=0)
            med = pub[(group, measure)]["implied_median"]
            ax.plot([k - 0.25, k + 0.25], [med, med], color="white", lw=2.5, solid_capstyle="butt")
            ax.plot([k - 0.25, k + 0.25], [med, med], color=color, lw=0.8)
            row = pub[(group, measure)]
            if row["median"] is not None:
                ax.scatter([k + 0.3], [row["median"]], **PAPER_STYLE)
                ax.plot([k + 0.3, k + 0.3], [row["min"], row["max"]], color="#888888", lw=1.2, zorder=2)
        ax.set_xticks(range(len(F6_GROUPS)), [group_label(g).replace(" engines", "\nengines") for g in F6_GROUPS],
                      fontsize=FONT)
        ax.tick_params(axis="y", labelsize=FONT)
        ax.set_ylabel(MEASURE_LABELS[measure].replace(" per ", "\nper "), fontsize=FONT)
        ax.set_ylim(bottom=0)
        ax.grid(axis="x", visible=False)
    is_mixture = any(isinstance(d, Mixture) for d in dists.values())
    handles = [Patch(facecolor=ACCENT, alpha=0.45, label=f"implied {family} (not observed)"),
               Line2D([], [], color="#555555", lw=2.5, label="implied median"),
               Line2D([], [], marker="D", markerfacecolor="none", markeredgecolor="black", linestyle="",
                      label="paper (Table 3 median)"),
               Line2D([], [], color="#888888", lw=1.2, label="paper (Table 3 min to max)")]
    if is_mixture:
        handles.append(Patch(facecolor=GROUP_COLORS[ALL_ENGINES], alpha=0.45,
                             label="All three: equal mixture of the engines"))
    # one column: two columns of these labels are wider than the text column
    fig.legend(handles=handles, loc="lower center", ncol=1, fontsize=FONT, bbox_to_anchor=(0.5, 0.0))
    if title:
        fig.suptitle(title, fontsize=11)
    fig.tight_layout(rect=(0, 0.16, 1, 0.98))
    return fig


def findings_bars(shares: pl.DataFrame, *, title: str = "") -> Figure:
    """Table 1: per finding the share of participants who raised it (bars coloured by component), each labelled
    with its count and denominator as the paper prints them ("12/20"). ``shares`` is
    :func:`.findings.findings_shares` output."""
    rows = shares.rows(named=True)
    fig, ax = plt.subplots(figsize=(_width(1, 0.0, 6.0), 0.32 * len(rows) + 1.6))
    y = np.arange(len(rows))
    ax.barh(y, [r["share"] for r in rows], color=[COMPONENT_COLORS[r["component"]] for r in rows])
    for k, r in enumerate(rows):
        ax.text(r["share"] + 1, k, f"{r['participants']}/{r['out_of']}", va="center", fontsize=FONT)
    ax.set_yticks(y, [r["finding_id"] for r in rows], fontsize=FONT)
    ax.invert_yaxis()
    ax.set_xlim(0, 112)
    ax.set_xticks([0, 25, 50, 75, 100], ["0", "25", "50", "75", "100"], fontsize=FONT)
    ax.set_xlabel("participants who raised the finding (% of its denominator)", fontsize=FONT)
    ax.grid(axis="y", visible=False)
    handles = [Patch(facecolor=c, label=k) for k, c in COMPONENT_COLORS.items()]
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=4, fontsize=FONT)
    if title:
        ax.set_title(title, fontsize=11)
    fig.tight_layout()
    return fig
