"""The published nugget matrices (NG Figure 4, Table 1, Appendix B; Figure 5) and K-S statistics (Figure 2).

K-S p from D (NG-F2 check). For two samples of sizes m and n the two-sided K-S p-value is a function of D
alone; scipy's ``ks_2samp`` computes it exactly (``method="exact"``) or from the limiting distribution
(``"asymp"``: ``kstwo.sf(D, round(mn/(m+n)))``). D can only take the values |a/m − b/n|, so a published D
rounded to three decimals stands for every attainable D in [D − 0.0005, D + 0.0005]; :func:`ks_p_interval`
returns the p-values at the largest and smallest attainable D of that interval (p falls as D rises), and a
published p "follows from D" when it lies in that interval (after its own rounding to two significant digits).
The group sizes are the row totals of the matching published matrix (model_a, tie, model_b rows; both-bad
battles are left out of Figure 2).
"""

from __future__ import annotations

import numpy as np
import polars as pl
from scipy import stats as _sps

from analysis_lib.fetch import published
from analysis_lib.nuggets.agreement import NuggetConfusion
from analysis_lib.nuggets.scores import TABLE1_LANGUAGES
from analysis_lib.search_arena.schema import BOTH_BAD, VOTES_BY_SIDE

#: Row of each ``human_vote`` of the published CSVs, which spell both-bad ``tie_bothbad``: the order of
#: :data:`analysis_lib.search_arena.schema.VOTES_BY_SIDE`.
CSV_VOTE_ROWS: dict[str, int] = {("tie_bothbad" if v == BOTH_BAD else v): k for k, v in enumerate(VOTES_BY_SIDE)}


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
            counts[CSV_VOTE_ROWS[r["human_vote"]]] = [r["nugget_model_a"], r["nugget_tie"], r["nugget_model_b"]]
        out[(str(subset_type), str(subset))] = NuggetConfusion(counts)
    overall = out[("overall", "all")]
    six = [out[("language", lang)] for lang in TABLE1_LANGUAGES if ("language", lang) in out]
    if len(six) == len(TABLE1_LANGUAGES):
        rest = overall.counts - sum(m.counts for m in six)
        if (rest >= 0).all():
            out[("language", "Others")] = NuggetConfusion(rest)
    return out


KS_COMPARISONS: dict[str, tuple[str, str]] = {
    "model_a vs model_b": ("model_a", "model_b"),
    "model_a vs tie": ("model_a", "tie"),
    "model_b vs tie": ("model_b", "tie"),
}


#: the tie threshold of NG Figure 5 (nuggets from the responses only: "more discrete" scores, NG §4.2)
RESPONSES_ONLY_THRESHOLD = 0.1


def responses_only_confusion(frame: pl.DataFrame | None = None) -> NuggetConfusion:
    """NG Figure 5: the overall matrix with nuggets from the two responses only, tie threshold
    :data:`RESPONSES_ONLY_THRESHOLD` (0.1)."""
    if frame is None:
        frame = pl.read_csv(published("nuggets_responses_only_confusion"))
    counts = np.zeros((4, 3), dtype=np.int64)
    for r in frame.filter((pl.col("subset_type") == "overall") & (pl.col("subset") == "all")).iter_rows(named=True):
        counts[CSV_VOTE_ROWS[r["human_vote"]]] = [r["nugget_model_a"], r["nugget_tie"], r["nugget_model_b"]]
    return NuggetConfusion(counts)


def published_ks(frame: pl.DataFrame | None = None) -> pl.DataFrame:
    """NG Figure 2's K-S statistics: ``variant`` (with_urls / responses_only), ``comparison``, ``ks_statistic``,
    ``p_value``, plus ``group_1``, ``group_2`` and the group sizes ``n_1``, ``n_2`` (row totals of the
    variant's published matrix)."""
    if frame is None:
        frame = pl.read_csv(published("nuggets_ks_statistics"))
    unknown = sorted(set(frame["comparison"].to_list()) - set(KS_COMPARISONS))
    if unknown:
        raise ValueError(f"nuggets_ks_statistics: unknown comparison(s) {unknown}; expected {list(KS_COMPARISONS)}")
    totals = {"with_urls": published_confusions()[("overall", "all")].row_totals,
              "responses_only": responses_only_confusion().row_totals}
    rows = []
    for r in frame.iter_rows(named=True):
        if r["variant"] not in totals:
            raise ValueError(f"nuggets_ks_statistics: unknown variant {r['variant']!r}; expected {list(totals)}")
        g1, g2 = KS_COMPARISONS[r["comparison"]]
        rows.append({**r, "group_1": g1, "group_2": g2, "n_1": totals[r["variant"]][g1],
                     "n_2": totals[r["variant"]][g2]})
    return pl.DataFrame(rows)


def attainable_d(m: int, n: int, lo: float, hi: float) -> np.ndarray:
    """Every value |a/m − b/n| (0 ≤ a ≤ m, 0 ≤ b ≤ n) of the two-sample K-S statistic in [lo, hi], sorted."""
    a = np.arange(m + 1)[:, None] / m
    b = np.arange(n + 1)[None, :] / n
    d = np.abs(a - b).ravel()
    return np.unique(d[(d >= lo - 1e-12) & (d <= hi + 1e-12)])


def ks_pvalue(d: float, m: int, n: int, method: str = "exact") -> float:
    """Two-sided two-sample K-S p-value of an attainable D for sizes m and n, by scipy's ``ks_2samp``.

    Two samples with exactly that D are built (``a`` zeros and ``m − a`` ones against ``b`` zeros and
    ``n − b`` ones, with ``a/m − b/n = D``) and handed to ``scipy.stats.ks_2samp(method=method)``.
    """
    a_grid = np.arange(m + 1)
    b_real = (a_grid / m - d) * n
    b = np.rint(b_real).astype(int)
    ok = (b >= 0) & (b <= n) & (np.abs(a_grid / m - b / n - d) < 1e-9)
    if not ok.any():
        raise ValueError(f"D = {d} is not attainable with sizes {m} and {n}")
    a0, b0 = int(a_grid[ok][0]), int(b[ok][0])
    x = np.r_[np.zeros(a0), np.ones(m - a0)]
    y = np.r_[np.zeros(b0), np.ones(n - b0)]
    res = _sps.ks_2samp(x, y, method=method)
    return float(res.pvalue)


def ks_p_interval(
    d: float, m: int, n: int, *, decimals: int = 3, method: str = "exact"
) -> tuple[float, float, float, float]:
    """(D_min, D_max, p at D_max, p at D_min) over the attainable D that round to ``d`` at ``decimals``."""
    half = 0.5 * 10.0**-decimals
    grid = attainable_d(m, n, d - half, d + half)
    if grid.size == 0:
        raise ValueError(f"no attainable D within ±{half} of {d} for sizes {m}, {n}")
    lo, hi = float(grid[0]), float(grid[-1])
    return lo, hi, ks_pvalue(hi, m, n, method), ks_pvalue(lo, m, n, method)


def ks_consistency(table: pl.DataFrame | None = None, method: str = "exact") -> pl.DataFrame:
    """For every published (D, p): the p-interval implied by D's rounding and the sizes, and whether the published
    p (rounded to 2 significant digits, so ±5% of its leading digits) falls inside it (``consistent``)."""
    table = published_ks() if table is None else table
    rows = []
    for r in table.iter_rows(named=True):
        lo, hi, p_lo, p_hi = ks_p_interval(r["ks_statistic"], r["n_1"], r["n_2"], method=method)
        mant = 10.0 ** np.floor(np.log10(r["p_value"]))
        p_min, p_max = r["p_value"] - 0.05 * mant, r["p_value"] + 0.05 * mant
        rows.append({**r, "d_min": lo, "d_max": hi, "p_at_d_max": p_lo, "p_at_d_min": p_hi,
                     "consistent": bool(p_max >= p_lo and p_min <= p_hi)})
    return pl.DataFrame(rows)
