"""What the Search Arena chapters 01 and 02 record (bookbuild.papers.search_arena), through the book's recorder
against the real paper values: κ only with enough annotations, the chapter's not-run reason said once, the
comparisons' counts and shares, external datasets that cannot load, the prompt lengths by intent, the daily
traffic against both ends of the paper's range, the citation-style numbers, and the paper's values drawn on
figures."""

from __future__ import annotations

import polars as pl
import pytest
from sklearn.metrics import cohen_kappa_score

from analysis_lib.search_arena import citation_style, describe, intents, platform, prompt_sets
from bookbuild.papers import search_arena as sa
from bookbuild.recorder import NotRun, Recorder

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


def _recorded(tmp_path, analysis_id, result, **kw):
    """``result`` recorded for ``analysis_id`` through the book's recorder against the real paper values."""
    rec = Recorder(tmp_path, "02_prompts", data="simulated")
    rec.record(analysis_id, result, **kw)
    return {r.quantity: r for r in rec.results}


def test_kappa_needs_enough_annotated_prompts(tmp_path):
    def recorded(frame):
        b5 = sa.b5_result(frame, "gpt-4.1", CHAPTER_REASON)
        return b5, _recorded(tmp_path, "SA-B5", b5, notes=sa.run_notes("SA-B5", b5, {"agreement": sa.KAPPA_NOTE}))

    frame = annotated(12, n_failed=2)
    b5, by = recorded(frame)
    assert by["sampled prompts not sent (missing or moderation placeholder)"].ours == 1
    assert by["sampled prompts not sent (missing or moderation placeholder)"].note.endswith(
        "; of 15 sampled conversations")
    assert by["failed annotations"].ours == 2
    ok = frame.filter(pl.col("status") == "ok")
    kappa = by["κ primary, LLM labels vs release labels"]
    assert kappa.ours == pytest.approx(cohen_kappa_score(ok["release_primary"], ok["primary_intent"]))
    assert kappa.note.endswith("; n=12; LLM labels (gpt-4.1)") and kappa.data == "llm"
    assert b5["agreement"] is not None and by["human inter-annotator κ, top-2"].reason == sa.NO_HUMAN_LABELS

    b5, by = recorded(annotated(sa.MIN_ANNOTATED - 1, n_failed=1))
    top2 = by["κ top-2, LLM labels vs release labels"]
    assert b5["agreement"] is None and top2.ours is None and top2.status == "not run"
    assert top2.reason == "reply was not valid JSON" and "{" not in top2.note  # the step's own reason is kept
    _, by = recorded(annotated(0, n_skipped=3))
    assert by["κ primary, LLM labels vs release labels"].reason == sa.SEE_ABOVE


def test_comparisons_record_their_counts_and_shares_or_why_not(tmp_path):
    empty = pl.DataFrame()
    validation = pl.DataFrame({"property": ["gives dates", "is long"], "share_a": [0.5, 0.3],
                               "share_b": [0.1, 0.2], "diff": [0.4, 0.1], "p_value": [1e-4, 0.2], "n_a": [10, 10],
                               "n_b": [10, 10], "failed": [0, 0]})
    models = {"propose": "p", "reduce": "r", "rank": "k"}
    ran = describe.DescribeResult("Search Arena", "SimpleQA", "ok", empty, ["gives dates", "is long"], validation,
                                  models=models)
    off = describe.DescribeResult("SimpleQA", "Search Arena", "not run", empty, [], empty, note=CHAPTER_REASON)
    c1 = {"comparisons": sa.see_above([ran, off], CHAPTER_REASON),
          "text_arena": NotRun(sa.NO_TEXT_ARENA_PROMPTS)}
    by = _recorded(tmp_path, "SA-C1", c1, reason=sa.SEE_ABOVE,
                   notes=sa.run_notes("SA-C1", c1, {"comparisons": sa.MODELS_NOTE}))
    first = by["Search Arena vs SimpleQA: properties with p < 0.001"]
    assert (first.ours, first.paper, first.data) == (1, 4, "llm")  # p < 0.001 and more common in A
    assert first.note == "models: propose p, reduce r, rank k"
    assert by["SimpleQA vs Search Arena: properties with p < 0.001"].reason == sa.SEE_ABOVE
    assert by["Search Arena vs BrowseComp: properties with p < 0.001"].status == "not run"  # no such comparison
    assert by["Search Arena vs Text Arena: properties with p < 0.001"].reason == sa.NO_TEXT_ARENA_PROMPTS
    assert [t.caption for t in sa.c1_tables([ran, off])] == [
        "Properties more common in Search Arena than in SimpleQA (models: propose p, reduce r, rank k)"]

    search = describe.DescribeResult("search", "non-search", "ok", empty, ["gives dates"], validation.head(1))
    failed = describe.DescribeResult("search", "non-search", "failed", empty, [], empty,
                                     note="not run: no usable LLM reply")
    c2 = [{"arena": "text_arena", "intent": "Factual Lookup", "result": search},
          {"arena": "text_arena", "intent": "Info Synthesis", "result": sa.see_above([failed], CHAPTER_REASON)[0]}]
    by = _recorded(tmp_path, "SA-C2", c2, reason=sa.SEE_ABOVE, notes=sa.run_notes("SA-C2", c2, {"result": sa.TOP_NOTE}))
    share = by["Text Arena, Factual Lookup: search vs non-search: top property, % search"]
    assert share.ours == pytest.approx(50.0) and share.note.endswith("; ours: gives dates")
    assert by["Text Arena, Factual Lookup: search vs non-search: top property p-value"].ours == 1e-4
    assert {by[q].reason for q in by if q.startswith("Text Arena, Info Synthesis")} == {"no usable LLM reply"}
    assert sa.c2_label("search_arena", "Info Synthesis", search) == "Search Arena, Info Synthesis: search vs non-search"


def test_external_datasets_load_or_say_why(tmp_path):
    def unavailable() -> pl.DataFrame:
        raise prompt_sets.ExternalDataUnavailable("CORAL: the hub cannot be reached")

    frames, means = sa.external({
        "CORAL": unavailable,
        "WildChat": lambda: pl.DataFrame({"turns": [1, 3], "prompt_words": [10, 30]}),
    })
    assert list(frames) == ["WildChat"]
    by = _recorded(tmp_path, "SA-G", {**means, "search_arena": None}, reason=sa.NO_EXTERNAL)
    assert [(q, r.ours, r.reason) for q, r in by.items()][:4] == [
        ("CORAL mean turns", None, "CORAL: the hub cannot be reached"),
        ("CORAL mean prompt length (words)", None, "CORAL: the hub cannot be reached"),
        ("WildChat mean turns", 2.0, ""), ("WildChat mean prompt length (words)", 20.0, "")]
    assert by["WildChat mean turns"].data == "real" and by["Search Arena mean turns"].reason == sa.NO_EXTERNAL


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


def test_prompt_lengths_record_every_group_of_factual_vs_rest(tmp_path):
    from analysis_lib.search_arena import descriptive

    battles = pl.DataFrame({"primary_intent": ["Factual Lookup", "Other", "Analysis"], "prompt_words": [1, 3, 5]})
    by = _recorded(tmp_path, "SA-22L", descriptive.factual_vs_rest(battles)[0])
    assert {q: (r.ours, r.note.rsplit("; ", 1)[-1]) for q, r in by.items()} == {
        "Factual Lookup mean prompt words": (1.0, "1 prompts"), "other intents mean prompt words": (4.0, "2 prompts"),
        "other intents, Other excluded: mean prompt words": (5.0, "1 prompts")}


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
