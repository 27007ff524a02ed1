"""The book side of the methods-validation chapter (06): its one analysis ID ``VAL`` recorded part by part (each
section adds its results, :data:`PARTS`, and the simulator's planted values beside them), the claims it makes with
the thresholds that decide them, and its readings as Markdown, all built from the numbers and the parameters that
produced them (:mod:`analysis_lib.search_arena.methods_validation` computes the numbers; each paper-values row of
``VAL`` names the field it records). Each ``*_reading`` function returns a paragraph whose claims are checked here,
against the thresholds below, with the reason in the text.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from analysis_lib.search_arena import bt
from analysis_lib.search_arena.simulate.calibration import P_BOTHBAD, P_TIE
from analysis_lib.search_arena.simulate.voting import TIE_MODELS
from bookbuild import fieldpath, markup, paper_values

#: The intervals' nominal coverage.
NOMINAL = 0.95
#: A mean error is called bias only beyond this many standard errors (the largest of eleven models' means is
#: compared, so a little over the 2 of a single test).
BIAS_Z = 3.0
#: Replacing the votes by their expectations removes the vote-sampling error: the shared offset's SD must fall to
#: at most this share of the plain fit's.
EXPECTED_VOTE_DROP = 0.5
#: "Recovered": the controlled ratings' spread within this share of the planted spread, and the coefficients'
#: scale within :data:`BIAS_Z` standard errors of 1.
SPREAD_TOL = 0.05
#: "Compressed": the coefficients' scale below this.
COMPRESSED = 0.9
#: Slack on the closed-form bound ``1 − q`` of the coefficients' scale under independent ties.
SCALE_SLACK = 0.02
#: A coverage shortfall of at most this much is "a few points", what percentile intervals of a small sample give.
FEW_POINTS = 0.03

#: How the chapter names the two tie models of :mod:`analysis_lib.search_arena.simulate.voting`.
TIE_LABELS: dict[str, str] = {"closeness": "ties among close battles", "independent": "ties independent of strength"}

#: The chapter's one analysis ID.
VAL = "VAL"


def banner(n_conversations: int, n_seeds: int, n_replicates: int, replicate_size: int) -> markup.Html:
    """The page's data banner: this chapter always runs on the simulator, whatever data the book is built on."""
    return markup.admonition(
        "Simulated data, by design",
        "Every number on this page comes from the project's Search Arena simulator, whatever data the book is built "
        "on: the chapter checks the estimators where the truth is known. The simulated releases hold "
        f"{n_conversations:,} conversations each ({n_seeds} of them for the study over releases) and "
        f"{replicate_size:,} conversations for each of the {n_replicates} coverage replicates; the planted values "
        "are the simulator's, not the paper's.", kind="warning")


# ------------------------------------------------------------------------------------------- the parts of VAL

#: The results VAL reads (the first field of each row's path), as they are before their section runs: a frame
#: (whose rows a path selects) as no rows, any other result as None; a path that reaches them is not run until then.
PARTS: dict[str, Any] = {"ratings": [], "controlled": None, "plain": None, "plain_minus_planted": None,
                         "offsets": [], "coefficients": [], "coefficient_error": None, "control": None,
                         "converge": None, "coverage": [], "ties": []}


def part_of(*parts: str) -> Callable[[str], bool]:
    """``keep=`` of :meth:`~bookbuild.recorder.Recorder.section`: the VAL quantities whose path reads one of
    ``parts`` (a section's numbers)."""
    quantities = {r.quantity for r in paper_values.rows_of(VAL) if fieldpath.parse(r.result).steps[0].name in parts}
    return quantities.__contains__


def control_targets(effect: bt.ControlEffect, d1_target: Mapping[str, float],
                    planted: Mapping[str, float]) -> dict[str, Any]:
    """The planted side of Fig E.4's spreads, over the models of ``effect``: Table D.1's (``sd_before``, the plain
    fit's calibration target) and the planted ratings' (``sd_after``)."""
    models = effect.ratings["model"].to_list()
    sd = lambda ratings: bt.rating_spread(np.array([ratings[m] for m in models if m in ratings]))  # noqa: E731
    return {"sd_before": sd(d1_target), "sd_after": sd(planted)}


def tie_targets(summary: pl.DataFrame) -> pl.DataFrame:
    """The planted side of :func:`~analysis_lib.search_arena.methods_validation.tie_summary`, in its shape: the
    planted spread for the controlled ratings, Table D.1's for the plain ones, a scale of 1."""
    return summary.with_columns(sd_controlled=pl.col("sd_planted"), sd_plain=pl.col("sd_table_d1"),
                                coef_scale=pl.lit(1.0))


# ------------------------------------------------------------------------------------------- over releases


def _z(value: float, se: float) -> float:
    return abs(value) / se if se > 0 else float("inf")


def offset_reading(summary: pl.DataFrame, this_release: Mapping[str, float]) -> str:
    """What the shared offsets are (the paragraph under the study over releases). ``this_release``: the shared
    offsets of the chapter's own release, ``{"plain": …, "controlled": …}``.

    Claims and their checks: the offset is the anchor's vote-sampling error when its SD falls to at most
    :data:`EXPECTED_VOTE_DROP` of the plain fit's once votes are replaced by their expectations; a mean offset or a
    model's mean anchor-free error is called bias only beyond :data:`BIAS_Z` standard errors."""
    s = {r["fit"]: r for r in summary.iter_rows(named=True)}
    plain, ctrl, exp = s["plain"], s["controlled"], s["plain, expected votes"]
    n = plain["seeds"]
    drop = exp["sd_shared_offset"] <= EXPECTED_VOTE_DROP * plain["sd_shared_offset"]
    cause = ("so it is the vote-sampling error of the anchor" if drop else
             f"not below {EXPECTED_VOTE_DROP:.0%} of the plain fit's, so it is not only the anchor's vote-sampling "
             "error")
    z_plain, z_ctrl = _z(plain["mean_shared_offset"], plain["se_shared_offset"]), _z(
        ctrl["mean_shared_offset"], ctrl["se_shared_offset"])
    common = ("no common bias" if max(z_plain, z_ctrl) <= BIAS_Z else "a common bias")
    z_model = _z(ctrl["max_abs_model_bias"], ctrl["model_bias_se"])
    per_model = ("the estimator shows no bias beyond sampling error" if z_model <= BIAS_Z else
                 "more than sampling error: a bias of the estimator for that model")
    z_exp = _z(exp["max_abs_model_bias"], exp["model_bias_se"])
    residual = ("a calibration residual: the planted ratings pin each model to Table D.1 only to a few Elo"
                if z_exp > BIAS_Z else "within sampling error of zero: no calibration residual")
    return f"""
**What the errors of one release are.** In this chapter's release the shared offset is
{this_release["plain"]:+.1f} Elo for the plain fit and {this_release["controlled"]:+.1f} Elo for the controlled fit:
most of what looks like every rating being too low (or too high) is one number, the anchor's own estimation error,
carried into every rating. Over {n} releases the shared offset has a standard deviation of
{plain["sd_shared_offset"]:.1f} (plain) and {ctrl["sd_shared_offset"]:.1f} Elo (controlled) and carries
{plain["share_shared"]:.0%} and {ctrl["share_shared"]:.0%} of the error variance; with the votes replaced by their
expectations its standard deviation is {exp["sd_shared_offset"]:.1f} Elo, {cause}. Its mean over the releases is
what would remain as a common bias: {plain["mean_shared_offset"]:+.1f} ± {plain["se_shared_offset"]:.1f} (plain)
and {ctrl["mean_shared_offset"]:+.1f} ± {ctrl["se_shared_offset"]:.1f} Elo (controlled), ± one standard error,
that is {z_plain:.1f} and {z_ctrl:.1f} standard errors from zero: {common} (the threshold is {BIAS_Z:g} standard
errors).

Per model, the largest mean anchor-free error of the controlled fit against the planted ratings is
{ctrl["max_abs_model_bias"]:+.1f} ± {ctrl["model_bias_se"]:.1f} Elo (`{ctrl["model"]}`, {z_model:.1f} standard
errors): {per_model}. The plain fit against Table D.1 tests the simulator's calibration instead: the
expected-vote fit, free of vote noise, keeps a per-model difference of up to {exp["max_abs_model_bias"]:+.1f} ±
{exp["model_bias_se"]:.1f} Elo (`{exp["model"]}`, {z_exp:.1f} standard errors), {residual}
(`scripts/calibrate_simulator.py` fitted them on three releases with sampled votes).
"""


# ------------------------------------------------------------------------------------------- coverage


@dataclass(frozen=True)
class CoverageCheck:
    """One family's coverage against the nominal level: ``below`` when the whole Wilson interval lies under it."""

    coverage: float
    ci_lower: float
    ci_upper: float

    @property
    def below(self) -> bool:
        return self.ci_upper < NOMINAL

    def text(self) -> str:
        return (f"{self.coverage:.1%} (Wilson {self.ci_lower:.1%} to {self.ci_upper:.1%}: "
                + ("below" if self.below else "consistent with") + f" {NOMINAL:.0%})")


def coverage_reading(summary: pl.DataFrame, n_bootstrap: int, n_replicates: int, replicate_size: int) -> str:
    """How to read the coverage (the paragraph under the coverage figure); each claim is checked against the
    Wilson intervals (:class:`CoverageCheck`) and :data:`FEW_POINTS`."""
    c = {(r["fit"], r["method"], r["kind"]): CoverageCheck(r["coverage"], r["ci_lower"], r["ci_upper"])
         for r in summary.iter_rows(named=True)}
    paper, paper_s = c[("contextual", "bootstrap", "rating")], c[("contextual", "sandwich", "rating")]
    anchored = c[("contextual", "bootstrap", "rating, anchored per round")]
    centred = c[("contextual", "bootstrap", "rating, anchor-free (centred)")]
    coef_b, coef_s = c[("contextual", "bootstrap", "coefficient")], c[("contextual", "sandwich", "coefficient")]
    others = {key: v for key, v in c.items() if key[2] != "rating"}
    below = [f"{f}, {m}: {k}" for (f, m, k), v in others.items() if v.below]
    far = [f"{f}, {m}: {k}" for (f, m, k), v in others.items() if v.coverage < NOMINAL - FEW_POINTS]
    narrow = ("The paper's rating intervals are too narrow for what the leaderboard reports" if paper.below else
              "The paper's rating intervals cover as often as nominal here")
    sandwich = ("the sandwich intervals of the same convention share the problem" if paper_s.below else
                "the sandwich intervals of the same convention do not")
    if not below:
        rest = "every other family's Wilson interval reaches 95%."
    else:
        rest = (f"{len(below)} of the other {len(others)} families fall short of 95% with their whole Wilson interval ("
                + "; ".join(below) + ")")
        rest += (f", each by at most {100 * FEW_POINTS:g} percentage points, what percentile intervals of "
                 f"{n_bootstrap} rounds on "
                 f"{replicate_size:,}-conversation releases are expected to give (the bootstrap distribution of a "
                 "small sample understates the tails)." if not far else
                 f"; by more than {100 * FEW_POINTS:g} percentage points: " + "; ".join(far) + ".")
    return f"""
**Reading the coverage.** {narrow}: {paper.text()} for the contextual fit with {n_bootstrap} bootstrap rounds.
They are built for each model's centred rating, so the anchor's uncertainty, which moves every reported rating
(the shared offset above), is missing; {sandwich}, covering {paper_s.text()}. Intervals of the difference to the anchor
cover {anchored.text()}, the anchor-free (centred) intervals {centred.text()}, and the coefficients
{coef_b.text()} with the bootstrap and {coef_s.text()} with the sandwich. Apart from the paper's convention,
{rest} For the coefficients a small scale difference adds to it: each replicate z-scores its features over its own
leaderboard battles, while the simulator z-scores over all its voted battles. The plain fit's truth is its
population value on the same battles (the plain fit on expected votes), since the plain fit credits each model
with its style. The Wilson intervals treat intervals as independent, although the ratings of one replicate share a
fit, so they are somewhat too narrow for the ratings ({n_replicates} replicates).
"""


# ------------------------------------------------------------------------------------------- tie model


def tie_verdict(r: Mapping[str, Any]) -> str:
    """``"recovered"``, ``"compressed"`` or ``"neither"`` for one tie model's row of the tie summary (module
    thresholds :data:`SPREAD_TOL`, :data:`BIAS_Z`, :data:`COMPRESSED`)."""
    spread_ok = abs(r["sd_controlled"] / r["sd_planted"] - 1.0) <= SPREAD_TOL
    scale_ok = _z(r["coef_scale"] - 1.0, r["coef_scale_se"]) <= BIAS_Z
    if spread_ok and scale_ok:
        return "recovered"
    if r["coef_scale"] < COMPRESSED and r["sd_controlled"] < (1.0 - SPREAD_TOL) * r["sd_planted"]:
        return "compressed"
    return "neither"


def tie_reading(summary: pl.DataFrame, tie_share: float = P_TIE + P_BOTHBAD) -> str:
    """Which tie model the recovery claim needs (the paragraph under the tie-model comparison). ``tie_share``:
    the voted share of ties ``q``; under independent ties the half-win logit is ``logit(q/2 + (1 − q) σ(η))``,
    whose slope is ``1 − q`` at an even battle and smaller away from it, so the coefficients' scale should come
    out a little below ``1 − q`` (checked, with :data:`SCALE_SLACK` of slack)."""
    s = {r["tie_model"]: r for r in summary.iter_rows(named=True)}
    base, alt = s[TIE_MODELS[0]], s[TIE_MODELS[1]]
    v_base, v_alt = tie_verdict(base), tie_verdict(alt)
    even = 1.0 - tie_share
    closed_form = (f"a little below {even:.2f}, one minus the tie share: the shrinkage at an even battle, larger "
                   "effects shrink a little more" if alt["coef_scale"] <= even + SCALE_SLACK else
                   f"not below {even:.2f}, one minus the tie share, although the closed form bounds it by that")
    claim = {
        ("recovered", "compressed"): "The recovery of the planted ratings and coefficients holds under the "
        "simulator's tie model and fails under the other one: the claim needs ties whose expected half-win score "
        "equals the win probability",
        ("recovered", "recovered"): "The recovery holds under both tie models: here it does not depend on how ties "
        "arise",
    }.get((v_base, v_alt), f"Under the simulator's tie model the fit is {v_base}, under independent ties {v_alt}")
    return f"""
**Which tie model the claim needs.** {claim}. With ties likelier between close responses (the simulator's model:
a voted battle ties with probability proportional to `4p(1 − p)`, so the expected score of a tie counted as half a
win is exactly the win probability `p`), the controlled ratings spread {base["sd_controlled"]:.1f} Elo against
{base["sd_planted"]:.1f} planted and the coefficients come back at {base["coef_scale"]:.2f} times their planted size:
{v_base} (the thresholds: spread within {SPREAD_TOL:.0%}, scale within {BIAS_Z:g} standard errors of 1). With ties
independent of strength, {tie_share:.0%} of the votes whatever the two models ({alt["seeds"]} releases, same
conversations and voters), counting a tie as half a win pulls every expected score toward ½: the controlled
ratings spread only {alt["sd_controlled"]:.1f} Elo, the plain ones {alt["sd_plain"]:.1f} against
{alt["sd_table_d1"]:.1f} for Table D.1, and the coefficients shrink to {alt["coef_scale"]:.2f} times their
planted size ({v_alt}; {closed_form}).
The paper's estimator is therefore only as good as its tie model: on real votes, whether ties concentrate among
close battles is an assumption the data must support, not a property of the method.
"""
