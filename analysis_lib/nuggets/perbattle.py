"""Per-battle nugget analyses on records: the cap, the four scores of both sides, confusions by subset, KDEs.

Everything is vectorised over battles (polars group-bys, numpy arrays); see
:mod:`analysis_lib.nuggets.scores` for the score, preference and κ definitions.

Cap (NG §4): per battle, all vital nuggets are kept and okay nuggets in list order until 30 nuggets; in
polars, an okay nugget at okay-rank ``r`` (0-based, by position) is kept iff ``r < 30 − n_vital``.

KDE (NG-F3): Gaussian kernel density of ``d = score_B − score_A`` per human vote, both-bad battles left out,
with bandwidth factor 0.5 × Scott's (seaborn's ``bw_adjust=0.5``, which we read the paper's "bandwidth 0.5" as).
"""

from __future__ import annotations

import numpy as np
import polars as pl
from scipy.stats import gaussian_kde

from analysis_lib.nuggets.agreement import NuggetConfusion, confusion
from analysis_lib.nuggets.records import NuggetRecords
from analysis_lib.nuggets.scores import (
    MAX_NUGGETS,
    PREFERENCES,
    TABLE1_LANGUAGES,
    TIE_THRESHOLD,
    Boundary,
    Empty,
    nugget_preference,
    score_frame,
)

METRICS: tuple[str, ...] = ("all", "vital", "strict_all", "strict_vital")
KDE_BW_ADJUST = 0.5


def cap_frame(nuggets: pl.DataFrame, max_nuggets: int = MAX_NUGGETS) -> pl.DataFrame:
    """The long nugget frame with the 30-nugget cap applied per (qid, side) (rule in the module docstring).

    The vital count is signed, so a side with more than ``max_nuggets`` vital nuggets keeps all of them and no
    okay nugget (an unsigned count would wrap ``30 − n_vital`` round to ~4.3e9 and keep every okay nugget)."""
    okay = pl.col("importance") == "okay"
    return (
        nuggets.sort("qid", "side", "position")
        .with_columns(
            (pl.col("importance") == "vital").sum().over("qid", "side").cast(pl.Int64).alias("_n_vital"),
            pl.when(okay).then(okay.cast(pl.Int64).cum_sum().over("qid", "side") - 1).otherwise(None)
            .alias("_okay_rank"),
        )
        .filter(~okay | (pl.col("_okay_rank") < (max_nuggets - pl.col("_n_vital"))))
        .drop("_n_vital", "_okay_rank")
    )


def battle_scores(records: NuggetRecords, max_nuggets: int | None = MAX_NUGGETS, empty: Empty = "nan") -> pl.DataFrame:
    """One row per battle: ``qid``, ``winner``, ``language``, ``query_categories``, ``model_a``, ``model_b``,
    ``n_nuggets``, ``n_vital``, ``capped`` (the cap removed nuggets), the four scores of each side
    (``all_a``, ``all_b``, ``vital_a``...) and ``diff`` = ``all_b − all_a``.

    Vital scores are NaN for a battle without vital nuggets (nuggetizer's 0.0 with ``empty="zero"``)."""
    nug = records.nuggets if max_nuggets is None else cap_frame(records.nuggets, max_nuggets)
    sc = score_frame(nug, by=("qid", "side"), empty=empty)
    raw_n = records.nuggets.filter(pl.col("side") == "a").group_by("qid").agg(pl.len().alias("_raw"))
    wide = (
        sc.filter(pl.col("side") == "a").drop("side").rename({m: f"{m}_a" for m in METRICS})
        .join(sc.filter(pl.col("side") == "b").select("qid", *[pl.col(m).alias(f"{m}_b") for m in METRICS]), on="qid")
        .join(raw_n, on="qid")
        .with_columns((pl.col("_raw") > pl.col("n_nuggets")).alias("capped"),
                      (pl.col("all_b") - pl.col("all_a")).alias("diff"))
        .drop("_raw")
    )
    return records.battles().join(wide, on="qid", how="inner", maintain_order="left")


def preferences(scores: pl.DataFrame, threshold: float = TIE_THRESHOLD, metric: str = "all",
                boundary: Boundary = "paper") -> np.ndarray:
    """Nugget preference per battle from ``<metric>_a`` / ``<metric>_b``."""
    return nugget_preference(scores[f"{metric}_a"].to_numpy(), scores[f"{metric}_b"].to_numpy(), threshold, boundary)


def subset_confusions(scores: pl.DataFrame, threshold: float = TIE_THRESHOLD, min_battles: int = 30,
                      boundary: Boundary = "paper") -> dict[tuple[str, str], NuggetConfusion]:
    """Confusion matrices keyed like :func:`published_confusions`: ``("overall", "all")``, ``("language", L)`` for
    every language (plus ``"Others"`` = all but the six of Table 1 when any of them is present and others are) and
    ``("query_category", C)`` for every class in ``query_categories`` (a battle counts in each of its classes).
    Languages and classes with fewer than ``min_battles`` battles are left out (they stay in "Others")."""
    pref = preferences(scores, threshold, boundary=boundary)
    human = scores["winner"].to_numpy()
    out = {("overall", "all"): confusion(human, pref)}
    lang = scores["language"].fill_null("unknown").to_numpy()
    for value in sorted(set(lang.tolist())):
        mask = lang == value
        if mask.sum() >= min_battles:
            out[("language", str(value))] = confusion(human[mask], pref[mask])
    others = ~np.isin(lang, TABLE1_LANGUAGES)
    if any(("language", x) in out for x in TABLE1_LANGUAGES) and others.any():
        out[("language", "Others")] = confusion(human[others], pref[others])
    if "query_categories" in scores.columns:
        exploded = (scores.with_row_index("_row").select("_row", "query_categories")
                    .explode("query_categories").drop_nulls())
        for (cat,), g in exploded.group_by("query_categories", maintain_order=True):
            rows = g["_row"].to_numpy()
            if rows.size < min_battles:
                continue
            out[("query_category", str(cat))] = confusion(human[rows], pref[rows])
    return out


def diffs_by_vote(scores: pl.DataFrame, metric: str = "all") -> dict[str, np.ndarray]:
    """score_B − score_A per human vote (model_a, tie, model_b), both-bad left out (NG-F2, NG-F3)."""
    d = (scores[f"{metric}_b"] - scores[f"{metric}_a"]).to_numpy()
    w = scores["winner"].to_numpy()
    return {v: d[w == v] for v in PREFERENCES}


def kde_curves(groups: dict[str, np.ndarray], grid: np.ndarray | None = None,
               bw_adjust: float = KDE_BW_ADJUST) -> pl.DataFrame:
    """Long frame ``vote, x, density`` of the Gaussian KDE of each group on ``grid`` (default −1…1, 401 points)."""
    grid = np.linspace(-1.0, 1.0, 401) if grid is None else np.asarray(grid, dtype=float)
    parts = []
    for name, values in groups.items():
        v = np.asarray(values, dtype=float)
        v = v[np.isfinite(v)]
        if v.size < 2 or np.ptp(v) == 0:
            continue
        k = gaussian_kde(v)
        k.set_bandwidth(k.factor * bw_adjust)
        parts.append(pl.DataFrame({"vote": [name] * grid.size, "x": grid, "density": k(grid)}))
    return (pl.concat(parts) if parts
            else pl.DataFrame(schema={"vote": pl.String, "x": pl.Float64, "density": pl.Float64}))


def score_summary(scores: pl.DataFrame) -> dict[str, float]:
    """NG-N summaries: battles, mean / median nuggets per battle, vital share, battles reaching the cap."""
    n = scores["n_nuggets"].to_numpy()
    return {
        "battles": float(scores.height),
        "mean nuggets per battle": float(n.mean()) if n.size else float("nan"),
        "median nuggets per battle": float(np.median(n)) if n.size else float("nan"),
        "vital share of nuggets": float(scores["n_vital"].sum() / max(1, n.sum())),
        "battles reaching the 30-nugget cap": float((n >= MAX_NUGGETS).sum()),
        "mean All score": float(np.nanmean(np.r_[scores["all_a"].to_numpy(), scores["all_b"].to_numpy()])),
    }
