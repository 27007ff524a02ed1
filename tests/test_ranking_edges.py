"""The leaderboard at the edges (issue 36): every command option checked before any work, names stripped, the
messages for a directory, a broken or BOM-prefixed JSON-lines file and a bad level; style features whose transform
is not finite; anchored against centred intervals (coverage on replicate planted arenas); a bootstrap resample
without an MLE on a skewed 130-model arena (fitted with the ridge, counted per model, written in the board).

The command runs in-process (``cli.main``), which is what ``python -m analysis_lib.ranking`` calls."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from analysis_lib import ranking
from analysis_lib.ranking import _pairs as pairs
from analysis_lib.ranking import cli

NAMES = np.array(["alpha", "beta", "gamma", "delta"])
STRENGTH = np.array([0.2, 0.1, 0.0, -0.1])


def battles(n: int = 1500, seed: int = 0, names: np.ndarray = NAMES) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 4, n)
    b = (a + rng.integers(1, 4, n)) % 4
    p = 1 / (1 + np.exp(-math.log(10) * (STRENGTH[a] - STRENGTH[b])))
    u = rng.random(n)
    winner = np.where(u < 0.1, "tie", np.where(u < 0.1 + 0.9 * p, "model_a", "model_b"))
    return pl.DataFrame({"model_a": names[a], "model_b": names[b], "winner": winner,
                         "len_a": rng.gamma(3.0, 100.0, n), "len_b": rng.gamma(3.0, 100.0, n)})


@pytest.fixture(scope="module")
def csv(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("edges") / "b.csv"
    battles().write_csv(path)
    return str(path)


def refused(capsys, *argv: object) -> str:
    """Run the command; assert exit 2 with one line on stderr and no board on stdout; return that line."""
    status = cli.main([str(a) for a in argv])
    err, out = capsys.readouterr()[::-1]
    assert status == 2, err
    assert len(err.strip().splitlines()) == 1 and err.startswith("error: "), err
    assert out == ""
    return err.strip()


# ------------------------------------------------------------------------------------------ options


@pytest.mark.parametrize(("argv", "expected"), [
    (["--rounds", "0"], "--rounds must be between 1 and 100,000, not 0"),  # before: every rating NaN, exit 0
    (["--rounds", "-3", "--ci", "none"], "--rounds must be between 1"),
    (["--reg", "-1"], "--reg must be a finite number >= 0, not -1"),  # before: silently treated as 0
    (["--reg", "nan"], "--reg must be a finite number >= 0"),
    (["--ridge", "0"], "--ridge must be a finite number > 0"),
    (["--level", "1.5"], "--level must be between 0 and 1 (e.g. 0.95), not 1.5"),  # before: numpy's percentiles
    (["--level", "0"], "--level must be between 0 and 1"),
    (["--anchored"], "--anchored needs --anchor"),
])
def test_a_bad_option_is_one_line_naming_it(capsys, csv, argv, expected):
    assert expected in refused(capsys, csv, *argv)


def test_out_suffix_is_written_as_that_format_or_refused(capsys, csv, tmp_path):
    line = refused(capsys, csv, "--ci", "none", "--out", tmp_path / "board.xlsx")  # before: CSV text in board.xlsx
    assert "--out" in line and "'.xlsx'" in line and not (tmp_path / "board.xlsx").exists()
    assert "--coef-out" in refused(capsys, csv, "--ci", "none", "--coef-out", tmp_path / "c.txt")
    assert "does not exist" in refused(capsys, csv, "--ci", "none", "--out", tmp_path / "no" / "b.csv")
    expected = ranking.leaderboard(battles(), ci="none").to_frame()
    readers = {".csv": pl.read_csv, ".parquet": pl.read_parquet, ".json": pl.read_json, ".jsonl": pl.read_ndjson}
    for suffix, read in readers.items():
        out = tmp_path / f"board{suffix}"
        assert cli.main([csv, "--ci", "none", "--quiet", "--out", str(out)]) == 0
        board = read(out)  # each file is read back by the reader of its own format
        np.testing.assert_allclose(board["rating"].to_numpy(), expected["rating"].to_numpy())
        assert board["model"].to_list() == expected["model"].to_list()


def test_an_excluded_model_must_exist(capsys, csv, tmp_path):
    line = refused(capsys, csv, "--exclude", "alpha,bot-99")  # before: excluded nothing without a word
    assert "--exclude" in line and "['bot-99']" in line and "4 models" in line
    out = tmp_path / "o.csv"
    assert cli.main([csv, "--exclude", "alpha", "--ci", "none", "--out", str(out)]) == 0
    assert sorted(pl.read_csv(out)["model"].to_list()) == ["beta", "delta", "gamma"]
    assert "dropped 707 excluded model" in capsys.readouterr().err
    assert "--anchor" in refused(capsys, csv, "--anchor", "zeta", "--ci", "none")


def test_names_are_stripped_of_surrounding_white_space_and_counted(capsys, tmp_path):
    frame = battles()
    padded = frame.with_columns(pl.when(pl.int_range(pl.len()) % 3 == 0).then(pl.col("model_a") + " ")
                                .otherwise(pl.col("model_a")).alias("model_a"),
                                pl.when(pl.int_range(pl.len()) % 5 == 0).then("\t" + pl.col("model_b"))
                                .otherwise(pl.col("model_b")).alias("model_b"))
    n_padded = 500 + 300
    path, out = tmp_path / "padded.csv", tmp_path / "o.csv"
    padded.write_csv(path)
    assert cli.main([str(path), "--ci", "none", "--anchor", " gamma ", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert f"{n_padded:,} model names stripped of surrounding white space" in err
    board = pl.read_csv(out)
    assert board.height == 4  # before: 8 "models"
    expected = ranking.leaderboard(frame, ci="none", anchor="gamma").to_frame()
    np.testing.assert_allclose(board["rating"].to_numpy(), expected["rating"].to_numpy())


def test_a_style_feature_that_is_not_finite_after_its_transform_is_an_error(capsys, tmp_path):
    frame = battles().with_columns(
        pl.when(pl.int_range(pl.len()).is_in([4, 9])).then(-1.0).otherwise(pl.col("len_a")).alias("len_a"),
        pl.when(pl.int_range(pl.len()).is_in([4, 9])).then(0.0).otherwise(pl.col("len_b")).alias("len_b"))
    with pytest.raises(ranking.InvalidBattlesError, match=r"style feature 'len'.*not finite in 2 rows.*'len_a', "
                                                          r"'len_b'.*row 4 \(-1, 0\), row 9"):
        ranking.leaderboard(frame, features=["len"], ci="none")  # before: a RuntimeWarning, the feature dropped
    path = tmp_path / "neg.parquet"
    frame.write_parquet(path)
    line = refused(capsys, path, "--style", "len", "--ci", "none")
    assert "style feature 'len'" in line and "row 4" in line


def test_library_arguments_are_checked_and_named():
    frame = battles()
    for kwargs, name in (({"rounds": 0}, "rounds"), ({"level": 1.5}, "level"), ({"reg": -1.0}, "reg"),
                         ({"ridge": -1.0}, "ridge"), ({"ci": "jackknife"}, "ci")):
        with pytest.raises(ValueError, match=rf"^{name} must be"):
            ranking.leaderboard(frame, **kwargs)


# ------------------------------------------------------------------------------------------ messages


def test_file_messages(capsys, tmp_path):
    assert "is a folder, not a regular file; expected a battles file" in refused(capsys, tmp_path)
    frame = battles(n=40)
    lines = frame.write_ndjson().splitlines()
    broken = tmp_path / "broken.jsonl"
    broken.write_text("\n".join(lines[:6] + ['{"model_a": "alpha", "model_b": beta}'] + lines[6:]) + "\n")
    line = refused(capsys, broken, "--ci", "none")
    assert "line 7, column 33: not valid JSON" in line  # before: "Syntax at character 29", no line number
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes(b"\xef\xbb\xbf" + frame.write_ndjson().encode())  # before: InternalError(TapeError)
    out = tmp_path / "o.csv"
    assert cli.main([str(bom), "--ci", "none", "--quiet", "--out", str(out)]) == 0
    np.testing.assert_allclose(pl.read_csv(out)["rating"].to_numpy(),
                               ranking.leaderboard(frame, ci="none").to_frame()["rating"].to_numpy())


# ------------------------------------------------------------------------------------------ intervals


MODELS6 = np.array(["p", "q", "r", "s", "t", "u"])
STRENGTH6 = np.array([0.25, 0.1, 0.0, -0.05, -0.15, -0.3])


def planted(n: int, seed: int) -> pl.DataFrame:
    """Decided battles from the BT model with :data:`STRENGTH6` (no ties: ties drawn apart from the strengths
    would pull the estimates toward 0, away from the planted values)."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 6, n)
    b = (a + rng.integers(1, 6, n)) % 6
    p = 1 / (1 + np.exp(-math.log(10) * (STRENGTH6[a] - STRENGTH6[b])))
    winner = np.where(rng.random(n) < p, "model_a", "model_b")
    return pl.DataFrame({"model_a": MODELS6[a], "model_b": MODELS6[b], "winner": winner})


@pytest.mark.parametrize("ci", ["bootstrap", "sandwich"])
def test_centred_and_anchored_intervals_cover_their_planted_values(ci):
    """Centred intervals (no anchor: mean 1000) against ``1000 + 400 (s − mean s)``; anchored intervals (anchor
    ``r``) against ``1000 + 400 (s − s_r)``. Before: no anchored intervals in the board (``--intervals``)."""
    truth_c = dict(zip(MODELS6, 1000 + 400 * (STRENGTH6 - STRENGTH6.mean()), strict=True))
    truth_a = dict(zip(MODELS6, 1000 + 400 * (STRENGTH6 - STRENGTH6[2]), strict=True))
    covered: dict[str, list[bool]] = {"centred": [], "anchored": []}
    for k in range(60):
        frame = planted(1500, 100 + k)
        centred = ranking.leaderboard(frame, ci=ci, rounds=100, seed=k).to_frame("centred")
        anchored = ranking.leaderboard(frame, ci=ci, rounds=100, seed=k, anchor="r").to_frame("anchored")
        for row in centred.iter_rows(named=True):
            covered["centred"].append(row["ci_lower"] <= truth_c[row["model"]] <= row["ci_upper"])
        for row in anchored.filter(pl.col("model") != "r").iter_rows(named=True):
            covered["anchored"].append(row["ci_lower"] <= truth_a[row["model"]] <= row["ci_upper"])
        assert anchored.filter(pl.col("model") == "r")["ci_upper"][0] == pytest.approx(1000.0)
    for kind, hits in covered.items():
        assert np.mean(hits) >= 0.90, (kind, np.mean(hits))


def test_anchored_board_is_the_interval_of_the_difference(capsys, csv, tmp_path):
    result = ranking.leaderboard(battles(), anchor="gamma", rounds=40, seed=3, point="bootstrap_mean")
    m = len(result.models)
    j = result.models.index("gamma")
    assert result.rounds is not None
    diff = 1000 + 400 * (result.rounds[:, :m] - result.rounds[:, [j]])  # independently: percentiles per round
    board = result.to_frame("anchored")
    for i, name in enumerate(result.models):
        row = board.filter(pl.col("model") == name).row(0, named=True)
        assert row["ci_lower"] == pytest.approx(np.percentile(diff[:, i], 2.5))
        assert row["ci_upper"] == pytest.approx(np.percentile(diff[:, i], 97.5))
    ml = ranking.leaderboard(battles(), anchor="gamma", rounds=40, seed=3, point="ml").to_frame("anchored")
    np.testing.assert_allclose(ml.sort("model")["rating"].to_numpy(),
                               result.to_frame().sort("model")["rating_ml"].to_numpy())
    out = tmp_path / "a.csv"
    assert cli.main([csv, "--anchor", "gamma", "--rounds", "40", "--seed", "3", "--anchored", "--quiet",
                     "--out", str(out)]) == 0
    np.testing.assert_allclose(pl.read_csv(out)["ci_lower"].to_numpy(), board["ci_lower"].to_numpy())
    assert "anchored" in cli.build_parser().format_help()


# ------------------------------------------------------------------------------ separation inside rounds


def skewed_arena(seed: int = 5) -> tuple[pl.DataFrame, str]:
    """130 models with Zipf popularity; the rarest model keeps exactly one win, so some resamples leave it out."""
    rng = np.random.default_rng(seed)
    m, n = 130, 60_000
    pop = 1 / np.arange(1, m + 1) ** 1.2
    pop /= pop.sum()
    a, b = rng.choice(m, n, p=pop), rng.choice(m, n, p=pop)
    keep = a != b
    a, b = a[keep], b[keep]
    strength = rng.normal(0, 0.3, m)
    p = 1 / (1 + np.exp(-math.log(10) * (strength[a] - strength[b])))
    y = (rng.random(a.size) < p).astype(int)
    names = np.array([f"m{i:03d}" for i in range(m)])
    rare = m - 1
    involved = (a == rare) | (b == rare)
    wins = np.flatnonzero(involved & (((a == rare) & (y == 1)) | ((b == rare) & (y == 0))))
    losses = np.flatnonzero(involved & ~np.isin(np.arange(a.size), wins))
    assert wins.size >= 1 and losses.size >= 3
    drop = wins[1:]  # keep one win
    keep = ~np.isin(np.arange(a.size), drop)
    winner = np.where(y == 1, "model_a", "model_b")
    return pl.DataFrame({"model_a": names[a][keep], "model_b": names[b][keep], "winner": winner[keep]}), names[rare]


def test_a_resample_without_an_mle_does_not_stop_a_skewed_arena(capsys, tmp_path):
    frame, rare = skewed_arena()
    data = pairs.PairData.from_frame(ranking.Battles.from_frame(frame).fit_frame())
    assert ranking.graph.diagnose(data.models, data.pairs, data.outcomes, data.counts).identifiable  # the data: an MLE
    i = data.models.index(rare)
    won = ((data.pairs[:, 0] == i) & (data.outcomes > 0)) | ((data.pairs[:, 1] == i) & (data.outcomes < 1))
    w = ranking.bootstrap_counts(data.n_battles, 100, 0, p=data.counts / data.counts.sum())
    no_win = w[:, won].sum(axis=1) == 0  # rounds that lost the rare model's only win (independent count)
    assert no_win.any()
    result = ranking.leaderboard(frame, rounds=100, seed=0)  # before: NotIdentifiableError
    assert result.ridge_resamples >= int(no_win.sum()) and result.mle_exists
    per_model = dict(zip(result.models, result.ridge_rounds, strict=True))
    assert per_model[rare] == int(no_win.sum())
    assert np.isfinite(result.rating).all()
    path, out = tmp_path / "skewed.parquet", tmp_path / "board.csv"
    frame.write_parquet(path)
    assert cli.main([str(path), "--rounds", "100", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert f"{result.ridge_resamples} of 100 bootstrap resamples had no MLE and were fitted with the ridge" in err
    board = pl.read_csv(out)
    assert {"set_by_ridge", "ridge_rounds"} <= set(board.columns)
    assert board.filter(pl.col("model") == rare)["ridge_rounds"][0] == int(no_win.sum())
    assert not board["set_by_ridge"].any()
    ridge = ranking.leaderboard(frame.filter(~((pl.col("model_a") == rare) & (pl.col("winner") == "model_a"))
                                             & ~((pl.col("model_b") == rare) & (pl.col("winner") == "model_b"))),
                                ci="none", on_separation="ridge")
    assert ridge.to_frame(ridge_columns=True).filter(pl.col("model") == rare)["set_by_ridge"][0]
