"""Answer Engine Evaluation metrics (seed 004, §4.2), König vertex cover, Table 7 thresholds."""

from __future__ import annotations

import itertools
import math

import numpy as np
import polars as pl
import pytest

from analysis_lib import answer_engine as ae
from analysis_lib.answer_engine import metrics as ae_metrics
from analysis_lib.answer_engine import scorecard as ae_scorecard
from analysis_lib.fetch import published

# ----------------------------------------------------------------------------------------------------------
# Fig 7 worked example
# ----------------------------------------------------------------------------------------------------------


def test_figure7_metrics_equal_the_papers_fractions(figure7_paper):
    got = ae.answer_metrics(ae.figure7_example())
    assert set(figure7_paper) == set(ae.metrics.METRICS)
    for key, paper in figure7_paper.items():
        value = got[key]
        if isinstance(paper, tuple):
            assert (value.num, value.den) == paper, key
        else:
            assert value == paper, key


def test_figure7_named_minimum_covers():
    # §4.2: "one possible minimum vertex cover consists of sources 1, 2, and 3 (another consists of 2, 3, and 4)"
    a = ae.figure7_example()
    covers = ae.minimum_source_covers(a.support, a.relevant)
    assert [tuple(j + 1 for j in c) for c in covers] == [(1, 2, 3), (2, 3, 4)]
    assert len(ae_metrics.greedy_source_cover(a.support, a.relevant)) == 3  # the authors' greedy cover finds 3 too


def _figure7_completions():
    """Every support matrix on the 6 relevant statements consistent with the Fig 7 text (0-based indices).

    Text: row 1 is exactly {1, 4}; (2,2), (2,5), (4,2), (5,5) supported (accurate citations); (3,1), (3,3),
    (6,4) not (inaccurate citations); row 3 empty; 10 pairs; {1,2,3} and {2,3,4} are minimum source covers.
    """
    fixed = {(0, 0), (0, 3), (1, 1), (1, 4), (3, 1), (4, 4)}
    free = [(r, c) for r in (1, 3, 4, 5) for c in range(5) if (r, c) not in fixed and (r, c) != (5, 3)]
    for extra in itertools.combinations(free, 4):
        f = np.zeros((6, 5), bool)
        for r, c in fixed | set(extra):
            f[r, c] = True
        covers = ae.minimum_source_covers(f)
        if len(covers[0]) == 3 and (0, 1, 2) in covers and (1, 2, 3) in covers:
            yield f


def test_figure7_text_is_a_set_cover_not_a_koenig_cover():
    """Our reading: the paper's "minimum vertex cover for source nodes" is a minimum *set cover* of the
    statements by sources. Every completion of the Fig 7 matrix consistent with the text has a König minimum
    vertex cover of 4 or 5 vertices, so the König reading cannot give the paper's 3/5. Ours is one of the 28
    completions whose only minimum covers are the two the paper names."""
    completions = list(_figure7_completions())
    assert len(completions) == 143
    sizes = {ae.minimum_vertex_cover(f).size for f in completions}
    assert sizes == {4, 5}
    only_two = [f for f in completions if len(ae.minimum_source_covers(f)) == 2]
    assert len(only_two) == 28
    ours = ae.figure7_example()
    assert any(np.array_equal(f, ours.support[ours.relevant]) for f in only_two)
    assert ae.source_necessity(ours.support, ours.relevant, "konig") == (4, 5)


# ----------------------------------------------------------------------------------------------------------
# Single metrics
# ----------------------------------------------------------------------------------------------------------


def test_one_sided_and_overconfident():
    assert ae_metrics.one_sided_answer(["pro", "neutral", "pro"]) == 1
    assert ae_metrics.one_sided_answer(["pro", "con"]) == 0
    assert ae_metrics.one_sided_answer(["neutral"]) == 1
    assert ae_metrics.overconfident_answer(["pro"], 5) == 1
    assert ae_metrics.overconfident_answer(["pro"], 4) == 0
    assert ae_metrics.overconfident_answer(["pro", "con"], 5) == 0
    with pytest.raises(ValueError):
        ae_metrics.one_sided_answer(["agree"])
    with pytest.raises(ValueError):
        ae_metrics.overconfident_answer(["pro"], 6)


def test_ratios_on_small_cases():
    c = np.array([[1, 0, 0], [1, 0, 0]], bool)
    f = np.array([[1, 1, 0], [0, 0, 0]], bool)
    rel = np.array([True, True])
    assert ae_metrics.uncited_sources(c) == (2, 3)
    assert ae_metrics.unsupported_statements(f, rel) == (1, 2)
    assert ae_metrics.citation_accuracy(c, f) == (1, 2)
    assert ae_metrics.citation_thoroughness(c, f) == (1, 2)
    assert ae.source_necessity(f, rel) == (1, 3)
    no_citation = np.zeros((2, 3), bool)
    assert math.isnan(ae_metrics.citation_accuracy(no_citation, f, convention="paper").value)
    assert ae_metrics.citation_accuracy(no_citation, f).value == 1.0  # released default: no citation, no imprecision
    with pytest.raises(ValueError):
        ae_metrics.citation_accuracy(c, f[:, :2])


def test_greedy_cover_can_exceed_the_minimum():
    # rows 0-5; sources A={0,1,2}, B={3,4,5} (optimal), C={0,1,3,4} ∪ greedy bait D={2,5}... classic instance
    f = np.zeros((6, 3), bool)
    f[[0, 1, 2], 0] = True  # source 0
    f[[3, 4, 5], 1] = True  # source 1
    f[[0, 1, 3, 4], 2] = True  # source 2: largest, greedy takes it first
    rel = np.ones(6, bool)
    assert ae.source_necessity(f, rel, "set_cover") == (2, 3)
    assert ae.source_necessity(f, rel, "greedy") == (3, 3)


# ----------------------------------------------------------------------------------------------------------
# König
# ----------------------------------------------------------------------------------------------------------


def _brute_min_cover(a: np.ndarray) -> int:
    n, m = a.shape
    edges = np.argwhere(a)
    if edges.size == 0:
        return 0
    codes = np.arange(1 << (n + m))
    bits = ((codes[:, None] >> np.arange(n + m)) & 1).astype(bool)
    ok = (bits[:, edges[:, 0]] | bits[:, n + edges[:, 1]]).all(axis=1)
    return int(bits[ok].sum(axis=1).min())


def _brute_max_matching(a: np.ndarray) -> int:
    n, m = a.shape
    best = 0
    for perm in itertools.permutations(range(max(n, m)), n):
        best = max(best, sum(1 for i, j in enumerate(perm) if j < m and a[i, j]))
    return best


def test_koenig_cover_on_random_graphs():
    rng = np.random.default_rng(4)
    for _ in range(150):
        n, m = rng.integers(1, 6), rng.integers(1, 6)
        a = rng.random((n, m)) < rng.uniform(0.1, 0.8)
        vc = ae.minimum_vertex_cover(a)
        # the matching is a matching of edges of a
        mr = vc.match_row
        assert all(a[i, j] for i, j in enumerate(mr) if j >= 0)
        assert len(set(mr[mr >= 0].tolist())) == vc.matching_size
        # König: cover size = matching size; it covers every edge; it is minimum (brute force)
        assert vc.size == vc.matching_size
        assert (vc.rows[:, None] | vc.cols[None, :])[a].all()
        assert vc.size == _brute_min_cover(a)
        if n <= 5 and m <= 5:
            assert vc.matching_size == _brute_max_matching(a)


def test_koenig_cover_empty_graph():
    vc = ae.minimum_vertex_cover(np.zeros((3, 2), bool))
    assert vc.size == 0 and vc.matching_size == 0


def test_minimum_source_cover_brute_force():
    rng = np.random.default_rng(7)
    for _ in range(60):
        f = rng.random((rng.integers(1, 8), rng.integers(1, 7))) < 0.35
        covers = ae.minimum_source_covers(f)
        k = len(covers[0])
        need = f.any(axis=1)
        for c in covers:
            assert f[:, list(c)].any(axis=1)[need].all() if c else not need.any()
        for s in itertools.combinations(range(f.shape[1]), max(k - 1, 0)):
            if k > 0:
                assert not f[:, list(s)].any(axis=1)[need].all()
        assert len(ae_metrics.greedy_source_cover(f)) >= k


# ----------------------------------------------------------------------------------------------------------
# Table 7 thresholds and the Fig 8 scorecard
# ----------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def thresholds():
    return ae.load_thresholds()


def test_threshold_table_reads(thresholds):
    assert set(thresholds) == set(ae.metrics.METRICS)
    assert thresholds["citation_accuracy"].intervals["borderline"] == (50.0, 90.0)
    assert thresholds["source_necessity"].higher_is_better
    assert not thresholds["uncited_sources"].higher_is_better


def test_threshold_boundaries(thresholds):
    for t in thresholds.values():
        for cat, (lo, hi) in t.intervals.items():
            assert t.classify(lo) == cat  # lower bound is inside
            if hi < 100:
                assert t.classify(np.nextafter(hi, -np.inf)) == cat  # just below the upper bound
                assert t.classify(hi) != cat  # the upper bound belongs to the next interval
        top = "acceptable" if t.higher_is_better else "problematic"
        assert t.classify(100.0) == top
        with pytest.raises(ValueError):
            t.classify(100.5)
        with pytest.raises(ValueError):
            t.classify(-1)


FIG8_EXPECTED = {
    # metric: (you_com, bing_chat, perplexity) — Fig 8 values read against Table 7
    "one_sided_answer": ("problematic", "problematic", "problematic"),  # 51.6, 48.7, 83.4 ≥ 40
    "overconfident_answer": ("acceptable", "borderline", "problematic"),  # 19.4 < 20 ≤ 29.5 < 40 ≤ 81.6
    "relevant_statements": ("borderline", "borderline", "borderline"),  # 75.5, 79.3, 82.0 in [70, 90)
    "uncited_sources": ("acceptable", "problematic", "borderline"),  # 1.1 < 5; 36.2 ≥ 10; 8.4 in [5, 10)
    "unsupported_statements": ("problematic", "borderline", "problematic"),  # 30.8, 31.6 ≥ 25; 23.1 in [10, 25)
    "source_necessity": ("borderline", "problematic", "borderline"),  # 69.0, 68.9 in [60, 80); 50.4 < 60
    "citation_accuracy": ("borderline", "borderline", "problematic"),  # 68.3, 65.8 in [50, 90); 49.0 < 50
    "citation_thoroughness": ("borderline", "borderline", "borderline"),  # 24.4, 20.5, 23.0 in [20, 50)
}


def test_figure8_classification(thresholds):
    card = pl.read_csv(published("aee_figure8_scorecard"))
    got = ae.classify_scorecard(card, thresholds)
    assert got.height == 24
    for row in got.iter_rows(named=True):
        i = ("you_com", "bing_chat", "perplexity").index(row["engine"])
        assert row["category"] == FIG8_EXPECTED[row["metric"]][i], row
    counts = {r["engine"]: (r["acceptable"], r["borderline"], r["problematic"])
              for r in ae.scorecard.category_counts(got).iter_rows(named=True)}
    assert counts == {"you_com": (2, 4, 2), "bing_chat": (0, 5, 3), "perplexity": (0, 4, 4)}


@pytest.mark.parametrize(
    ("metric", "value", "expected"),
    [
        ("pct_one_sided_answer", 20.0, "borderline"),
        ("pct_one_sided_answer", 19.999, "acceptable"),
        ("pct_relevant_statements", 90.0, "acceptable"),
        ("pct_relevant_statements", 70.0, "borderline"),
        ("pct_relevant_statements", 69.99, "problematic"),
        ("pct_uncited_sources", 10.0, "problematic"),
        ("pct_unsupported_statements", 25.0, "problematic"),
        ("pct_source_necessity", 60.0, "borderline"),
        ("pct_citation_accuracy", 50.0, "borderline"),
        ("pct_citation_accuracy", 49.0, "problematic"),
        ("pct_citation_thoroughness", 50.0, "acceptable"),
        ("pct_citation_thoroughness", 20.0, "borderline"),
    ],
)
def test_classify_named_boundaries(thresholds, metric, value, expected):
    assert ae_scorecard.classify(metric, value, thresholds) == expected


def test_engine_scorecard_aggregates_and_keeps_debate_only_metrics():
    ex = ae.figure7_example()
    answers = [("e1", True, ex), ("e1", False, ex), ("e2", True, ex)]
    frame = ae.metrics.metrics_frame(answers)
    assert frame.height == 3
    assert math.isnan(frame["one_sided_answer"][1])
    card = ae.engine_scorecard(frame)
    row = {r["metric"]: r for r in card.iter_rows(named=True)}
    assert row["pct_relevant_statements"]["e1"] == pytest.approx(600 / 7)
    assert row["pct_citation_thoroughness"]["e2"] == pytest.approx(40.0)
    assert row["pct_one_sided_answer"]["e1"] == 0.0


def test_table2_cited_share_matches_printed_percentages():
    t = ae.table2_cited_share(pl.read_csv(published("aee_table2_sources")))
    assert t["pct_floor"].to_list() == t["cited_pct_reported"].to_list() == [69, 51, 62, 100]


def test_scorecard_matrix_layout(thresholds):
    got = ae.classify_scorecard(pl.read_csv(published("aee_figure8_scorecard")), thresholds)
    values, cats, metrics, engines = ae_scorecard.scorecard_matrix(got)
    assert values.shape == (8, 3) and metrics == list(ae.metrics.METRICS)
    assert engines == ["you_com", "bing_chat", "perplexity"]
    assert values[0, 2] == 83.4 and cats[6][2] == "problematic"
