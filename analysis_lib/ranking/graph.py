"""When does the Bradley–Terry MLE exist? The beat graph, its strong components, and the diagnosis of a failure.

Draw the *beat graph* of a set of battles: an edge ``a → b`` when ``a`` beat ``b`` at least once (an outcome
``y > 0`` for ``a``), and both ``a → b`` and ``b → a`` for a tie (half a win each way). The unpenalised BT loss
``L(r) = −Σ_i c_i [y_i log σ(η_i) + (1 − y_i) log σ(−η_i)]``, ``η_i = ln 10 (r_a − r_b)``, has a finite
minimiser, unique under ``Σ r = 0``, if and only if that graph is strongly connected (Zermelo 1929; Ford 1957:
for every split of the models into two groups, each group won, or tied, at least once against the other).
Otherwise the strongly connected components form a directed acyclic graph; ``L`` keeps falling as the components
are pulled apart along its edges (pieces with no battle between them have no relative level at all), so no
finite MLE exists and a Newton solver either fails on a singular Hessian or drifts without converging.

This is decided combinatorially, not from how a solver behaves: :func:`mle_exists` for any number of weight
vectors at once (the observed counts, or bootstrap resamples as multinomial counts over the unique rows: a row
with weight 0 draws no edge), by one strong-components pass (``scipy.sparse.csgraph``) over the block-diagonal
union of the graphs. :func:`diagnose` explains a failure: the largest strongly connected group and, for every
model outside it, why (never won, never lost, no battle with that group, or every result against it one way);
:class:`NotIdentifiableError` carries that explanation.

The way out, when the caller opts in, is a ridge ``(reg/2) ‖r‖²`` on the summed loss (log10-odds units): the MAP
estimate under independent ``N(0, 1/reg)`` priors on the ratings (:data:`RIDGE`: ``1e-3``, a prior SD of
``1/√reg ≈ 31.6`` log10-odds ≈ 12,650 Elo, weak on purpose: it only makes the optimum finite). Within one strong
component the rating differences stay close to that component's own MLE; between components the gap is set by
the prior (growing like ``log(n / reg)`` with the ``n`` one-way battles) and means only "every result went one
way"; pieces with no battle between them are each centred at the mean, so their ratings are not comparable.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

#: Most edges (graphs × beat-graph edges) of one strong-components pass.
BLOCK_CELLS = 250_000
#: Default ridge for fits whose data have no MLE (module docstring): prior SD ``1/√1e-3`` ≈ 31.6 log10-odds.
RIDGE = 1e-3


class NotIdentifiableError(ValueError):
    """The BT MLE does not exist for these battles; the message lists the models concerned and why."""


def beat_edges(pairs: np.ndarray, outcomes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(row, src, dst)``: the beat-graph edges ``src → dst`` drawn by each unique row (a tie draws two)."""
    a, b = pairs[:, 0], pairs[:, 1]
    won, lost = np.flatnonzero(outcomes > 0), np.flatnonzero(outcomes < 1)
    return np.concatenate([won, lost]), np.concatenate([a[won], b[lost]]), np.concatenate([b[won], a[lost]])


def _all_one_component(n_graphs: int, n: int, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    if n <= 1:
        return np.ones(n_graphs, dtype=bool)
    size = n_graphs * n
    graph = csr_matrix((np.ones(src.size, dtype=np.int8), (src, dst)), shape=(size, size))
    _, labels = connected_components(graph, directed=True, connection="strong")
    labels = labels.reshape(n_graphs, n)
    return np.asarray((labels == labels[:, :1]).all(axis=1))


def mle_exists(pairs: np.ndarray, outcomes: np.ndarray, n_models: int, w: np.ndarray) -> np.ndarray:
    """``(B,)`` booleans: does the BT MLE exist for each row of ``w`` (weights over the unique rows ``pairs``,
    ``outcomes``)? Yes iff its beat graph is strongly connected (module docstring). Never forms dense graphs."""
    w = np.atleast_2d(w)
    row, src, dst = beat_edges(pairs, outcomes)
    out = np.empty(w.shape[0], dtype=bool)
    block = max(1, BLOCK_CELLS // max(1, row.size))  # graphs per pass: bounds the edge lists' memory
    for start in range(0, w.shape[0], block):
        k, e = np.nonzero((w[start:start + block] > 0)[:, row])
        out[start:start + block] = _all_one_component(
            min(block, w.shape[0] - start), n_models, k * n_models + src[e], k * n_models + dst[e]
        )
    return out


@dataclass(frozen=True)
class Diagnosis:
    """Why the BT MLE of a set of battles does (not) exist (:func:`diagnose`).

    ``main``: the largest strongly connected group of the beat graph (most models; ties: most battles). For the
    models outside it: ``never_won`` (no win or tie at all), ``never_lost`` (no loss or tie at all),
    ``unconnected`` (no chain of battles at all to ``main``), ``one_way`` (the rest: battles with ``main``'s side
    exist, but every result between them and ``main`` goes one way).
    """

    models: tuple[str, ...]
    main: tuple[str, ...]
    never_won: tuple[str, ...]
    never_lost: tuple[str, ...]
    unconnected: tuple[str, ...]
    one_way: tuple[str, ...]
    components: tuple[tuple[str, ...], ...]

    @property
    def identifiable(self) -> bool:
        """The MLE exists: one strongly connected group holds every model."""
        return len(self.main) == len(self.models)

    @property
    def outside(self) -> tuple[str, ...]:
        """Models outside the largest strongly connected group (those whose ratings a ridge would set)."""
        keep = set(self.main)
        return tuple(m for m in self.models if m not in keep)

    def message(self) -> str:
        """One paragraph: which models, why, and the ways out."""
        parts = [
            f"{label}: {list(names)}"
            for label, names in (
                ("never won", self.never_won),
                ("never lost", self.never_lost),
                ("no battle chain to the largest group", self.unconnected),
                ("every result against the largest group goes one way", self.one_way),
            )
            if names
        ]
        return (
            f"the Bradley–Terry MLE does not exist: {len(self.outside)} of {len(self.models)} models are outside the "
            f"largest strongly connected group of wins and losses ({len(self.main)} models) — " + "; ".join(parts)
            + ". Drop these models, or opt into the ridge (on_separation='ridge', command line: --on-separation "
            "ridge; an N(0, 1/ridge) prior on every rating, see analysis_lib.ranking.graph)."
        )


def diagnose(models: Sequence[str], pairs: np.ndarray, outcomes: np.ndarray, counts: np.ndarray) -> Diagnosis:
    """Strong components of the beat graph of the rows with ``counts > 0`` and the reason each model outside the
    largest one is there (:class:`Diagnosis`)."""
    n = len(models)
    names = tuple(models)
    live = counts > 0
    row, src, dst = beat_edges(pairs[live], outcomes[live])
    if n == 0:
        return Diagnosis(names, (), (), (), (), (), ())
    graph = csr_matrix((np.ones(src.size, dtype=np.int8), (src, dst)), shape=(n, n))
    _, strong = connected_components(graph, directed=True, connection="strong")
    _, weak = connected_components(graph, directed=False)
    battles = np.bincount(pairs[live, 0], counts[live], n) + np.bincount(pairs[live, 1], counts[live], n)
    labels = np.unique(strong)
    size = np.array([np.sum(strong == c) for c in labels])
    weight = np.array([battles[strong == c].sum() for c in labels])
    best = labels[np.lexsort((-weight, -size))[0]]
    in_main = strong == best
    out_deg = np.bincount(src, minlength=n)
    in_deg = np.bincount(dst, minlength=n)
    main_piece = weak == weak[np.flatnonzero(in_main)[0]]
    reasons: dict[str, list[str]] = {"never_won": [], "never_lost": [], "unconnected": [], "one_way": []}
    for i in np.flatnonzero(~in_main):
        if not main_piece[i]:
            reasons["unconnected"].append(names[i])
        elif out_deg[i] == 0:
            reasons["never_won"].append(names[i])
        elif in_deg[i] == 0:
            reasons["never_lost"].append(names[i])
        else:
            reasons["one_way"].append(names[i])
    comps = tuple(tuple(names[i] for i in np.flatnonzero(strong == c)) for c in labels)
    return Diagnosis(
        names, tuple(names[i] for i in np.flatnonzero(in_main)), tuple(reasons["never_won"]),
        tuple(reasons["never_lost"]), tuple(reasons["unconnected"]), tuple(reasons["one_way"]), comps,
    )
