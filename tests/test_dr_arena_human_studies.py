"""DR-T4 / DR-T5 / DR-T7: the arithmetic checks on the published tables, on known answers."""

from __future__ import annotations

import polars as pl
import pytest

from analysis_lib.dr_arena import human_studies as hs
from analysis_lib.fetch import published
from analysis_lib.stats import leaderboard_correlations
from bookbuild.papers import dr_arena as paper


@pytest.mark.parametrize(("percent", "n", "k"), [(90.6, 64, 58), (89.1, 64, 57), (96.9, 64, 62), (92.2, 64, 59),
                                                (33.3, 3, 1), (66.7, 3, 2), (88.0, 50, 44), (0.0, 7, 0)])
def test_implied_count_known(percent: float, n: int, k: int) -> None:
    assert hs.implied_count(percent, n) == k
    assert abs(100 * k / n - percent) <= 0.05


@pytest.mark.parametrize(("percent", "n"), [(89.0, 50), (9.0, 50), (92.2, 30), (90.6, 30), (50.0, 3)])
def test_unreachable(percent: float, n: int) -> None:
    assert not hs.reachable(percent, n)


def test_smallest_denominator_known() -> None:
    assert hs.smallest_denominator([50.0]) == 2
    assert hs.smallest_denominator([33.3, 66.7]) == 3
    assert hs.smallest_denominator([12.5, 37.5]) == 8
    assert hs.smallest_denominator([0.1], limit=100) is None  # needs n >= 667 at one decimal


def test_table5_checks() -> None:
    t5 = hs.table5()
    assert t5.height == 3
    assert hs.column_sums(t5) == {"question_quality": pytest.approx(100.0), "rubric_accuracy": pytest.approx(100.0)}
    long = hs.table5_long(t5)
    assert sum(hs.reachable(v, 50) for v in long["value"]) == 4  # 89% and 9% of 50 are 44.5 and 4.5
    assert hs.smallest_denominator(long["value"].to_list()) == 100
    check = hs.table5_check(t5)
    assert (check.of_cases, check.of_votes, check.votes, check.smallest) == (4, 6, 100, 100)
    assert check.full_tree_best  # Full Tree has the largest share in both columns of the published table
    shuffled = t5.with_columns(pl.col("question_quality").reverse())
    assert not hs.table5_check(shuffled).full_tree_best


def test_table7_checks() -> None:
    check = hs.table7_check(hs.table7())
    assert (check.of_turns, check.of_matches, check.smallest, check.stop) == (4, 0, 64, 92.2)
    result = paper.t7_result(check)
    assert (result["stop_matches"], result["stop_turns"]) == ("none of k/30", "59/64")


def test_table4_dr_arena_row_recomputes_from_table3() -> None:
    t3, t4 = pl.read_csv(published("dr_arena_table3_leaderboards")), hs.table4()
    agree = leaderboard_correlations(t3)
    assert agree.spearman == pytest.approx(1 - 6 * 2 / (6 * 35)) and agree.n_models == t3.height == 6
    assert t4.filter(pl.col("sign_stated").is_not_null()).height == 2
    assert paper.t4_tables(t4)[0].frame.height == 7
