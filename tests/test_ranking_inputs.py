"""Input failures of the ranking package (issue #19): rows without a vote, unknown outcome labels, separable or
disconnected comparison graphs, NaN taken for convergence, pandas frames, arena-specific defaults.

Each of these passed silently, gave a cryptic error or wrong numbers before; the tests name the expected
behaviour: one clear error with the count and the first offending values (or an explicit opt-in that is then
reported in the result).
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from analysis_lib import ranking
from analysis_lib.ranking import _newton as newton
from analysis_lib.ranking import _pairs as pairs
from analysis_lib.ranking import votes

SCHEMA = {"model_a": pl.String, "model_b": pl.String, "winner": pl.String}


def frame(rows: list[tuple[str | None, str | None, str | None]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=SCHEMA, orient="row")


def round_robin(models=("a", "b", "c", "d"), n: int = 40, seed: int = 0) -> pl.DataFrame:
    """Every pair meets ``n`` times with outcomes drawn from planted strengths (both sides win, some ties)."""
    rng = np.random.default_rng(seed)
    rows = []
    for i, x in enumerate(models):
        for j, y in enumerate(models):
            if i < j:
                p = 1 / (1 + 10 ** (0.1 * (j - i) * -1))
                for _ in range(n):
                    u = rng.random()
                    rows.append((x, y, "tie" if u > 0.9 else ("model_a" if u < 0.9 * p else "model_b")))
    return frame(rows)


# ---------------------------------------------------------------------------------------------- no vote


def test_null_winner_is_an_error_with_count_and_rows():
    """Before: PairData.from_frame accepted a null winner and the leaderboard came back all-NaN, every rank 1."""
    battles = round_robin()
    bad = battles.with_columns(
        pl.when(pl.int_range(pl.len()).is_in([3, 17, 50])).then(None).otherwise(pl.col("winner")).alias("winner")
    )
    with pytest.raises(ValueError, match=r"3 of 240 battles.*3 rows without a vote.*\(row 4\).*\(row 18\)"):
        pairs.PairData.from_frame(ranking.Battles.from_frame(bad).fit_frame())
    with pytest.raises(ValueError, match="3 rows without a vote"):
        ranking.leaderboard(bad, rounds=5)


def test_unknown_outcome_label_is_an_error_not_a_missing_vote():
    """Before: ``both_bad`` was silently a no-vote row (the Search Arena filter), or a cryptic polars error."""
    battles = round_robin()
    bad = pl.concat([battles, frame([("a", "b", "both_bad"), ("c", "d", "both_bad"), ("a", "c", "draw")])])
    with pytest.raises(ValueError, match=r"3 rows with an unknown outcome label.*'both_bad' \(row 241\)"
                                         r".*'draw' \(row 243\).*Expected 'winner' in 'model_a'"):
        pairs.PairData.from_frame(ranking.Battles.from_frame(bad).fit_frame())
    with pytest.raises(votes.InvalidBattlesError, match="unknown outcome label"):
        ranking.leaderboard(bad, ci="none")


def test_explicit_filter_drops_and_reports_the_invalid_rows():
    battles = round_robin()
    bad = pl.concat([battles, frame([("a", "b", None), ("a", "b", "both_bad"), ("c", "c", "tie"), ("d", None, "tie")])])
    result = ranking.leaderboard(bad, ci="none", drop_invalid=True)
    clean = ranking.leaderboard(battles, ci="none")
    assert dict(result.dropped) == {"missing model": 1, "no vote": 1, "unknown outcome": 1, "self-battle": 1}
    np.testing.assert_allclose(result.rating, clean.rating, atol=1e-9)
    assert result.n_battles == battles.height
    checked = ranking.Battles.from_frame(bad, drop_invalid=True)
    assert checked.n_battles == battles.height and checked.dropped["no vote"] == 1


def test_self_battles_are_refused_unless_dropped():
    bad = pl.concat([round_robin(), frame([("b", "b", "model_a")])])
    with pytest.raises(ValueError, match=r"1 self-battle \(model_a == model_b\): \('b', 'b'\) \(row 241\)"):
        ranking.leaderboard(bad, ci="none")


def test_custom_columns_and_labels():
    battles = round_robin()
    renamed = battles.rename({"model_a": "left", "model_b": "right", "winner": "vote"}).with_columns(
        pl.col("vote").replace({"model_a": "L", "model_b": "R", "tie": "="})
    )
    fmt = votes.BattleFormat("left", "right", "vote", ("L",), ("R",), ("=",))
    got = ranking.leaderboard(renamed, ci="none", fmt=fmt)
    np.testing.assert_allclose(got.rating, ranking.leaderboard(battles, ci="none").rating, atol=1e-9)
    with pytest.raises(ValueError, match=r"column 'model_a' not found \(columns: left, right, vote\)"):
        ranking.leaderboard(renamed)
    with pytest.raises(ValueError, match="listed twice"):
        votes.BattleFormat(a_wins=("x",), b_wins=("x",))


# ------------------------------------------------------------------------------------- pandas, defaults


def test_pandas_frames_are_accepted_and_other_types_refused():
    pytest.importorskip("pandas")
    battles = round_robin()
    from_pandas = ranking.leaderboard(battles.to_pandas(), rounds=10, seed=1)
    from_polars = ranking.leaderboard(battles, rounds=10, seed=1)
    assert from_pandas.to_frame().equals(from_polars.to_frame())
    assert ranking.Battles.from_frame(battles.to_pandas()).n_battles == battles.height
    with pytest.raises(TypeError, match="polars or pandas DataFrame, not dict"):
        ranking.leaderboard(battles.to_dict(as_series=False))


def test_the_generic_leaderboard_applies_no_arena_defaults():
    """Before: ``bt.leaderboard`` put gpt-4o-search at 1000 and dropped gemini-2.5-pro from any data."""
    names = ("gemini-2.5-pro", "gpt-4o-search", "sonar", "other")
    battles = round_robin(names)
    result = ranking.leaderboard(battles, ci="none")
    assert set(result.models) == set(names) and dict(result.dropped) == {}
    assert np.mean(result.rating) == pytest.approx(1000.0)  # no anchor: the mean is 1000
    anchored = ranking.leaderboard(battles, ci="none", anchor="sonar", exclude=["gemini-2.5-pro"])
    assert set(anchored.models) == {"gpt-4o-search", "sonar", "other"}
    assert anchored.dropped == {"excluded model": 120}
    assert dict(zip(anchored.models, anchored.rating, strict=True))["sonar"] == pytest.approx(1000.0)
    with pytest.raises(ValueError, match="anchor 'nope' has no battles"):
        ranking.leaderboard(battles, ci="none", anchor="nope")


# ----------------------------------------------------------------------------- separable, disconnected


def test_separable_data_raise_a_clear_error_listing_the_models():
    """Before: ``LinAlgError: Singular matrix`` (or a non-converged warning) instead of the promised message."""
    battles = pl.concat([round_robin(), frame([("e", "a", "model_b"), ("e", "b", "model_b"), ("c", "e", "model_a")])])
    with pytest.raises(ValueError, match=r"never won: \['e'\]"):  # the MLE error is a ValueError
        ranking.leaderboard(battles, ci="none")
    with pytest.raises(ValueError, match=r"1 of 5 models are outside.*never won: \['e'\].*on_separation='ridge'"):
        ranking.leaderboard(battles, rounds=10)
    champion = pl.concat([round_robin(), frame([("f", "a", "model_a"), ("d", "f", "model_b")])])
    with pytest.raises(ranking.NotIdentifiableError, match=r"never lost: \['f'\]"):
        ranking.leaderboard(champion, ci="none")


def test_disconnected_comparison_graph_lists_the_pieces():
    battles = pl.concat([round_robin(), round_robin(("x", "y", "z"), seed=1)])
    msg = r"no battle chain to the largest group: \['x', 'y', 'z'\]"
    with pytest.raises(ranking.NotIdentifiableError, match=msg):
        ranking.leaderboard(battles, ci="none")


def test_the_ridge_opt_in_says_which_models_needed_it():
    battles = pl.concat([round_robin(), frame([("e", "a", "model_b"), ("e", "b", "model_b"), ("c", "e", "model_a")])])
    result = ranking.leaderboard(battles, rounds=20, on_separation="ridge")
    assert result.ridge == ranking.RIDGE and result.ridge_models == ("e",) and not result.mle_exists
    assert result.ridge_resamples == 20  # a resample never has more edges than the data
    assert np.isfinite(result.rating).all() and "ridge 0.001 set the ratings of ['e']" in result.summary()
    assert result.to_frame()["model"][-1] == "e"
    fine = ranking.leaderboard(round_robin(), rounds=20, on_separation="ridge")
    assert fine.ridge == 0 and fine.ridge_models == () and fine.ridge_resamples == 0


def test_a_bootstrap_resample_without_an_mle_is_fitted_with_the_ridge_and_counted_per_model():
    """Before: the default stopped with NotIdentifiableError although the data have an MLE."""
    # A beats B 9-1 and C 9-1, B-C 5-5: the data have an MLE, a resample that misses both of A's losses has none
    rows = ([("A", "B", "model_a")] * 9 + [("A", "B", "model_b")] + [("B", "C", "model_a")] * 5
            + [("B", "C", "model_b")] * 5 + [("C", "A", "model_a")] + [("C", "A", "model_b")] * 9)
    for how in ("error", "ridge"):
        result = ranking.leaderboard(frame(rows), rounds=200, on_separation=how, point="ml")
        assert 0 < result.ridge_resamples < 200 and result.ridge == 0 and result.mle_exists
        assert dict(zip(result.models, result.rating, strict=True))["A"] == pytest.approx(
            1000 + 400 * (2 / 3) * math.log10(9), abs=1e-6)  # closed form of the point fit, Σ r = 0
        # the rounds without an MLE are exactly those where A kept no loss (then A is the only one outside)
        data = pairs.PairData.from_frame(ranking.Battles.from_frame(frame(rows)).fit_frame())
        w = ranking.bootstrap_counts(data.n_battles, 200, 0, p=data.counts / data.counts.sum())
        a = data.models.index("A")
        a_lost = ((data.pairs[:, 0] == a) & (data.outcomes < 1)) | ((data.pairs[:, 1] == a) & (data.outcomes > 0))
        no_loss = int((w[:, a_lost].sum(axis=1) == 0).sum())
        assert result.ridge_resamples == no_loss
        per_model = dict(zip(result.models, result.ridge_rounds, strict=True))
        assert per_model == {"A": no_loss, "B": 0, "C": 0}
        board = result.to_frame(ridge_columns=True)
        assert board.filter(pl.col("model") == "A")["ridge_rounds"][0] == no_loss
        assert not board["set_by_ridge"].any()
        assert f"{no_loss} of 200 bootstrap resamples had no MLE" in result.summary() and "A (" in result.summary()
    with pytest.raises(ranking.NotIdentifiableError, match=r"never lost: \['A'\]"):  # the library call can still ask
        from analysis_lib.ranking._bootstrap import bootstrap_pairs
        from analysis_lib.ranking._newton import PairStats
        stats = PairStats.from_rows(data.pairs, data.outcomes, 3)
        bootstrap_pairs(stats, data.models, data.pairs, data.outcomes, data.counts, np.zeros(3), 200, 0, ridge=None)


# ------------------------------------------------------------------------------------ NaN is not converged


def test_nan_never_counts_as_converged():
    """Before: the dense Newton took a NaN step for convergence and returned NaN ratings without a word (that
    solver is gone); the sparse Newton flags the fit as not converged and the leaderboard raises."""
    data = pairs.PairData.from_frame(ranking.Battles.from_frame(round_robin()).fit_frame())
    y = data.outcomes.copy()
    y[0] = np.nan
    stats = newton.PairStats.from_rows(data.pairs, y, len(data.models))
    n, s = stats.totals(data.counts)
    theta, report = newton.fit_pairs(stats, n, s)
    assert not report.converged[0] and not np.isfinite(report.grad_norm[0])
    assert np.isfinite(theta).all()  # the last finite iterate is kept, flagged as not converged
    with pytest.raises(ranking.ConvergenceError, match="did not converge"):  # what the leaderboard calls
        newton.check_converged(report, "full-data fit")
