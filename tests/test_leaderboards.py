"""Recording SA-D5 against Table D.1 (bookbuild.leaderboards): every model a row, misses explained, no anchor said."""

from __future__ import annotations

import polars as pl

from bookbuild import leaderboards
from bookbuild.recorder import Recorder

PUBLISHED = pl.DataFrame({"model": ["gpt-4o-search", "sonar"], "rating": [999.2, 1095.7]})


def _rec(tmp_path, data="simulated"):
    return Recorder(tmp_path, "03_x", data=data)


def test_simulated_ratings_carry_the_shared_offset_and_their_interval(tmp_path):
    d1 = pl.DataFrame({"model": ["sonar", "gpt-4o-search", "new-model-2027"], "rating": [1085.7, 1000.0, 950.0],
                       "rank": [1, 2, 3]})
    board = d1.select("model", ci_lower=pl.col("rating") - 20, ci_upper=pl.col("rating") + 20)
    rec = _rec(tmp_path)
    leaderboards.record_ratings(rec, d1, board, PUBLISHED, anchor="gpt-4o-search", simulated=True, target="target")
    got = {r.quantity: r for r in rec.results}
    # the shared offset: the mean error of the non-anchor models with a paper value (1085.7 - 1095.7)
    assert "share an offset of -10.0 Elo from Table D.1" in got["sonar rating"].note
    assert "covers the target" in got["sonar rating"].note  # 1095.7 lies in [1065.7, 1105.7]
    assert got["new-model-2027 rating"].paper is None and got["new-model-2027 rank"].ours == 3.0


def test_a_release_without_the_anchor_says_so(tmp_path):
    d1 = pl.DataFrame({"model": ["a", "b"], "rating": [1010.0, 990.0], "rank": [1, 1]})
    board = d1.select("model", ci_lower=pl.col("rating") - 5, ci_upper=pl.col("rating") + 5)
    rec = _rec(tmp_path, "user")
    leaderboards.record_ratings(rec, d1, board, PUBLISHED, anchor=None, simulated=False, target="")
    assert all("mean at 1000" in r.note for r in rec.results if r.quantity.endswith("rating"))


def test_table_d1_reuses_the_full_leaderboard_it_is_given():
    """Chapter 03 fits the full leaderboard once: table_d1 with ``full=`` equals table_d1 fitting it itself."""
    from analysis_lib.search_arena import bt, loader, preference

    voted = bt.prepare_battles(loader.load_battles("sample:1200", seed=1)).frame
    full = bt.leaderboard(voted, rounds=5, seed=3).to_frame()
    assert preference.table_d1(voted, rounds=5, seed=3, full=full).equals(
        preference.table_d1(voted, rounds=5, seed=3))
