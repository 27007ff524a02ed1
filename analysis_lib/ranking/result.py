"""One result type for plain and contextual Bradley–Terry fits, :class:`Ranking`, and one per subset,
:class:`Leaderboards`.

Ratings are on the Elo scale ``400 · r + offset`` (``r`` in log10-odds, ``Σ r = 0``), with the offset that puts the
anchor at 1000 in the full-data fit (no anchor: offset 1000, so the mean rating is 1000). Bootstrap rounds are
centred and shifted by that same offset (the leaderboard convention of LMArena and the Search Arena authors), so
the anchor keeps an interval. ``rank`` = 1 + the number of models whose lower bound exceeds this model's upper
bound (models whose intervals overlap share a rank).

Two kinds of rating interval (:meth:`Ranking.to_frame`, ``intervals=``): ``"centred"`` (the leaderboard's, above)
says where a rating sits among all models; ``"anchored"`` (:meth:`Ranking.relative_to_anchor`) is the interval
of the rating's difference to the anchor (anchor fixed at 1000 in every round; sandwich ``Var(r_j − r_a)``),
the one to quote for "how far is model j from the anchor": the centred interval shifted by the anchor's
full-data offset is not an interval for that difference (it leaves out the anchor's own uncertainty, and the
anchor keeps an interval although it is 1000 by definition). Anchor-free intervals: :meth:`Ranking.differences`
(every pair of models, ``400 (r_i − r_j)`` per round: no anchor enters, so the anchor cannot widen them) and
:meth:`Ranking.centred`.

Rank intervals (:meth:`Ranking.rank_intervals`): in every bootstrap round each model's rank is 1 + the models
rated strictly higher in that round; ``rank_lower`` / ``rank_upper`` are the ``(1 − level)/2`` and ``(1 + level)/2``
quantiles of those ranks over the rounds (the empirical quantile, ``numpy.quantile(method="inverted_cdf")``: a rank
that some round gave), its best and worst plausible rank.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import polars as pl
from scipy.stats import rankdata

from analysis_lib.ranking._intervals import normal_quantile, percentiles

SCALE = 400.0
BASE = 10.0
INIT_RATING = 1000.0


def rank_from_intervals(lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """Rank = 1 + number of models whose lower bound exceeds this model's upper bound (ties share a rank)."""
    lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    return 1 + (lower[None, :] > upper[:, None]).sum(axis=1)


@dataclass(frozen=True)
class Convergence:
    """How the fits ended: Newton ``iterations`` of the full-data fit, its final ``‖∇L‖∞`` (summed loss) and
    Newton step ``max |Δθ|`` (log10-odds); over the bootstrap rounds the most iterations any round took and the
    largest final gradient norm (0 and NaN without rounds). Every fit reported here converged (else the fit
    raised)."""

    iterations: int
    grad_norm: float
    step: float
    round_iterations: int = 0
    round_grad_norm: float = math.nan


@dataclass(frozen=True)
class Ranking:
    """A fitted leaderboard (plain or contextual BT) with its intervals.

    ``rating``: the reported rating (bootstrap mean, or the full-data fit ``rating_ml`` when ``point="ml"``, with
    sandwich intervals, or without intervals). ``ci_method``: ``"bootstrap"``, ``"sandwich"`` or ``"none"``.
    ``theta`` / ``rounds`` / ``covariance``: the full-data parameters ``(r, β)`` (log10-odds, ``Σ r = 0``), the
    per-round parameters ``(rounds, m + k)`` of a bootstrap, the sandwich covariance ``(m + k, m + k)``.
    ``features``, ``coef_*``: the contextual coefficients (empty for plain BT; NaN for a feature with zero
    spread). ``ridge``: the penalty the full-data fit needed (0 when its MLE exists); ``ridge_models``: the models
    outside the largest strongly connected group of wins and losses, whose ratings the ridge sets;
    ``ridge_resamples``: bootstrap rounds fitted with the ridge; ``ridge_rounds``: per model, the bootstrap rounds
    in which the ridge set that model's rating (``None`` without a bootstrap). ``point``: ``"ml"`` or
    ``"bootstrap_mean"`` (which rating a bootstrap reports). ``dropped``: input rows left out per reason. The fit's
    settings (:meth:`settings`, :meth:`header`): ``reg``, ``seed``, ``convention``, ``ties`` (the labels counted as
    half a win; empty for a numeric outcome column), ``on_separation``, ``fallback_ridge`` (the ridge for fits and
    resamples without an MLE), ``hessian_reg``.
    """

    models: tuple[str, ...]
    rating: np.ndarray
    rating_ml: np.ndarray
    ci_lower: np.ndarray
    ci_upper: np.ndarray
    ci_method: str
    level: float
    rank: np.ndarray
    num_battles: np.ndarray
    n_battles: int
    anchor: str | None
    offset: float
    theta: np.ndarray
    convergence: Convergence
    features: tuple[str, ...] = ()
    coef_estimate: np.ndarray = field(default_factory=lambda: np.zeros(0))
    coef_lower: np.ndarray = field(default_factory=lambda: np.zeros(0))
    coef_upper: np.ndarray = field(default_factory=lambda: np.zeros(0))
    coef_ml: np.ndarray = field(default_factory=lambda: np.zeros(0))
    rounds: np.ndarray | None = None
    covariance: np.ndarray | None = None
    reg: float = 0.0
    ridge: float = 0.0
    ridge_models: tuple[str, ...] = ()
    ridge_resamples: int = 0
    dropped: Mapping[str, int] = field(default_factory=dict)
    ridge_rounds: np.ndarray | None = None
    point: str = "ml"
    seed: int = 0
    convention: str = "float"
    ties: tuple[str, ...] = ()
    on_separation: str = "error"
    fallback_ridge: float = 1e-3
    hessian_reg: float = 0.0

    @property
    def mle_exists(self) -> bool:
        """The full-data fit is the MLE (or the caller's own penalty), not a ridge fallback."""
        return self.ridge == 0.0

    def to_frame(self, intervals: str = "centred", *, ridge_columns: bool = False) -> pl.DataFrame:
        """``model, rating, ci_lower, ci_upper, rank, num_battles, rating_ml``, best first.

        ``intervals="anchored"``: ``rating, ci_lower, ci_upper`` are those of each rating's difference to the
        anchor plus 1000 (:meth:`relative_to_anchor`; the rating is the full-data fit when the point is not the
        bootstrap mean); ``rank`` stays the leaderboard's (from the centred intervals). ``ridge_columns``: two more
        columns, ``set_by_ridge`` (the full-data rating was set by the ridge: no MLE for that model) and
        ``ridge_rounds`` (bootstrap rounds in which the ridge set the model's rating; 0 without a bootstrap)."""
        if intervals not in ("centred", "anchored"):
            raise ValueError(f"intervals must be 'centred' or 'anchored', not {intervals!r}")
        rating, lo, hi = self.rating, self.ci_lower, self.ci_upper
        if intervals == "anchored":
            rel = self._anchored()
            rating, lo, hi = rel
            if self.ci_method == "bootstrap" and self.point == "ml":
                rating = self.rating_ml
        cols: dict[str, object] = {
            "model": list(self.models),
            "rating": rating,
            "ci_lower": lo,
            "ci_upper": hi,
            "rank": self.rank.astype(np.int64),
            "num_battles": self.num_battles.astype(np.int64),
            "rating_ml": self.rating_ml,
        }
        if ridge_columns:
            cols["set_by_ridge"] = [m in self.ridge_models for m in self.models]
            cols["ridge_rounds"] = (np.zeros(len(self.models), dtype=np.int64) if self.ridge_rounds is None
                                    else np.asarray(self.ridge_rounds, dtype=np.int64))
        return pl.DataFrame(cols).sort("rating", descending=True, maintain_order=True)

    def coefficients(self) -> pl.DataFrame:
        """``feature, estimate, ci_lower, ci_upper, estimate_ml`` (empty for plain BT).

        Scale: a coefficient ``β_f`` is in **natural log-odds per standard deviation** of feature ``f``'s normalised
        difference ``d = (x_a − x_b)/(x_a + x_b + 1)`` (the model is ``logit P(A wins) = ln 10 · (r_a − r_b) +
        Σ_f β_f z_f`` with ``z_f = (d_f − mean d_f)/sd d_f``); ``exp(β_f)`` is the odds ratio of A winning for one SD
        more of that difference. ``estimate`` is the bootstrap mean with ``point="bootstrap_mean"``, else the
        full-data fit (``estimate_ml``); NaN for a feature with zero spread."""
        return pl.DataFrame(
            {
                "feature": list(self.features),
                "estimate": self.coef_estimate,
                "ci_lower": self.coef_lower,
                "ci_upper": self.coef_upper,
                "estimate_ml": self.coef_ml,
            },
            schema={"feature": pl.String, "estimate": pl.Float64, "ci_lower": pl.Float64, "ci_upper": pl.Float64,
                    "estimate_ml": pl.Float64},
        )

    def relative_to_anchor(self) -> pl.DataFrame:
        """``model, rating, ci_lower, ci_upper``: intervals of each rating's difference to the anchor, shifted by
        1000 (bootstrap: the anchor put at 1000 in every round; sandwich: ``Var(r_j − r_a)``); the anchor's own
        interval collapses to 1000. Needs an anchor and intervals."""
        est, lo, hi = self._anchored()
        return pl.DataFrame({"model": list(self.models), "rating": est, "ci_lower": lo, "ci_upper": hi}).sort(
            "rating", descending=True, maintain_order=True
        )

    def _anchored(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(estimate, lower, upper)`` of :meth:`relative_to_anchor`, in model order."""
        if self.anchor is None or self.ci_method == "none":
            raise ValueError("intervals relative to the anchor need an anchor and intervals")
        j = self.models.index(self.anchor)
        m = len(self.models)
        if self.rounds is not None:
            r = self.rounds[:, :m]
            rel = INIT_RATING + SCALE * (r - r[:, [j]])
            est, lo, hi = percentiles(rel, self.level)
        else:
            assert self.covariance is not None
            c = self.covariance[:m, :m]
            var = np.diag(c) + c[j, j] - 2.0 * c[:, j]
            est = INIT_RATING + SCALE * (self.theta[:m] - self.theta[j])
            half = SCALE * normal_quantile(self.level) * np.sqrt(np.clip(var, 0.0, None))
            lo, hi = est - half, est + half
        return est, lo, hi

    def centred(self, models: Sequence[str] | None = None) -> pl.DataFrame:
        """``model, rating, ci_lower, ci_upper`` of the ratings of ``models`` (default: all) minus their mean over
        ``models``: anchor-free ratings (Elo differences to the group's mean), which depend on no one model's
        estimate. Bootstrap: every round centred over ``models``, then the mean and percentiles; sandwich:
        ``P Σ Pᵀ`` with ``P`` the centring over ``models``. Needs intervals."""
        if self.ci_method == "none":
            raise ValueError("centred intervals need intervals (ci='bootstrap' or 'sandwich')")
        names = list(self.models) if models is None else [m for m in models if m in self.models]
        if not names:
            raise ValueError("none of the models to centre over has a rating here")
        idx = [self.models.index(m) for m in names]
        if self.rounds is not None:
            r = self.rounds[:, idx]
            est, lo, hi = percentiles(SCALE * (r - r.mean(axis=1, keepdims=True)), self.level)
        else:
            assert self.covariance is not None
            k = len(idx)
            proj = np.eye(k) - 1.0 / k
            var = np.diag(proj @ self.covariance[np.ix_(idx, idx)] @ proj)
            t = self.theta[idx]
            est = SCALE * (t - t.mean())
            half = SCALE * normal_quantile(self.level) * np.sqrt(np.clip(var, 0.0, None))
            lo, hi = est - half, est + half
        return pl.DataFrame({"model": names, "rating": est, "ci_lower": lo, "ci_upper": hi})

    def summary(self) -> str:
        """One line: battles, models, interval method, convergence, ridge and dropped rows."""
        parts = [f"{self.n_battles:,} battles, {len(self.models)} models"]
        if self.features:
            parts.append(f"{len(self.features)} style features")
        if self.ci_method == "bootstrap" and self.rounds is not None:
            parts.append(f"{self.rounds.shape[0]} bootstrap rounds")
        else:
            parts.append(f"{self.ci_method} intervals")
        c = self.convergence
        parts.append(f"Newton converged in {c.iterations} iterations (|grad| {c.grad_norm:.1e})")
        if self.ridge:
            parts.append(f"no MLE: ridge {self.ridge:g} set the ratings of {list(self.ridge_models)}")
        if self.ridge_resamples:
            rounds = 0 if self.rounds is None else self.rounds.shape[0]
            parts.append(f"{self.ridge_resamples} of {rounds} bootstrap resamples had no MLE and were fitted with the "
                         f"ridge")
            if self.ridge_rounds is not None and self.ridge_rounds.any():
                who = [f"{m} ({int(k)})" for m, k in zip(self.models, self.ridge_rounds, strict=True) if k]
                parts.append("ratings set by the ridge in that many rounds (column ridge_rounds): " + ", ".join(
                    who[:10]) + (f", … {len(who) - 10} more" if len(who) > 10 else ""))
        if any(self.dropped.values()):
            parts.append("dropped " + ", ".join(f"{v:,} {k}" for k, v in self.dropped.items() if v))
        return "; ".join(parts)

    def differences(self) -> pl.DataFrame:
        """``model_a, model_b, difference, ci_lower, ci_upper``: every pair of models, ``model_a`` above
        ``model_b`` on the leaderboard, with the Elo difference ``400 (r_a − r_b)`` and its interval.

        Anchor-free: bootstrap, the ``(1 ∓ level)/2`` percentiles of ``400 (r_a − r_b)`` over the same rounds as
        the leaderboard (the estimate their mean with ``point="bootstrap_mean"``, else the full-data fit); sandwich,
        the full-data difference ``± z σ`` with ``σ² = Var r_a + Var r_b − 2 Cov(r_a, r_b)``. No anchor or
        offset enters either (FastChat #3377: fixing an anchor widens every other model's own interval; the
        interval of a difference is the same whichever anchor is chosen). NaN intervals without ``ci``."""
        m = len(self.models)
        order = np.argsort(-self.rating, kind="stable")
        i, j = (order[k] for k in np.triu_indices(m, 1))
        est = SCALE * (self.theta[i] - self.theta[j])
        lo = hi = np.full(i.size, np.nan)
        if self.rounds is not None:
            d = SCALE * (self.rounds[:, i] - self.rounds[:, j])
            mean, lo, hi = percentiles(d, self.level)
            est = mean if self.point == "bootstrap_mean" else est
        elif self.covariance is not None:
            c = self.covariance
            var = c[i, i] + c[j, j] - 2.0 * c[i, j]
            half = SCALE * normal_quantile(self.level) * np.sqrt(np.clip(var, 0.0, None))
            lo, hi = est - half, est + half
        names = np.array(self.models, dtype=object)
        return pl.DataFrame({"model_a": names[i].tolist(), "model_b": names[j].tolist(), "difference": est,
                             "ci_lower": lo, "ci_upper": hi},
                            schema={"model_a": pl.String, "model_b": pl.String, "difference": pl.Float64,
                                    "ci_lower": pl.Float64, "ci_upper": pl.Float64})

    def rank_intervals(self) -> pl.DataFrame:
        """``model, rank, rank_lower, rank_upper`` in leaderboard order: each model's best and worst plausible rank
        over the bootstrap rounds (module docstring); null without a bootstrap (``rank`` is the leaderboard's)."""
        frame = self.to_frame().select("model", "rank")
        if self.rounds is None or not self.rounds.shape[0]:
            return frame.with_columns(pl.lit(None, pl.Int64).alias("rank_lower"),
                                      pl.lit(None, pl.Int64).alias("rank_upper"))
        ranks = rankdata(-self.rounds[:, :len(self.models)], method="min", axis=1)
        tail = (1.0 - self.level) / 2.0
        lower = np.quantile(ranks, tail, axis=0, method="inverted_cdf").astype(np.int64)
        upper = np.quantile(ranks, 1.0 - tail, axis=0, method="inverted_cdf").astype(np.int64)
        by_model = pl.DataFrame({"model": list(self.models), "rank_lower": lower, "rank_upper": upper})
        return frame.join(by_model, on="model", how="left", maintain_order="left")

    def settings(self) -> dict[str, object]:
        """The fit's settings, plain values: ``model``, ``features``, ``convention``, ``ties``, ``loss``, ``reg``,
        ``on_separation``, ``fallback_ridge``, ``anchor``, ``point``, ``ci``, ``level``, ``rounds``, ``seed``,
        ``hessian_reg``."""
        return {
            "model": "contextual Bradley–Terry" if self.features else "Bradley–Terry",
            "features": list(self.features), "convention": self.convention if self.features else None,
            "ties": list(self.ties), "loss": "sum", "reg": self.reg, "on_separation": self.on_separation,
            "fallback_ridge": self.fallback_ridge, "anchor": self.anchor, "point": self.point,
            "ci": self.ci_method, "level": self.level,
            "rounds": 0 if self.rounds is None else int(self.rounds.shape[0]),
            "seed": self.seed if self.rounds is not None else None, "hessian_reg": self.hessian_reg,
        }

    def header(self) -> str:
        """The fit's settings in words, one per line (printed above a leaderboard: ``print(result)``)."""
        s = self.settings()
        model = str(s["model"])
        if self.features:
            model += f" with style features {', '.join(self.features)} (convention {self.convention!r})"
        ties = (f"ties ({', '.join(map(repr, self.ties))}) count as half a win for each side" if self.ties
                else "outcomes for A as given in [0, 1]")
        who = "ratings and coefficients" if self.features else "ratings"
        anchor = (f"{self.anchor} at {INIT_RATING:g} in the full-data fit" if self.anchor is not None
                  else f"none (the mean rating is {INIT_RATING:g})")
        rating = ("bootstrap mean over the rounds" if self.ci_method == "bootstrap" and self.point == "bootstrap_mean"
                  else "the full-data fit (maximum likelihood)")
        if self.ci_method == "bootstrap":
            intervals = (f"{self.level:.0%} bootstrap percentiles over {s['rounds']} rounds (seed {self.seed}); "
                         "rounds centred, shifted by the anchor's offset")
        elif self.ci_method == "sandwich":
            intervals = f"{self.level:.0%} sandwich (robust) normal intervals, hessian_reg {self.hessian_reg:g}"
        else:
            intervals = "none"
        return "\n".join([
            f"fit: {model}; {self.n_battles:,} battles, {len(self.models)} models",
            f"loss: negative log-likelihood summed over battles; {ties}",
            f"penalty: reg/2 ||theta||^2 on the {who}, reg = {self.reg:g}; without an MLE: "
            f"{'stop' if self.on_separation == 'error' else 'ridge'} (ridge {self.fallback_ridge:g} for resamples "
            "without one)",
            f"anchor: {anchor}",
            f"rating: {rating}",
            f"intervals: {intervals}",
            "rank: 1 + the models whose interval lies wholly above; rank_lower, rank_upper: the "
            f"{(1 - self.level) / 2:.1%} and {(1 + self.level) / 2:.1%} quantiles of the rank per bootstrap round",
        ])

    def __str__(self) -> str:
        with pl.Config(tbl_rows=-1, tbl_cols=-1, tbl_width_chars=160):
            table = str(self.to_frame().join(self.rank_intervals().drop("rank"), on="model", maintain_order="left"))
            coef = f"\n{self.coefficients()}" if self.features else ""
        return f"{self.header()}\n{table}{coef}"


@dataclass(frozen=True)
class Leaderboards:
    """One leaderboard per value of the column ``by`` and the overall one (:func:`analysis_lib.ranking.leaderboard`
    with ``by=``): every subset fitted as a leaderboard of its battles alone, with the same settings and seed.

    ``subsets``: value -> :class:`Ranking`, in sorted order of the values (null values are in the overall only);
    ``skipped``: values left out and why (fewer than ``min_battles`` battles)."""

    by: str
    overall: Ranking
    subsets: Mapping[object, Ranking]
    skipped: Mapping[object, str] = field(default_factory=dict)

    def to_frame(self, intervals: str = "centred") -> pl.DataFrame:
        """The leaderboards stacked: a first column named ``by`` (null for the overall leaderboard, first), then
        :meth:`Ranking.to_frame`'s columns and the rank intervals."""
        parts = [(None, self.overall), *self.subsets.items()]
        return pl.concat([
            r.to_frame(intervals).join(r.rank_intervals().drop("rank"), on="model", maintain_order="left")
            .select(pl.lit(None if v is None else str(v), pl.String).alias(self.by), pl.all())
            for v, r in parts])

    def coefficients(self) -> pl.DataFrame:
        """The style coefficients of every leaderboard stacked, with the column ``by`` first (null: overall)."""
        parts = [(None, self.overall), *self.subsets.items()]
        return pl.concat([r.coefficients().select(pl.lit(None if v is None else str(v), pl.String).alias(self.by),
                                                  pl.all()) for v, r in parts])
