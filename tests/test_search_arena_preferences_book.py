"""What chapters 03 and 04 record (bookbuild.papers.search_arena_preferences and the paper values' result paths),
through ``Recorder.record`` against the real paper values: SA-D5 against Table D.1 (every model a row, misses
explained, no anchor said), the subsets of SA-D5s, the search-context tests of SA-31, the claims read off Fig D.6,
SA-F6R with and without attribution counts; and the book's tables and marks (Fig 5 means, coefficient tables)."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import polars as pl
import pytest

from analysis_lib.search_arena import bt, loader, preference
from analysis_lib.search_arena.attribution_io import AttributionSubset, load_attribution
from analysis_lib.search_arena.schema import ATTRIBUTION_COUNTS
from analysis_lib.search_arena.simulate import simulate_release
from bookbuild.papers import search_arena_preferences as book
from bookbuild.recorder import Recorder
from bookbuild.sections import Figure

PUBLISHED = pl.DataFrame({"model": ["gpt-4o-search", "sonar"], "rating": [999.2, 1095.7]})
SUBSET_COLUMNS = [f"{c}_{s}" for s in preference.SUBSETS for c in ("rating", "rank")]


def _rec(tmp_path, data="simulated"):
    return Recorder(tmp_path, "03_x", data=data)


def _d1(**columns) -> pl.DataFrame:
    """A Table D.1 frame: the given columns, the other subset columns null (as table_d1 gives them)."""
    d1 = pl.DataFrame(columns)
    return d1.with_columns(pl.lit(None, pl.Float64).alias(c) for c in SUBSET_COLUMNS if c not in d1.columns)


def _record_ratings(rec, d1, board, note):
    interval = {f"{m} rating": (lo, hi) for m, lo, hi in board.select("model", "ci_lower", "ci_upper").iter_rows()}
    rec.record("SA-D5", {"board": d1}, intervals=interval, notes=dict.fromkeys(interval, note))
    return {r.quantity: r for r in rec.results}


def test_simulated_ratings_carry_the_shared_offset_and_their_interval(tmp_path):
    d1 = _d1(model=["sonar", "gpt-4o-search", "new-model-2027"], rating=[1085.7, 1000.0, 950.0], rank=[1, 2, 3])
    board = d1.select("model", ci_lower=pl.col("rating") - 20, ci_upper=pl.col("rating") + 20)
    note = book.rating_note(d1, PUBLISHED, anchor="gpt-4o-search", simulated=True, target="target")
    got = _record_ratings(_rec(tmp_path), d1, board, note)
    # the shared offset: the mean error of the non-anchor models with a paper value (1085.7 - 1095.7)
    assert "share an offset of -10.0 Elo from Table D.1" in got["sonar rating"].note
    assert "covers the target" in got["sonar rating"].note  # 1095.7 lies in [1065.7, 1105.7]
    assert got["sonar rating"].paper == 1095.7 and got["sonar rank"].status == "simulated"
    assert got["new-model-2027 rating"].paper is None and got["new-model-2027 rank"].ours == 3.0
    assert got["gpt-4o-mini-search rating"].status == "not run"  # a Table D.1 model these data lack
    assert list(got).index("new-model-2027 rating") > list(got).index("gpt-4o-mini-search rank")


def test_a_release_without_the_anchor_says_so(tmp_path):
    d1 = _d1(model=["a", "b"], rating=[1010.0, 990.0], rank=[1, 1])
    board = d1.select("model", ci_lower=pl.col("rating") - 5, ci_upper=pl.col("rating") + 5)
    note = book.rating_note(d1, PUBLISHED, anchor=None, simulated=False, target="")
    got = _record_ratings(_rec(tmp_path, "user"), d1, board, note)
    assert got["a rating"].note == got["b rating"].note == note and "mean at 1000" in note
    assert got["a rank"].note == ""


def test_table_d1_reuses_the_full_leaderboard_it_is_given():
    """Chapter 03 fits the full leaderboard once: table_d1 with ``full=`` equals table_d1 fitting it itself."""
    from analysis_lib.search_arena import preference

    voted = bt.prepare_battles(loader.load_battles("sample:1200", seed=1)).frame
    full = bt.leaderboard(voted, rounds=5, seed=3).to_frame()
    assert preference.table_d1(voted, rounds=5, seed=3, full=full).equals(
        preference.table_d1(voted, rounds=5, seed=3))


# ------------------------------------------------------------------------------------------ chapter 03 sections


def test_search_context_tests_are_read_from_each_comparison_and_say_why_one_is_missing(tmp_path):
    battles = bt.prepare_battles(loader.load_battles(simulate_release(1500, seed=0).raw)).frame
    sonar = preference.compare_win_rates(battles, "sonar-pro-high", "sonar-pro")
    nan = float("nan")
    gpt = preference.WinRateComparison("gpt-4o-search-high", "gpt-4o-search", 0.5, nan, 10, 0, nan, nan)
    rec = _rec(tmp_path)
    rec.record("SA-31", [sonar, gpt])
    got = {r.quantity: r for r in rec.results}
    assert got["sonar-pro-high win rate (%)"].ours == pytest.approx(100 * sonar.win_rate_1)
    assert got["sonar-pro win rate (%)"].ours == pytest.approx(100 * sonar.win_rate_2)
    assert got["p-value sonar-pro-high > sonar-pro"].ours == sonar.p_value
    gone = got["p-value gpt-4o-search-high > gpt-4o-search"]
    assert gone.status == "not run" and gone.reason == "gpt-4o-search has no decided battle in this data"


def test_d6_claims_compare_each_pair_strictly_and_skip_missing_models(tmp_path):
    length = {"sonar-pro-high": 400.0, "sonar-pro": 300.0}
    cites = {"sonar-pro-high": 9.0, "sonar-pro": 9.0, "sonar-reasoning-pro-high": 7.0, "sonar": 8.0,
             "sonar-reasoning": 8.5}
    means = pl.DataFrame([{"feature": f, "model": m, "mean": v}
                          for f, per in (("response_length", length), ("citation_count", cites))
                          for m, v in per.items()])
    rec = _rec(tmp_path, "real")
    rec.record("SA-D6", book.d6_comparisons(means))
    got = {r.quantity: (r.ours, r.status) for r in rec.results}
    assert got == {
        "sonar-pro-high answers longer than sonar-pro": ("yes", "match"),
        "sonar-pro-high cites more than sonar-pro": ("no", "differs"),  # equal means: not "more"
        "sonar-reasoning-pro-high cites fewer than sonar-pro-high": ("yes", "match"),
        "sonar-reasoning cites fewer than sonar": ("no", "differs"),
        "gemini-2.5-pro-grounding cites fewer than gemini-2.5-flash-grounding": (None, "not run"),  # neither here
    }


def test_f5_paper_means_read_the_fig5_values_of_the_paper_values_table():
    intents = ["Factual Lookup", "Creative Generation", "Analysis", "Guidance"]
    assert book.f5_paper_means("response_length", intents) == {"Factual Lookup": 168.3, "Creative Generation": 422.8,
                                                       "Analysis": 393.2}  # SA §3.1; Guidance has none
    assert book.f5_paper_means("citation_count", ["Recommendation", "Text Processing"]) == {"Recommendation": 6.9,
                                                                                      "Text Processing": 4.2}


def test_coefficient_tables_name_the_storage_convention():
    battles = bt.prepare_battles(loader.load_battles(simulate_release(800, seed=0).raw)).frame
    coef = bt.style_control(battles, bt.LENGTH, rounds=0).coefficients()
    shift = bt.convention_shift(battles, bt.LENGTH)
    fit, storage = book.coefficient_tables(coef, shift, "Length")
    assert "paper" not in storage.frame.columns and "int32 storage (the authors')" in storage.frame.columns
    assert storage.frame["shift (exact − int32)"][0] == pytest.approx(shift["float"][0] - shift["paper"][0])
    assert fit.frame.columns[0] == "feature"


# ------------------------------------------------------------------------------------------ chapter 04 section


def _record_f6r(rec, subset):
    """Chapter 04's SA-F6R cell without the page: the fit when the data have counts, else not run."""
    attr = bt.attribution_battles(bt.prepare_battles(subset.tidy).frame)
    if attr is None:
        rec.record("SA-F6R", None, reason=book.NO_COUNTS)
        return book.f6r_section(subset, None)
    fit = bt.style_control(attr, ATTRIBUTION_COUNTS, rounds=5, seed=0)
    rec.record("SA-F6R", {"conversations": subset.tidy.height, "battles": attr.height,
                          "coefficients": fit.coefficients()}, data=subset.kind)
    return book.f6r_section(subset, Figure(plt.figure(), subset.kind))


def test_attribution_fit_reports_left_out_records_and_draws_the_paper(tmp_path):
    rec = Recorder(tmp_path, "04_x", data="simulated")
    sec = _record_f6r(rec, load_attribution(Path(__file__).parent / "fixtures" / "search_arena" /
                                            "attribution_small.jsonl"))
    got = {r.quantity: r for r in rec.results}
    # a user's file is user data (not in the manifest)
    assert got["conversations in the attribution subset"].ours == 12 and got["beta support_count"].data == "user"
    assert list(got)[:2] == ["conversations in the attribution subset", "decided battles where both sides cite"]
    assert got["beta contradict_count"].note.startswith("paper: not significant; 95% CI ")
    assert sec.notes[0].startswith("1 of the file's 12 conversations lack one of the six attribution counts")
    ref = sec.figures[0].reference
    assert ref is not None and ref.label == "paper"
    assert ref.values == {"support_count": 0.285, "irrelevant_count": 0.273}  # SA §1; contradicting: no number
    plt.close("all")


def test_attribution_without_counts_is_not_run(tmp_path):
    rec = Recorder(tmp_path, "04_x", data="simulated")
    tidy = loader.load_battles(simulate_release(60, seed=0).raw)
    sec = _record_f6r(rec, AttributionSubset(tidy, "simulated", None, None))
    assert {r.quantity for r in rec.results} >= {f"beta {f}" for f in ATTRIBUTION_COUNTS}
    assert {r.reason for r in rec.results} == {book.NO_COUNTS} and not sec.figures


def test_d5s_sets_each_subset_rating_beside_table_d1s(tmp_path):
    d1 = _d1(model=["sonar", "new-model"], rating=[1090.0, 950.0], rank=[1, 2], rating_english=[1080.4, 940.0],
             rank_english=[1, 2])
    published = pl.DataFrame({"model": ["sonar"], "rating": [1095.7], "rating_english": [1077.0],
                              "rating_factual": [1100.0]})
    both = book.d5s_against_paper(d1, published)
    assert both.rows() == [("sonar", "English", 1080.4, 1077.0)]  # a model the paper lacks has no pair
    rec = _rec(tmp_path)
    rec.record("SA-D5s", {"board": d1})
    got = {r.quantity: r for r in rec.results}
    assert got["sonar rating_english"].ours == 1080.4 and got["sonar rating_english"].paper == 1092.8
    assert got["new-model rank_english"].ours == 2 and got["new-model rank_english"].paper is None
    assert got["sonar rating_factual"].status == "not run" and "new-model rating_factual" in got  # not fitted here
    table = book.d5s_table(d1, published).frame
    assert table["English: ours / paper (Elo)"].to_list() == ["1080 / 1077", None]
    assert "non-English, Factual, non-Factual subsets" in book.d5s_notes(d1)[0]
