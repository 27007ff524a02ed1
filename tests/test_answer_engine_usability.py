"""The usability study's t-tests from summary statistics (``analysis_lib.answer_engine.usability``)."""

import math

import numpy as np
import pytest
from scipy import stats

from analysis_lib import answer_engine as ae
from analysis_lib.answer_engine import usability as ae_usability


def _sample(rng: np.random.Generator, n: int, mean: float, sd: float) -> np.ndarray:
    """n values with exactly the given mean and SD (ddof 1)."""
    x = rng.normal(size=n)
    return mean + sd * (x - x.mean()) / x.std(ddof=1)


@pytest.mark.parametrize("equal_var", [True, False])
@pytest.mark.parametrize(("n1", "n2"), [(21, 7), (30, 30), (5, 12)])
def test_t_from_stats_matches_ttest_on_samples(equal_var, n1, n2):
    rng = np.random.default_rng(n1 * 100 + n2)
    a, b = _sample(rng, n1, 11.81, 3.56), _sample(rng, n2, 2.12, 1.39)
    ref = stats.ttest_ind(a, b, equal_var=equal_var)
    t, p = ae.usability.ttest_from_stats(11.81, 3.56, n1, 2.12, 1.39, n2, equal_var=equal_var)
    assert t == pytest.approx(float(ref.statistic), rel=1e-10)
    assert p == pytest.approx(float(ref.pvalue), rel=1e-8)


def test_combine_groups_matches_the_union_of_samples():
    rng = np.random.default_rng(1)
    parts = [_sample(rng, n, m, s) for n, m, s in [(7, 2.12, 1.39), (9, 2.10, 1.21), (5, 2.00, 1.72)]]
    mean, sd = ae_usability.combine_groups([2.12, 2.10, 2.00], [1.39, 1.21, 1.72], [7, 9, 5])
    union = np.concatenate(parts)
    assert mean == pytest.approx(union.mean(), rel=1e-12)
    assert sd == pytest.approx(union.std(ddof=1), rel=1e-12)


@pytest.mark.parametrize("target", [4.93e-06, 4.88e-05, 1e-3, 8.14e-53])
def test_implied_n_round_trip(target):
    means_sds = (2.95, 1.21, 1.08, 1.25) if target > 1e-10 else (11.81, 3.56, 2.10, 1.44)
    n = ae_usability.implied_n(*means_sds, target)
    m1, s1, m2, s2 = means_sds
    _, p = ae.usability.ttest_from_stats(m1, s1, n, m2, s2, n)
    assert math.log(p) == pytest.approx(math.log(target), abs=1e-8)


def test_implied_df_round_trip():
    df = ae_usability.implied_df(13.0, 1.56e-23)
    assert 2 * stats.t.sf(13.0, df) == pytest.approx(1.56e-23, rel=1e-8)


def test_usability_csv_loads_and_comparisons_are_consistent():
    tables = ae.load_usability_tables()
    assert set(tables.columns) == {"table", "group", "measure", "statistic", "value"}
    assert set(tables["table"]) == {"T3", "T4", "T5", "S3.1"}
    assert tables.filter((tables["table"] == "T3") & (tables["statistic"] == "mean")).height == 8
    assert tables.filter(tables["table"] == "T4").height == 16
    out = ae.usability_comparisons(tables)
    assert out.height == 10
    for row in out.iter_rows(named=True):
        _, p = ae.usability.ttest_from_stats(row["mean_1"], row["sd_1"], row["implied_n"], row["mean_2"], row["sd_2"],
                                   row["implied_n"])
        assert math.log(p) == pytest.approx(math.log(row["p_published"]), abs=1e-8)
        assert row["t_pooled_stated_n"] > 0 and 0 < row["p_pooled_stated_n"] < 1
