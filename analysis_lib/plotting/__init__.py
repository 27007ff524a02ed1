"""The compendium's figures: one style and the figure kinds the paper packages share.

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

Each paper package keeps its own figures in its ``plots`` module on this style. The public names of
the figure kinds are available here (``plotting.apply_style()``, ``plotting.barh(...)``), the rest from their module.
"""

from analysis_lib.plotting import display, distributions, figures, labels, style, text
from analysis_lib.plotting.display import Reference, mark_simulated, show
from analysis_lib.plotting.distributions import count_histograms, kde
from analysis_lib.plotting.figures import barh, error_scatter, forest, heatmap, radar, scatter_fit, slope_chart
from analysis_lib.plotting.style import apply_style

#: The figure kinds, the style and the one way to show a figure; colours, label placement and the display's
#: internals are the submodules' (``plotting.style.PROVIDER_COLORS``, ``plotting.display.prepare``).
__all__ = [
    "Reference", "apply_style", "barh", "count_histograms", "display", "distributions", "error_scatter", "figures",
    "forest", "heatmap", "kde", "labels", "mark_simulated", "radar", "scatter_fit", "show", "slope_chart", "style",
    "text",
]
