"""Text placement for the shared figures: point labels that do not overlap each other or the points, and
value labels that clear their error bars.

Two placements, both deterministic (the same figure is drawn the same way on every build):

- :func:`spread_1d` moves sorted positions apart to at least ``min_gap`` with the least total shift (labels in
  a column, e.g. the right-hand end of a slope chart);
- :func:`place_labels` labels scattered points: for each label, in order of the points' y, it tries offsets on
  rings of growing radius around its point and keeps the first whose text box overlaps no label placed
  before, no point and stays inside the axes; a label moved away from its point gets a thin leader line, and
  every label a translucent white background so error bars and grid lines do not cut through its text.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.text import Text
from matplotlib.transforms import Bbox

from analysis_lib.plotting.text import plain


def spread_1d(values: Sequence[float] | np.ndarray, min_gap: float) -> np.ndarray:
    """Positions as close as possible to ``values`` with consecutive (sorted) positions ``min_gap`` apart.

    Isotonic formulation: with ``v`` sorted, ``p_i = q_i + i·gap`` where ``q`` is the least-squares
    non-decreasing fit to ``v_i − i·gap`` (pool-adjacent-violators), which minimises ``Σ (p_i − v_i)²`` under
    ``p_{i+1} − p_i ≥ gap``. Returned in the input order.
    """
    v = np.asarray(values, dtype=float)
    order = np.argsort(v, kind="stable")
    target = v[order] - min_gap * np.arange(v.size)
    # pool adjacent violators: blocks of (mean, size)
    means: list[float] = []
    sizes: list[int] = []
    for t in target:
        means.append(float(t))
        sizes.append(1)
        while len(means) > 1 and means[-2] > means[-1]:
            m2, s2 = means.pop(), sizes.pop()
            m1, s1 = means.pop(), sizes.pop()
            means.append((m1 * s1 + m2 * s2) / (s1 + s2))
            sizes.append(s1 + s2)
    q = np.repeat(means, sizes)
    out = np.empty_like(v)
    out[order] = q + min_gap * np.arange(v.size)
    return out


def _overlap(a: Bbox, b: Bbox) -> float:
    w = min(a.x1, b.x1) - max(a.x0, b.x0)
    h = min(a.y1, b.y1) - max(a.y0, b.y0)
    return max(w, 0.0) * max(h, 0.0)


def place_labels(
    ax: Axes,
    x: Sequence[float] | np.ndarray,
    y: Sequence[float] | np.ndarray,
    labels: Sequence[str],
    *,
    fontsize: float = 10.0,
    point_radius_px: float = 5.0,
    max_rings: int = 6,
) -> list:
    """Annotate point ``i`` at ``(x[i], y[i])`` with ``labels[i]`` so that no two labels overlap and no label
    covers a point (see the module docstring); returns the annotation artists. Call after the axes limits are
    final (the placement works in display coordinates)."""
    fig = ax.figure
    fig.canvas.draw()  # limits, transforms and text extents are final only after a draw
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    px_per_pt = fig.dpi / 72.0
    pts = ax.transData.transform(np.column_stack([np.asarray(x, float), np.asarray(y, float)]))
    axes_box = ax.get_window_extent(renderer)
    point_boxes = [Bbox.from_bounds(px - point_radius_px, py - point_radius_px, 2 * point_radius_px,
                                    2 * point_radius_px) for px, py in pts]
    labels = [plain(lab) for lab in labels]  # from data: plain text, bounded (drawn before the figure is prepared)
    sizes = []
    for lab in labels:
        probe = ax.text(0, 0, lab, fontsize=fontsize)
        bb = probe.get_window_extent(renderer)
        sizes.append((bb.width, bb.height))
        probe.remove()
    placed: list[Bbox] = []
    artists = []
    for i in np.argsort(-pts[:, 1], kind="stable"):
        px, py = pts[i]
        w, h = sizes[i]
        best, best_cost = None, np.inf
        for ring in range(max_rings):
            r = (4.0 + 7.0 * ring) * px_per_pt
            # candidate lower-left corners: right, left, above, below, then the diagonals
            for dx, dy in ((r, -h / 2), (-r - w, -h / 2), (-w / 2, r), (-w / 2, -r - h),
                           (r, r), (-r - w, r), (r, -r - h), (-r - w, -r - h)):
                box = Bbox.from_bounds(px + dx, py + dy, w, h)
                cost = sum(_overlap(box, b) for b in placed)
                cost += sum(_overlap(box, b) for j, b in enumerate(point_boxes) if j != i)
                outside = w * h - _overlap(box, axes_box)
                cost += 4 * outside + 1e-3 * ring
                if cost < best_cost:
                    best, best_cost = (dx, dy, box), cost
                if cost < 1e-2:
                    break
            if best_cost < 1e-2:
                break
        assert best is not None
        dx, dy, box = best
        placed.append(box)
        far = np.hypot(dx + w / 2, dy + h / 2) > 14 * px_per_pt
        artists.append(ax.annotate(
            labels[i], (x[i], y[i]), xytext=(dx / px_per_pt, dy / px_per_pt), textcoords="offset points",
            fontsize=fontsize, ha="left", va="bottom", zorder=5,
            bbox={"boxstyle": "square,pad=0.05", "facecolor": "white", "edgecolor": "none", "alpha": 0.75},
            arrowprops={"arrowstyle": "-", "color": "grey", "lw": 0.5, "shrinkA": 0, "shrinkB": 3} if far else None,
        ))
    return artists


def labels_overlap(artists: Sequence, renderer=None) -> int:
    """How many pairs of the given text artists overlap on the canvas (for tests and checks)."""
    if not artists:
        return 0
    fig = artists[0].figure
    if renderer is None:
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
    boxes = [Text.get_window_extent(a, renderer) for a in artists]  # the text only, not a leader line
    return sum(_overlap(boxes[i], boxes[j]) > 0.5 for i in range(len(boxes)) for j in range(i + 1, len(boxes)))
