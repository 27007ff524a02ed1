"""The two conventions of the Fig 8 metrics (``analysis_lib.answer_engine.conventions``): known answers computed by
hand under ``"released"`` (the released notebook's Data Analysis cell) and ``"paper"``, batch = per answer under
both, the Fig 7 example under both, the scorecards' convention check and the one source limit."""

from __future__ import annotations

import json
import math

import numpy as np
import polars as pl
import pytest

from analysis_lib import answer_engine as ae
from analysis_lib.answer_engine import batch as ae_batch
from analysis_lib.answer_engine import conventions as ae_conventions
from analysis_lib.answer_engine import metrics as ae_metrics
from analysis_lib.answer_engine import records as ae_records

GOOD = "Title: a page\nbody"
ERROR_PAGE = "Error 403 forbidden"  # non-empty, but fails the notebook's Title: test


def _record(rid: str, output: str, contents: dict[int, str | None], statements: list[dict]) -> dict:
    """A judged record; ``contents`` maps each listed slot to its scraped text (None: listed, never scraped)."""
    rec = {"id": rid, "Question": "q", "Output": output, "answer_engine": "E", "is_charged": False,
           "confidence_score": "Confident", "core_statements": statements}
    for i in range(1, 11):
        rec[f"S{i}"] = f"https://s{i}.example" if i in contents else ""
        if contents.get(i) is not None:
            rec[f"S{i}_content"] = contents[i]
    return rec


def _st(sid: str, cites: list[int], support: list[int], core: str = "1") -> dict:
    return {"id": sid, "sentence": "x", "core": core, "citations": cites, "supporting_sources": support}


def three_answers() -> list[dict]:
    """The reviewer's three answers (/tmp/review_a/check_ae_vs_notebook.py), every value worked out below."""
    return [
        # a1: 3 sources, no citation; s1 ← {1}, s2 ← {1, 2}
        _record("a1", "x. y.", {1: GOOD, 2: GOOD, 3: GOOD}, [_st("1", [], [1]), _st("2", [], [1, 2])]),
        # a2: 2 sources, cites [1] and [2], nothing supported
        _record("a2", "x [1]. y [2].", {1: GOOD, 2: GOOD}, [_st("1", [1], []), _st("2", [2], [])]),
        # a3: 5 listed, 4 and 5 error pages; s1 cites 1 ← {1}, s2 cites 2 ← {3}
        _record("a3", "x [1]. y [2].", {1: GOOD, 2: GOOD, 3: GOOD, 4: ERROR_PAGE, 5: ERROR_PAGE},
                [_st("1", [1], [1]), _st("2", [2], [3])]),
    ]


# Per answer (a1, a2, a3), by hand.
# released: kept sources a1 {1,2,3}, a2 {1,2}, a3 {1,2,3} (4, 5 fail the Title: test)
#   uncited      a1: M = 3, nothing cited → 3/3;  a2: M = 2, {1,2} cited → 0/2;  a3: M = 5, {3,4,5} → 3/5
#   unsupported  0/2, 2/2, 0/2
#   necessity    a1: greedy takes 1 (covers both) → 1/3;  a2: nothing supported → 0/2;  a3: {1, 3} → 2/3
#   accuracy     a1: no citation → 1;  a2: 0/2;  a3: (s1, 1) supported, (s2, 2) not → 1/2
#   thoroughness a1: 0/3;  a2: no support → 0;  a3: 1/2
# paper (non-blank scrapes kept: a3 keeps all 5 columns; exact cover; 0/0 undefined)
#   uncited 3/3, 0/2, 3/5; unsupported as above; necessity 1/3, 0/2, 2/5;
#   accuracy undefined, 0/2, 1/2; thoroughness 0/3, undefined, 1/2
HAND = {
    "released": {"uncited_sources": [1, 0, 3 / 5], "unsupported_statements": [0, 1, 0],
                 "source_necessity": [1 / 3, 0, 2 / 3], "citation_accuracy": [1, 0, 1 / 2],
                 "citation_thoroughness": [0, 0, 1 / 2]},
    "paper": {"uncited_sources": [1, 0, 3 / 5], "unsupported_statements": [0, 1, 0],
              "source_necessity": [1 / 3, 0, 2 / 5], "citation_accuracy": [math.nan, 0, 1 / 2],
              "citation_thoroughness": [0, math.nan, 1 / 2]},
}
#: Engine percentages: released = the released notebook's cell on these records (53.3, 33.3, 33.3, 50.0, 16.7).
PERCENT = {
    "released": {"uncited_sources": 160 / 3, "unsupported_statements": 100 / 3, "source_necessity": 100 / 3,
                 "citation_accuracy": 50.0, "citation_thoroughness": 50 / 3},
    "paper": {"uncited_sources": 160 / 3, "unsupported_statements": 100 / 3, "source_necessity": 100 * 11 / 45,
              "citation_accuracy": 25.0, "citation_thoroughness": 25.0},
}


def _metrics(raw: list[dict], convention: str) -> pl.DataFrame:
    conv = ae.records_to_answers(ae.parse_records(raw), convention=convention)
    m = ae.batch_metrics(ae.pack_answers(conv.answers, conv.meta["debate"].to_list()), convention=convention)
    return m.with_columns(engine=conv.meta["engine"])


@pytest.mark.parametrize("convention", ["released", "paper"])
def test_three_answers_by_hand(convention):
    m = _metrics(three_answers(), convention)
    for k, want in HAND[convention].items():
        assert np.allclose(m[k].to_numpy(), want, equal_nan=True), k
    card = {r["metric"]: r["E"] for r in ae.engine_scorecard(m, convention=convention).iter_rows(named=True)}
    for k, want in PERCENT[convention].items():
        assert card[f"pct_{k}"] == pytest.approx(want), k
    long = ae.bootstrap_scorecard(m, rounds=50, convention=convention)
    point = dict(zip(long["metric"], long["value"]))
    assert all(point[k] == pytest.approx(v) for k, v in PERCENT[convention].items())


def test_the_released_notebook_prints_these_rounded_values():
    card = {r["metric"]: r["E"] for r in ae.engine_scorecard(_metrics(three_answers(), "released")).iter_rows(
        named=True)}
    got = [round(card[f"pct_{k}"], 1) for k in ("uncited_sources", "source_necessity", "citation_accuracy",
                                                 "citation_thoroughness")]
    assert got == [53.3, 33.3, 50.0, 16.7]


def test_uncited_sources_differ_between_conventions():
    # Listed slots 1, 2, 3, 5 (4 empty); 3 is an error page. The text cites 1, 3, 6 in statements and 2 in a
    # sentence the statement step left out. released: M = max(5, 6) = 6, cited {1, 2, 3, 6} → {4, 5} = 2/6.
    # paper: columns 1, 2, 3, 5 (the error page is non-blank), statements cite 1 and 3 → {2, 5} = 2/4.
    # Under released the columns are 1, 2, 5 and the citation to 3 counts for uncited only (not a column).
    rec = _record("u", "A [1]. B [3]. Also [2]. C [6].", {1: GOOD, 2: GOOD, 3: ERROR_PAGE, 5: GOOD},
                  [_st("1", [1], [1]), _st("2", [3], []), _st("3", [6], [], core="0")])
    for convention, want, columns in (("released", (2, 6), 3), ("paper", (2, 4), 4)):
        conv = ae.records_to_answers(ae.parse_records([rec]), convention=convention)
        a = conv.answers[0]
        assert a.citations.shape[1] == columns and (a.max_slot, a.text_citations) == (5, (1, 3, 2, 6))
        assert ae.answer_metrics(a, convention=convention)["uncited_sources"] == want, convention
        assert ae.batch_metrics(ae.pack_answers([a]), convention=convention)["uncited_sources"][0] == pytest.approx(
            want[0] / want[1])


def test_text_citations_read_as_the_release_does():
    assert ae_records.text_citations("a [1]. b [2, 3][10] and [x] [ 4 ] [1\n2] [5 6]") == (1, 2, 3, 10, 4, 5, 6)
    assert ae_records.parse_citations("[1\n2]") == (1, 2)  # the statement-level reader is more lenient
    assert ae_metrics.uncited_slots(3, ()) == (3, 3) and ae_metrics.uncited_slots(2, (1, 4)) == (2, 4)


def test_released_empties_and_skips():
    c = np.zeros((2, 2), bool)
    f = np.array([[1, 0], [0, 0]], bool)
    acc, tho = ae_metrics.citation_accuracy(c, f), ae_metrics.citation_thoroughness(f, np.zeros((2, 2), bool))
    assert acc == (0, 0) and acc.value == 1.0 and isinstance(acc, ae_metrics.RatioOrOne)
    assert tho == (0, 0) and tho.value == 0.0 and isinstance(tho, ae_metrics.RatioOrZero)
    assert math.isnan(ae_metrics.citation_accuracy(c, f, convention="paper").value)
    assert math.isnan(ae_metrics.citation_thoroughness(f, c, convention="paper").value)
    with pytest.raises(ValueError, match="unknown convention"):
        ae_metrics.citation_accuracy(c, f, convention="notebook")
    # no relevant statement: the released notebook skips the answer as a whole
    a = ae.Answer(np.array([False, False]), np.array([[1, 0], [0, 0]], bool), f, ("pro", "con"), 5)
    rel = ae.answer_metrics(a)
    assert all(rel[k] is None for k in (*ae_conventions.SOURCE_METRICS, "one_sided_answer", "overconfident_answer"))
    assert rel["relevant_statements"] == (0, 2)
    paper = ae.answer_metrics(a, convention="paper")
    assert paper["uncited_sources"] == (1, 2) and paper["source_necessity"] == (0, 2)
    assert paper["one_sided_answer"] == 0 and math.isnan(paper["citation_accuracy"].value)


@pytest.mark.parametrize("convention", ["released", "paper"])
def test_figure7_reproduces_the_paper_under_both_conventions(convention, figure7_paper):
    got = ae.answer_metrics(ae.figure7_example(), convention=convention)
    for key, paper in figure7_paper.items():
        value = got[key]
        assert ((value.num, value.den) if isinstance(paper, tuple) else value) == paper, (convention, key)


def _random_answer(rng: np.random.Generator, k: int) -> ae.Answer:
    m = int(rng.integers(0, 9)) if k % 50 else 0  # a few answers without any source column
    s = int(rng.integers(1, 8))
    relevant = rng.random(s) < (0.0 if k % 17 == 0 else 0.7)  # some without a relevant statement
    cit = rng.random((s, m)) < (0.0 if k % 7 == 0 else 0.3)  # some without a citation
    sup = rng.random((s, m)) < (0.0 if k % 11 == 0 else 0.35)  # some without support
    text = None
    if k % 3:  # most carry their text; the rest fall back to the column count
        listed = m + int(rng.integers(0, 3))
        text = (max(listed, 1), tuple(int(x) for x in rng.integers(1, 12, size=int(rng.integers(0, 5)))))
    return ae.Answer(relevant, cit, sup, tuple(rng.choice(["pro", "con", "neutral"], size=s)),
                     int(rng.integers(1, 6)), *(text or (None, None)))


@pytest.mark.parametrize("convention", ["released", "paper"])
@pytest.mark.parametrize("necessity", [None, "set_cover", "greedy", "konig"])
def test_batch_equals_per_answer(convention, necessity):
    rng = np.random.default_rng(11)
    answers = [_random_answer(rng, k) for k in range(400)] + [ae.figure7_example()]
    debate = list(rng.random(len(answers)) < 0.5)
    got = ae.batch_metrics(ae.pack_answers(answers, debate), necessity, convention=convention)
    ref = ae.metrics.metrics_frame([("e", d, a) for d, a in zip(debate, answers)], necessity, convention=convention)
    for k in ae.metrics.METRICS:
        assert np.allclose(got[k].to_numpy(), ref[k].to_numpy(), equal_nan=True), k
    frame = got.with_columns(engine=pl.lit("e"))
    ae.engine_scorecard(frame, convention=convention)  # each convention's own frame passes its check


def test_released_scorecard_refuses_paper_metrics():
    raw = three_answers()
    paper = _metrics(raw, "paper")
    with pytest.raises(ValueError, match="convention='paper'"):
        ae.engine_scorecard(paper)
    with pytest.raises(ValueError, match="convention='paper'"):
        ae.bootstrap_scorecard(paper, rounds=10)
    # a skipped answer (no relevant statement) is counted as undefined for all the source metrics at once
    raw.append(_record("a4", "z [1].", {1: GOOD}, [_st("1", [1], [1], core="0")]))
    long = ae.bootstrap_scorecard(_metrics(raw, "released"), rounds=10)
    undefined = dict(zip(long["metric"], long["n_undefined"]))
    assert all(undefined[k] == 1 for k in ae_conventions.SOURCE_METRICS) and undefined["relevant_statements"] == 0


def test_one_source_limit():
    rng = np.random.default_rng(2)
    wide = [ae.Answer(np.ones(6, bool), rng.random((6, m)) < 0.3, rng.random((6, m)) < 0.3) for m in (13, 16)]
    got = ae.batch_metrics(ae.pack_answers(wide), "set_cover")  # 13–16 sources: refused before, now in range
    ref = ae.metrics.metrics_frame([("e", True, a) for a in wide], "set_cover")
    assert np.allclose(got["source_necessity"].to_numpy(), ref["source_necessity"].to_numpy())
    too_wide = ae.Answer(np.ones(2, bool), np.zeros((2, 17), bool), np.ones((2, 17), bool))
    with pytest.raises(ValueError, match="MAX_SOURCES = 16"):
        ae.pack_answers([too_wide])
    with pytest.raises(ValueError, match=r"limited to 16 sources per answer \(MAX_SOURCES\)"):
        ae.minimum_source_covers(too_wide.support)
    with pytest.raises(ValueError, match="MAX_SOURCES = 16"):
        ae_batch.min_cover_sizes(np.zeros((1, 2), np.int64), np.array([17]))
    assert ae.answer_metrics(too_wide, "greedy")["source_necessity"] == (1, 17)  # no limit on the greedy cover


def test_untitled_text_is_excluded_under_released_with_a_reason_that_says_so():
    rec = _record("t", "x [1].", {1: "Zoos breed leopards.", 2: None}, [_st("1", [1], [1])])
    conv = ae.records_to_answers(ae.parse_records([rec]))
    assert conv.meta.height == 0 and "scrape_rule='nonempty'" in conv.excluded["reason"].item()
    kept = ae.records_to_answers(ae.parse_records([rec]), scrape_rule="nonempty")  # released maths, any text
    assert kept.meta["n_sources"].to_list() == [1]
    assert ae.answer_metrics(kept.answers[0])["uncited_sources"] == (1, 2)  # slot 2 is listed, never cited


def test_scrape_rules():
    assert ae_records.scrape_ok("Title: x", "jina") and not ae_records.scrape_ok(" Title: x", "jina")
    assert not ae_records.scrape_ok(ERROR_PAGE, "jina") and ae_records.scrape_ok(ERROR_PAGE, "nonempty")
    assert not ae_records.scrape_ok(None, "jina") and not ae_records.scrape_ok("", "jina")


def test_convention_comparison_of_loaded_records(tmp_path):
    path = tmp_path / "three.json"
    path.write_text(json.dumps(three_answers()))
    data = ae.load_answers(path)
    assert data.convention == "released" and data.converted.meta.height == 3
    table = {r["metric"]: r for r in data.convention_comparison().iter_rows(named=True)}
    assert set(table) == set(ae_conventions.SOURCE_METRICS)
    for k in ae_conventions.SOURCE_METRICS:
        assert (table[k]["released"], table[k]["paper"]) == pytest.approx((PERCENT["released"][k],
                                                                           PERCENT["paper"][k])), k
    assert table["citation_accuracy"]["difference"] == pytest.approx(25.0)
