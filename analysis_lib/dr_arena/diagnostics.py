"""Match-level diagnostics of DR-Arena from match logs: Table 6 / Fig 4 (DR-T6), Fig 5 (DR-F5), Fig 6 (DR-F6),
Fig 7 (DR-F7).

- :func:`correlation_by_rounds`: for ``k = 1 … K`` every match is cut after round ``k`` (its score after
  ``min(k, n)`` rounds decides it), the BT leaderboard is refitted, and Spearman's rho and Pearson's r with a
  reference leaderboard are computed (Table 6 "Round k only", Fig 4).
- :func:`rounds_vs_gap`: per unordered model pair, the mean number of rounds per match against the absolute Elo
  gap of the pair, and Pearson's r with its p-value (Fig 5: "significant negative correlation").
- :func:`failure_profile`: per model, the failure rate = non-winning rounds (losses and ties) / rounds played,
  and the loser's failure types over the rounds it lost, as shares (Fig 6).
- :func:`verdict_shares`: shares of the verdict tiers over all rounds and of the failure types over decided
  rounds (Fig 7).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import polars as pl
from scipy import stats as sps

from analysis_lib import stats
from analysis_lib.dr_arena.match_log import FAILURE_CODES, matches, truncated_matches
from analysis_lib.dr_arena.tournament import ratings


def correlation_by_rounds(
    rounds: pl.DataFrame, reference: Mapping[str, float], max_k: int | None = None
) -> pl.DataFrame:
    """``k, n_models, spearman, pearson`` for ``k = 1 … max_k`` (default: the longest match), over the models
    both in the logs and in ``reference``; the last row with ``k = max_k`` equals the full tournament."""
    max_k = int(rounds.select(pl.col("round").max()).item()) if max_k is None else max_k
    rows = []
    for k in range(1, max_k + 1):
        board = ratings(truncated_matches(rounds, k), rounds=0).filter(pl.col("model").is_in(list(reference)))
        agree = stats.leaderboard_agreement(board["rating"].to_numpy(), [reference[m] for m in board["model"]])
        rows.append({"k": k, "n_models": board.height, "spearman": agree.spearman, "pearson": agree.pearson})
    return pl.DataFrame(rows)


@dataclass(frozen=True)
class GapCorrelation:
    """Fig 5: per unordered pair its mean rounds per match and Elo gap (``pairs``), Pearson's r between them with its
    p-value (NaN for fewer than 3 pairs), and the mean rounds per match over all matches."""

    pairs: pl.DataFrame
    pearson: float
    p_value: float
    mean_rounds: float

    @property
    def n_pairs(self) -> int:
        return self.pairs.height


def rounds_vs_gap(rounds: pl.DataFrame, board: pl.DataFrame) -> GapCorrelation:
    """Mean rounds per match of each unordered pair against ``|Elo_a − Elo_b|`` (``board``: a leaderboard with
    ``model, rating``), with Pearson's r and its two-sided p-value, and :func:`mean_rounds`."""
    elo = dict(zip(board["model"], board["rating"], strict=True))
    per = (
        matches(rounds)
        .with_columns(first=pl.min_horizontal("model_a", "model_b"), second=pl.max_horizontal("model_a", "model_b"))
        .group_by("first", "second").agg(pl.col("n_rounds").mean().alias("mean_rounds"), pl.len().alias("n_matches"))
        .with_columns(elo_gap=(pl.col("first").replace_strict(elo, return_dtype=pl.Float64)
                               - pl.col("second").replace_strict(elo, return_dtype=pl.Float64)).abs())
        .sort("elo_gap")
    )
    if per.height < 3:
        return GapCorrelation(per, float("nan"), float("nan"), mean_rounds(rounds))
    r = sps.pearsonr(per["elo_gap"].to_numpy(), per["mean_rounds"].to_numpy())
    return GapCorrelation(per, float(r.statistic), float(r.pvalue), mean_rounds(rounds))


def _sides(rounds: pl.DataFrame) -> pl.DataFrame:
    """One row per (round, side): ``model, won, lost, tie, failure_type`` (failure only where the side lost)."""
    winner = pl.col("verdict").str.slice(0, 1)
    out = []
    for side in ("a", "b"):
        me = side.upper()
        out.append(rounds.select(
            pl.col(f"model_{side}").alias("model"),
            (winner == me).alias("won"),
            ((pl.col("verdict") != "TIE") & (winner != me)).alias("lost"),
            (pl.col("verdict") == "TIE").alias("tie"),
            pl.when((pl.col("verdict") != "TIE") & (winner != me)).then(pl.col("failure_type")).alias("failure_type"),
        ))
    return pl.concat(out)


def failure_profile(rounds: pl.DataFrame) -> pl.DataFrame:
    """Per model: ``rounds, wins, losses, ties, failure_rate`` (non-winning / rounds) and the shares of each
    failure type among its lost rounds (``share_DEEP`` …), ordered by failure rate (lowest first)."""
    s = _sides(rounds)
    agg = s.group_by("model").agg(
        pl.len().alias("rounds"), pl.col("won").sum().alias("wins"), pl.col("lost").sum().alias("losses"),
        pl.col("tie").sum().alias("ties"),
        *[(pl.col("failure_type") == f).sum().alias(f"n_{f}") for f in FAILURE_CODES],
    )
    return agg.with_columns(
        failure_rate=1 - pl.col("wins") / pl.col("rounds"),
        **{f"share_{f}": pl.when(pl.col("losses") > 0).then(pl.col(f"n_{f}") / pl.col("losses"))
           for f in FAILURE_CODES},
    ).sort("failure_rate", "model")


def verdict_shares(rounds: pl.DataFrame) -> pl.DataFrame:
    """``kind, category, n, share``: verdict tiers (Much Better, Better, Tie (high), Tie (low)) over all rounds and
    failure types over decided rounds."""
    tier = (pl.when(pl.col("verdict").str.contains("MUCH")).then(pl.lit("Much Better"))
            .when(pl.col("verdict") == "TIE").then(pl.concat_str(pl.lit("Tie ("), pl.col("tie_quality"), pl.lit(")")))
            .otherwise(pl.lit("Better")))
    v = rounds.select(tier.alias("category")).group_by("category").len("n").with_columns(kind=pl.lit("verdict"))
    decided = rounds.filter(pl.col("verdict") != "TIE")
    f = decided.select(pl.col("failure_type").alias("category")).group_by("category").len("n").with_columns(
        kind=pl.lit("failure type"))
    out = pl.concat([v, f]).with_columns(share=pl.col("n") / pl.col("n").sum().over("kind"))
    return out.select("kind", "category", "n", "share").sort("kind", "share", descending=[True, True])


class VerdictSummary(NamedTuple):
    """Fig 7 in numbers: rounds, the shares of the Better, Much Better and tie verdicts over all rounds and of the
    Deep and Wide failure types over decided rounds (0 for one that never occurs), and the most frequent tier."""

    rounds: int
    better: float
    much_better: float
    tie: float
    deep: float
    wide: float
    top_tier: str


def verdict_summary(rounds: pl.DataFrame) -> VerdictSummary:
    """:class:`VerdictSummary` of the rounds (shares as in :func:`verdict_shares`)."""
    shares = verdict_shares(rounds)

    def share(kind: str, *categories: str) -> float:
        return sum(float(shares.filter((pl.col("kind") == kind) & (pl.col("category") == c))["share"].sum())
                   for c in categories)

    top = shares.filter(pl.col("kind") == "verdict").sort("share", descending=True)["category"][0]
    return VerdictSummary(rounds.height, share("verdict", "Better"), share("verdict", "Much Better"),
                          share("verdict", "Tie (high)", "Tie (low)"), share("failure type", "DEEP"),
                          share("failure type", "WIDE"), top)


def mean_rounds(rounds: pl.DataFrame) -> float:
    """Average number of rounds per match."""
    return float(np.mean(matches(rounds)["n_rounds"].to_numpy()))


class TournamentSummary(NamedTuple):
    """A Swiss tournament in numbers: Swiss rounds, models, matches, unordered pairs that met in more than one
    round, byes (None without the pairings), whether the BT maximum-likelihood estimate exists, the bootstrap
    resamples fitted with the ridge, the top model and the models whose interval overlaps no other's (0 without
    intervals)."""

    rounds: int
    models: int
    matches: int
    pairs_met_twice: int
    byes: int | None
    mle: bool
    ridge_resamples: int
    top_model: str
    separated: int


def tournament_summary(matches_frame: pl.DataFrame, board: pl.DataFrame,
                       pairings: pl.DataFrame | None = None) -> TournamentSummary:
    """:class:`TournamentSummary` of the matches (:func:`~analysis_lib.dr_arena.match_log.matches`), their
    leaderboard (:func:`~analysis_lib.dr_arena.tournament.ratings`) and the pairings, when known."""
    pairs = matches_frame.select(pl.min_horizontal("model_a", "model_b").alias("x"),
                                 pl.max_horizontal("model_a", "model_b").alias("y"), "tournament_round").unique()
    lo, hi = board["ci_lower"].to_numpy(), board["ci_upper"].to_numpy()
    separated = 0
    if not (np.isnan(lo).any() or np.isnan(hi).any()):
        overlap = (lo[:, None] <= hi[None, :]) & (lo[None, :] <= hi[:, None])
        np.fill_diagonal(overlap, False)
        separated = int((~overlap.any(axis=1)).sum())
    return TournamentSummary(
        matches_frame["tournament_round"].n_unique(), board.height, matches_frame.height,
        int(pairs.group_by("x", "y").len().filter(pl.col("len") > 1).height),
        None if pairings is None else pairings["model_b"].null_count(), bool(board["mle"][0]),
        int(board["ridge_resamples"][0]), board["model"][0], separated)


def match_ends(rounds: pl.DataFrame) -> pl.DataFrame:
    """The task of each match's last round: ``match_id, n_rounds, depth, width`` (the population of Fig 8)."""
    return (rounds.sort("match_id", "round").group_by("match_id", maintain_order=True)
            .agg(pl.col("round").last().alias("n_rounds"), pl.col("depth", "width").last()))


class EndSummary(NamedTuple):
    """The task at the end of the matches (:func:`match_ends`): the most common depth (the smallest when several
    are), the largest depth and the most common width constraint."""

    modal_depth: int
    max_depth: int
    modal_width: int


def end_summary(ends: pl.DataFrame) -> EndSummary:
    """:class:`EndSummary` of :func:`match_ends`."""
    def mode(values: pl.Series) -> int:
        return int(np.bincount(values.to_numpy().astype(np.int64)).argmax())

    return EndSummary(mode(ends["depth"]), int(ends["depth"].max()), mode(ends["width"]))  # type: ignore[arg-type]


def reference_models(board: pl.DataFrame, reference: Mapping[str, float]) -> dict[str, float]:
    """The reference ratings of the models on ``board``, in the board's order."""
    return {m: reference[m] for m in board["model"] if m in reference}


def reference_agreement(board: pl.DataFrame, reference: Mapping[str, float]) -> stats.LeaderboardAgreement | None:
    """Spearman and Pearson between the board's ratings and ``reference`` over the models both have (None for
    fewer than 3 such models)."""
    ref = reference_models(board, reference)
    if len(ref) < 3:
        return None
    sub = board.filter(pl.col("model").is_in(list(ref)))
    return stats.leaderboard_agreement(sub["rating"].to_numpy(), [ref[m] for m in sub["model"]])
