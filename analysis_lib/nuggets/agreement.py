"""Human vote × nugget preference: confusion matrices, weighted κ, inversions, the threshold sweep and K-S tests.

Definitions (confusion rows, κ weights, inversion denominator) are stated in :mod:`analysis_lib.nuggets.scores`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl
from scipy import stats as _sps

from analysis_lib.nuggets.scores import PREFERENCES, SWEEP_THRESHOLDS, TABLE1_LANGUAGES, Boundary, tie_mask
from analysis_lib.search_arena.schema import VOTES_BY_SIDE
from analysis_lib.stats import kappa_from_confusion


@dataclass(frozen=True)
class NuggetConfusion:
    """Human vote × nugget preference counts: a 4 × 3 matrix, rows
    :data:`~analysis_lib.search_arena.schema.VOTES_BY_SIDE`, columns :data:`PREFERENCES`."""

    counts: np.ndarray
    #: what the columns' preference is (the column labels of its chart): nuggets, an LLM judge, ROUGE-L
    preference: str = "nuggets"

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
        return dict(zip(VOTES_BY_SIDE, self.counts.sum(axis=1).tolist(), strict=True))

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
        total = float(self.counts[0].sum())
        return self.agreements_a / total if total else float("nan")

    @property
    def agreement_share_b(self) -> float:
        """C[B, B] / row total of human model_b (924 / 1,761 = 52.5%)."""
        total = float(self.counts[2].sum())
        return self.agreements_b / total if total else float("nan")

    @property
    def decided(self) -> np.ndarray:
        """The 2 × 2 block of decided battles: rows human (A, B), columns preference (A, B); ties and both-bad
        left out (NG Figure 8)."""
        return self.counts[np.ix_([0, 2], [0, 2])]

    @property
    def inversions(self) -> int:
        """Opposite sides preferred: C[A, B] + C[B, A]."""
        return int(self.counts[0, 2] + self.counts[2, 0])

    @property
    def inversion_rate(self) -> float:
        """inversions / all battles of the subset, both-bad included (Table 1)."""
        return self.inversions / float(self.n) if self.n else float("nan")

    @property
    def kappa(self) -> float:
        """Quadratic-weighted Cohen's kappa over (A, tie, B), both-bad battles left out (the paper's)."""
        return kappa_from_confusion(self.ordered, "quadratic")

    @property
    def kappa_bothbad_as_tie(self) -> float:
        """The same κ with both-bad battles merged into tie (a sensitivity check of the convention)."""
        table = self.ordered.copy()
        table[1] += self.counts[3]
        return kappa_from_confusion(table, "quadratic")

    def __add__(self, other: NuggetConfusion) -> NuggetConfusion:
        return NuggetConfusion(self.counts + other.counts)

    def __sub__(self, other: NuggetConfusion) -> NuggetConfusion:
        return NuggetConfusion(self.counts - other.counts)


def _human_codes(human: Sequence[str] | np.ndarray) -> np.ndarray:
    index = {v: k for k, v in enumerate(VOTES_BY_SIDE)}
    index["tie_bothbad"] = 3
    h = np.asarray(human, dtype=object)
    unknown = sorted({str(x) for x in h if x not in index})
    if unknown:
        raise ValueError(f"unknown human votes {unknown}; expected one of {list(VOTES_BY_SIDE)}")
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
    boundary: Boundary = "paper",
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
    code = np.where(tie_mask(d[None, :], ts[:, None], boundary), 1, np.where(d < 0, 0, 2)[None, :])
    rows = []
    for t, c in zip(ts, code, strict=True):
        counts = np.zeros((4, 3), dtype=np.int64)
        np.add.at(counts, (h, c), 1)
        m = NuggetConfusion(counts)
        tie_row = counts[1] / max(1, counts[1].sum())
        rows.append(
            {
                "threshold": float(t),
                "kappa": m.kappa,
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



INVERSION_SCHEMA = {"subset": pl.String, "battles": pl.Int64, "inversions": pl.Int64, "inversion_pct": pl.Float64,
                    "agreement_a_pct": pl.Float64, "agreement_b_pct": pl.Float64, "kappa": pl.Float64}


def inversion_table(confusions: dict[tuple[str, str], NuggetConfusion], subset_type: str) -> pl.DataFrame:
    """Table 1 for one side (``query_category`` or ``language``): battles, inversions, inversion %, κ.

    Sorted by inversion rate, highest first (the paper's order); no rows (same columns) when ``confusions`` has
    no subset of that type (e.g. records without query classes).
    """
    rows = [
        {
            "subset": subset,
            "battles": m.n,
            "inversions": m.inversions,
            "inversion_pct": 100.0 * m.inversion_rate,
            "agreement_a_pct": 100.0 * m.agreement_share_a,
            "agreement_b_pct": 100.0 * m.agreement_share_b,
            "kappa": m.kappa,
        }
        for (st, subset), m in confusions.items()
        if st == subset_type
    ]
    return pl.DataFrame(rows, schema=INVERSION_SCHEMA).sort("inversion_pct", descending=True)


def table1(confusions: dict[tuple[str, str], NuggetConfusion], subset_type: str) -> pl.DataFrame:
    """The rows of NG Table 1 for one side: every query class, or the six languages of Table 1 and "Others" (the
    published matrices also hold Italian, Japanese and Spanish, which Table 1 counts in "Others");
    :func:`inversion_table`'s columns and order."""
    table = inversion_table(confusions, subset_type)
    if subset_type == "language":
        table = table.filter(pl.col("subset").is_in([*TABLE1_LANGUAGES, "Others"]))
    return table


def kappa_table(confusions: dict[tuple[str, str], NuggetConfusion]) -> pl.DataFrame:
    """Quadratic-weighted kappa of every matrix, both-bad excluded (paper) and merged into tie (sensitivity)."""
    return pl.DataFrame(
        [
            {
                "subset_type": st,
                "subset": s,
                "battles": m.n,
                "kappa": m.kappa,
                "kappa_bothbad_as_tie": m.kappa_bothbad_as_tie,
            }
            for (st, s), m in confusions.items()
        ],
        schema={"subset_type": pl.String, "subset": pl.String, "battles": pl.Int64, "kappa": pl.Float64,
                "kappa_bothbad_as_tie": pl.Float64},
    )


def top_kappa_classes(kappas: pl.DataFrame, n: int = 3, set_apart: Sequence[str] = ()) -> list[str]:
    """The ``n`` query classes of highest κ in ``kappas`` (:func:`kappa_table`), highest first, leaving out the
    classes ``set_apart`` (e.g. a class too small to compare)."""
    classes = kappas.filter((pl.col("subset_type") == "query_category") & ~pl.col("subset").is_in(list(set_apart)))
    return classes.sort("kappa", descending=True).head(n)["subset"].to_list()


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
    if np.isnan(d).any():
        raise ValueError(f"score differences contain {int(np.isnan(d).sum())} NaN value(s) (battles without a "
                         "score): drop those battles first and report how many")
    groups = {name: d[h == k] for k, name in enumerate(PREFERENCES)}
    rows = []
    for g1, g2 in (("model_a", "model_b"), ("model_a", "tie"), ("model_b", "tie")):
        x, y = groups[g1], groups[g2]
        res = _sps.ks_2samp(x, y)
        rows.append({"group_1": g1, "group_2": g2, "n_1": x.size, "n_2": y.size,
                     "ks_statistic": float(res.statistic), "p_value": float(res.pvalue)})
    return pl.DataFrame(rows)
