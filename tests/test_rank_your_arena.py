"""Ranking one's own arena (issue 45): the installed general command on a user's CSV and parquet with their own
column names and ``--by``; anchor-free pairwise-difference intervals and rank intervals against a direct bootstrap
(the same draws, each round fitted by statsmodels); ``leaderboard_agreement`` on two frames against scipy; nugget
scores without votes with bootstrap intervals over queries (nuggetizer's scores); the messages a user meets."""

from __future__ import annotations

import importlib
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import statsmodels.api as sm
from scipy import stats as sps

from analysis_lib import nuggets as ng
from analysis_lib import ranking, stats
from analysis_lib.ranking import Ranking

COMMAND = Path(sys.executable).parent / "arena-leaderboard"
NAMES = np.array(["ant", "bee", "cat", "dog", "eel"])
STRENGTH = np.array([0.25, 0.1, 0.05, 0.0, -0.15])
FMT = ranking.BattleFormat("left", "right", "vote", ("L",), ("R",), ("draw",))


def arena(n: int = 1500, seed: int = 0) -> pl.DataFrame:
    """A user's battles: their own column names and labels, a category column and a style feature."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 5, n)
    b = (a + rng.integers(1, 5, n)) % 5
    p = 1 / (1 + 10.0 ** -(STRENGTH[a] - STRENGTH[b]))
    u = rng.random(n)
    vote = np.where(u < 0.12, "draw", np.where(u < 0.12 + 0.88 * p, "L", "R"))
    return pl.DataFrame({"left": NAMES[a], "right": NAMES[b], "vote": vote,
                         "topic": rng.choice(["code", "math", "chat"], n),
                         "words_left": rng.gamma(3.0, 80.0, n), "words_right": rng.gamma(3.0, 80.0, n)})


def run(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(COMMAND), *map(str, args)], capture_output=True, text=True, timeout=120)


COLUMNS = ("--model-a-col", "left", "--model-b-col", "right", "--winner-col", "vote", "--a-wins", "L", "--b-wins", "R",
           "--ties", "draw")


# ------------------------------------------------------------------------------------- the installed command


def test_the_installed_command_ranks_a_users_csv_by_category_each_board_a_filtered_fit(tmp_path):
    assert COMMAND.is_file(), "arena-leaderboard is not installed (pip install -e .)"
    frame = arena()
    path, out, diffs = tmp_path / "mine.csv", tmp_path / "board.csv", tmp_path / "pairs.csv"
    frame.write_csv(path)
    done = run(path, *COLUMNS, "--by", "topic", "--anchor", "cat", "--rounds", 30, "--seed", 4, "--pairwise",
               "--out", out, "--pairwise-out", diffs, "--quiet")
    assert done.returncode == 0, done.stderr
    for words in ("# fit: Bradley–Terry; 1,500 battles, 5 models", "ties ('draw') count as half a win",
                  "reg = 0", "anchor: cat at 1000", "rating: the full-data fit", "over 30 rounds (seed 4)",
                  "## topic = math"):
        assert words in done.stdout, words
    board, pairwise = pl.read_csv(out), pl.read_csv(diffs)
    assert board["topic"].null_count() == 5 and set(board["topic"].drop_nulls()) == {"chat", "code", "math"}
    for value in (None, "chat", "code", "math"):
        sub = frame if value is None else frame.filter(pl.col("topic") == value)
        fit = ranking.leaderboard(sub, fmt=FMT, anchor="cat", rounds=30, seed=4)
        expected = fit.to_frame().join(fit.rank_intervals().drop("rank"), on="model")
        got = board.filter(pl.col("topic").is_null() if value is None else pl.col("topic") == value)
        assert got["model"].to_list() == expected["model"].to_list()
        for c in ("rating", "ci_lower", "ci_upper", "rank", "rank_lower", "rank_upper", "num_battles"):
            np.testing.assert_allclose(got[c].to_numpy(), expected[c].to_numpy(), rtol=1e-12, err_msg=c)
        mine = pairwise.filter(pl.col("topic").is_null() if value is None else pl.col("topic") == value)
        np.testing.assert_allclose(mine["ci_upper"].to_numpy(), fit.differences()["ci_upper"].to_numpy(),
                                   rtol=1e-12)


def test_the_installed_command_ranks_a_parquet_with_style_controls_and_sandwich_intervals(tmp_path):
    frame = arena(seed=1).rename({"words_left": "words_a", "words_right": "words_b"})
    path, out, coef = tmp_path / "mine.parquet", tmp_path / "board.parquet", tmp_path / "coef.csv"
    frame.write_parquet(path)
    done = run(path, *COLUMNS, "--by", "topic", "--style", "words", "--intervals", "sandwich", "--out", out,
               "--coef-out", coef, "--quiet")
    assert done.returncode == 0, done.stderr
    assert "style features words" in done.stdout and "sandwich" in done.stdout
    board, coefs = pl.read_parquet(out), pl.read_csv(coef)
    for value in ("chat", "code"):
        fit = ranking.leaderboard(frame.filter(pl.col("topic") == value), fmt=FMT, features=["words"],
                                  ci="sandwich")
        got = board.filter(pl.col("topic") == value)
        np.testing.assert_allclose(got["ci_lower"].to_numpy(), fit.to_frame()["ci_lower"].to_numpy(), rtol=1e-12)
        np.testing.assert_allclose(coefs.filter(pl.col("topic") == value)["estimate"].to_numpy(), fit.coef_ml,
                                   rtol=1e-12)


# ------------------------------------------------------------------------- intervals from the same draws


def _direct_bootstrap(frame: pl.DataFrame, rounds: int, seed: int) -> tuple[list[str], np.ndarray]:
    """Elo ratings (model 0 at 0) of every round: the unique (a, b, y) rows as documented, the documented draws
    (:func:`ranking.bootstrap_counts`), each round an unpenalised statsmodels GLM (binomial, ties 0.5)."""
    models = sorted(set(frame["left"]) | set(frame["right"]))
    index = {m: i for i, m in enumerate(models)}
    rows = (frame.select(pl.col("left").replace_strict(index, return_dtype=pl.Int64).alias("a"),
                         pl.col("right").replace_strict(index, return_dtype=pl.Int64).alias("b"),
                         pl.col("vote").replace_strict({"L": 1.0, "R": 0.0, "draw": 0.5}).alias("y"))
            .group_by("a", "b", "y").len().sort("a", "b", "y"))
    a, b, y, c = (rows[k].to_numpy() for k in ("a", "b", "y", "len"))
    x = np.zeros((rows.height, len(models)))
    x[np.arange(rows.height), a] += 1.0
    x[np.arange(rows.height), b] -= 1.0
    draws = ranking.bootstrap_counts(int(c.sum()), rounds, seed, p=c / c.sum())
    elo = np.zeros((rounds, len(models)))
    for k, w in enumerate(draws):
        keep = w > 0
        fit = sm.GLM(y[keep], x[keep, 1:], family=sm.families.Binomial(), freq_weights=w[keep]).fit(tol=1e-13)
        elo[k, 1:] = 400.0 * fit.params / math.log(10.0)
    return models, elo


def test_pairwise_differences_and_rank_intervals_equal_a_direct_bootstrap():
    frame = arena(900, seed=2)
    fit = ranking.leaderboard(frame, fmt=FMT, rounds=60, seed=7, level=0.9)
    assert fit.ridge_resamples == 0
    models, elo = _direct_bootstrap(frame, 60, 7)
    col = {m: i for i, m in enumerate(models)}
    for row in fit.differences().iter_rows(named=True):
        d = elo[:, col[row["model_a"]]] - elo[:, col[row["model_b"]]]
        assert row["ci_lower"] == pytest.approx(np.percentile(d, 5), abs=1e-5)
        assert row["ci_upper"] == pytest.approx(np.percentile(d, 95), abs=1e-5)
    ranks = sps.rankdata(-elo, method="min", axis=1)  # 1 + the models rated higher in that round
    for row in fit.rank_intervals().iter_rows(named=True):
        r = np.sort(ranks[:, col[row["model"]]])
        assert row["rank_lower"] == r[math.ceil(0.05 * 60) - 1]  # the empirical 5% and 95% quantiles
        assert row["rank_upper"] == r[math.ceil(0.95 * 60) - 1]


def test_the_anchor_leaves_the_difference_intervals_unchanged():
    frame = arena(seed=3)
    fits = [ranking.leaderboard(frame, fmt=FMT, anchor=anchor, rounds=40, seed=1) for anchor in (None, "ant", "eel")]
    base = fits[0].differences()
    for other in fits[1:]:
        np.testing.assert_allclose(other.differences().select("difference", "ci_lower", "ci_upper").to_numpy(),
                                   base.select("difference", "ci_lower", "ci_upper").to_numpy(), atol=1e-9)
    widths = [f.to_frame("anchored").sort("model").select(pl.col("ci_upper") - pl.col("ci_lower")).to_series()
              .to_numpy() for f in fits[1:]]
    assert not np.allclose(widths[0], widths[1])  # whereas the intervals of differences to an anchor move with it
    sandwich = [ranking.leaderboard(frame, fmt=FMT, anchor=a, ci="sandwich").differences() for a in ("ant", "eel")]
    np.testing.assert_allclose(sandwich[0]["ci_lower"].to_numpy(), sandwich[1]["ci_lower"].to_numpy(), atol=1e-9)


def test_leaderboard_agreement_joins_two_boards_by_model():
    frame = arena(seed=4)
    full = ranking.leaderboard(frame, fmt=FMT, ci="none")
    subset = ranking.leaderboard(frame.filter((pl.col("topic") == "code") & (pl.col("left") != "dog")
                                              & (pl.col("right") != "dog")), fmt=FMT, ci="none").to_frame()
    got = stats.leaderboard_agreement(full.to_frame(), subset.sort("model", descending=True))
    assert stats.leaderboard_agreement(full, subset) == got  # a Ranking is joined the same way
    mine = dict(zip(full.models, full.rating, strict=True))
    x = [mine[m] for m in subset["model"]]
    assert got.n_models == 4 == subset.height
    assert got.spearman == pytest.approx(sps.spearmanr(x, subset["rating"]).statistic)
    assert got.pearson == pytest.approx(sps.pearsonr(x, subset["rating"]).statistic)
    with pytest.raises(ValueError, match="columns 'model' and 'elo'"):
        stats.leaderboard_agreement(full.to_frame(), subset, rating="elo")


# -------------------------------------------------------------------------------------- nuggets without votes


def test_nugget_scores_without_votes_and_their_bootstrap_intervals_over_queries():
    from nuggetizer.core.metrics import calculate_nugget_scores

    rng = np.random.default_rng(5)
    labels = ("support", "partial_support", "not_support")
    records = [{"qid": f"q{q}", "model": model,
                "nuggets": [{"text": f"fact {k}", "importance": str(rng.choice(["vital", "okay"])),
                             "assignment": str(rng.choice(labels, p=p))} for k in range(int(rng.integers(1, 9)))]}
               for q in range(40) for model, p in (("good", (0.6, 0.2, 0.2)), ("weak", (0.2, 0.2, 0.6)))]
    scores = ng.response_scores(records)  # no record has a winner
    assert scores.height == 80 and scores.columns[:2] == ["qid", "model"]
    for record, row in zip(records, scores.iter_rows(named=True), strict=True):
        theirs = calculate_nugget_scores(record["qid"], record["nuggets"])
        assert row["all"] == pytest.approx(theirs.all_score) and row["strict_all"] == pytest.approx(
            theirs.strict_all_score)
    metrics = ng.nugget_metrics(scores, ["model"], rounds=400, seed=3)
    for row in metrics.iter_rows(named=True):
        mine = scores.filter(pl.col("model") == row["model"])[row["metric"]].to_numpy()
        assert row["mean"] == pytest.approx(np.nanmean(mine))
        assert row["ci_lower"] < row["mean"] < row["ci_upper"]
    good, weak = (metrics.filter((pl.col("model") == m) & (pl.col("metric") == "all")).row(0, named=True)
                  for m in ("good", "weak"))
    assert good["ci_lower"] > weak["ci_upper"]  # 40 queries separate the two
    with pytest.raises(ValueError, match="1 of 2 nugget records have no 'nuggets'"):
        ng.response_scores([{"qid": "a", "nuggets": []}, {"qid": "b", "nuggets": None}])


# ------------------------------------------------------------------------------------------------ messages


def test_the_messages_a_user_meets():
    frame = arena(200, seed=6).rename({"words_left": "words_a", "words_right": "words_b"})
    holed = frame.with_columns(pl.when(pl.int_range(pl.len()) == 3).then(None).otherwise("words_a").alias("words_a"))
    with pytest.raises(ranking.InvalidBattlesError) as err:
        ranking.leaderboard(holed, fmt=FMT, features=["words"], ci="none")
    assert "1 row with a missing or non-finite style feature: column 'words_a' (row 4)" in str(err.value)
    assert "Expected" not in str(err.value)  # nothing about the vote labels
    with pytest.raises(ranking.InvalidBattlesError, match=r"1 row without a vote .*Expected 'vote' in 'L', 'R'"):
        ranking.leaderboard(frame.with_columns(pl.when(pl.int_range(pl.len()) == 0).then(None).otherwise("vote")
                                               .alias("vote")), fmt=FMT, ci="none")
    with pytest.raises(ValueError, match=r"anchor 'antt' has no battles here; did you mean 'ant'\?"):
        ranking.leaderboard(frame, fmt=FMT, anchor="antt", ci="none")
    with pytest.raises(TypeError, match=r"not the string 'words': pass a list, features=\['words'\]"):
        ranking.leaderboard(frame, fmt=FMT, features="words", ci="none")
    with pytest.raises(ranking.InvalidBattlesError, match=r"column 'vot' not found; did you mean 'vote'\?"):
        ranking.leaderboard(frame, fmt=ranking.BattleFormat("left", "right", "vot"), ci="none")
    assert "natural log-odds per standard deviation" in (Ranking.coefficients.__doc__ or "")
    module = importlib.import_module("analysis_lib.ranking.fit")  # the leaderboard's module, not the function
    assert module.__doc__ and "full-data fit" in module.__doc__ and callable(ranking.leaderboard)
    fit = ranking.leaderboard(frame, fmt=FMT, anchor="dog", rounds=20)
    assert dict(zip(fit.models, fit.rating, strict=True))["dog"] == 1000.0  # the default rating: the ML fit
    assert "rating: the full-data fit" in fit.header() and "rating: the full-data fit" in str(fit)


def test_the_search_arena_command_points_other_data_to_the_general_command(tmp_path, capsys):
    from analysis_lib.search_arena.__main__ import main

    path = tmp_path / "mine.csv"
    arena(50).write_csv(path)
    assert main([str(path), "--rounds", "0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "use: arena-leaderboard FILE" in err


def test_the_readme_section_for_this_user_is_near_the_top_and_its_commands_parse():
    from analysis_lib.ranking import cli

    lines = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8").splitlines()
    start = lines.index("## Ranking your own arena")
    assert start < 60
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("## "))
    assert end - start <= 32
    text = "\n".join(lines[start:end]).replace("\\\n", " ")
    commands = [line.split() for line in text.splitlines() if line.startswith("arena-leaderboard ")]
    assert len(commands) == 2
    for words in commands:
        cli.build_parser().parse_args(words[1:])  # every option shown exists (argparse exits on one that does not)
