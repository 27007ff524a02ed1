"""Issue 33, point 5: where the Search Arena paper is silent, the library follows the authors' released code
(``lmarena/search-arena``). Each test computes the authors' formula independently (pandas, scipy, as their
notebooks do) on a hand-made frame and compares it with the library's number:

- SA-B2: prompt lengths trimmed at the 1st–99th percentiles *strictly*, pandas' (linear) quantiles over all prompts
  (``data_eda.ipynb``: ``prompt_length > quantile(0.01)`` and ``< quantile(0.99)``);
- SA-E4: the "before control" ratings are the unpenalised ``compute_bt``, the "after" ones keep the 0.5 penalty of
  ``compute_style_control`` (``scripts/utils.py``);
- SA-F1 (and the SA-B5 figure): intent shares with *Other* in the base (``value_counts() / sum``, then
  ``.drop('Other')``);
- SA-A2: days are calendar days in America/Los_Angeles.
"""

from __future__ import annotations

import math
from datetime import date, datetime

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import polars as pl
import pytest
from scipy.optimize import minimize
from scipy.special import expit

from analysis_lib import fetch
from analysis_lib.search_arena import bt, dataset_plots, descriptive, intents, platform

AUTHORS_INTENTS = ["Factual Lookup", "Info Synthesis", "Analysis", "Recommendation", "Explanation",
                   "Creative Generation", "Guidance", "Text Processing"]

# ---------------------------------------------------------------------------------------------------- SA-B2


@pytest.fixture()
def prompts() -> pl.DataFrame:
    """200 prompts: many one-word prompts (the 1st percentile is a tie of ones) and a long tail whose 99th
    percentile falls between two lengths; one prompt without an intent, some Other."""
    lengths = {
        "Factual Lookup": [1] * 6 + [5, 7, 9, 11, 12, 14, 16, 18, 20, 25] * 4,
        "Analysis": [1, 1, 30, 45, 60, 72, 80, 95, 110, 130] * 4 + [900, 1400],
        "Explanation": [1, 8, 12, 20, 24, 28, 33, 40, 52, 60] * 5,
        "Text Processing": [3, 40, 60, 85, 99, 120, 150, 700] * 5 + [650, 2000],
        "Other": [2, 6, 10, 50, 300, 900] * 2,
    }
    rows: list[tuple[str | None, int]] = [(intent, n) for intent, ns in lengths.items() for n in ns]
    rows.append((None, 500))
    frame = pl.DataFrame(rows, schema={"primary_intent": pl.String, "prompt_words": pl.Int64}, orient="row")
    assert frame.height >= 100
    return frame


def authors_trimmed_means(frame: pl.DataFrame) -> dict[str, float]:
    """``data_eda.ipynb``, "Prompt length distribution" cell: pandas quantiles, strict bounds, eight intents."""
    df = frame.to_pandas()
    length = df["prompt_words"]
    filtered = df[(length > length.quantile(0.01)) & (length < length.quantile(0.99))]
    filtered = filtered[filtered["primary_intent"].isin(AUTHORS_INTENTS)]
    return filtered.groupby("primary_intent")["prompt_words"].mean().to_dict()


def test_sa_b2_trim_is_the_authors_strict_percentile_trim(prompts):
    ours = descriptive.mean_by(descriptive.trimmed(prompts, "prompt_words"), "prompt_words", "primary_intent")
    ours_means = dict(zip(ours["primary_intent"], ours["mean"]))
    theirs = authors_trimmed_means(prompts)
    assert set(theirs) <= set(ours_means)
    for intent, mean in theirs.items():
        assert ours_means[intent] == pytest.approx(mean, abs=1e-12), intent
    # the frame tells the two definitions apart: the tie of one-word prompts at the 1st percentile is dropped
    assert ours_means["Factual Lookup"] != pytest.approx(
        descriptive.mean_by(descriptive.trimmed(prompts, "prompt_words", strict=False, interpolation="nearest"),
                            "prompt_words", "primary_intent").filter(pl.col("primary_intent") == "Factual Lookup")
        ["mean"][0])


def test_sa_b2_quantiles_are_pandas_linear(prompts):
    lo, hi = prompts["prompt_words"].to_pandas().quantile([0.01, 0.99])
    kept = descriptive.trimmed(prompts, "prompt_words")["prompt_words"].to_numpy()
    assert kept.min() > lo and kept.max() < hi
    values = prompts["prompt_words"].to_numpy()
    assert kept.size == int(((values > lo) & (values < hi)).sum())
    assert hi != math.floor(hi)  # the upper bound falls between two lengths: linear, not nearest, interpolation


# ---------------------------------------------------------------------------------------------------- SA-E4

MODELS = ["m1", "m2", "m3", "m4"]


@pytest.fixture()
def small_arena() -> pl.DataFrame:
    """120 battles of four models whose strengths differ and whose longer answers win more; few battles, so
    the 0.5 penalty moves the plain ratings visibly."""
    rng = np.random.default_rng(7)
    strength = {"m1": 0.35, "m2": 0.15, "m3": 0.0, "m4": -0.25}
    rows = []
    for _ in range(120):
        a, b = rng.choice(MODELS, 2, replace=False)
        la, lb = float(rng.integers(50, 600)), float(rng.integers(50, 600))
        eta = math.log(10) * (strength[a] - strength[b]) + 0.8 * (la - lb) / (la + lb + 1)
        u = rng.random()
        winner = "tie" if u < 0.15 else ("model_a" if rng.random() < expit(eta) else "model_b")
        rows.append((a, b, winner, la, lb))
    return pl.DataFrame(rows, schema=["model_a", "model_b", "winner", "response_length_a", "response_length_b"],
                        orient="row")


def authors_compute_bt(df: pd.DataFrame) -> pd.Series:
    """``compute_bt`` of ``scripts/utils.py``: unpenalised BT on the unique (a, b, outcome) rows weighted by
    their counts, base 10, scale 400, 1000 + 400 r (solved to convergence here, not capped at 100 iterations)."""
    models = sorted(set(df["model_a"]) | set(df["model_b"]))
    idx = {m: i for i, m in enumerate(models)}
    schedule = np.column_stack([df["model_a"].map(idx), df["model_b"].map(idx), np.ones(len(df), dtype=int)])
    schedule[(df["winner"] == "model_a").to_numpy(), 2] = 2
    schedule[(df["winner"] == "model_b").to_numpy(), 2] = 0
    rows, weights = np.unique(schedule, return_counts=True, axis=0)
    pairs, outcomes = rows[:, :2], rows[:, 2] / 2.0
    alpha = math.log(10.0)

    def loss(r: np.ndarray) -> tuple[float, np.ndarray]:
        p = expit(alpha * (r[pairs[:, 0]] - r[pairs[:, 1]]))
        value = -((np.log(p) * outcomes + np.log(1 - p) * (1 - outcomes)) * weights).sum()
        g = -alpha * (outcomes - p) * weights
        grad = np.zeros_like(r)
        np.add.at(grad, pairs[:, 0], g)
        np.add.at(grad, pairs[:, 1], -g)
        return value, grad

    r = minimize(loss, np.zeros(len(models)), jac=True, method="L-BFGS-B",
                 options={"maxiter": 10_000, "gtol": 1e-12, "ftol": 1e-15}).x
    return pd.Series(1000 + 400 * r, index=models)


def authors_compute_style_control(df: pd.DataFrame, feature: str, reg: float = 0.5) -> pd.Series:
    """``compute_style_control``: int32 per-side values, ``(a − b)/(a + b + 1)``, z-scored (ddof 0); penalty
    ``reg/2 ‖(r, β)‖²`` on the summed loss of all battles; ratings 1000 + 400 r."""
    models = sorted(set(df["model_a"]) | set(df["model_b"]))
    idx = {m: i for i, m in enumerate(models)}
    a, b = df["model_a"].map(idx).to_numpy(), df["model_b"].map(idx).to_numpy()
    y = np.full(len(df), 0.5)
    y[(df["winner"] == "model_a").to_numpy()] = 1.0
    y[(df["winner"] == "model_b").to_numpy()] = 0.0
    xa = df[f"{feature}_a"].to_numpy().astype(np.int32).astype(float)
    xb = df[f"{feature}_b"].to_numpy().astype(np.int32).astype(float)
    d = (xa - xb) / (xa + xb + 1)
    z = (d - d.mean()) / d.std()
    m, alpha = len(models), math.log(10.0)

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        r, beta = theta[:m], theta[m]
        p = expit(alpha * (r[a] - r[b]) + z * beta)
        value = -(np.log(p) * y + np.log(1 - p) * (1 - y)).sum() + reg / 2 * theta @ theta
        e = y - p
        grad = reg * theta
        np.add.at(grad, a, -alpha * e)
        np.add.at(grad, b, alpha * e)
        grad[m] -= z @ e
        return value, grad

    theta = minimize(loss, np.zeros(m + 1), jac=True, method="L-BFGS-B",
                     options={"maxiter": 10_000, "gtol": 1e-12, "ftol": 1e-15}).x
    return pd.Series(1000 + 400 * theta[:m], index=models)


def test_sa_e4_before_is_unpenalised_bt_and_after_keeps_the_penalty(small_arena):
    eff = bt.control_effect(small_arena, ["response_length"], rounds=0, anchor=None)
    df = small_arena.to_pandas()
    before, after = authors_compute_bt(df), authors_compute_style_control(df, "response_length")
    ours = {r["model"]: r for r in eff.ratings.iter_rows(named=True)}
    # ratings are compared up to their offset (the anchor convention); the spread is offset-free
    for name, theirs in (("before", before), ("after", after)):
        diffs = [ours[m][name] - ours[MODELS[0]][name] - (theirs[m] - theirs[MODELS[0]]) for m in MODELS]
        assert np.abs(diffs).max() < 1e-3, name
    assert eff.sd_before == pytest.approx(float(np.std(before.to_numpy(), ddof=1)), abs=1e-3)
    assert eff.sd_after == pytest.approx(float(np.std(after.to_numpy(), ddof=1)), abs=1e-3)
    # the ridge would have moved the "before" spread: the frame tells the two definitions apart
    ridged = bt.control_effect(small_arena, ["response_length"], rounds=0, anchor=None, before_reg=bt.REG)
    assert abs(ridged.sd_before - eff.sd_before) > 0.5
    assert ridged.sd_after == pytest.approx(eff.sd_after)
    assert eff.before_ridge_models == () and eff.before_ridge_resamples == 0


def test_sa_e4_bootstrap_pairs_the_unpenalised_and_the_controlled_fit(small_arena):
    eff = bt.control_effect(small_arena, ["response_length"], rounds=20, seed=3, anchor="m3")
    assert eff.change_ci[0] <= eff.change_ci[1]
    assert eff.ratings.filter(pl.col("model") == "m3")["before"][0] == pytest.approx(1000.0)


# ------------------------------------------------------------------------------------------- intent shares


@pytest.fixture()
def labelled() -> pl.DataFrame:
    counts = {"Factual Lookup": 19, "Info Synthesis": 23, "Analysis": 11, "Guidance": 9, "Text Processing": 4,
              "Other": 17}
    labels = [intent for intent, n in counts.items() for _ in range(n)] + [None, None]
    return pl.DataFrame({"primary_intent": labels}, schema={"primary_intent": pl.String})


def authors_intent_percent(frame: pl.DataFrame) -> dict[str, float]:
    """``data_eda.ipynb``, "Intent distribution": ``value_counts()`` (nulls dropped), divided by its sum with
    *Other* in it, then Other's row dropped (unrounded here)."""
    counts = frame.to_pandas()["primary_intent"].value_counts()
    return (counts / counts.sum() * 100).drop("Other").to_dict()


def test_sa_f1_intent_shares_keep_other_in_the_base(labelled):
    theirs = authors_intent_percent(labelled)
    ours = descriptive.shares(labelled, "primary_intent", exclude=("Other",))
    assert "Other" not in ours["primary_intent"].to_list()
    got = dict(zip(ours["primary_intent"], 100 * ours["share"]))
    assert got == pytest.approx(theirs)
    assert got["Factual Lookup"] == pytest.approx(100 * 19 / 83)  # 83 labelled prompts, Other's 17 included


def test_sa_b5_figure_shares_use_the_same_base(labelled):
    dist = intents.intent_distribution(labelled["primary_intent"].to_list())
    assert dict(zip(dist["intent"], 100 * dist["share"])) == pytest.approx(authors_intent_percent(labelled))


# ----------------------------------------------------------------------------------------------- SA-A2 days


def authors_days(stamps: list[datetime]) -> pd.Series:
    """Conversations per Los Angeles calendar day: UTC stamps converted with pandas, every day of the window."""
    local = pd.Series(pd.to_datetime(stamps)).dt.tz_localize("UTC").dt.tz_convert("America/Los_Angeles").dt.date
    counts = local.value_counts()
    window = pd.date_range(min(counts.index), max(counts.index), freq="D").date
    return counts.reindex(window, fill_value=0)


STAMPS = [
    datetime(2025, 3, 8, 7, 30),    # 23:30 PST on Fri 7 March
    datetime(2025, 3, 8, 8, 30),    # 00:30 PST on Sat 8 March
    datetime(2025, 3, 10, 6, 59),   # 23:59 PDT on Sun 9 March (daylight time began at 2:00 that morning)
    datetime(2025, 3, 10, 7, 0),    # 00:00 PDT on Mon 10 March
    datetime(2025, 3, 11, 3, 0),    # 20:00 PDT on Mon 10 March
    datetime(2025, 3, 12, 19, 0),   # 12:00 PDT on Wed 12 March
]


def test_sa_a2_days_are_los_angeles_calendar_days():
    frame = pl.DataFrame({"timestamp": [*STAMPS, None], "winner": ["model_a"] * 7},
                         schema={"timestamp": pl.Datetime("ns"), "winner": pl.String})
    days, undated = platform.daily_traffic(frame)
    theirs = authors_days(STAMPS)
    assert undated == 1
    assert days["day"].to_list() == list(theirs.index)
    assert days["conversations"].to_list() == theirs.to_list()
    assert days["weekend"].to_list() == [d.weekday() >= 5 for d in theirs.index]
    # UTC days: 8 to 12 March (5 days); Los Angeles: 7 to 12 March (6)
    assert platform.daily_traffic(frame, time_zone="UTC")[0].height == 5 and days.height == 6
    aware = frame.with_columns(pl.col("timestamp").dt.replace_time_zone("UTC"))
    assert platform.daily_traffic(aware)[0].equals(days)


def test_sa_a2_real_release_window_is_the_papers_52_days():
    # the real release's first and last timestamps (UTC, from the facts file); §2: "March 18 to May 8"
    text = fetch.published("search_arena_24k_release_facts").read_text()
    first, last = (datetime.fromisoformat(s) for s in ("2025-03-18 16:39:00", "2025-05-09 05:20:05"))
    assert "Timestamps 2025-03-18 16:39:00 to 2025-05-09 05:20:05" in text
    frame = pl.DataFrame({"timestamp": [first, last], "winner": [None, None]},
                         schema={"timestamp": pl.Datetime("ns"), "winner": pl.String})
    days, _ = platform.daily_traffic(frame)
    assert (days["day"][0], days["day"][-1], days.height) == (date(2025, 3, 18), date(2025, 5, 8), 52)
    assert days.height == len(authors_days([first, last]))
    assert platform.daily_traffic(frame, time_zone="UTC")[0].height == 53


def test_sa_a2_figure_names_the_zone_of_its_days():
    frame = pl.DataFrame({"timestamp": STAMPS, "winner": ["model_a"] * len(STAMPS)},
                         schema={"timestamp": pl.Datetime("ns"), "winner": pl.String})
    fig = dataset_plots.daily_traffic(platform.daily_traffic(frame)[0], paper_range=None, release_mean=None)
    assert fig.axes[0].get_ylabel() == "conversations per day (America/Los_Angeles)"
    plt.close(fig)


def test_sa_e4_records_the_authors_before_fit_on_all_voted_battles(small_arena, tmp_path):
    sources = small_arena.filter(pl.col("winner").is_in(["model_a", "model_b"]))
    from bookbuild.papers import search_arena_preferences as book
    from bookbuild.recorder import Recorder

    effect = bt.control_effect(
        sources.with_columns(pl.lit(0.0).alias(f"{f}_{s}") for f in bt.ALL_CONTROLS[1:] for s in "ab")
        .with_columns(pl.lit(3.0).alias("citation_count_a")), bt.ALL_CONTROLS, rounds=0, seed=0)
    plain = bt.leaderboard(small_arena, rounds=0).to_frame()
    rec = Recorder(tmp_path, "04_x", data="simulated")
    rec.record("SA-E4", book.e4_result(effect, plain, small_arena.height))
    numbers = {r.quantity: r for r in rec.results}
    theirs = authors_compute_bt(small_arena.to_pandas())  # the authors' Fig E.4: compute_bt on all voted battles
    authors = numbers["SD of ratings before control, the authors' battles (Elo)"]
    assert authors.ours == pytest.approx(float(np.std(theirs.to_numpy(), ddof=1)), abs=1e-3)
    assert authors.note.startswith(f"unpenalised BT on all {small_arena.height:,} voted battles, as the authors'")
    ours_before = bt.control_effect(sources, ["response_length"], rounds=0).sd_before
    assert numbers["SD of ratings before control (Elo)"].ours == pytest.approx(ours_before, abs=1e-9)
    assert numbers["ratings converge after control"].ours == ("yes" if effect.converge else "no")
