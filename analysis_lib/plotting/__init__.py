"""The compendium's figures: one style and the figure kinds the chapters share.

- :mod:`~analysis_lib.plotting.style`          rcParams (:func:`apply_style`), the fixed colours, legends of colour
  patches
- :mod:`~analysis_lib.plotting.display`        how a figure reaches the page (:func:`show`): legible at display size,
  the stamp on figures drawn from simulated data, alt text, the paper's values (:class:`Reference`); the
  measure of its smallest text at display size (:func:`smallest_font_pt`)
- :mod:`~analysis_lib.plotting.figures`        estimates and comparisons: bars, matrices, forest, scatter with a fit
  or error bars, radar, slope charts
- :mod:`~analysis_lib.plotting.distributions`  kernel densities and integer histograms, drawn by seaborn
- :mod:`~analysis_lib.plotting.labels`         label placement clear of points, labels and error bars
- :mod:`~analysis_lib.plotting.text`           user text drawn plain and bounded (:func:`plain`, and every figure
  through :func:`~analysis_lib.plotting.text.bound_figure_texts` when it is prepared)

Each paper package keeps its own chapter figures in its ``plots`` module on this style. The public names of
these modules are available here (``plotting.apply_style()``, ``plotting.barh(...)``).
"""

from analysis_lib.plotting.display import (
    SIMULATED_MARK,
    Reference,
    default_alt,
    draw_reference,
    figure_html,
    mark_simulated,
    prepare,
    show,
    smallest_font_pt,
    stamp,
)
from analysis_lib.plotting.distributions import LOG_COUNT_RATIO, count_histograms, kde
from analysis_lib.plotting.figures import barh, error_scatter, forest, heatmap, radar, scatter_fit, slope_chart
from analysis_lib.plotting.labels import labels_overlap, place_labels, spread_1d
from analysis_lib.plotting.style import (
    ACCENT,
    OUTCOME_COLORS,
    PROVIDER_COLORS,
    VOTE_COLORS,
    add_legend,
    apply_style,
    contrast_text_color,
)
from analysis_lib.plotting.text import plain

__all__ = [
    "ACCENT", "LOG_COUNT_RATIO", "OUTCOME_COLORS", "PROVIDER_COLORS", "SIMULATED_MARK", "VOTE_COLORS", "Reference",
    "add_legend", "apply_style", "barh", "contrast_text_color", "count_histograms", "default_alt", "draw_reference",
    "error_scatter", "figure_html", "forest", "heatmap", "kde", "labels_overlap", "mark_simulated", "place_labels",
    "plain", "prepare", "radar", "scatter_fit", "show", "slope_chart", "smallest_font_pt", "spread_1d", "stamp",
]
