"""Nugget-based evaluation of Search Arena battles (*Search Arena Meets Nuggets*, NG, seeds 001 and 002).

AutoNuggetizer (Pradeep et al., 2024) turns each response into a score in two LLM steps: *nuggetization*
(atomic facts relevant to the query, each labelled ``vital`` or ``okay``) and *assignment* (each nugget is
``support``, ``partial_support`` or ``not_support`` by a response). This module holds the pure, cheap parts
of that evaluation: the records, the four scores, the 30-nugget cap, the per-battle preference with its tie
threshold, the human × nugget confusion matrix, agreements, inversions, weighted kappa and the threshold
sweep. The LLM steps themselves are not here.

Scores (NG §3 step 2; TREC 2024 RAG Track definitions). With nuggets ``N`` of one battle, ``V ⊆ N`` the vital
ones, and the assignment of nugget ``i`` to a response mapped to a support value

    s_i = 1 (support), 0.5 (partial_support), 0 (not_support)        (non-strict)
    s*_i = 1 (support), 0 (partial_support), 0 (not_support)         (strict)

    All          = (1/|N|) Σ_{i∈N} s_i        Strict-All   = (1/|N|) Σ_{i∈N} s*_i
    Vital        = (1/|V|) Σ_{i∈V} s_i        Strict-Vital = (1/|V|) Σ_{i∈V} s*_i

A score over an empty set (no nuggets, or no vital nugget for the Vital scores) is NaN. The paper uses All
("counting nuggets of all importance and support levels").

Preference (NG §4, "Confusion Matrix"): with ``d = score_B − score_A`` and threshold ``t`` (0.07),

    nugget preference = model_a if d < −t;  tie if |d| ≤ t;  model_b if d > t

("when the nugget score difference … falls within ± 0.07, the comparison is considered a tie"; the boundary is
inclusive, with a 1e-9 tolerance so that a difference printed as exactly ``t`` is a tie despite binary floats).

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

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from itertools import combinations

import numpy as np
import polars as pl
from scipy import stats as _sps

from analysis_lib.fetch import published
from analysis_lib.stats import kappa_from_confusion

__all__ = [
    "Importance",
    "Assignment",
    "Nugget",
    "AssignedNugget",
    "MAX_NUGGETS",
    "TIE_THRESHOLD",
    "SWEEP_THRESHOLDS",
    "PREFERENCES",
    "HUMAN_VOTES",
    "TABLE1_LANGUAGES",
    "cap_nuggets",
    "nugget_scores",
    "score_frame",
    "nugget_preference",
    "NuggetConfusion",
    "confusion",
    "threshold_sweep",
    "published_confusions",
    "inversion_table",
    "kappa_table",
    "ks_by_vote",
    "unigram_jaccard",
    "mean_pairwise_jaccard",
    "mean_pairwise_cosine",
]

MAX_NUGGETS = 30
"""At most 30 nuggets per battle (NG §4; reached in 67 battles)."""
TIE_THRESHOLD = 0.07
"""Default tie threshold on |score_B − score_A| (NG Figure 4)."""
SWEEP_THRESHOLDS: tuple[float, ...] = tuple(round(0.05 + 0.01 * k, 2) for k in range(11))
"""0.05, 0.06, …, 0.15: the paper's sweep of the tie threshold."""
PREFERENCES: tuple[str, str, str] = ("model_a", "tie", "model_b")
"""Ordered preference labels (columns of the confusion matrix, the kappa order)."""
HUMAN_VOTES: tuple[str, str, str, str] = ("model_a", "tie", "model_b", "tie (bothbad)")
"""Rows of the confusion matrix: the three ordered outcomes, then both-bad."""
TABLE1_LANGUAGES: tuple[str, ...] = ("German", "English", "Chinese", "Portuguese", "Russian", "French")
"""The six languages of Table 1 (b), each ≥ 3% of the battles; the rest form "Others"."""
_EPS = 1e-9


class Importance(str, Enum):
    """Nugget importance: ``vital`` must be in a good answer, ``okay`` is good to have."""

    VITAL = "vital"
    OKAY = "okay"


class Assignment(str, Enum):
    """Whether a response supports a nugget."""

    SUPPORT = "support"
    PARTIAL_SUPPORT = "partial_support"
    NOT_SUPPORT = "not_support"


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


def _mean_or_nan(values: np.ndarray) -> float:
    return float(values.mean()) if values.size else float("nan")


def nugget_scores(assigned: Sequence[AssignedNugget]) -> dict[str, float]:
    """The four AutoNuggetizer scores of one response (formulas in the module docstring).

    Returns ``{"all", "vital", "strict_all", "strict_vital"}``; NaN where the nugget set is empty.
    """
    value = np.array([_SUPPORT_VALUE[a.assignment] for a in assigned], dtype=float)
    strict = np.array([_STRICT_VALUE[a.assignment] for a in assigned], dtype=float)
    vital = np.array([a.nugget.importance is Importance.VITAL for a in assigned], dtype=bool)
    return {
        "all": _mean_or_nan(value),
        "vital": _mean_or_nan(value[vital]),
        "strict_all": _mean_or_nan(strict),
        "strict_vital": _mean_or_nan(strict[vital]),
    }


def score_frame(assignments: pl.DataFrame, by: Sequence[str] = ("battle_id", "side")) -> pl.DataFrame:
    """The four scores for every group of a long frame of assignments (vectorised :func:`nugget_scores`).

    ``assignments`` has one row per (battle, side, nugget) with string columns ``importance``
    (vital / okay) and ``assignment`` (support / partial_support / not_support) plus the ``by`` keys.
    Returns one row per group with ``n_nuggets``, ``n_vital``, ``all``, ``vital``, ``strict_all``,
    ``strict_vital`` (null-free: NaN where a set is empty). The cap is not applied here.
    """
    bad_imp = set(assignments["importance"].unique().to_list()) - {i.value for i in Importance}
    bad_ass = set(assignments["assignment"].unique().to_list()) - {a.value for a in Assignment}
    if bad_imp or bad_ass:
        raise ValueError(f"unknown labels: importance {sorted(map(str, bad_imp))}, assignment {sorted(map(str, bad_ass))}")
    value = pl.col("assignment").replace_strict({a.value: v for a, v in _SUPPORT_VALUE.items()}, return_dtype=pl.Float64)
    strict = pl.col("assignment").replace_strict({a.value: v for a, v in _STRICT_VALUE.items()}, return_dtype=pl.Float64)
    vital = pl.col("importance") == Importance.VITAL.value
    nan = pl.lit(float("nan"))
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
        .with_columns(pl.col("vital", "strict_vital").fill_null(nan))
    )


def nugget_preference(
    score_a: np.ndarray | Sequence[float], score_b: np.ndarray | Sequence[float], threshold: float = TIE_THRESHOLD
) -> np.ndarray:
    """Per-battle nugget preference: ``tie`` if |score_B − score_A| ≤ threshold, else the higher side.

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
    code = np.where(np.abs(d) <= threshold + _EPS, 1, np.where(d < 0, 0, 2))
    return np.asarray(PREFERENCES, dtype=object)[code]


@dataclass(frozen=True)
class NuggetConfusion:
    """Human vote × nugget preference counts: a 4 × 3 matrix, rows :data:`HUMAN_VOTES`, columns :data:`PREFERENCES`."""

    counts: np.ndarray

    def __post_init__(self) -> None:
        c = np.asarray(self.counts)
        if c.shape != (4, 3):
            raise ValueError(f"counts must be 4 x 3 (human A, tie, B, both-bad × nugget A, tie, B), got {c.shape}")
        if (c < 0).any():
            raise ValueError("counts must be non-negative")
        object.__setattr__(self, "counts", c.astype(np.int64))

    @property
    def ordered(self) -> np.ndarray:
        """The 3 × 3 (A, tie, B) block used for kappa (both-bad row left out)."""
        return self.counts[:3]

    @property
    def n(self) -> int:
        """All battles, both-bad included (Table 1's query count)."""
        return int(self.counts.sum())

    @property
    def row_totals(self) -> dict[str, int]:
        """Battles per human vote (model_a 1,714 and model_b 1,761 overall)."""
        return dict(zip(HUMAN_VOTES, self.counts.sum(axis=1).tolist(), strict=True))

    @property
    def agreements_a(self) -> int:
        """Human and nuggets both prefer model_a: C[A, A]."""
        return int(self.counts[0, 0])

    @property
    def agreements_b(self) -> int:
        """Human and nuggets both prefer model_b: C[B, B]."""
        return int(self.counts[2, 2])

    @property
    def agreement_share_a(self) -> float:
        """C[A, A] / row total of human model_a (938 / 1,714 = 54.7%)."""
        return self.agreements_a / float(self.counts[0].sum())

    @property
    def agreement_share_b(self) -> float:
        """C[B, B] / row total of human model_b (924 / 1,761 = 52.5%)."""
        return self.agreements_b / float(self.counts[2].sum())

    @property
    def inversions(self) -> int:
        """Opposite sides preferred: C[A, B] + C[B, A]."""
        return int(self.counts[0, 2] + self.counts[2, 0])

    @property
    def inversion_rate(self) -> float:
        """inversions / all battles of the subset, both-bad included (Table 1)."""
        return self.inversions / float(self.n)

    def kappa(self, weights: str | None = "quadratic", both_bad: str = "exclude") -> float:
        """Weighted Cohen's kappa over (A, tie, B); ``both_bad="exclude"`` (paper) or ``"tie"`` (merged)."""
        if both_bad == "exclude":
            table = self.ordered
        elif both_bad == "tie":
            table = self.ordered.copy()
            table[1] += self.counts[3]
        else:
            raise ValueError(f"both_bad must be 'exclude' or 'tie', got {both_bad!r}")
        return kappa_from_confusion(table, weights)  # type: ignore[arg-type]

    def __add__(self, other: NuggetConfusion) -> NuggetConfusion:
        return NuggetConfusion(self.counts + other.counts)

    def __sub__(self, other: NuggetConfusion) -> NuggetConfusion:
        return NuggetConfusion(self.counts - other.counts)


def _human_codes(human: Sequence[str] | np.ndarray) -> np.ndarray:
    index = {v: k for k, v in enumerate(HUMAN_VOTES)}
    index["tie_bothbad"] = 3
    h = np.asarray(human, dtype=object)
    unknown = sorted({str(x) for x in h if x not in index})
    if unknown:
        raise ValueError(f"unknown human votes {unknown}; expected one of {list(HUMAN_VOTES)}")
    return np.fromiter((index[x] for x in h), dtype=np.int64, count=h.size)


def confusion(human: Sequence[str] | np.ndarray, preference: Sequence[str] | np.ndarray) -> NuggetConfusion:
    """Count (human vote, nugget preference) pairs into a :class:`NuggetConfusion`.

    Human votes are ``model_a``, ``tie``, ``model_b``, ``tie (bothbad)`` (``tie_bothbad`` accepted);
    preferences are ``model_a``, ``tie``, ``model_b``.
    """
    h = _human_codes(human)
    p_index = {v: k for k, v in enumerate(PREFERENCES)}
    p = np.asarray(preference, dtype=object)
    if p.shape != h.shape:
        raise ValueError(f"human votes and preferences differ in length: {h.size} vs {p.size}")
    unknown = sorted({str(x) for x in p if x not in p_index})
    if unknown:
        raise ValueError(f"unknown preferences {unknown}; expected one of {list(PREFERENCES)}")
    pc = np.fromiter((p_index[x] for x in p), dtype=np.int64, count=p.size)
    counts = np.zeros((4, 3), dtype=np.int64)
    np.add.at(counts, (h, pc), 1)
    return NuggetConfusion(counts)


def threshold_sweep(
    score_a: np.ndarray | Sequence[float],
    score_b: np.ndarray | Sequence[float],
    human: Sequence[str] | np.ndarray,
    thresholds: Iterable[float] = SWEEP_THRESHOLDS,
) -> pl.DataFrame:
    """Kappa and agreement for each tie threshold (NG §4: 0.05–0.15 by 0.01; κ 0.29–0.31).

    Returns one row per threshold: ``threshold``, ``kappa`` (quadratic, both-bad excluded),
    ``agreements_a``, ``agreements_b``, ``inversions``, ``inversion_rate`` and the shares of nugget
    model_a / tie / model_b among human ties (``tie_row_a``, ``tie_row_tie``, ``tie_row_b``; the paper picks
    0.07 as the threshold closest to an equal split of that row).
    """
    a = np.asarray(score_a, dtype=float)
    b = np.asarray(score_b, dtype=float)
    h = _human_codes(human)
    d = b - a
    if np.isnan(d).any():
        raise ValueError("scores contain NaN")
    ts = np.asarray(list(thresholds), dtype=float)
    # preference codes for all thresholds at once: (n_thresholds, n_battles)
    code = np.where(np.abs(d)[None, :] <= ts[:, None] + _EPS, 1, np.where(d < 0, 0, 2)[None, :])
    rows = []
    for t, c in zip(ts, code, strict=True):
        counts = np.zeros((4, 3), dtype=np.int64)
        np.add.at(counts, (h, c), 1)
        m = NuggetConfusion(counts)
        tie_row = counts[1] / max(1, counts[1].sum())
        rows.append(
            {
                "threshold": float(t),
                "kappa": m.kappa(),
                "agreements_a": m.agreements_a,
                "agreements_b": m.agreements_b,
                "inversions": m.inversions,
                "inversion_rate": m.inversion_rate,
                "tie_row_a": float(tie_row[0]),
                "tie_row_tie": float(tie_row[1]),
                "tie_row_b": float(tie_row[2]),
            }
        )
    return pl.DataFrame(rows)


_CSV_VOTES = {"model_a": 0, "tie": 1, "model_b": 2, "tie_bothbad": 3}


def published_confusions(frame: pl.DataFrame | None = None) -> dict[tuple[str, str], NuggetConfusion]:
    """The published matrices (``published/nuggets_confusion_matrices.csv``) keyed by (subset_type, subset).

    Adds ``("language", "Others")`` = overall − the six Table 1 languages (Table 1 (b), row 7: 647
    battles), since the CSV lists only nine languages.
    """
    if frame is None:
        frame = pl.read_csv(published("nuggets_confusion_matrices"))
    out: dict[tuple[str, str], NuggetConfusion] = {}
    for (subset_type, subset), g in frame.group_by(["subset_type", "subset"], maintain_order=True):
        counts = np.zeros((4, 3), dtype=np.int64)
        for r in g.iter_rows(named=True):
            counts[_CSV_VOTES[r["human_vote"]]] = [r["nugget_model_a"], r["nugget_tie"], r["nugget_model_b"]]
        out[(str(subset_type), str(subset))] = NuggetConfusion(counts)
    overall = out[("overall", "all")]
    six = [out[("language", lang)] for lang in TABLE1_LANGUAGES if ("language", lang) in out]
    if len(six) == len(TABLE1_LANGUAGES):
        rest = overall.counts - sum(m.counts for m in six)
        if (rest >= 0).all():
            out[("language", "Others")] = NuggetConfusion(rest)
    return out


def inversion_table(confusions: dict[tuple[str, str], NuggetConfusion], subset_type: str) -> pl.DataFrame:
    """Table 1 for one side (``query_category`` or ``language``): battles, inversions, inversion %, κ.

    Sorted by inversion rate, highest first (the paper's order).
    """
    rows = [
        {
            "subset": subset,
            "battles": m.n,
            "inversions": m.inversions,
            "inversion_pct": 100.0 * m.inversion_rate,
            "agreement_a_pct": 100.0 * m.agreement_share_a,
            "agreement_b_pct": 100.0 * m.agreement_share_b,
            "kappa": m.kappa(),
        }
        for (st, subset), m in confusions.items()
        if st == subset_type
    ]
    return pl.DataFrame(rows).sort("inversion_pct", descending=True)


def kappa_table(confusions: dict[tuple[str, str], NuggetConfusion]) -> pl.DataFrame:
    """Quadratic-weighted kappa of every matrix, both-bad excluded (paper) and merged into tie (sensitivity)."""
    return pl.DataFrame(
        [
            {
                "subset_type": st,
                "subset": s,
                "battles": m.n,
                "kappa": m.kappa(),
                "kappa_bothbad_as_tie": m.kappa(both_bad="tie"),
            }
            for (st, s), m in confusions.items()
        ]
    )


def ks_by_vote(score_diff: np.ndarray | Sequence[float], human: Sequence[str] | np.ndarray) -> pl.DataFrame:
    """NG-F2: two-sample Kolmogorov–Smirnov tests of score_B − score_A between human vote groups.

    Both-bad battles are left out (as in Fig 3). Pairs (model_a, model_b), (model_a, tie), (model_b, tie);
    columns ``group_1``, ``group_2``, ``n_1``, ``n_2``, ``ks_statistic`` (D = sup |F_1 − F_2|), ``p_value``
    (scipy ``ks_2samp``, two-sided, exact/asymptotic chosen by scipy).
    """
    d = np.asarray(score_diff, dtype=float)
    h = _human_codes(human)
    if d.shape != h.shape:
        raise ValueError(f"score differences and votes differ in length: {d.size} vs {h.size}")
    groups = {name: d[h == k] for k, name in enumerate(PREFERENCES)}
    rows = []
    for g1, g2 in (("model_a", "model_b"), ("model_a", "tie"), ("model_b", "tie")):
        x, y = groups[g1], groups[g2]
        res = _sps.ks_2samp(x, y)
        rows.append({"group_1": g1, "group_2": g2, "n_1": x.size, "n_2": y.size,
                     "ks_statistic": float(res.statistic), "p_value": float(res.pvalue)})
    return pl.DataFrame(rows)


_TOKEN = re.compile(r"\w+", re.UNICODE)


def unigram_jaccard(text_1: str, text_2: str) -> float:
    """Jaccard similarity |U_1 ∩ U_2| / |U_1 ∪ U_2| of lower-cased word-unigram sets (NG-T2); 0 if both empty."""
    u1, u2 = set(_TOKEN.findall(text_1.lower())), set(_TOKEN.findall(text_2.lower()))
    union = u1 | u2
    return len(u1 & u2) / len(union) if union else 0.0


def mean_pairwise_jaccard(texts: Sequence[str]) -> float:
    """Mean unigram Jaccard over all unordered pairs of one battle's nuggets (NG-T2); NaN with < 2 nuggets."""
    pairs = [unigram_jaccard(x, y) for x, y in combinations(texts, 2)]
    return float(np.mean(pairs)) if pairs else float("nan")


def mean_pairwise_cosine(embeddings: np.ndarray) -> float:
    """Mean cosine similarity over all unordered pairs of rows (one battle's nugget embeddings; NG-T2)."""
    e = np.asarray(embeddings, dtype=float)
    if e.ndim != 2:
        raise ValueError(f"embeddings must be 2-D, got shape {e.shape}")
    n = e.shape[0]
    if n < 2:
        return float("nan")
    norms = np.linalg.norm(e, axis=1)
    if (norms == 0).any():
        raise ValueError("zero-length embedding")
    u = e / norms[:, None]
    sim = u @ u.T
    iu = np.triu_indices(n, k=1)
    return float(sim[iu].mean())
