"""The leaderboard command ``python -m analysis_lib.ranking``, run in a subprocess on small files: the three file
types, options for columns and labels, the written board against the library call, one-line errors and exit codes."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from analysis_lib import ranking

ROOT = Path(__file__).resolve().parents[1]


def run(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "analysis_lib.ranking", *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT, timeout=120)


def battles(n: int = 1500, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    names = np.array(["alpha", "beta", "gamma", "delta"])
    strength = np.array([0.2, 0.1, 0.0, -0.1])
    a = rng.integers(0, 4, n)
    b = (a + rng.integers(1, 4, n)) % 4
    la, lb = rng.gamma(3.0, 100.0, n), rng.gamma(3.0, 100.0, n)
    p = 1 / (1 + np.exp(-math.log(10) * (strength[a] - strength[b])))
    u = rng.random(n)
    winner = np.where(u < 0.1, "tie", np.where(u < 0.1 + 0.9 * p, "model_a", "model_b"))
    return pl.DataFrame({"model_a": names[a], "model_b": names[b], "winner": winner, "len_a": la, "len_b": lb})


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("battles")
    frame = battles()
    out = {"parquet": folder / "b.parquet", "csv": folder / "b.csv", "jsonl": folder / "b.jsonl"}
    frame.write_parquet(out["parquet"])
    frame.write_csv(out["csv"])
    frame.write_ndjson(out["jsonl"])
    return out


def test_the_three_file_types_give_the_library_leaderboard(files, tmp_path):
    expected = ranking.leaderboard(battles(), anchor="gamma", rounds=30, seed=2).to_frame()
    for kind, path in files.items():
        out = tmp_path / f"{kind}.csv"
        done = run(path, "--anchor", "gamma", "--rounds", 30, "--seed", 2, "--out", out)
        assert done.returncode == 0, done.stderr
        board = pl.read_csv(out)
        assert board.columns == [*expected.columns, "set_by_ridge", "ridge_rounds", "rank_lower", "rank_upper"]
        np.testing.assert_allclose(board["rating"].to_numpy(), expected["rating"].to_numpy(), atol=1e-9)
        assert board["model"].to_list() == expected["model"].to_list()
        assert "1,500 battles, 4 models; 30 bootstrap rounds" in done.stderr  # the summary line
        assert "bootstrap: " in done.stderr and "round/s" in done.stderr  # the progress bar (tqdm)
    shown = run(files["csv"], "--ci", "none", "--quiet")
    assert shown.returncode == 0 and shown.stderr == "" and "rating_ml" in shown.stdout


def test_style_features_sandwich_and_coefficients(files, tmp_path):
    out, coef = tmp_path / "board.parquet", tmp_path / "coef.csv"
    done = run(files["parquet"], "--style", "len", "--ci", "sandwich", "--out", out, "--coef-out", coef, "--quiet")
    assert done.returncode == 0, done.stderr
    expected = ranking.leaderboard(battles(), features=["len"], ci="sandwich")
    board = pl.read_parquet(out)
    np.testing.assert_allclose(board["ci_upper"].to_numpy(), expected.to_frame()["ci_upper"].to_numpy())
    assert pl.read_csv(coef)["estimate"][0] == pytest.approx(expected.coef_estimate[0])


def test_column_names_and_labels_are_options(tmp_path):
    frame = battles().rename({"model_a": "left", "model_b": "right", "winner": "vote"}).with_columns(
        pl.col("vote").replace({"model_a": "L", "model_b": "R", "tie": "draw"}))
    path = tmp_path / "renamed.csv"
    frame.write_csv(path)
    done = run(path, "--model-a-col", "left", "--model-b-col", "right", "--winner-col", "vote", "--a-wins", "L",
               "--b-wins", "R", "--ties", "draw", "--ci", "none", "--out", tmp_path / "o.csv", "--quiet")
    assert done.returncode == 0, done.stderr
    expected = ranking.leaderboard(battles(), ci="none").to_frame()
    np.testing.assert_allclose(pl.read_csv(tmp_path / "o.csv")["rating"].to_numpy(), expected["rating"].to_numpy())


def test_bad_input_is_one_line_on_stderr_and_exit_status_2(files, tmp_path):
    missing = run(tmp_path / "nope.csv")
    assert missing.returncode == 2
    assert missing.stderr.strip().startswith(f"error: {tmp_path / 'nope.csv'}: no such file")
    column = run(files["csv"], "--winner-col", "vote")
    assert column.returncode == 2 and "column 'vote' not found (columns: model_a, model_b, winner" in column.stderr
    assert len(column.stderr.strip().splitlines()) == 1
    bad = battles().with_columns(pl.when(pl.int_range(pl.len()) == 7).then(pl.lit("both_bad"))
                                 .otherwise(pl.col("winner")).alias("winner"))
    path = tmp_path / "bad.csv"
    bad.write_csv(path)
    refused = run(path, "--ci", "none")
    assert refused.returncode == 2
    assert refused.stderr.startswith(f"error: {path}: 1 of 1,500 battles cannot be fitted")
    assert "'both_bad' (row 8)" in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
    dropped = run(path, "--ci", "none", "--drop-invalid")
    assert dropped.returncode == 0 and "dropped 1 unknown outcome" in dropped.stderr
    anchor = run(files["csv"], "--anchor", "zeta", "--ci", "none")
    assert anchor.returncode == 2 and "anchor 'zeta' has no battles" in anchor.stderr
    kind = tmp_path / "b.txt"
    kind.write_text("x")
    assert run(kind).returncode == 2
    garbage = tmp_path / "g.parquet"
    garbage.write_bytes(b"not a parquet file")
    unreadable = run(garbage)
    assert unreadable.returncode == 2 and f"error: {garbage}: could not be read as parquet" in unreadable.stderr


def test_separable_data_exit_2_unless_the_ridge_is_asked_for(tmp_path):
    frame = pl.concat([battles(), pl.DataFrame({"model_a": ["omega", "omega"], "model_b": ["alpha", "beta"],
                                                "winner": ["model_b", "model_b"], "len_a": [1.0, 1.0],
                                                "len_b": [1.0, 1.0]})])
    path = tmp_path / "sep.jsonl"
    frame.write_ndjson(path)
    refused = run(path, "--rounds", 10)
    assert refused.returncode == 2 and "never won: ['omega']" in refused.stderr and "--on-separation ridge" in \
        refused.stderr
    ridge = run(path, "--rounds", 10, "--on-separation", "ridge", "--out", tmp_path / "o.csv")
    assert ridge.returncode == 0 and "set the ratings of ['omega']" in ridge.stderr
