"""What the Search Arena chapters 01 and 02 record (bookbuild.papers.search_arena): κ only with enough annotations,
the chapter's not-run reason said once, external datasets that cannot load, the daily traffic against both ends
of the paper's range, the citation-style numbers, and the paper's values drawn on figures."""

from __future__ import annotations

import polars as pl
import pytest
from sklearn.metrics import cohen_kappa_score

from analysis_lib.search_arena import citation_style, describe, intents, platform, prompt_sets
from bookbuild.papers import search_arena as sa
from bookbuild.recorder import Recorder
from bookbuild.sections import Number

CHAPTER_REASON = "not run: no LLM endpoint configured and no cached result"


def annotated(n_ok: int, n_failed: int = 0, n_skipped: int = 1) -> pl.DataFrame:
    labels = ["Factual Lookup", "Analysis", "Guidance"]
    rows = [{"release_primary": labels[i % 3], "release_secondary": "Unassigned",
             "primary_intent": labels[(i * 2) % 3], "secondary_intent": labels[i % 3],
             "status": "ok", "error": None} for i in range(n_ok)]
    rows += [{"release_primary": "Analysis", "release_secondary": "Unassigned", "primary_intent": None,
              "secondary_intent": None, "status": "failed", "error": "reply was not valid JSON"}] * n_failed
    rows += [{"release_primary": "Other", "release_secondary": "Unassigned", "primary_intent": None,
              "secondary_intent": None, "status": intents.SKIPPED, "error": "skipped: moderation placeholder"}
             ] * n_skipped
    return pl.DataFrame(rows)


def test_kappa_needs_enough_annotated_prompts():
    frame = annotated(12, n_failed=2)
    rows, dist = sa.b5_numbers(frame, "gpt-4.1", CHAPTER_REASON)
    by = {r.quantity: r for r in rows}
    assert by["sampled prompts not sent (missing or moderation placeholder)"].ours == 1
    assert by["failed annotations"].ours == 2
    ok = frame.filter(pl.col("status") == "ok")
    expected = cohen_kappa_score(ok["release_primary"], ok["primary_intent"])
    assert by[sa.KAPPAS[0]].ours == pytest.approx(expected)
    assert by[sa.KAPPAS[0]].note == "n=12; LLM labels (gpt-4.1)" and by[sa.KAPPAS[0]].data == sa.LLM
    assert dist is not None and by[sa.HUMAN_KAPPAS[0]].reason == sa.NO_HUMAN_LABELS

    few = annotated(sa.MIN_ANNOTATED - 1, n_failed=1)
    rows, dist = sa.b5_numbers(few, "gpt-4.1", CHAPTER_REASON)
    by = {r.quantity: r for r in rows}
    assert dist is None and by[sa.KAPPAS[1]].ours is None
    assert by[sa.KAPPAS[1]].reason == "reply was not valid JSON"  # the step's own reason is kept
    none_sent = annotated(0, n_skipped=3)
    rows, _ = sa.b5_numbers(none_sent, "gpt-4.1", CHAPTER_REASON)
    assert {r.quantity: r for r in rows}[sa.KAPPAS[0]].reason == sa.SEE_ABOVE


def test_not_run_comparisons_say_the_chapter_reason_once():
    empty = pl.DataFrame()
    res = describe.DescribeResult("Search Arena", "SimpleQA", "not run", empty, [], empty, note=CHAPTER_REASON)
    rows, tables = sa.c1_numbers({("Search Arena", "SimpleQA"): res}, CHAPTER_REASON)
    assert tables == []
    assert rows[0] == Number("SA-C1", "Search Arena vs SimpleQA: properties with p < 0.001", reason=sa.SEE_ABOVE)
    assert rows[-1].quantity == sa.TEXT_ARENA_C1[0] and rows[-1].reason == sa.TEXT_ARENA_C1[1]
    rows, _ = sa.c2_numbers(
        {("text_arena", "Factual Lookup", "search"): describe.DescribeResult(
            "search", "non-search", "failed", empty, [], empty, note="not run: no usable LLM reply")},
        CHAPTER_REASON)
    assert [r.quantity for r in rows] == [
        "Text Arena, Factual Lookup: search vs non-search: top property, % search",
        "Text Arena, Factual Lookup: search vs non-search: top property, % non-search",
        "Text Arena, Factual Lookup: search vs non-search: top property p-value"]
    assert {(r.ours, r.reason) for r in rows} == {(None, "not run: no usable LLM reply")}


def test_external_datasets_load_or_say_why():
    def unavailable() -> pl.DataFrame:
        raise prompt_sets.ExternalDataUnavailable("CORAL: the hub cannot be reached")

    frames, rows = sa.g_numbers({
        "CORAL": unavailable,
        "WildChat": lambda: pl.DataFrame({"turns": [1, 3], "prompt_words": [10, 30]}),
    })
    assert list(frames) == ["WildChat"]
    assert [(r.quantity, r.ours, r.reason) for r in rows] == [
        ("CORAL mean turns", None, "CORAL: the hub cannot be reached"),
        ("CORAL mean prompt length (words)", None, "CORAL: the hub cannot be reached"),
        ("WildChat mean turns", 2.0, ""), ("WildChat mean prompt length (words)", 20.0, "")]
    assert {r.data for r in rows if not r.reason} == {"real"} and {r.analysis_id for r in rows} == {"SA-G"}


def test_llm_notes_and_reasons():
    assert sa.why_not("", CHAPTER_REASON) == sa.SEE_ABOVE
    assert sa.why_not(CHAPTER_REASON, CHAPTER_REASON) == sa.SEE_ABOVE
    assert sa.why_not("timed out", CHAPTER_REASON) == "timed out"
    note = sa.llm_note(False, "gpt-4.1", CHAPTER_REASON, "the topic names")
    assert "no LLM endpoint configured and no cached result" in note and "not run: no" not in note
    assert "<code>gpt-4.1</code>" in sa.llm_note(True, "gpt-4.1", "", "x")


def test_traffic_is_recorded_against_both_ends_of_the_range(tmp_path):
    rec = Recorder(tmp_path, "01_dataset", data="real")
    rec.record("SA-A2", platform.TrafficSummary(454.0, 796.0, 57.0, 53, 0.9))
    got = {r.quantity: r for r in rec.results}
    low, high = (got[q] for q in sa.MEAN_AGAINST_RANGE)
    assert low.ours == high.ours == 454.0 and (low.status, high.status) == ("differs", "match")
    assert got["days in the collection window"].ours == 53 and got["peak conversations per day"].ours == 796
    assert sa.paper_range() == (800.0, 1500.0)  # "roughly 800-1,500 conversations per day" (App. A.1)


def test_paper_marks_read_the_paper_values():
    marks = sa.paper_marks("SA-22L", {"F": "Factual Lookup mean prompt words",
                                      "O": "other intents, Other excluded: mean prompt words"})
    assert marks == {"F": 17.2, "O": None}  # the second has no paper number
    shares = sa.paper_turn_shares()
    assert shares["1"] == pytest.approx(100 - 22.4)
    assert shares["2"] == pytest.approx(100 * 3288 / 24069) and shares["4"] == pytest.approx(100 * 460 / 24069)


def test_sa22l_quantities_name_every_group_of_factual_vs_rest():
    from analysis_lib.search_arena import descriptive

    battles = pl.DataFrame({"primary_intent": ["Factual Lookup", "Other"], "prompt_words": [1, 3]})
    assert set(sa.SA22L_QUANTITIES) == set(descriptive.factual_vs_rest(battles)[0]["group"])


def test_style_numbers_say_why_the_coefficient_did_not_run(tmp_path):
    coefficient = citation_style.StyleCoefficient(
        n_battles=40, n_mixed=0, beta=float("nan"), se=float("nan"), p_value=float("nan"),
        reason="no battle shows the two styles on its two sides")
    table = pl.DataFrame({"ci_lower": [-1.0, 2.0], "ci_upper": [1.0, 5.0]})  # the second excludes 0
    ratings = citation_style.StyleRatings(table=table, wald=3.0, df=2, p_value=0.22, kendall_tau=1.0, n_battles=40)
    rec = Recorder(tmp_path, "01_dataset", data="real")
    rec.record("SA-A2C", {"coefficient": coefficient, "ratings": ratings, "left_out": "5 no vote"})
    by = {r.quantity: r for r in rec.results}
    assert by["battles with a vote and both citation styles known"].note.endswith(
        "; 0 with the two styles on the two sides; left out: 5 no vote")
    assert {by[q].reason for q in ("style coefficient (standardised vs original; contextual BT)",
                                   "style coefficient: Wald p-value")} == {coefficient.reason}
    joint = by["model × style ratings: joint Wald p-value"]
    assert joint.ours == 0.22 and joint.note.endswith("; W = 3.00, χ² with 2 degrees of freedom")
    significant = by["models whose rating differs between the styles (95% interval excludes 0)"]
    assert significant.ours == 1 and significant.note.endswith("; of 2 models")
    assert {r.analysis_id for r in rec.results} == {"SA-A2C"}
