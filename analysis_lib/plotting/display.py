"""How every figure reaches a notebook's page: legible at its display size, stamped when simulated, with alt
text, and with the paper's values drawn on it when asked.

One path for every figure: :func:`show` (what a notebook calls), ``plt.show()`` and ``display(fig)`` all render
through :func:`figure_html` once :func:`install` has run (``apply_style`` runs it in a notebook).

**Display size.** A figure is shown at its natural size, one figure inch to one CSS inch (96 CSS px), up to the
width of the page's content column (:data:`DISPLAY_WIDTH_PX` CSS px); the PNG is rendered at :data:`DPI` dots per
inch, so it stays sharp on high-density screens. A text of ``s`` points in a figure whose drawn width is ``w`` inches is
displayed at

    s × min(1, DISPLAY_WIDTH_PX / (96 w))  points,

so :func:`prepare` first narrows a figure that would be wider than the column, then raises every text below
:data:`MIN_FONT_PT` to it; :func:`smallest_font_pt` measures the result (every text the renderer draws, at
display size), for tests.

**The stamp** of a figure drawn from simulated data ("SIMULATED DATA") sits above everything the figure draws,
right-aligned, so it never covers a title or a label.

**Alt text**: by default ``Figure: <titles>. x axis: <label>; y axis: <label>.`` (and "Drawn from simulated data"
when stamped), read from the figure; ``alt=`` replaces it. Escaped in the HTML.

**The paper's values** (``reference=``): :class:`Reference` points, lines or marks drawn in black with a legend
entry "paper" beside the figure's own.
"""

from __future__ import annotations

import base64
import html
import io
import logging
import textwrap
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import matplotlib.pyplot as plt
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.text import Text
from matplotlib.ticker import FixedLocator
from matplotlib.transforms import IdentityTransform
from PIL import Image

from analysis_lib.extras import require
from analysis_lib.plotting.text import bound_figure_texts

log = logging.getLogger(__name__)

#: The width a figure is shown at, in CSS px, unless a call passes ``column_px``: a page's content column in a
#: 1280 px wide window (a JupyterLab notebook's, or the article of a Jupyter Book 1 page, 752 px less its padding).
DISPLAY_WIDTH_PX = 688
#: CSS px per inch: a figure inch is shown as one CSS inch.
CSS_PX_PER_INCH = 96
#: Dots per inch of the rendered PNG (150 or more: sharp on high-density screens).
DPI = 160
#: The smallest text on a figure at its display size, in points.
MIN_FONT_PT = 10.0
SIMULATED_MARK = "SIMULATED DATA"
#: Colour and style of the paper's values on a figure.
REFERENCE_COLOR = "black"

#: What :func:`show` / :func:`mark_simulated` said about a figure, until it is rendered.
_SETTINGS: weakref.WeakKeyDictionary[Figure, dict[str, Any]] = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class Reference:
    """The paper's values to draw on one axes of a figure (``ax``: its index in ``fig.axes``).

    - ``points``: markers at ``(x[i], y[i])`` (paper points on a scatter);
    - ``lines``: a horizontal line at each ``y`` (or a vertical one at each ``x``);
    - ``marks``: a short bar across the value axis at each category, ``values`` mapping a category's tick label to
      the paper's value, read along ``axis`` (``"x"`` for horizontal bars and forest plots, ``"y"`` for columns).

    Build one with :meth:`at_points`, :meth:`at_lines` or :meth:`at_marks`. ``label`` is the legend entry.
    """

    kind: Literal["points", "lines", "marks"]
    x: tuple[float, ...] = ()
    y: tuple[float, ...] = ()
    values: Mapping[str, float] = field(default_factory=dict)
    axis: Literal["x", "y"] = "x"
    ax: int = 0
    label: str = "paper"

    @classmethod
    def at_points(cls, x: Sequence[float], y: Sequence[float], *, ax: int = 0, label: str = "paper") -> Reference:
        if len(x) != len(y):
            raise ValueError(f"Reference.at_points: {len(x)} x values but {len(y)} y values")
        return cls("points", tuple(map(float, x)), tuple(map(float, y)), ax=ax, label=label)

    @classmethod
    def at_lines(cls, *, x: Sequence[float] = (), y: Sequence[float] = (), ax: int = 0,
                 label: str = "paper") -> Reference:
        if not x and not y:
            raise ValueError("Reference.at_lines: give x (vertical lines) or y (horizontal lines)")
        return cls("lines", tuple(map(float, x)), tuple(map(float, y)), ax=ax, label=label)

    @classmethod
    def at_marks(cls, values: Mapping[str, float], *, axis: Literal["x", "y"] = "x", ax: int = 0,
                 label: str = "paper") -> Reference:
        if axis not in ("x", "y"):
            raise ValueError(f"Reference.at_marks: axis must be 'x' or 'y', got {axis!r}")
        return cls("marks", values={str(k): float(v) for k, v in values.items()}, axis=axis, ax=ax, label=label)


def _axes(fig: Figure, index: int) -> Axes:
    try:
        return fig.axes[index]
    except IndexError:
        raise ValueError(f"Reference on axes {index}, but the figure has {len(fig.axes)} axes") from None


def _category_positions(ax: Axes, category_axis: str) -> dict[str, float]:
    """Tick label text -> tick position on the categorical axis of ``ax``."""
    axis = ax.yaxis if category_axis == "y" else ax.xaxis
    return {t.get_text(): float(pos) for t, pos in zip(axis.get_ticklabels(), axis.get_ticklocs()) if t.get_text()}


def draw_reference(fig: Figure, reference: Reference | Sequence[Reference]) -> Figure:
    """Draw the paper's values (:class:`Reference`) on ``fig`` and add them to the axes' legend (the existing
    entries kept). ``ValueError`` naming a category of ``marks`` that no tick of the axes shows."""
    refs = [reference] if isinstance(reference, Reference) else list(reference)
    for ref in refs:
        ax = _axes(fig, ref.ax)
        handle: Artist
        if ref.kind == "points":
            handle = ax.scatter(ref.x, ref.y, marker="D", s=46, facecolors="none", edgecolors=REFERENCE_COLOR,
                                linewidths=1.6, zorder=6, label=ref.label)
        elif ref.kind == "lines":
            for v in ref.y:
                ax.axhline(v, color=REFERENCE_COLOR, ls="--", lw=1.3, zorder=5)
            for v in ref.x:
                ax.axvline(v, color=REFERENCE_COLOR, ls="--", lw=1.3, zorder=5)
            handle = Line2D([], [], color=REFERENCE_COLOR, ls="--", lw=1.3, label=ref.label)
        else:
            positions = _category_positions(ax, "y" if ref.axis == "x" else "x")
            missing = sorted(set(ref.values) - set(positions))
            if missing:
                raise ValueError(f"Reference.at_marks: no tick labelled {missing} on axes {ref.ax} "
                                 f"(ticks: {sorted(positions)})")
            cats = [positions[k] for k in ref.values]
            vals = list(ref.values.values())
            xs, ys = (vals, cats) if ref.axis == "x" else (cats, vals)
            handle = ax.scatter(xs, ys, marker="|" if ref.axis == "x" else "_", s=260, linewidths=2.4,
                                color=REFERENCE_COLOR, zorder=6, label=ref.label)
        _add_to_legend(ax, handle, ref.label)
    return fig


def _add_to_legend(ax: Axes, handle: Any, label: str) -> None:
    """Rebuild ``ax``'s legend with ``handle`` appended (its entries, title and placement kept)."""
    old = ax.get_legend()
    if old is None:
        handles, labels = ax.get_legend_handles_labels()  # a labelled artist drawn on the axes is already here
        if handle not in handles:
            handles, labels = [*handles, handle], [*labels, label]
        ax.legend(handles, labels)
        return
    handles = [h for h in old.legend_handles if h is not None]
    labels = [t.get_text() for t in old.get_texts()]
    if label in labels:
        return
    title = old.get_title().get_text() or None
    loc: Any = getattr(old, "_loc", "best")  # the placement the caller chose (a code or a position)
    # the old anchor in display coordinates (a live TransformedBbox: it follows later resizes), so the new legend
    # must not transform it again (matplotlib applies bbox_transform, the axes' box by default, to any bbox)
    anchor = old.get_bbox_to_anchor() if getattr(old, "_bbox_to_anchor", None) is not None else None
    old.remove()
    ax.legend([*handles, handle], [*labels, label], title=title, loc=loc, bbox_to_anchor=anchor,
              bbox_transform=IdentityTransform() if anchor is not None else None)


def mark_simulated(fig: Figure, label: str = SIMULATED_MARK) -> Figure:
    """Say that ``fig`` is drawn from simulated data: it is stamped ``label`` when rendered (:func:`prepare`)."""
    _SETTINGS.setdefault(fig, {})["stamp"] = label
    return fig


def stamp(fig: Figure, kind: str) -> Figure:
    """:func:`mark_simulated` when ``kind`` (a data kind: ``"simulated"``, ``"real"``, ...) is simulated."""
    return mark_simulated(fig) if kind == "simulated" else fig


def _renderer(fig: Figure) -> RendererAgg:
    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    return canvas.get_renderer()


def drawn_width_in(fig: Figure) -> float:
    """Width in inches of everything the figure draws (its tight bounding box, as the PNG is cropped to it)."""
    fig.draw_without_rendering()
    return float(fig.get_tightbbox(_renderer(fig)).width)


def display_scale(fig: Figure, column_px: float = DISPLAY_WIDTH_PX) -> float:
    """How much the page shrinks ``fig``: 1 when its drawn width fits the content column, else the ratio."""
    return min(1.0, column_px / (drawn_width_in(fig) * CSS_PX_PER_INCH))


class _RecordingRenderer(RendererAgg):
    """An Agg renderer that notes the size of every text the figure draws and paints nothing: the texts are laid
    out (their extents measured) as in a real draw, but no glyph, path or image is rasterised."""

    def __init__(self, width: float, height: float, dpi: float) -> None:
        super().__init__(width, height, dpi)
        self.texts: list[tuple[str, float]] = []

    def draw_text(self, gc, x, y, s, prop, angle, ismath=False, mtext=None):  # type: ignore[no-untyped-def]
        if str(s).strip():
            self.texts.append((str(s), float(prop.get_size_in_points())))

    def _paint_nothing(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        pass

    draw_path = draw_markers = draw_path_collection = draw_quad_mesh = _paint_nothing
    draw_gouraud_triangles = draw_image = _paint_nothing


def drawn_fonts(fig: Figure) -> list[tuple[str, float]]:
    """Every non-blank text the figure draws, with its size in points (in the figure, not yet on the page)."""
    width, height = fig.get_size_inches() * fig.dpi
    renderer = _RecordingRenderer(width, height, fig.dpi)
    fig.draw(renderer)  # the layout engine and tick updates run as in any draw
    return renderer.texts


def smallest_font_pt(fig: Figure, column_px: float = DISPLAY_WIDTH_PX) -> float:
    """The smallest text of ``fig`` at its display size in points (see the module docstring); ``inf`` when the
    figure draws no text. One draw: the drawn width is measured on the layout that draw left."""
    sizes = [size for _, size in drawn_fonts(fig)]
    if not sizes:
        return float("inf")
    drawn = float(fig.get_tightbbox(_renderer(fig)).width)
    return min(sizes) * min(1.0, column_px / (drawn * CSS_PX_PER_INCH))


def _texts(fig: Figure) -> list[Text]:
    return [t for t in fig.findobj(Text) if isinstance(t, Text)]


def _raise_fonts(fig: Figure, min_pt: float) -> None:
    """Every text of ``fig`` below ``min_pt`` raised to it (tick labels through their axis, so ticks made later
    get the size too)."""
    for ax in fig.axes:
        for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            sizes = [float(t.get_fontsize()) for t in axis.get_ticklabels(which="both")]
            if sizes and min(sizes) < min_pt:
                ax.tick_params(axis=name, which="both", labelsize=min_pt)  # type: ignore[arg-type]
    for t in _texts(fig):
        if float(t.get_fontsize()) < min_pt:
            t.set_fontsize(min_pt)


def _fit(fig: Figure, column_px: float, min_pt: float) -> None:
    """Raise every text below ``min_pt`` to it, and narrow ``fig`` until what it draws fits the column: each pass
    takes the excess off the figure's width (text does not shrink with the figure, so a few passes). Before the
    plot would lose more than 40% of its width, long category labels and titles are wrapped onto more lines (the
    figure grows taller to hold them). Never below 40% of its width: a figure whose text alone is wider than the
    column stays too wide (:func:`prepare` logs it)."""
    column_in = 0.985 * column_px / CSS_PX_PER_INCH  # a little room: text extents vary with the rendering dpi
    original = float(fig.get_size_inches()[0])
    narrowest = max(2.5, 0.4 * original)
    wrapped = False
    for _ in range(10):
        _raise_fonts(fig, min_pt)
        drawn = drawn_width_in(fig)
        if drawn <= column_in * 1.001:
            return
        width, height = (float(v) for v in fig.get_size_inches())
        narrower = width - (drawn - column_in) - 0.02
        if not wrapped and narrower < 0.6 * original:
            wrapped = True
            if _wrap_long_texts(fig, column_in):
                continue
        narrower = max(narrowest, narrower)
        if narrower >= width - 1e-3:
            return
        fig.set_size_inches(narrower, height)


#: Category labels longer than this many characters are wrapped when a figure does not fit the column.
WRAP_LABEL_CHARS = 28


def _wrap_long_texts(fig: Figure, column_in: float) -> bool:
    """Wrap, at spaces, the category labels (fixed ticks) longer than :data:`WRAP_LABEL_CHARS` characters, growing
    the figure taller so that each label's lines fit between its neighbours, and the titles wider than
    ``column_in``: the words stay, on more lines. True when something was wrapped."""
    renderer = _renderer(fig)
    changed = False
    for ax in fig.axes:
        for name, axis, set_ticks in (("y", ax.yaxis, ax.set_yticks), ("x", ax.xaxis, ax.set_xticks)):
            labels = [t.get_text() for t in axis.get_ticklabels()]
            if not isinstance(axis.get_major_locator(), FixedLocator) or all(
                    len(lab) <= WRAP_LABEL_CHARS for lab in labels):
                continue
            wrapped = [textwrap.fill(lab, WRAP_LABEL_CHARS) for lab in labels]
            set_ticks(axis.get_ticklocs(), wrapped)
            changed = True
            if name == "y" and labels:
                size = float(axis.get_ticklabels()[0].get_fontsize())
                lines = max(w.count("\n") + 1 for w in wrapped)
                width, height = (float(v) for v in fig.get_size_inches())
                axes_height = ax.get_position().height * height
                needed = len(labels) * lines * size * 1.5 / 72
                if needed > axes_height:
                    fig.set_size_inches(width, height + needed - axes_height)
    suptitle = getattr(fig, "_suptitle", None)
    for title in [*(ax.title for ax in fig.axes), *([suptitle] if suptitle is not None else [])]:
        text = title.get_text()
        width_in = title.get_window_extent(renderer).width / fig.dpi
        if text and width_in > 0.9 * column_in:
            chars = max(20, int(len(text) * 0.9 * column_in / width_in))
            title.set_text("\n".join(textwrap.fill(line, chars) for line in text.split("\n")))
            changed = True
    return changed


def _stamp_text(fig: Figure, label: str) -> Text:
    """Put ``label`` above everything the figure draws, right-aligned with it."""
    fig.draw_without_rendering()
    box = fig.get_tightbbox(_renderer(fig))  # inches
    width, height = fig.get_size_inches()
    pad = 0.06  # the rounded box reaches this far (inches) beyond the text: keep it inside what the figure draws
    return fig.text((box.x1 - pad) / width, (box.y1 + pad) / height, label, ha="right", va="bottom",
                    fontsize=max(MIN_FONT_PT, 10.0), fontweight="bold", color="#b2182b",
                    bbox={"boxstyle": "round,pad=0.25", "facecolor": "white", "edgecolor": "#b2182b"})


def titles(fig: Figure) -> list[str]:
    """The figure's suptitle and its axes' titles, in order, blanks left out."""
    suptitle = getattr(fig, "_suptitle", None)  # matplotlib keeps it private; None when never set
    found = [suptitle.get_text()] if suptitle is not None else []
    for ax in fig.axes:
        found += [ax.get_title(loc) for loc in ("left", "center", "right")]
    return [t.strip() for t in found if t and t.strip()]


def default_alt(fig: Figure) -> str:
    """Alt text read from the figure: ``Figure: <titles>. x axis: <label>; y axis: <label>.`` (axis labels of
    every axes, each once), and "Drawn from simulated data." when the figure is marked so."""
    parts = [f"Figure: {'; '.join(dict.fromkeys(titles(fig)))}." if titles(fig) else "Figure."]
    labels: list[str] = []
    for ax in fig.axes:
        if getattr(ax, "_colorbar", None) is not None:  # a colourbar's axes: its label names the colour scale
            label = (ax.get_ylabel() or ax.get_xlabel()).strip()
            if label and f"colour scale: {label}" not in labels:
                labels.append(f"colour scale: {label}")
            continue
        for name, text in (("x axis", ax.get_xlabel()), ("y axis", ax.get_ylabel())):
            if text.strip() and f"{name}: {text.strip()}" not in labels:
                labels.append(f"{name}: {text.strip()}")
    if labels:
        parts.append("; ".join(labels) + ".")
    if _SETTINGS.get(fig, {}).get("stamp"):
        parts.append("Drawn from simulated data.")
    return " ".join(parts)


def prepare(fig: Figure, kind: str | None = None, *, alt: str | None = None,
            reference: Reference | Sequence[Reference] | None = None, column_px: float = DISPLAY_WIDTH_PX,
            min_pt: float = MIN_FONT_PT) -> Figure:
    """Make ``fig`` ready for the page, once: draw the paper's values (``reference``), bound its texts and draw
    them plain (:func:`analysis_lib.plotting.text.bound_figure_texts`), fit it to the column with
    every text at least ``min_pt`` at display size, and stamp it when ``kind`` is ``"simulated"`` (or it was
    marked so). ``alt`` replaces the default alt text. A figure already prepared is returned as it is."""
    settings = _SETTINGS.setdefault(fig, {})
    if kind == "simulated":
        settings.setdefault("stamp", SIMULATED_MARK)
    if alt is not None:
        settings["alt"] = alt
    if settings.get("prepared"):
        return fig
    if reference is not None:
        draw_reference(fig, reference)
    bound_figure_texts(fig)  # before the first draw: user text plain and bounded
    _fit(fig, column_px, min_pt)
    settings["alt"] = settings.get("alt") or default_alt(fig)
    if settings.get("stamp"):
        _stamp_text(fig, settings["stamp"])
    smallest = smallest_font_pt(fig, column_px)
    if smallest < min_pt - 0.05:
        log.info("figure %r: its smallest text is %.1f pt at display size (< %.0f pt)",
                    settings["alt"][:80], smallest, min_pt)
    settings["prepared"] = True
    return fig


def alt_text(fig: Figure) -> str:
    """The alt text :func:`figure_html` gives ``fig`` (prepared or not)."""
    return _SETTINGS.get(fig, {}).get("alt") or default_alt(fig)


def png_bytes(fig: Figure) -> tuple[bytes, int]:
    """``fig`` as a PNG at :data:`DPI`, cropped to what it draws, and its width in pixels. The image is reduced to
    a palette of 256 colours (Pillow's fast octree, no dithering): about a third of the bytes of the full-colour
    image, which the page carries inline."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI, bbox_inches="tight", pad_inches=0.05, facecolor="white")
    buffer.seek(0)
    with Image.open(buffer) as image:
        palette = image.convert("RGB").quantize(colors=256, method=Image.Quantize.FASTOCTREE,
                                                dither=Image.Dither.NONE)
        out = io.BytesIO()
        palette.save(out, format="PNG", optimize=True)
        return out.getvalue(), int(palette.size[0])


def figure_html(fig: Figure, column_px: float = DISPLAY_WIDTH_PX) -> str:
    """``fig`` (:func:`prepare`-d) as an ``<img>``: a PNG at :data:`DPI`, cropped to what it draws, displayed at
    one figure inch per CSS inch up to the column's width, with its alt text (escaped)."""
    prepare(fig, column_px=column_px)
    data, width_px = png_bytes(fig)
    shown = min(column_px, round(width_px / DPI * CSS_PX_PER_INCH))
    encoded = base64.b64encode(data).decode("ascii")
    return (f'<img src="data:image/png;base64,{encoded}" alt="{html.escape(alt_text(fig), quote=True)}" '
            f'width="{shown}" style="max-width:100%;height:auto" class="compendium-figure">')


def show(fig: Figure, kind: str = "real", *, alt: str | None = None,
         reference: Reference | Sequence[Reference] | None = None) -> None:
    """Show ``fig`` in the notebook where the call stands (not after the cell's tables), prepared for the page
    (:func:`prepare`: legible at display size, stamped when ``kind`` is ``"simulated"``, the paper's values drawn
    when ``reference`` is given, alt text ``alt`` or read from the figure); then close it."""
    ipy = require("IPython.display", "book", purpose="showing a figure in a notebook")
    prepare(fig, kind, alt=alt, reference=reference)
    ipy.display(ipy.HTML(figure_html(fig)))
    plt.close(fig)


def install() -> bool:
    """Render every matplotlib figure a notebook displays (``plt.show()``, ``display(fig)``, a figure as a cell's
    value) through :func:`figure_html`: the one path of :func:`show`. Returns False outside IPython."""
    try:
        from IPython import get_ipython  # noqa: PLC0415 - optional; not a library import
    except ImportError:
        return False
    shell = get_ipython()
    if shell is None:
        return False
    formatters = shell.display_formatter.formatters
    formatters["text/html"].for_type(Figure, figure_html)
    for mime in ("image/png", "image/jpeg", "image/svg+xml", "application/pdf"):
        formatters[mime].pop(Figure, None)  # one rendering per figure, the HTML one
    return True
