"""Nugget-based evaluation of Search Arena battles (*Search Arena Meets Nuggets*, NG, both versions).

AutoNuggetizer (Pradeep et al., 2024) turns each response into a score in two LLM steps: *nuggetization*
(atomic facts relevant to the query, each labelled ``vital`` or ``okay``) and *assignment* (each nugget is
``support``, ``partial_support`` or ``not_support`` by a response). This module holds the pure, cheap parts
of that evaluation: the nugget types, the four scores, the 30-nugget cap and the per-battle preference with its
tie threshold. It also states the definitions of the human × nugget confusion matrix, agreements, inversions and
weighted kappa, which :mod:`analysis_lib.nuggets.agreement` computes (with the threshold sweep); the records are
:mod:`analysis_lib.nuggets.records`' and the LLM steps :mod:`analysis_lib.nuggets.pipeline`'s.

Scores (NG §3 step 2; TREC 2024 RAG Track definitions). With nuggets ``N`` of one battle, ``V ⊆ N`` the vital
ones, and the assignment of nugget ``i`` to a response mapped to a support value

    s_i = 1 (support), 0.5 (partial_support), 0 (not_support)        (non-strict)
    s*_i = 1 (support), 0 (partial_support), 0 (not_support)         (strict)

    All          = (1/|N|) Σ_{i∈N} s_i        Strict-All   = (1/|N|) Σ_{i∈N} s*_i
    Vital        = (1/|V|) Σ_{i∈V} s_i        Strict-Vital = (1/|V|) Σ_{i∈V} s*_i

A score over an empty set (no nuggets, or no vital nugget for the Vital scores) is NaN by default
(``empty="nan"``); nuggetizer's ``calculate_nugget_scores`` gives 0.0 there (``empty="zero"``, so a battle
without vital nuggets is a Vital tie). The paper uses All ("counting nuggets of all importance and support
levels"), which is never empty on scored battles.

Preference (NG §4, "Confusion Matrix"): with ``d = score_B − score_A`` and threshold ``t`` (0.07),

    nugget preference = model_a if d < −t;  tie if |d| ≤ t;  model_b if d > t

("when the nugget score difference … falls within ± 0.07, the comparison is considered a tie"; the boundary is
inclusive, with a 1e-9 tolerance so that a difference printed as exactly ``t`` is a tie despite binary floats:
``boundary="paper"``). The authors' code differs only at |d| = t, which scores reach (e.g. 10 nuggets, t = 0.1):
their Figure 4/5 script (lmsys_nuggetize ``src/visualization/confusion_matrix.py``) decides when
``abs(b − a) > t`` in binary floats (``boundary="float"``: 0.30000000000000004 − 0.2 > 0.1 is a decision), and
their Table 1 script (``src/analysis/process_results.py``) ties only when ``−t < d < t`` (``boundary="exclusive"``).

Confusion matrix: rows the human vote in the order (model_a, tie, model_b, tie (bothbad)), columns the nugget
preference (model_a, tie, model_b), as in NG Figure 4 and ``published/nuggets_confusion_matrices.csv``.
Both-bad battles are *kept* for the inversion rate (Table 1's query counts include them: the ambiguous row
totals 196 only with the both-bad row) and *left out* of kappa (only the 3 × 3 (A, tie, B) block; this gives
the published κ 0.298 ≈ 0.30 overall and 0.354 ≈ 0.35 for knowledge-intensive, whereas merging both-bad into
tie gives 0.280 and 0.330).

    agreements_a = C[A, A] (938 of the row total 1,714), agreements_b = C[B, B] (924 of 1,761)
    inversions   = C[A, B] + C[B, A]           (human and nuggets prefer opposite sides)
    inversion rate = inversions / Σ C          (all battles of the subset, both-bad included: Table 1)
    κ_w = 1 − Σ w_ij O_ij / Σ w_ij E_ij,  w_ij = ((i − j)/2)², i, j ∈ (A, tie, B)

with ``O`` the observed and ``E`` the marginal-product proportions (``stats.kappa_from_confusion``): the
paper's quadratic weights (0, 0.25, 1) for (identical, tie vs side, inversion).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Literal

import numpy as np
import polars as pl

from analysis_lib.search_arena.schema import VOTES_BY_SIDE

MAX_NUGGETS = 30
"""At most 30 nuggets per battle (NG §4; reached in 67 battles)."""
TIE_THRESHOLD = 0.07
"""Default tie threshold on |score_B − score_A| (NG Figure 4)."""
SWEEP_THRESHOLDS: tuple[float, ...] = tuple(round(0.05 + 0.01 * k, 2) for k in range(11))
"""0.05, 0.06, …, 0.15: the paper's sweep of the tie threshold."""
PREFERENCES: tuple[str, ...] = VOTES_BY_SIDE[:3]
"""Ordered nugget-preference labels, the vote words ``model_a``, ``tie``, ``model_b`` (columns of the confusion
matrix, the kappa order); its rows are :data:`analysis_lib.search_arena.schema.VOTES_BY_SIDE`."""
TABLE1_LANGUAGES: tuple[str, ...] = ("German", "English", "Chinese", "Portuguese", "Russian", "French")
"""The six languages of Table 1 (b), each ≥ 3% of the battles; the rest form "Others"."""
_EPS = 1e-9
Boundary = Literal["paper", "float", "exclusive"]
Empty = Literal["nan", "zero"]


class Importance(str, Enum):
    """Nugget importance: ``vital`` must be in a good answer, ``okay`` is good to have."""

    VITAL = "vital"
    OKAY = "okay"


class Assignment(str, Enum):
    """Whether a response supports a nugget."""

    SUPPORT = "support"
    PARTIAL_SUPPORT = "partial_support"
    NOT_SUPPORT = "not_support"


#: The assignment labels in order, not support < partial support < support: the rows and columns of an
#: assignment-agreement table and the order its quadratic-weighted κ uses.
ASSIGNMENT_ORDER: tuple[str, ...] = tuple(a.value for a in (Assignment.NOT_SUPPORT, Assignment.PARTIAL_SUPPORT,
                                                             Assignment.SUPPORT))

_SUPPORT_VALUE = {Assignment.SUPPORT: 1.0, Assignment.PARTIAL_SUPPORT: 0.5, Assignment.NOT_SUPPORT: 0.0}
_STRICT_VALUE = {Assignment.SUPPORT: 1.0, Assignment.PARTIAL_SUPPORT: 0.0, Assignment.NOT_SUPPORT: 0.0}


@dataclass(frozen=True)
class Nugget:
    """One atomic fact of a battle's nugget list."""

    text: str
    importance: Importance

    def __post_init__(self) -> None:
        object.__setattr__(self, "importance", Importance(self.importance))


@dataclass(frozen=True)
class AssignedNugget:
    """A nugget with its assignment to one response."""

    nugget: Nugget
    assignment: Assignment

    def __post_init__(self) -> None:
        object.__setattr__(self, "assignment", Assignment(self.assignment))


def cap_nuggets(nuggets: Sequence[Nugget], max_nuggets: int = MAX_NUGGETS) -> list[Nugget]:
    """Keep at most ``max_nuggets``, removing ``okay`` nuggets only (NG §4).

    All vital nuggets are kept, then okay nuggets in their original order until the list holds
    ``max_nuggets``; the original order is preserved. The paper: "only nuggets labeled as okay are removed,
    while no vital nuggets are discarded", so more than ``max_nuggets`` vital nuggets are all kept.
    """
    if max_nuggets < 0:
        raise ValueError(f"max_nuggets must be >= 0, got {max_nuggets}")
    if len(nuggets) <= max_nuggets:
        return list(nuggets)
    n_vital = sum(n.importance is Importance.VITAL for n in nuggets)
    room = max(0, max_nuggets - n_vital)
    kept: list[Nugget] = []
    for n in nuggets:
        if n.importance is Importance.VITAL:
            kept.append(n)
        elif room > 0:
            kept.append(n)
            room -= 1
    return kept


def _check_empty(empty: str) -> float:
    if empty not in ("nan", "zero"):
        raise ValueError(f"empty must be 'nan' or 'zero', got {empty!r}")
    return float("nan") if empty == "nan" else 0.0


def tie_mask(d: np.ndarray, threshold: float | np.ndarray, boundary: Boundary = "paper") -> np.ndarray:
    """True where ``d = score_B − score_A`` is a tie at ``threshold`` (the boundary rules in the module
    docstring); broadcasts, so a column of thresholds against a row of differences gives one row per threshold."""
    d, t = np.abs(np.asarray(d, dtype=float)), np.asarray(threshold, dtype=float)
    if boundary == "paper":
        return d <= t + _EPS
    if boundary == "float":
        return ~(d > t)
    if boundary == "exclusive":
        return d < t
    raise ValueError(f"boundary must be 'paper', 'float' or 'exclusive', got {boundary!r}")


def nugget_scores(assigned: Sequence[AssignedNugget], empty: Empty = "nan") -> dict[str, float]:
    """The four AutoNuggetizer scores of one response (formulas in the module docstring).

    Returns ``{"all", "vital", "strict_all", "strict_vital"}``; where the nugget set is empty, NaN
    (``empty="nan"``) or nuggetizer's 0.0 (``empty="zero"``).
    """
    fill = _check_empty(empty)

    def _mean(values: np.ndarray) -> float:
        return float(values.mean()) if values.size else fill

    value = np.array([_SUPPORT_VALUE[a.assignment] for a in assigned], dtype=float)
    strict = np.array([_STRICT_VALUE[a.assignment] for a in assigned], dtype=float)
    vital = np.array([a.nugget.importance is Importance.VITAL for a in assigned], dtype=bool)
    return {
        "all": _mean(value),
        "vital": _mean(value[vital]),
        "strict_all": _mean(strict),
        "strict_vital": _mean(strict[vital]),
    }


def score_frame(assignments: pl.DataFrame, by: Sequence[str] = ("battle_id", "side"),
                empty: Empty = "nan") -> pl.DataFrame:
    """The four scores for every group of a long frame of assignments (vectorised :func:`nugget_scores`).

    ``assignments`` has one row per (battle, side, nugget) with string columns ``importance``
    (vital / okay) and ``assignment`` (support / partial_support / not_support) plus the ``by`` keys.
    Returns one row per group with ``n_nuggets``, ``n_vital``, ``all``, ``vital``, ``strict_all``,
    ``strict_vital`` (null-free: NaN where a set is empty, or 0.0 with ``empty="zero"``). The cap is not applied
    here.
    """
    fill = _check_empty(empty)
    bad_imp = set(assignments["importance"].unique().to_list()) - {i.value for i in Importance}
    bad_ass = set(assignments["assignment"].unique().to_list()) - {a.value for a in Assignment}
    if bad_imp or bad_ass:
        raise ValueError(
            f"unknown labels: importance {sorted(map(str, bad_imp))}, assignment {sorted(map(str, bad_ass))}"
        )
    value = pl.col("assignment").replace_strict({a.value: v for a, v in _SUPPORT_VALUE.items()},
                                                return_dtype=pl.Float64)
    strict = pl.col("assignment").replace_strict({a.value: v for a, v in _STRICT_VALUE.items()},
                                                 return_dtype=pl.Float64)
    vital = pl.col("importance") == Importance.VITAL.value
    return (
        assignments.group_by(list(by), maintain_order=True)
        .agg(
            pl.len().alias("n_nuggets"),
            vital.sum().alias("n_vital"),
            value.mean().alias("all"),
            value.filter(vital).mean().alias("vital"),
            strict.mean().alias("strict_all"),
            strict.filter(vital).mean().alias("strict_vital"),
        )
        .with_columns(pl.col("vital", "strict_vital").fill_null(pl.lit(fill)))
    )


def nugget_preference(
    score_a: np.ndarray | Sequence[float], score_b: np.ndarray | Sequence[float], threshold: float = TIE_THRESHOLD,
    boundary: Boundary = "paper",
) -> np.ndarray:
    """Per-battle nugget preference: ``tie`` if |score_B − score_A| ≤ threshold, else the higher side
    (``boundary`` picks the rule at |d| = threshold; module docstring).

    Returns an object array of ``model_a`` / ``tie`` / ``model_b``. NaN scores are an error.
    """
    a = np.asarray(score_a, dtype=float)
    b = np.asarray(score_b, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"score arrays differ in shape: {a.shape} vs {b.shape}")
    if threshold < 0:
        raise ValueError(f"threshold must be >= 0, got {threshold}")
    d = b - a
    if np.isnan(d).any():
        raise ValueError("scores contain NaN")
    code = np.where(tie_mask(d, threshold, boundary), 1, np.where(d < 0, 0, 2))
    return np.asarray(PREFERENCES, dtype=object)[code]
