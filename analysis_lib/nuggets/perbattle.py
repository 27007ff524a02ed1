"""Per-battle nugget analyses on records: the cap, the four scores of both sides, confusions by subset, KDEs.

Everything is vectorised over battles (polars group-bys, numpy arrays); see
:mod:`analysis_lib.nuggets.scores` for the score, preference and κ definitions.

Cap (NG §4): per battle, all vital nuggets are kept and okay nuggets in list order until 30 nuggets; in
polars, an okay nugget at okay-rank ``r`` (0-based, by position) is kept iff ``r < 30 − n_vital``.

Scores without a vote (:func:`response_scores`): the four scores of every response of nuggetizer-style records
(``qid``, ``nuggets`` with ``importance`` and ``assignment``, any other fields kept as keys: ``model``, ``side``,
``run_id`` …), no human ``winner`` needed. Their means with bootstrap intervals over queries
(:func:`nugget_metrics`): the queries are resampled with replacement, ``rounds`` multinomial draws over the
distinct ``qid`` (``numpy.random.default_rng(seed)``), the same draws for every group (e.g. every model: paired), and
each round's mean is ``Σ_q c_q s_q / Σ_q c_q`` over the group's queries with a score (``s_q`` the mean score of
query ``q`` in the group; NaN scores, such as a Vital score without vital nuggets, left out); the interval is
the ``(1 ∓ level)/2`` percentiles of the rounds (nuggetizer reports the plain mean only).

KDE (NG-F3): Gaussian kernel density of ``d = score_B − score_A`` per human vote, both-bad battles left out,
with bandwidth factor 0.5 × Scott's (seaborn's ``bw_adjust=0.5``, which we read the paper's "bandwidth 0.5" as).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple

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


def cap_frame(nuggets: pl.DataFrame, max_nuggets: int = MAX_NUGGETS,
              by: Sequence[str] = ("qid", "side")) -> pl.DataFrame:
    """The long nugget frame with the 30-nugget cap applied per ``by`` group (rule in the module docstring).

    The vital count is signed, so a side with more than ``max_nuggets`` vital nuggets keeps all of them and no
    okay nugget (an unsigned count would wrap ``30 − n_vital`` round to ~4.3e9 and keep every okay nugget)."""
    okay = pl.col("importance") == "okay"
    keys = list(by)
    return (
        nuggets.sort(*keys, "position")
        .with_columns(
            (pl.col("importance") == "vital").sum().over(keys).cast(pl.Int64).alias("_n_vital"),
            pl.when(okay).then(okay.cast(pl.Int64).cum_sum().over(keys) - 1).otherwise(None)
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


def response_scores(records: Iterable[Mapping[str, object]], max_nuggets: int | None = MAX_NUGGETS,
                    empty: Empty = "nan") -> pl.DataFrame:
    """The four scores of every response, without votes (module docstring): one row per record with its key fields
    (every field but ``nuggets``, ``winner`` and long texts: ``qid``, ``model``, ``side``, …), ``n_nuggets``,
    ``n_vital``, ``all``, ``vital``, ``strict_all``, ``strict_vital``, in the records' order.

    A record needs ``qid`` and ``nuggets`` (a list of ``{"text", "importance", "assignment"}``); a missing one is a
    ``ValueError`` naming the record (from 0); unknown labels are refused by
    :func:`~analysis_lib.nuggets.scores.score_frame`. ``max_nuggets``: the cap per response (``None``: none)."""
    frame = pl.from_dicts(list(records), infer_schema_length=None)
    for key in ("qid", "nuggets"):
        if key not in frame.columns:
            raise ValueError(f"nugget records need a {key!r} field; none of the {frame.height:,} records has one")
        missing = np.flatnonzero(frame[key].is_null().to_numpy())
        if missing.size:
            raise ValueError(f"{missing.size:,} of {frame.height:,} nugget records have no {key!r} (records from 0: "
                             f"{', '.join(map(str, missing[:5]))}{', …' if missing.size > 5 else ''})")
    texts = {"nuggets", "winner", "query", "answer_text", "chunks", "candidate", "narrative"}
    keys = [c for c in frame.columns if c not in texts and frame[c].dtype != pl.List]
    frame = frame.with_row_index("_record")
    long = (frame.select("_record", "nuggets").explode("nuggets").drop_nulls("nuggets")
            .with_columns(pl.int_range(pl.len()).over("_record").alias("position")).unnest("nuggets"))
    for c in ("importance", "assignment"):
        if c not in long.columns:
            raise ValueError(f"nugget records: the nuggets have no {c!r} field")
    long = long.with_columns(pl.col("importance", "assignment").cast(pl.String))
    if max_nuggets is not None:
        long = cap_frame(long, max_nuggets, by=("_record",))
    sc = score_frame(long, by=("_record",), empty=empty)
    return frame.select("_record", *keys).join(sc, on="_record", how="left").with_columns(
        pl.col("n_nuggets", "n_vital").fill_null(0).cast(pl.Int64),
        *(pl.col(m).fill_null(float("nan") if empty == "nan" else 0.0) for m in METRICS),
    ).drop("_record")


def nugget_metrics(scores: pl.DataFrame, by: Sequence[str] = (), *, rounds: int = 1000, seed: int = 0,
                   level: float = 0.95) -> pl.DataFrame:
    """Mean of each score over queries with a bootstrap interval over queries (module docstring).

    ``scores``: :func:`response_scores` (or any frame with ``qid`` and the four score columns); ``by``: group
    columns (e.g. ``["model"]``). Columns ``*by, metric, mean, ci_lower, ci_upper, n_queries`` (``n_queries``:
    queries with a score for that metric)."""
    if rounds < 1 or not 0.0 < level < 1.0:
        raise ValueError(f"rounds must be >= 1 and level in (0, 1), not {rounds} and {level}")
    per_query = scores.group_by([*by, "qid"], maintain_order=True).agg(pl.col(list(METRICS)).mean())
    qids = per_query["qid"].unique(maintain_order=True)
    counts = np.random.default_rng(seed).multinomial(len(qids), np.full(len(qids), 1.0 / len(qids)), size=rounds)
    position = {q: i for i, q in enumerate(qids.to_list())}
    tail = 100.0 * (1.0 - level) / 2.0
    rows: list[dict[str, object]] = []
    for key, group in per_query.group_by(list(by), maintain_order=True) if by else [((), per_query)]:
        c = counts[:, [position[q] for q in group["qid"].to_list()]].astype(float)
        for m in METRICS:
            v = group[m].to_numpy().astype(float)
            ok = np.isfinite(v)
            with np.errstate(invalid="ignore", divide="ignore"):
                boot = (c[:, ok] @ v[ok]) / c[:, ok].sum(axis=1)
            rows.append({**dict(zip(by, key, strict=True)), "metric": m,
                         "mean": float(v[ok].mean()) if ok.any() else float("nan"),
                         "ci_lower": float(np.nanpercentile(boot, tail)) if ok.any() else float("nan"),
                         "ci_upper": float(np.nanpercentile(boot, 100.0 - tail)) if ok.any() else float("nan"),
                         "n_queries": int(ok.sum())})
    return pl.DataFrame(rows)


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


def diff_means(groups: Mapping[str, np.ndarray]) -> pl.DataFrame:
    """Per human vote (:func:`diffs_by_vote`): the ``battles`` and the ``mean`` score difference (NG-F3)."""
    return pl.DataFrame({"vote": list(groups), "battles": [g.size for g in groups.values()],
                         "mean": [float(np.mean(g)) for g in groups.values()]},
                        schema={"vote": pl.String, "battles": pl.Int64, "mean": pl.Float64})


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


class ScoreSummary(NamedTuple):
    """NG-N on the records: the battles scored, nuggets per battle (mean, median) after the cap, the vital share of
    the nuggets, the battles reaching the cap and the mean All score of every response."""

    battles: int
    mean_nuggets: float
    median_nuggets: float
    vital_share: float
    at_cap: int
    mean_all: float


def score_summary(scores: pl.DataFrame) -> ScoreSummary:
    """NG-N's summary of :func:`battle_scores` (:class:`ScoreSummary`; NaN means without battles)."""
    n = scores["n_nuggets"].to_numpy()
    return ScoreSummary(
        battles=scores.height,
        mean_nuggets=float(n.mean()) if n.size else float("nan"),
        median_nuggets=float(np.median(n)) if n.size else float("nan"),
        vital_share=float(scores["n_vital"].sum() / max(1, n.sum())),
        at_cap=int((n >= MAX_NUGGETS).sum()),
        mean_all=float(np.nanmean(np.r_[scores["all_a"].to_numpy(), scores["all_b"].to_numpy()])),
    )
