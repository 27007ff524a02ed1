"""What the prompt chapter records (search_arena.prompt_records, recorded): κ only with enough annotations, the
chapter's not-run reason said once, external datasets that cannot load, and the hand-over to the recorder."""

from __future__ import annotations

import polars as pl
import pytest
from sklearn.metrics import cohen_kappa_score

from analysis_lib.search_arena import describe, intents, prompt_records, prompt_sets, recorded
from analysis_lib.search_arena.recorded import Row

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
    rows, dist = prompt_records.intent_rows(frame, "gpt-4.1", CHAPTER_REASON)
    by = {r.quantity: r for r in rows}
    assert by["sampled prompts not sent (missing or moderation placeholder)"].value == 1
    assert by["failed annotations"].value == 2
    ok = frame.filter(pl.col("status") == "ok")
    expected = cohen_kappa_score(ok["release_primary"], ok["primary_intent"])
    assert by[prompt_records.KAPPAS[0]].value == pytest.approx(expected)
    assert by[prompt_records.KAPPAS[0]].note == "n=12; LLM labels (gpt-4.1)"
    assert dist is not None and by[prompt_records.HUMAN_KAPPAS[0]].value is None

    few = annotated(prompt_records.MIN_ANNOTATED - 1, n_failed=1)
    rows, dist = prompt_records.intent_rows(few, "gpt-4.1", CHAPTER_REASON)
    by = {r.quantity: r for r in rows}
    assert dist is None and by[prompt_records.KAPPAS[1]].value is None
    assert by[prompt_records.KAPPAS[1]].note == "reply was not valid JSON"  # the step's own reason is kept
    none_sent = annotated(0, n_skipped=3)
    rows, _ = prompt_records.intent_rows(none_sent, "gpt-4.1", CHAPTER_REASON)
    assert {r.quantity: r for r in rows}[prompt_records.KAPPAS[0]].note == recorded.SEE_ABOVE


def test_not_run_comparisons_say_the_chapter_reason_once():
    empty = pl.DataFrame()
    res = describe.DescribeResult("Search Arena", "SimpleQA", "not run", empty, [], empty, note=CHAPTER_REASON)
    rows, tables = prompt_records.prompt_comparison_rows({("Search Arena", "SimpleQA"): res}, CHAPTER_REASON)
    assert tables == []
    assert rows[0] == Row("Search Arena vs SimpleQA: properties with p < 0.001", None, recorded.SEE_ABOVE)
    assert rows[-1].quantity == prompt_records.TEXT_ARENA_C1[0] and rows[-1].value is None
    rows, _ = prompt_records.response_comparison_rows(
        {("text_arena", "Factual Lookup", "search"): describe.DescribeResult(
            "search", "non-search", "failed", empty, [], empty, note="not run: no usable LLM reply")},
        CHAPTER_REASON)
    assert [r.quantity for r in rows] == [
        "Text Arena, Factual Lookup: search vs non-search: top property, % search",
        "Text Arena, Factual Lookup: search vs non-search: top property, % non-search",
        "Text Arena, Factual Lookup: search vs non-search: top property p-value"]
    assert {r.note for r in rows} == {"not run: no usable LLM reply"}


def test_external_rows_load_or_say_why():
    def unavailable() -> pl.DataFrame:
        raise prompt_sets.ExternalDataUnavailable("CORAL: the hub cannot be reached")

    frames, rows = prompt_records.external_rows({
        "CORAL": unavailable,
        "WildChat": lambda: pl.DataFrame({"turns": [1, 3], "prompt_words": [10, 30]}),
    })
    assert list(frames) == ["WildChat"]
    assert [(r.quantity, r.value, r.note) for r in rows] == [
        ("CORAL mean turns", None, "CORAL: the hub cannot be reached"),
        ("CORAL mean prompt length (words)", None, "CORAL: the hub cannot be reached"),
        ("WildChat mean turns", 2.0, ""), ("WildChat mean prompt length (words)", 20.0, "")]
    assert {r.data for r in rows if r.value is not None} == {"real"}


class FakeRecorder:
    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def number(self, analysis_id, quantity, ours, *, note="", data=None, planted=None):
        self.calls.append(("number", analysis_id, quantity, ours, note, data))

    def not_run(self, analysis_id, quantity, *, reason):
        self.calls.append(("not run", analysis_id, quantity, reason))


def test_record_hands_numbers_and_reasons_to_the_recorder():
    rec = FakeRecorder()
    recorded.record(rec, "SA-X", [Row("a", 1.5, "n=3"), Row("b", None, "no data"), Row("c", 2, data="real")])
    assert rec.calls == [("number", "SA-X", "a", 1.5, "n=3", None), ("not run", "SA-X", "b", "no data"),
                         ("number", "SA-X", "c", 2, "", "real")]
    assert recorded.rows_of({"x": 1.0}, data="real", notes={"x": "n"}) == [Row("x", 1.0, "n", "real")]
    assert recorded.why_not("", CHAPTER_REASON) == recorded.SEE_ABOVE
    assert recorded.why_not("timed out", CHAPTER_REASON) == "timed out"
    note = recorded.llm_note(False, "gpt-4.1", CHAPTER_REASON, "the topic names")
    assert "no LLM endpoint configured and no cached result" in note and "not run: no" not in note
    assert "`gpt-4.1`" in recorded.llm_note(True, "gpt-4.1", "", "x")
