"""SA-A2 (daily traffic) and SA-TA1 (Table A.1): hand-counted days, the published tables, and the release's
system metadata against the project's model table."""

from __future__ import annotations

import re
from datetime import date, datetime

import polars as pl
import pytest

from analysis_lib import fetch
from analysis_lib.search_arena import loader, models, platform


def timed(stamps: list[datetime | None], winners: list[str | None]) -> pl.DataFrame:
    return pl.DataFrame({"timestamp": stamps, "winner": winners},
                        schema={"timestamp": pl.Datetime("ns"), "winner": pl.String})


def test_daily_traffic_counts_every_day_including_empty_ones():
    # Fri 2025-03-21 (2 conversations, 1 voted), Sat 22 (none), Sun 23 (1), Mon 24 (3, 3 voted), one undated
    frame = timed(
        [datetime(2025, 3, 21, 1), datetime(2025, 3, 21, 23, 59), datetime(2025, 3, 23, 12),
         datetime(2025, 3, 24, 0), datetime(2025, 3, 24, 8), datetime(2025, 3, 24, 23), None],
        ["model_a", None, "tie", "model_b", "tie (bothbad)", "model_a", "model_a"],
    )
    days, undated = platform.daily_traffic(frame, time_zone="UTC")  # the hand count is of UTC days
    assert undated == 1
    assert days["day"].to_list() == [date(2025, 3, d) for d in (21, 22, 23, 24)]
    assert days["conversations"].to_list() == [2, 0, 1, 3]
    assert days["voted"].to_list() == [1, 0, 1, 3]
    assert days["weekend"].to_list() == [False, True, True, False]
    summary = platform.traffic_summary(days)
    assert summary.mean_per_day == pytest.approx(6 / 4)
    assert (summary.peak_per_day, summary.min_per_day) == (3, 0)
    assert summary.days == 4
    assert summary.weekend_ratio == pytest.approx((1 / 2) / (5 / 2))


def test_retained_share_divides_by_both_ends_of_the_range():
    low, high = platform.retained_share(454.0, (800.0, 1500.0))
    assert (low, high) == pytest.approx((454 / 1500, 454 / 800))


def test_release_traffic_facts_agree_with_the_facts_file():
    facts = platform.release_traffic_facts()
    text = fetch.published("search_arena_24k_release_facts").read_text()
    mean, peak, low = map(int, re.search(r"mean (\d+) conversations, peak (\d+), minimum (\d+)", text).groups())
    assert round(facts["mean conversations per day"]) == mean
    assert (facts["peak conversations per day"], facts["minimum conversations per day"]) == (peak, low)
    # 24,069 conversations over the 53 days the facts file's timestamps span (18 March to 9 May)
    assert facts["mean conversations per day"] == pytest.approx(24_069 / facts["days with conversations"], abs=0.05)


def test_table_a1_names_map_onto_the_leaderboard_models():
    table = platform.paper_table_a1()
    assert table.height == 12
    assert sorted(table["paper_name"].to_list()) == sorted(models.leaderboard_models())
    assert platform.table_a1_name("api-gpt-4o-search-preview-high-loc") == "gpt-4o-search-high-loc"
    assert platform.table_a1_name("pplx-sonar-reasoning-pro-high") == "sonar-reasoning-pro-high"
    assert table.filter(pl.col("details").str.contains("search_context_size=high")).height == 3


def tidy_sides() -> pl.DataFrame:
    """Three conversations by hand: the configuration columns of the tidy frame."""
    return pl.DataFrame({
        "raw_model_a": ["gpt-4o-search-preview-high-loc", "sonar", "gpt-4o-search-preview-high-loc"],
        "raw_model_b": ["sonar", "gemini-2.5-pro-exp-03-25-wo-search", "sonar"],
        "model_a": ["gpt-4o-search-high-loc", "sonar", "gpt-4o-search-high-loc"],
        "model_b": ["sonar", "gemini-2.5-pro", "sonar"],
        "api_model_a": ["gpt-4o-search-preview", "sonar", "gpt-4o-search-preview"],
        "api_model_b": ["sonar", "gemini-2.5-pro-exp-03-25", "sonar"],
        "search_context_a": ["high", "medium", "high"],
        "search_context_b": ["medium", None, "low"],
        "user_location_a": ["approximate", None, None],
        "user_location_b": [None, None, None],
        "citation_format_a": ["standardized", "original", None],
        "citation_format_b": ["standardized", "standardized", "original"],
    })


def test_model_configurations_by_hand():
    configs = platform.model_configurations(tidy_sides())
    row = {r["raw_model"]: r for r in configs.iter_rows(named=True)}
    loc = row["gpt-4o-search-preview-high-loc"]
    assert (loc["sides"], loc["search_context"], loc["user_location_share"]) == (2, "high", 0.5)
    assert loc["standardized_share"] == 1.0  # one side without a known style is left out of the share
    sonar = row["sonar"]
    assert sonar["sides"] == 3 and sonar["search_context"] == "medium, low"  # most frequent first
    assert sonar["standardized_share"] == pytest.approx(1 / 3)
    assert row["gemini-2.5-pro-exp-03-25-wo-search"]["search_context"] is None
    counts = platform.configuration_counts(configs)
    assert counts.models == 3
    assert counts.search_models == 2
    assert counts.context_high == 1
    assert counts.user_location == 0  # half of its sides only
    assert counts.standardized_sides_pct == pytest.approx(100 * 3 / 5)


def test_simulated_release_configuration_follows_the_model_table():
    configs = platform.model_configurations(loader.load_battles("sample:4000"))
    table = models.model_table()
    for r in configs.iter_rows(named=True):
        expected = table.filter(pl.col("raw_model") == r["raw_model"]).row(0, named=True)
        if expected["search_context"] in ("medium", "high"):
            assert r["search_context"] == expected["search_context"], r
        assert (r["user_location_share"] == 1.0) == r["raw_model"].endswith("-loc")
        assert 0.4 < r["standardized_share"] < 0.6  # drawn at random per side
    comparison = platform.table_a1_comparison(configs)
    assert comparison.height == 13  # Table A.1's 12, then the non-search model it does not list
    assert comparison["Table A.1 model"].null_count() == 1
    assert comparison["Table A.1 model"][0] == "pplx-sonar"
