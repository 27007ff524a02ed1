"""The shared figures: labels clear of each other and of error bars, legends instead of colourbars for
categories, Figure 5 as distributions."""

from __future__ import annotations

import base64
import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import polars as pl
import pytest
from matplotlib.text import Text
from PIL import Image
from sklearn.isotonic import IsotonicRegression

from analysis_lib import plotting
from analysis_lib.plotting import display
from analysis_lib.plotting.labels import labels_overlap, place_labels, spread_1d
from analysis_lib.search_arena import plots


@pytest.fixture(autouse=True)
def _close():
    plotting.apply_style()
    yield
    plt.close("all")


def test_spread_1d_is_the_least_squares_solution_with_the_gap():
    rng = np.random.default_rng(3)
    v = rng.normal(0, 1, 15)
    gap = 0.4
    p = spread_1d(v, gap)
    assert np.all(np.diff(np.sort(p)) >= gap - 1e-12)
    assert np.array_equal(np.argsort(p, kind="stable"), np.argsort(v, kind="stable"))  # order kept
    # independent answer: p_i = q_i + i*gap with q the isotonic (non-decreasing) L2 fit of v_(i) - i*gap
    order = np.argsort(v)
    target = v[order] - gap * np.arange(v.size)
    q = IsotonicRegression().fit_transform(np.arange(v.size), target)
    assert np.allclose(np.sort(p), q + gap * np.arange(v.size))
    # already spread values do not move
    assert np.allclose(spread_1d([0.0, 1.0, 2.0], 0.5), [0.0, 1.0, 2.0])


def test_place_labels_leaves_no_overlaps_on_a_crowded_scatter():
    rng = np.random.default_rng(0)
    x, y = rng.normal(0, 1, 12), rng.normal(0, 1, 12)
    x[:4], y[:4] = 0.0, [0.0, 0.02, 0.04, 0.06]  # four nearly coincident points
    _fig, ax = plt.subplots()
    ax.scatter(x, y)
    artists = place_labels(ax, x, y, [f"model-{i}-long-name" for i in range(12)])
    assert len(artists) == 12
    naive = [ax.annotate(f"model-{i}-long-name", (x[i], y[i]), xytext=(3, 3), textcoords="offset points",
                         fontsize=7) for i in range(4)]
    assert labels_overlap(naive) > 0  # the old fixed offset collides on these points
    for a in naive:
        a.remove()
    assert labels_overlap(artists) == 0


def test_barh_value_labels_sit_right_of_the_error_bars():
    values = np.array([10.0, 8.0, 5.0])
    err = np.array([2.0, 3.0, 1.0])
    fig = plotting.barh(["a", "b", "c"], values, xlabel="x", xerr=[err, err], annotate="{:.1f}")
    ax = fig.axes[0]
    texts = {t.get_text(): t for t in ax.texts}
    for v, e in zip(values, err, strict=True):
        assert texts[f"{v:.1f}"].get_position()[0] > v + e
    assert ax.get_xlim()[1] > max(values + err)


def test_provider_legend_and_categorical_heatmap_legend():
    colors, legend = plots.provider_colors(["m1", "m2", "m3"], ["OpenAI", "Google", "OpenAI"])
    assert colors[0] == colors[2] == plotting.style.PROVIDER_COLORS["OpenAI"]
    assert list(legend) == ["OpenAI", "Google"]
    fig = plotting.barh(["m1", "m2", "m3"], [1, 2, 3], xlabel="x", color=colors, legend=legend)
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == ["OpenAI", "Google"]

    codes = np.array([[0, 1], [2, 3]], dtype=float)
    names = {0: "none", 1: "cited only", 2: "supported only", 3: "both"}
    fig = plotting.heatmap(codes, ["s1", "s2"], ["c1", "c2"], cbar_label="cell", fmt="{:.0f}", cmap="Blues",
                           categories=names)
    assert len(fig.axes) == 1  # no colourbar axes
    legend = fig.axes[0].get_legend()
    assert [t.get_text() for t in legend.get_texts()] == list(names.values())
    im = fig.axes[0].images[0]
    cell_colors = {tuple(np.round(im.cmap(im.norm(v)), 6)) for v in codes.ravel()}
    assert len(cell_colors) == 4  # one colour per category


def test_slope_chart_labels_do_not_overlap():
    after = np.array([1000.0, 1000.5, 1001.0, 1050.0, 1001.5])
    fig = plotting.slope_chart([f"model {i}" for i in range(5)], after + 30, after, ylabel="Elo")
    texts = [t for t in fig.axes[0].texts]
    assert len(texts) == 5 and labels_overlap(texts) == 0


def test_distribution_by_group_draws_one_box_per_group_with_the_mean_labelled():
    rng = np.random.default_rng(1)
    values = pl.DataFrame({"g": ["a"] * 200 + ["b"] * 200,
                           "v": np.concatenate([rng.lognormal(5, 0.5, 200), rng.lognormal(4, 0.5, 200)])})
    summary = values.group_by("g").agg(pl.col("v").mean().alias("mean"), pl.lit(1.0).alias("ci")).sort("g")
    fig = plots.distribution_by_group(values, "g", "v", summary, xlabel="words", fmt="{:.0f}")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "b"]
    labels = sorted(t.get_text() for t in ax.texts)
    assert labels == sorted(f"mean {m:.0f}" for m in summary["mean"])  # "mean", not read as a percentile


def test_count_histograms_show_small_bars():
    # counts within a factor 50: a linear axis from 0 (the bar of 2 is a fifth of the bar of 10)
    fig = plotting.count_histograms([(np.array([3] * 10 + [8] * 2), "largest sibling group")], ylabel="trees")
    ax = fig.axes[0]
    heights = sorted(p.get_height() for p in ax.patches)
    assert ax.get_yscale() == "linear" and ax.get_ylim()[0] == 0 and heights == [2, 10]
    assert all(float(t).is_integer() for t in ax.get_yticks())
    # a long tail (1500 vs 1): log scale from 0.5, so a bar of 1 keeps its height; plain ticks, not 2x10^0
    fig = plotting.count_histograms([(np.array([2] * 1500 + [3] * 11 + [8]), "depth")], ylabel="matches")
    ax = fig.axes[0]
    assert ax.get_yscale() == "log" and ax.get_ylim()[0] <= min(p.get_height() for p in ax.patches) / 2
    assert ax.yaxis.get_major_formatter()(1000, 0) == "1,000" and ax.yaxis.get_minor_formatter()(2, 0) == ""
    assert ax.get_ylabel() == "matches (log scale)"
    assert plotting.count_histograms([(np.array([1, 2]), "x")], log_y=True).axes[0].get_yscale() == "log"
    plt.close("all")


def test_kde_draws_scotts_bandwidth_times_bw_adjust_over_each_groups_range():
    """plotting.kde (seaborn's kdeplot): each curve is scipy's Gaussian KDE with Scott's factor × bw_adjust from the
    group's smallest to its largest value; with log_x, the density of log10 of the values (clipped to ≥ 1), per
    log10 unit, on a log axis whose ticks read as plain numbers."""
    from scipy.stats import gaussian_kde

    rng = np.random.default_rng(3)
    a, b = rng.normal(0, 1, 300), rng.normal(2, 0.5, 200)
    ax = plotting.kde({"a": a, "b": b, "constant": np.ones(5)}, xlabel="x", bw_adjust=0.5).axes[0]
    assert [str(line.get_label()).split()[0] for line in ax.get_lines()] == ["a", "b"]  # no density of a constant
    for line, v in zip(ax.get_lines(), (a, b), strict=True):
        x, y = np.asarray(line.get_xdata()), np.asarray(line.get_ydata())
        assert (x[0], x[-1]) == pytest.approx((v.min(), v.max()))
        assert y == pytest.approx(gaussian_kde(v, bw_method=lambda k: 0.5 * k.scotts_factor())(x), rel=1e-9)
        assert not np.allclose(y, gaussian_kde(v)(x), rtol=0.01)
    words = np.r_[rng.lognormal(3, 1, 400), 0.0, np.nan]
    ax = plotting.kde({"words": words}, xlabel="words", log_x=True).axes[0]
    x, y = np.asarray(ax.get_lines()[0].get_xdata()), np.asarray(ax.get_lines()[0].get_ydata())
    logs = np.log10(np.clip(words[np.isfinite(words)], 1, None))
    assert y == pytest.approx(gaussian_kde(logs)(np.log10(x)), rel=1e-9)
    assert ax.get_xscale() == "log" and ax.get_ylabel() == "density (per log10 unit)"
    assert ax.get_lines()[0].get_label() == f"words (mean {np.nanmean(words):.1f}, n=401)"
    ax.figure.canvas.draw()
    ticks = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert ticks and all(t.replace(",", "").isdigit() for t in ticks), ticks  # "10", not "$\\mathdefault{10^{1}}$"


def test_heatmap_text_contrasts_with_cell():
    assert plotting.style.contrast_text_color((0.03, 0.19, 0.42, 1.0)) == "white"  # darkest Blues cell
    assert plotting.style.contrast_text_color((0.97, 0.98, 1.0, 1.0)) == "black"   # lightest Blues cell
    assert plotting.style.contrast_text_color((0.5, 0.5, 0.5, 1.0)) == "black"     # mid grey: luminance 0.214 > 0.179


# --- how a figure reaches the page (analysis_lib.plotting.display) ---------------------------------------------


def _png_width_in(fig) -> float:
    """Drawn width of a figure measured independently: the width of its tight PNG over the dpi."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100, bbox_inches="tight", pad_inches=0)
    buffer.seek(0)
    with Image.open(buffer) as image:
        return image.size[0] / 100


@pytest.mark.parametrize("width", [4.0, 14.0])
def test_smallest_font_at_display_size(width):
    """A 6-pt label in a figure narrower than the column is 6 pt on the page; in a figure drawn wider than the
    column the page shrinks it by column / drawn width (one figure inch per CSS inch, 96 px)."""
    fig, ax = plt.subplots(figsize=(width, 3))
    ax.set_xlabel("x", fontsize=14)
    ax.set_ylabel("y", fontsize=14)
    ax.tick_params(labelsize=12)
    ax.set_title("a title", fontsize=20)
    ax.text(0.5, 0.5, "small", fontsize=6)
    scale = min(1.0, display.DISPLAY_WIDTH_PX / (_png_width_in(fig) * 96))
    assert display.smallest_font_pt(fig) == pytest.approx(6 * scale, rel=0.02)
    assert ("small", 6.0) in display.drawn_fonts(fig)


def _figure_kinds():
    rng = np.random.default_rng(0)
    names = [f"search-model-{i}" for i in range(13)]
    frame = pl.DataFrame({"m": ["a", "b"], "x": [50.0, 60.0], "y": [70.0, 20.0], "z": [30.0, 40.0]})
    return {
        "barh": plotting.barh(names, rng.uniform(0, 10, 13), xlabel="battles", title="Fig D.1 · Battles"),
        "heatmap": plotting.heatmap(rng.uniform(0, 1, (13, 13)), names, names, cbar_label="win rate",
                                    title="Fig D.4 · Pairwise win rates"),
        "forest": plotting.forest(names, np.arange(13.0), np.arange(13.0) - 1, np.arange(13.0) + 1, xlabel="Elo"),
        "radar": plotting.radar(frame, "m", ["x", "y", "z"], title="Fig F.1"),
        "slope": plotting.slope_chart(names, rng.uniform(900, 1100, 13), rng.uniform(900, 1100, 13), ylabel="Elo"),
        "wide": plt.subplots(figsize=(12, 3))[0],
    }


@pytest.mark.parametrize("kind", ["barh", "heatmap", "forest", "radar", "slope", "wide"])
def test_every_figure_is_legible_at_display_size_and_stamped_clear_of_its_titles(kind):
    fig = _figure_kinds()[kind]
    if kind == "wide":
        fig.axes[0].set_title("a wide figure with small ticks", fontsize=8)
        fig.axes[0].tick_params(labelsize=6)
    display.prepare(fig, "simulated")
    assert display.smallest_font_pt(fig) >= display.MIN_FONT_PT - 0.05
    assert _png_width_in(fig) * 96 <= display.DISPLAY_WIDTH_PX + 2
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    stamp = next(t for t in fig.texts if t.get_text() == display.SIMULATED_MARK)
    box = stamp.get_window_extent(renderer)
    others = [t for t in fig.findobj(Text) if t is not stamp and t.get_visible() and t.get_text().strip()]
    assert others and not any(box.overlaps(t.get_window_extent(renderer)) for t in others)
    stamp.set_visible(False)
    drawn = fig.get_tightbbox(renderer)  # inches: everything else the figure draws
    stamp.set_visible(True)
    assert box.y0 / fig.dpi >= drawn.y1 - 0.01  # the stamp sits above all of it


def test_alt_text_from_the_figure_or_given_and_escaped():
    fig = plotting.heatmap(np.eye(2), ["a", "b"], ["a", "b"], cbar_label="win rate", title="Fig D.4 · Win rates")
    fig.axes[0].set_xlabel("opponent")
    assert display.default_alt(fig) == "Figure: Fig D.4 · Win rates. x axis: opponent; colour scale: win rate."
    display.mark_simulated(fig)
    assert display.default_alt(fig).endswith("Drawn from simulated data.")
    out = display.figure_html(fig)
    assert 'alt="Figure: Fig D.4 · Win rates.' in out
    other = plotting.barh(["a"], [1.0], xlabel="x")
    display.prepare(other, "real", alt='a "quoted" <b>label</b> & more')
    out = display.figure_html(other)
    assert 'alt="a &quot;quoted&quot; &lt;b&gt;label&lt;/b&gt; &amp; more"' in out
    assert display.SIMULATED_MARK not in [t.get_text() for t in other.texts]


def test_the_png_is_sharp_and_shown_at_its_natural_size():
    fig, ax = plt.subplots(figsize=(5, 3))
    ax.plot([0, 1], [0, 1])
    data, width_px = display.png_bytes(fig)
    drawn = _png_width_in(fig)
    assert width_px / drawn == pytest.approx(display.DPI, rel=0.03) and display.DPI >= 150
    with Image.open(io.BytesIO(data)) as image:
        assert image.size[0] == width_px
    out = display.figure_html(fig)
    shown = int(out.split('width="')[1].split('"')[0])
    assert shown == round(width_px / display.DPI * 96) and shown <= display.DISPLAY_WIDTH_PX
    src = out.split('src="data:image/png;base64,')[1].split('"')[0]
    assert base64.b64decode(src) == display.png_bytes(fig)[0]


def test_paper_reference_points_lines_and_marks_with_a_legend_entry():
    fig = plotting.scatter_fit(np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0, 2.5]), xlabel="x", ylabel="y",
                               legend={"Perplexity": "#1f77b4"})
    display.draw_reference(fig, display.Reference.at_points([1.0, 2.0], [1.2, 1.8]))
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["Perplexity", "paper"]
    offsets = ax.collections[-1].get_offsets()
    assert np.allclose(offsets, [[1.0, 1.2], [2.0, 1.8]])

    fig = plotting.barh(["a", "b", "c"], [1.0, 2.0, 3.0], xlabel="share (%)")
    display.draw_reference(fig, [display.Reference.at_marks({"b": 2.5, "c": 2.0}),
                                 display.Reference.at_lines(x=[1.5], label="paper mean")])
    ax = fig.axes[0]
    marks = ax.collections[-1].get_offsets()
    ticks = {t.get_text(): y for t, y in zip(ax.get_yticklabels(), ax.get_yticks())}
    assert np.allclose(marks, [[2.5, ticks["b"]], [2.0, ticks["c"]]])
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["paper", "paper mean"]
    assert any(np.allclose(line.get_xdata(), [1.5, 1.5]) for line in ax.lines)
    with pytest.raises(ValueError, match=r"no tick labelled \['z'\]"):
        display.draw_reference(fig, display.Reference.at_marks({"z": 1.0}))
    with pytest.raises(ValueError, match="2 x values but 1 y values"):
        display.Reference.at_points([1, 2], [1])


def test_the_paper_entry_keeps_a_legend_placed_outside_the_axes_where_it_was():
    """A legend anchored outside the axes (bbox_to_anchor) stays there when the paper's entry is added, and still
    follows the axes when the figure is resized (the anchor was once transformed twice: thousands of px away)."""
    def legend_outside():
        fig, ax = plt.subplots(figsize=(6, 3))
        ax.plot([0, 1], [0, 1], label="ours")
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1))
        fig.canvas.draw()
        return fig, ax

    fig, ax = legend_outside()
    control, control_ax = legend_outside()
    before = ax.get_legend().get_window_extent()
    display.draw_reference(fig, display.Reference.at_points([0.5], [0.5]))
    fig.canvas.draw()
    after = ax.get_legend().get_window_extent()
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["ours", "paper"]
    assert np.isclose(after.x0, before.x0) and np.isclose(after.y1, before.y1)
    for f in (fig, control):
        f.set_size_inches(4, 3)
        f.canvas.draw()
    assert np.isclose(ax.get_legend().get_window_extent().x0, control_ax.get_legend().get_window_extent().x0)
    plt.close(fig)
    plt.close(control)


def test_show_and_plain_display_take_the_same_path():
    """In a notebook every figure (``plt.show()``, ``display(fig)``, a cell's value) renders through figure_html:
    an <img> with alt text, stamped when marked, and no second PNG rendering."""
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    try:
        assert display.install()
        fig = plotting.barh(["a", "b"], [1.0, 2.0], xlabel="votes", title="Fig 8 · Votes")
        plotting.mark_simulated(fig)
        bundle, _ = shell.display_formatter.format(fig)
        assert "image/png" not in bundle and '<img src="data:image/png;base64,' in bundle["text/html"]
        assert 'alt="Figure: Fig 8 · Votes. x axis: votes. Drawn from simulated data."' in bundle["text/html"]
        assert display.SIMULATED_MARK in [t.get_text() for t in fig.texts]
    finally:
        InteractiveShell.clear_instance()


def test_long_category_labels_and_titles_wrap_instead_of_shrinking():
    """Fig B.4's topic labels: too long for the column at 10 pt, so they go on more lines (every word kept) and the
    figure grows taller, rather than the page shrinking the figure below 10 pt."""
    labels = [f"{i}: technology comparisons and product reviews of category {i}" for i in range(20)]
    title = "Fig B.4 · Top 20 of 55 topics (43% of prompts unclustered), a title longer than the column at 12 pt"
    fig = plotting.barh(labels, np.linspace(1, 22, 20), xlabel="% of clustered prompts", title=title)
    height = fig.get_size_inches()[1]
    assert display.smallest_font_pt(fig) < 9  # as drawn: wider than the column
    display.prepare(fig, "simulated")
    assert display.smallest_font_pt(fig) >= display.MIN_FONT_PT - 0.05
    shown = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert [" ".join(s.split()) for s in shown] == labels and all("\n" in s for s in shown)
    assert " ".join(fig.axes[0].get_title().split()) == title and fig.get_size_inches()[1] > height


# --- issue 37: user text drawn plain and bounded ----------------------------------------------------------------


def test_a_model_name_with_dollars_is_drawn_as_plain_text():
    """``x$\\undefinedcommand$y`` stopped chapters 01, 08 and 09 (ParseFatalException) with mathtext on."""
    import matplotlib as mpl
    import matplotlib.pyplot as plt

    from analysis_lib.plotting import display, text
    name = r"x$\undefinedcommand$y"
    assert text.unparsable(name)
    with mpl.rc_context({"text.parse_math": True}):  # even without the book's style
        fig, ax = plt.subplots()
        ax.barh([0, 1], [1.0, 2.0])
        ax.set_yticks([0, 1], labels=[name, "ok"])
        ax.set_title(f"ranking of {name}")
        ax.legend(handles=ax.patches[:1], labels=[name])
        display.png_bytes(display.prepare(fig))  # raised ParseFatalException before
        assert [t.get_text() for t in ax.get_yticklabels()][0] == r"x\$\undefinedcommand\$y"
        assert not ax.title.get_parse_math()
        plt.close(fig)


def test_style_draws_every_text_plain_and_plain_escapes_only_when_mathtext_is_on():
    import matplotlib as mpl

    from analysis_lib.plotting import apply_style
    from analysis_lib.plotting.text import plain
    with mpl.rc_context():
        apply_style()
        assert mpl.rcParams["text.parse_math"] is False and plain("a$b$c") == "a$b$c"
    with mpl.rc_context({"text.parse_math": True}):
        assert plain("a$b$c") == r"a\$b\$c"


def test_a_ten_thousand_character_name_is_cut_with_an_ellipsis():
    """A 10,000-character model name made chapter 03's figure too large to save (DecompressionBombError)."""
    import matplotlib.pyplot as plt

    from analysis_lib.plotting import display, text
    long = "m" * 10_000
    fig, ax = plt.subplots()
    ax.barh([0], [1.0])
    ax.set_yticks([0], labels=[long])
    ax.set_xlabel(long)
    display.prepare(fig)
    label = ax.get_yticklabels()[0].get_text().replace("\n", "")  # cut, then wrapped to fit the column
    assert len(label) == text.MAX_LABEL_CHARS and label.endswith("…")
    assert len(ax.get_xlabel()) <= text.MAX_TEXT_CHARS
    data, width_px = display.png_bytes(fig)
    assert width_px < 10_000  # the whole name: ~230,000 px (PIL refuses such an image: DecompressionBombError)
    plt.close(fig)


def test_an_interval_that_does_not_contain_its_estimate_is_drawn_as_it_is():
    """A percentile-bootstrap interval from few rounds can miss its point estimate: matplotlib refuses
    ``estimate ± error`` then (negative error); the forest draws each bar from lower to upper and the estimate beside
    it, for rows and for columns."""
    from matplotlib.collections import LineCollection

    from analysis_lib.plotting import figures

    est, lo, hi = np.array([1.0, 5.0, 2.0]), np.array([1.5, 3.0, 0.5]), np.array([2.5, 4.0, 3.0])  # rows 0, 1 miss
    fig = figures.forest(["a", "b", "c"], est, lo, hi, xlabel="x")
    bars = [c for c in fig.axes[0].collections if isinstance(c, LineCollection)]
    spans = sorted(tuple(sorted((seg[0][0], seg[1][0]))) for seg in bars[0].get_segments())
    assert spans == sorted(zip(lo.tolist(), hi.tolist(), strict=True))
    (marker,) = [line for line in fig.axes[0].lines if line.get_marker() == "o"]
    assert list(marker.get_xdata()) == est.tolist()
    fig2, ax = plt.subplots()
    figures.intervals(ax, np.arange(3), est, lo, hi, vertical=True)
    ys = sorted(tuple(sorted((seg[0][1], seg[1][1]))) for seg in ax.collections[0].get_segments())
    assert ys == sorted(zip(lo.tolist(), hi.tolist(), strict=True))
    plt.close(fig)
    plt.close(fig2)
