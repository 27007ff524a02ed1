"""Descriptive statistics against hand-computed values and the real benchmark files."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from analysis_lib import plotting
from analysis_lib.search_arena import dataset_plots, descriptive


@pytest.fixture
def battles() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "primary_intent": ["Factual Lookup", "Factual Lookup", "Analysis", "Other", None],
            "language": ["English", "Russian", "English", "English", "Chinese"],
            "languages": [["English"], ["Russian", "English"], ["English"], ["English"], ["Chinese"]],
            "turn": [1, 2, 1, 12, 3],
            "prompt_words": [1, 2, 3, 4, 100],
            "judge": ["u1", "u1", "u2", "u3", None],
            "client_country": ["US", "US", "DE", None, "CN"],
        }
    )


def test_shares_exclude_and_nulls(battles):
    # the authors' Fig 1: Other's bar is dropped but Other stays in the base (4 labelled prompts; null left out)
    out = descriptive.shares(battles, "primary_intent", exclude=("Other",))
    assert out["primary_intent"].to_list() == ["Factual Lookup", "Analysis"]
    assert out["share"].to_list() == pytest.approx([2 / 4, 1 / 4])
    shown = descriptive.shares(battles, "primary_intent", exclude=("Other",), base="shown")
    assert shown["share"].to_list() == pytest.approx([2 / 3, 1 / 3])


def test_turn_distribution_pools_the_tail_and_counts_every_length(battles):
    out = descriptive.turn_distribution(battles, max_turns=10)
    assert dict(zip(out["turns"], out["count"])) == {1: 2, 2: 1, 3: 1, **dict.fromkeys(range(4, 10), 0), 10: 1}
    assert out["share"].sum() == pytest.approx(1.0)


def test_trimmed_uses_whole_frame_quantiles(battles):
    # quantiles over all five rows (linear): q0 = 1, q0.75 = 4; the authors' trim is strict
    kept = descriptive.trimmed(battles, "prompt_words", 0.0, 0.75)
    assert kept["prompt_words"].to_list() == [2, 3]
    inclusive = descriptive.trimmed(battles, "prompt_words", 0.0, 0.75, strict=False)
    assert inclusive["prompt_words"].to_list() == [1, 2, 3, 4]


def test_real_benchmark_prompt_sets():
    # DATA.md: SimpleQA problems average 16.32 words and BrowseComp problems 103.26 (paper: 16.3, 103.3).
    sets = descriptive.prompt_sets()
    stats = dict(sets.group_by("dataset").agg(pl.col("words").mean()).iter_rows())
    counts = dict(sets.group_by("dataset").len().iter_rows())
    assert counts["SimpleQA"] == 4326 and counts["BrowseComp"] == 1266
    assert stats["SimpleQA"] == pytest.approx(16.32, abs=0.005)
    assert stats["BrowseComp"] == pytest.approx(103.26, abs=0.005)
    assert sets.filter(pl.col("dataset") == "Search Arena")["text"].is_unique().all()



def test_users_by_country_counts_each_user_once(battles):
    out = descriptive.users_by_country(battles)
    # u1 (US twice), u2 (DE); u3 has no country and the last conversation has no user
    assert dict(zip(out["client_country"], out["users"])) == {"US": 1, "DE": 1}
    assert out["share"].to_list() == pytest.approx([0.5, 0.5])


def test_dataset_comparison_counts_languages_without_null():
    battles = pl.DataFrame(
        {
            "language": ["English", None, "Russian", "English"],
            "languages": [["English"], None, ["Russian"], ["English"]],
            "turn": [1, 2, 1, 1],
            "judge": ["a", "b", "a", None],
            "winner": ["model_a", None, "tie", "model_b"],
        }
    )
    sets = pl.DataFrame({"dataset": ["SimpleQA", "SimpleQA", "BrowseComp", "Search Arena"],
                         "text": ["q", "r", "s", "t"]})
    table = descriptive.dataset_comparison(battles, sets)
    row = table.filter(pl.col("dataset") == "Search Arena").row(0, named=True)
    assert row == {"dataset": "Search Arena", "conversations": 4, "voted": 3, "users": 2, "languages": 2,
                   "multi_turn_share": 0.25}
    assert dict(zip(table["dataset"], table["conversations"]))["SimpleQA"] == 2


# ------------------------------------------------------------------ SA-22L and the paper's numbers on figures


def test_factual_vs_rest_by_hand(battles):
    lengths, unlabelled = descriptive.factual_vs_rest(battles)
    row = {r["group"]: r for r in lengths.iter_rows(named=True)}
    assert unlabelled == 1  # the null intent
    assert (row["Factual Lookup"]["n"], row["Factual Lookup"]["mean"]) == (2, 1.5)
    assert (row["other intents"]["n"], row["other intents"]["mean"]) == (2, 3.5)  # Analysis 3, Other 4
    assert (row["other intents, Other excluded"]["n"], row["other intents, Other excluded"]["mean"]) == (1, 3.0)
    samples = descriptive.factual_vs_rest_samples(battles)
    assert samples["Factual Lookup"].tolist() == [1, 2] and sorted(samples["other intents"].tolist()) == [3, 4]


def test_paper_marks_are_drawn_where_the_labels_are():
    fig = plotting.barh(["English", "Russian", "Chinese"], [58.0, 12.0, 7.0], xlabel="%")
    dataset_plots.mark_paper_bars(fig, {"Russian": 11.8, "Chinese": None, "Klingon": 3.0})
    ax = fig.axes[0]
    y_of = {t.get_text(): y for t, y in zip(ax.get_yticklabels(), ax.get_yticks(), strict=True)}
    offsets = ax.collections[-1].get_offsets()
    assert np.asarray(offsets).tolist() == [[11.8, y_of["Russian"]]]  # None and unknown labels skipped
    assert "paper" in [t.get_text() for t in ax.get_legend().get_texts()]
    fig = plotting.kde({"a": np.arange(1.0, 50.0), "b": np.arange(10.0, 90.0)}, xlabel="words")
    dataset_plots.mark_paper_means(fig, {"a": 20.0, "c": 5.0})
    ax = fig.axes[0]
    vertical = [ln for ln in ax.get_lines() if ln.get_linestyle() == ":"]
    assert [ln.get_xdata()[0] for ln in vertical] == [20.0]
    assert vertical[0].get_color() == ax.get_lines()[0].get_color()  # in the colour of curve "a"
    assert "paper: mean" in [t.get_text() for t in ax.get_legend().get_texts()]
