"""The one plotting style of the compendium: rcParams, the fixed colours and the legend of colour patches.

Colours are fixed per provider and per vote outcome so the same thing looks the same on every page. Text sizes
are at least :data:`analysis_lib.plotting.display.MIN_FONT_PT` (10 pt): figures are shown at their natural size
(:mod:`analysis_lib.plotting.display`), so a figure's points are the page's.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Patch

from analysis_lib.plotting import display
from analysis_lib.plotting.display import MIN_FONT_PT

PROVIDER_COLORS = {"Perplexity": "#1f77b4", "Google": "#2ca02c", "OpenAI": "#d62728", "other": "#7f7f7f"}
OUTCOME_COLORS = {
    "model_a": "#4c72b0",
    "model_b": "#dd8452",
    "tie": "#8c8c8c",
    "tie (bothbad)": "#c44e52",
    "search": "#4c72b0",
    "non-search": "#dd8452",
}
#: Vote colours of the cross-arena figures (Search Arena Figure 8).
VOTE_COLORS = {"search": "#1f77b4", "non-search": "#d62728", "tie": "#8c8c8c"}
ACCENT = "#1f77b4"
#: Size of the smallest texts the figure kinds draw (value labels, legends): the book's minimum at display size.
SMALL_PT = MIN_FONT_PT


def contrast_text_color(rgba: Sequence[float] | np.ndarray) -> str:
    """Black or white, whichever reads better on a cell of colour ``rgba``: white when the colour's relative
    luminance (WCAG 2: 0.2126 R + 0.7152 G + 0.0722 B on linearised sRGB) is below 0.179, where the contrast
    ratios with black and with white are equal."""
    rgb = np.asarray(rgba[:3], dtype=float)
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    luminance = float(linear @ np.array([0.2126, 0.7152, 0.0722]))
    return "white" if luminance < 0.179 else "black"


def add_legend(ax, colors: dict[str, str], *, title: str = "", loc: str = "best", **kwargs) -> None:
    """A legend of coloured patches, one per ``label -> colour`` (e.g. providers, categories)."""
    handles = [Patch(facecolor=c, edgecolor="none", label=lab) for lab, c in colors.items()]
    ax.legend(handles=handles, title=title or None, loc=loc, fontsize=SMALL_PT, title_fontsize=SMALL_PT, **kwargs)


def apply_style() -> None:
    """Set the shared rcParams and, in a notebook, render every figure through the book's one display path
    (:func:`analysis_lib.plotting.display.install`). Call once per notebook."""
    plt.rcParams.update(
        {
            "figure.figsize": (7.0, 4.2),  # 672 CSS px at natural size: inside the content column
            "figure.dpi": 110,
            "savefig.dpi": display.DPI,
            "savefig.bbox": "tight",
            "axes.spines.top": False,
            "axes.spines.right": False,
            "axes.grid": True,
            "grid.alpha": 0.3,
            "font.size": MIN_FONT_PT,
            "axes.titlesize": 12,
            "figure.titlesize": 12,
            "axes.labelsize": 11,
            "xtick.labelsize": MIN_FONT_PT,
            "ytick.labelsize": MIN_FONT_PT,
            "legend.fontsize": MIN_FONT_PT,
            "legend.title_fontsize": MIN_FONT_PT,
            "legend.frameon": False,
            "font.family": "DejaVu Sans",
            # every text plain: names from data may hold "$" (no figure of the compendium draws mathematics)
            "text.parse_math": False,
        }
    )
    display.install()
