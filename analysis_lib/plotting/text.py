"""User text on a figure is drawn as plain text, and never longer than a bound.

Model, engine, intent and file names come from the user's data; matplotlib reads a text with a pair of ``$`` as
mathematics (mathtext), so a model named ``x$\\undefinedcommand$y`` stopped the drawing (``ParseFatalException``), and a
10,000-character name made a figure too large to save (``DecompressionBombError``). Two guards:

- :func:`~analysis_lib.plotting.style.apply_style` turns mathtext off for every text (``text.parse_math``: no
  figure of the compendium uses mathematics), and the figure kinds pass labels from data through :func:`plain`;
- :func:`bound_figure_texts`, run by :func:`~analysis_lib.plotting.display.prepare` on every figure before it is
  drawn for the page, cuts every text to its bound with an ellipsis: category (tick) labels and legend entries to
  :data:`MAX_LABEL_CHARS`, any other text (titles, axis labels, annotations) to :data:`MAX_TEXT_CHARS`; and a text
  that mathtext would read and cannot parse is drawn plain.
"""

from __future__ import annotations

import matplotlib as mpl
from matplotlib.figure import Figure
from matplotlib.legend import Legend
from matplotlib.mathtext import MathTextParser
from matplotlib.text import Text
from matplotlib.ticker import FixedLocator

#: Longest category label or legend entry drawn, in characters (model names in the releases are under 40).
MAX_LABEL_CHARS = 80
#: Longest other text drawn (a title, an axis label, an annotation), in characters.
MAX_TEXT_CHARS = 300
ELLIPSIS = "…"

_PARSER = MathTextParser("path")


def shorten(text: object, limit: int = MAX_LABEL_CHARS) -> str:
    """``str(text)`` cut to ``limit`` characters, the last one an ellipsis when cut."""
    s = str(text)
    return s if len(s) <= limit else s[: max(limit - 1, 0)] + ELLIPSIS


def plain(text: object, limit: int = MAX_LABEL_CHARS) -> str:
    """A label from data as plain text: cut to ``limit`` (:func:`shorten`) and, while mathtext is on
    (``rcParams["text.parse_math"]``), each ``$`` escaped so that it is drawn as a dollar sign."""
    s = shorten(text, limit)
    return s.replace("$", r"\$") if mpl.rcParams["text.parse_math"] else s


def unparsable(s: str, parse_math: bool = True) -> bool:
    """Whether mathtext would read ``s`` (``parse_math`` on and a pair of unescaped ``$``) and fail to parse it."""
    if not parse_math or s.count("$") - 2 * s.count(r"\$") < 2:
        return False
    try:
        _PARSER.parse(s)
    except ValueError:
        return True
    return False


def bound_figure_texts(fig: Figure) -> int:
    """Cut every text of ``fig`` to its bound (see the module docstring) and draw plain any text mathtext cannot
    parse; returns how many texts changed. Fixed category labels are set again, cut, so a later draw keeps
    them cut."""
    changed = 0
    math = bool(mpl.rcParams["text.parse_math"])
    for ax in fig.axes:
        for axis, set_ticks in ((ax.xaxis, ax.set_xticks), (ax.yaxis, ax.set_yticks)):
            if not isinstance(axis.get_major_locator(), FixedLocator):
                continue
            labels = [t.get_text() for t in axis.get_ticklabels()]
            cut = [plain(s) if unparsable(s, math) else shorten(s, MAX_LABEL_CHARS) for s in labels]
            if cut != labels:
                set_ticks(axis.get_ticklocs(), cut)
                changed += 1
    legend_texts = {id(t) for leg in fig.findobj(Legend) for t in leg.get_texts()}  # type: ignore[attr-defined]
    for text in fig.findobj(Text):
        if not isinstance(text, Text):
            continue
        s = text.get_text()
        limit = MAX_LABEL_CHARS if id(text) in legend_texts else MAX_TEXT_CHARS
        new = shorten(s, limit)
        if unparsable(new, text.get_parse_math()):
            text.set_parse_math(False)
            changed += 1
        if new != s:
            text.set_text(new)
            changed += 1
    return changed
