"""The book's side of chapters 03 and 04 (bookbuild.papers.search_arena_preferences): SA-D5 recorded against
Table D.1 (every model a row, misses explained, no anchor said), the claims read off Fig D.6, the paper's Fig 5
means, the coefficient tables, SA-D5s against the paper, SA-F6R with and without attribution counts."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import polars as pl
import pytest

from analysis_lib.search_arena import bt, loader
from analysis_lib.search_arena.schema import ATTRIBUTION_COUNTS
from analysis_lib.search_arena.simulate import simulate_release
from bookbuild.papers import search_arena_preferences as book
from bookbuild.recorder import Recorder
from bookbuild.sections import Figure

PUBLISHED = pl.DataFrame({"model": ["gpt-4o-search", "sonar"], "rating": [999.2, 1095.7]})


def _rec(tmp_path, data="simulated"):
    return Recorder(tmp_path, "03_x", data=data)


def test_simulated_ratings_carry_the_shared_offset_and_their_interval(tmp_path):
    d1 = pl.DataFrame({"model": ["sonar", "gpt-4o-search", "new-model-2027"], "rating": [1085.7, 1000.0, 950.0],
                       "rank": [1, 2, 3]})
    board = d1.select("model", ci_lower=pl.col("rating") - 20, ci_upper=pl.col("rating") + 20)
    rec = _rec(tmp_path)
    book.record_ratings(rec, d1, board, PUBLISHED, anchor="gpt-4o-search", simulated=True, target="target")
    got = {r.quantity: r for r in rec.results}
    # the shared offset: the mean error of the non-anchor models with a paper value (1085.7 - 1095.7)
    assert "share an offset of -10.0 Elo from Table D.1" in got["sonar rating"].note
    assert "covers the target" in got["sonar rating"].note  # 1095.7 lies in [1065.7, 1105.7]
    assert got["new-model-2027 rating"].paper is None and got["new-model-2027 rank"].ours == 3.0


def test_a_release_without_the_anchor_says_so(tmp_path):
    d1 = pl.DataFrame({"model": ["a", "b"], "rating": [1010.0, 990.0], "rank": [1, 1]})
    board = d1.select("model", ci_lower=pl.col("rating") - 5, ci_upper=pl.col("rating") + 5)
    rec = _rec(tmp_path, "user")
    book.record_ratings(rec, d1, board, PUBLISHED, anchor=None, simulated=False, target="")
    assert all("mean at 1000" in r.note for r in rec.results if r.quantity.endswith("rating"))


def test_table_d1_reuses_the_full_leaderboard_it_is_given():
    """Chapter 03 fits the full leaderboard once: table_d1 with ``full=`` equals table_d1 fitting it itself."""
    from analysis_lib.search_arena import preference

    voted = bt.prepare_battles(loader.load_battles("sample:1200", seed=1)).frame
    full = bt.leaderboard(voted, rounds=5, seed=3).to_frame()
    assert preference.table_d1(voted, rounds=5, seed=3, full=full).equals(
        preference.table_d1(voted, rounds=5, seed=3))


# ------------------------------------------------------------------------------------------ chapter 03 sections


def test_d6_checks_compare_each_pair_strictly_and_skip_missing_models():
    length = {"sonar-pro-high": 400.0, "sonar-pro": 300.0}
    cites = {"sonar-pro-high": 9.0, "sonar-pro": 9.0, "sonar-reasoning-pro-high": 7.0, "sonar": 8.0,
             "sonar-reasoning": 8.5}
    got = book.d6_checks({"response_length": length, "citation_count": cites})
    assert list(got) == [c[0] for c in book.D6_CLAIMS]
    assert got == {
        "sonar-pro-high answers longer than sonar-pro": "yes",
        "sonar-pro-high cites more than sonar-pro": "no",  # equal means: not "more"
        "sonar-reasoning-pro-high cites fewer than sonar-pro-high": "yes",
        "sonar-reasoning cites fewer than sonar": "no",
        "gemini-2.5-pro-grounding cites fewer than gemini-2.5-flash-grounding": None,  # neither model present
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


def _f6r(subset):
    attr = bt.attribution_battles(bt.prepare_battles(subset.tidy).frame)
    if attr is None:
        return book.f6r_section(subset, 0, None, None)
    fit = bt.style_control(attr, ATTRIBUTION_COUNTS, rounds=5, seed=0)
    return book.f6r_section(subset, attr.height, fit, Figure(plt.figure(), subset.kind))


def test_attribution_section_reports_left_out_records_and_draws_the_paper():
    from analysis_lib.search_arena.attribution_io import load_attribution

    sec = _f6r(load_attribution(Path(__file__).parent / "fixtures" / "search_arena" / "attribution_small.jsonl"))
    got = {n.quantity: n for n in sec.numbers}
    # a user's file is user data (not in the manifest)
    assert got["conversations in the attribution subset"].ours == 12 and got["beta support_count"].data == "user"
    assert sec.notes[0].startswith("1 of the file's 12 conversations lack one of the six attribution counts")
    ref = sec.figures[0].reference
    assert ref is not None and ref.label == "paper"
    assert ref.values == {"support_count": 0.285, "irrelevant_count": 0.273}  # SA §1; contradicting: no number
    plt.close("all")


def test_attribution_section_without_counts_is_not_run():
    from analysis_lib.search_arena.attribution_io import AttributionSubset

    tidy = loader.load_battles(simulate_release(60, seed=0).raw)
    sec = _f6r(AttributionSubset(tidy, "simulated", None, None))
    assert [n.quantity for n in sec.numbers] == [f"beta {f}" for f in ATTRIBUTION_COUNTS]
    assert all(n.reason == book.NO_COUNTS for n in sec.numbers) and not sec.figures


def test_d5s_sets_each_subset_rating_beside_table_d1s():
    d1 = pl.DataFrame({"model": ["sonar", "new-model"], "rating": [1090.0, 950.0], "rank": [1, 2],
                       "rating_english": [1080.4, 940.0], "rank_english": [1, 2]})
    published = pl.DataFrame({"model": ["sonar"], "rating": [1095.7], "rating_english": [1077.0],
                              "rating_factual": [1100.0]})
    both = book.d5s_against_paper(d1, published)
    assert both.rows() == [("sonar", "English", 1080.4, 1077.0)]  # a model the paper lacks has no pair
    assert [n.quantity for n in book.d5s_numbers(d1)] == [
        "sonar rating_english", "sonar rank_english", "new-model rating_english", "new-model rank_english"]
    table = book.d5s_table(d1, published).frame
    assert table["English: ours / paper (Elo)"].to_list() == ["1080 / 1077", None]
    assert "non-English, Factual, non-Factual subsets" in book.d5s_notes(d1)[0]
