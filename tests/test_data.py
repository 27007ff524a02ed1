"""Loader: derived features against hand-computed values, validation errors, counted irregularities."""

from __future__ import annotations

import math
from datetime import datetime

import polars as pl
import pytest
from raw_factory import conversation, make_raw
from reference_features import features_loop

from analysis_lib.reading import DataValidationError
from analysis_lib.search_arena import loader, models
from analysis_lib.search_arena.domains import DOMAIN_GROUPS
from analysis_lib.search_arena.loader import derive, load_battles, load_battles_report

YT = ["[1]", "https://www.youtube.com/watch?v=abc"]
WIKI = ["[2]", "https://en.wikipedia.org/wiki/Lambda_calculus"]
REDDIT = ["[3]", "https://old.reddit.com/r/x"]
NEWS = ["[4]", "https://apnews.com/article/1"]
OTHER = ["[5]", "https://example.org/a"]


def hand_conversation() -> dict:
    # Two turns. Side a: answers of 4 and 6 words -> mean 5; trace turn 1 has 3 pairs, turn 2 has 1 -> 2.0.
    # Side b: answers of 1 word and a missing second answer -> mean 1; empty trace -> 0 citations.
    return conversation(
        model_a="sonar-pro-high",
        model_b="gemini-2.5-flash-preview-04-17-grounding",
        winner="model_b",
        user=["who  invented\tlambda calculus?", "and when"],
        answers_a=["Alonzo Church did, 1930s", "He published it in early 1936."],
        answers_b=["Church."],
        trace_a=[[YT, WIKI, REDDIT], [YT]],
        trace_b=[[], []],
        conv_id="hand-1",
        turn=2,
        languages=["English", "German"],
    )


def test_hand_computed_conversation():
    tidy, report = derive(make_raw([hand_conversation()]), "hand")
    row = tidy.row(0, named=True)
    assert row["model_a"] == "sonar-pro-high"
    assert row["model_b"] == "gemini-2.5-flash-grounding"  # paper name from the mapping
    assert row["raw_model_b"] == "gemini-2.5-flash-preview-04-17-grounding"
    assert row["prompt"] == "who  invented\tlambda calculus?"
    assert row["prompt_words"] == 4
    assert row["language"] == "English" and row["languages"] == ["English", "German"]
    assert row["response_length_a"] == pytest.approx(5.0)
    assert row["response_length_b"] == pytest.approx(1.0)
    assert row["citation_count_a"] == pytest.approx(2.0)
    assert row["citation_count_b"] == 0.0
    assert row["num_cites_youtube_a"] == 2 and row["cites_youtube_a"] == 1
    assert row["num_cites_wiki_a"] == 1 and row["num_cites_community_blog_a"] == 1
    assert row["num_cites_us_news_a"] == 0 and row["cites_us_news_a"] == 0
    assert sum(row[f"num_cites_{g}_b"] for g in DOMAIN_GROUPS) == 0
    assert report.flags["message count differs from 2 x turn (either side)"] == 1
    assert report.flags["no citations in any turn (side b)"] == 1


def test_matches_per_row_reference_on_varied_rows():
    rows = [
        hand_conversation(),
        conversation(trace_a=[[NEWS, OTHER, ["[9]", "not a url"]]], trace_b=[[["only-one-field"]]], conv_id="x"),
        conversation(user=["a", "b", "c"], answers_a=["one two", "three", "x y z w"], answers_b=[], conv_id="y",
                     trace_a=[[OTHER], [], [WIKI, WIKI]]),
    ]
    tidy, _ = derive(make_raw(rows), "varied")
    expected = features_loop(rows)
    for got, exp in zip(tidy.iter_rows(named=True), expected, strict=True):
        for key, value in exp.items():
            if isinstance(value, float) and math.isnan(value):
                assert got[key] is None, key
            else:
                assert got[key] == pytest.approx(value), key


def test_group_counts_sum_to_citations():
    rows = [hand_conversation(), conversation(trace_a=[[NEWS, OTHER], [YT, YT, WIKI]], conv_id="z")]
    raw = make_raw(rows)
    tidy, _ = derive(raw, "sum")
    total = raw.select(
        pl.col("system_a_metadata").struct.field("web_search_trace").list.eval(pl.element().list.len()).list.sum()
    )
    assert (tidy.select(pl.sum_horizontal(f"num_cites_{g}_a" for g in DOMAIN_GROUPS)).to_series().to_list()
            == total.to_series().to_list())


def test_malformed_urls_and_pairs_are_counted_not_dropped():
    rows = [conversation(trace_a=[[["[1]", "not a url"], ["broken"], NEWS]])]
    tidy, report = derive(make_raw(rows), "bad urls")
    assert tidy.height == 1
    assert tidy["citation_count_a"][0] == 3.0
    assert tidy["num_cites_other_a"][0] == 2 and tidy["num_cites_us_news_a"][0] == 1
    assert report.flags["citation URLs without a host (side a; counted, grouped as other)"] == 1
    assert report.flags["citation pairs that are not [marker, url] (side a; counted, grouped as other)"] == 1


def test_missing_column_is_named():
    raw = make_raw([conversation()]).drop("messages_b")
    with pytest.raises(DataValidationError, match="missing column 'messages_b'"):
        derive(raw, "file.parquet")


def test_mistyped_column_is_named():
    raw = make_raw([conversation()]).with_columns(pl.lit("two").alias("turn"))
    with pytest.raises(DataValidationError, match="column 'turn' has type String, expected Int64"):
        derive(raw, "file.parquet")


def test_missing_trace_field_is_named():
    raw = make_raw([conversation()]).with_columns(
        pl.col("system_b_metadata").struct.with_fields(pl.lit(None).alias("x")).struct.field("conv_id").alias("y")
    )
    raw = raw.with_columns(pl.struct(conv_id=pl.lit("c"), client_country=pl.lit("US")).alias("system_b_metadata"))
    with pytest.raises(DataValidationError, match="system_b_metadata' lacks field 'web_search_trace'"):
        derive(raw, "file.parquet")


def test_unknown_winner_names_rows_and_value():
    raw = make_raw([conversation(), conversation(winner="model_c")])
    with pytest.raises(DataValidationError, match=r"row 2 = 'model_c'"):  # rows counted from 1
        derive(raw, "file.parquet")


def test_self_battle_null_winner_and_unknown_model_are_reported():
    rows = [conversation(model_a="sonar", model_b="sonar", conv_id="c1"), conversation(winner=None, conv_id="c2"),
            conversation(model_b="new-model-x", conv_id="c3")]
    tidy, report = derive(make_raw(rows), "odd")
    assert tidy.height == 3
    assert report.flags["self-battles (model_a == model_b)"] == 1
    assert report.flags["no vote (winner is null)"] == 1
    assert report.unmapped_models == ["new-model-x"]
    assert "new-model-x" in tidy["model_b"].to_list()


def test_rows_without_models_are_dropped_and_counted():
    rows = [conversation(conv_id="c1"), conversation(conv_id="c2")]
    raw = make_raw(rows).with_columns(
        pl.when(pl.int_range(pl.len()) == 1).then(None).otherwise(pl.col("model_a")).alias("model_a")
    )
    tidy, report = derive(raw, "nulls")
    assert tidy.height == 1
    assert report.dropped["rows without model_a/model_b"] == 1
    assert "dropped 1" in str(report)


def test_parquet_and_jsonl_round_trip(tmp_path):
    raw = make_raw([hand_conversation(), conversation(conv_id="second")]).with_columns(
        pl.Series("timestamp", [datetime(2025, 3, 18, 16, 39), datetime(2025, 5, 9, 5, 20, 5)], dtype=pl.Datetime("ns"))
    )
    pq = tmp_path / "release.parquet"
    raw.write_parquet(pq)
    jl = tmp_path / "release.jsonl"
    raw.write_ndjson(jl)
    from_pq = load_battles(pq)
    from_jl = load_battles(jl)
    assert from_pq.equals(from_jl)
    assert from_jl.schema["timestamp"] == pl.Datetime("ns")
    assert from_jl["timestamp"].to_list() == from_pq["timestamp"].to_list()
    assert from_pq["conv_id"].to_list() == ["hand-1", "second"]


def test_corrupt_file_names_the_file(tmp_path):
    bad = tmp_path / "broken.parquet"
    bad.write_bytes(b"PAR1 this is not parquet")
    with pytest.raises(DataValidationError, match="broken.parquet: could not be read as parquet"):
        load_battles(bad)


def test_missing_file_and_bad_sample_spec(tmp_path):
    with pytest.raises(DataValidationError, match="nope.parquet: no such file"):
        load_battles(tmp_path / "nope.parquet")
    with pytest.raises(ValueError, match="sample:N"):
        load_battles("sample:lots")


def test_attribution_counts_divided_by_turn():
    row = conversation(user=["q1", "q2"], answers_a=["a", "b"], answers_b=["c", "d"])
    raw = make_raw([row]).with_columns(
        pl.struct(
            support_count_a=pl.lit(4), support_count_b=pl.lit(2), irrelevant_count_a=pl.lit(1),
            irrelevant_count_b=pl.lit(0), contradict_count_a=pl.lit(0), contradict_count_b=pl.lit(3),
        ).alias("conv_metadata")
    )
    tidy, _ = derive(raw, "attribution")
    assert tidy["support_count_a"][0] == 2.0 and tidy["contradict_count_b"][0] == 1.5


def test_cache_reuses_derivation(tmp_path):
    raw = make_raw([hand_conversation()])
    pq = tmp_path / "r.parquet"
    raw.write_parquet(pq)
    first, rep1 = load_battles_report(pq, cache_dir=tmp_path / "cache")
    assert list((tmp_path / "cache" / "battles").glob("*.parquet"))
    second, rep2 = load_battles_report(pq, cache_dir=tmp_path / "cache")
    assert first.equals(second) and rep1.flags == rep2.flags


SIMULATE_ONCE = """
import sys, time
from pathlib import Path
from analysis_lib.search_arena import loader

real = loader.read_raw
def counted(*args, **kwargs):  # each simulation leaves a line, then takes long enough for the other to arrive
    with open(sys.argv[2], "a") as fh:
        fh.write("simulated\\n")
    time.sleep(1.5)
    return real(*args, **kwargs)
loader.read_raw = counted
tidy, _ = loader.load_battles_report("sample:300", seed=4, cache_dir=Path(sys.argv[1]))
print(tidy.height)
"""


def test_chapters_starting_at_once_simulate_the_release_once(tmp_path):
    """Two processes (chapters of one build) ask for the same uncached simulated release at once: one simulates and
    derives it, the other waits for it and reads the cache."""
    import subprocess
    import sys

    log = tmp_path / "simulations.txt"
    cmd = [sys.executable, "-c", SIMULATE_ONCE, str(tmp_path / "cache"), str(log)]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=120)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0] and outs[0] == outs[1]
    assert log.read_text().splitlines() == ["simulated"]
    kept = sorted(p.name.split(".", 1)[1] for p in (tmp_path / "cache" / "battles").iterdir()
                  if not p.name.endswith(".lock"))
    assert kept == ["parquet", "release.parquet", "report.json"]  # no temporary file left


def test_model_table_maps_every_raw_id_of_the_release():
    table = models.model_table()
    assert table["raw_model"].n_unique() == 14
    assert "gemini-2.5-pro" not in models.leaderboard_models()
    assert len(models.leaderboard_models()) == 12


def test_bad_turns_are_dropped_and_counted():
    rows = [conversation(conv_id="ok"), conversation(conv_id="zero", turn=0), conversation(conv_id="null")]
    raw = make_raw(rows).with_columns(
        pl.when(pl.col("system_a_metadata").struct.field("conv_id") == "null").then(None)
        .otherwise(pl.col("turn")).alias("turn")
    )
    tidy, report = derive(raw, "turns")
    assert tidy["conv_id"].to_list() == ["ok"]
    assert report.dropped["rows whose turn is null or below 1"] == 2


def test_string_and_epoch_timestamps_are_parsed():
    base = make_raw([conversation(), conversation(conv_id="c1")])
    iso = base.with_columns(pl.Series("timestamp", ["2025-03-18T16:39:00", "not a time"]))
    tidy, report = derive(iso, "iso")
    assert tidy["timestamp"][0] == datetime(2025, 3, 18, 16, 39)
    assert tidy["timestamp"][1] is None
    assert report.flags["timestamps that could not be parsed (kept as null)"] == 1
    epoch = base.with_columns(pl.Series("timestamp", [1742315940, 1742315941]))
    assert derive(epoch, "epoch")[0]["timestamp"][0] == datetime(2025, 3, 18, 16, 39)


def test_parquet_reads_only_the_columns_it_uses(tmp_path, monkeypatch):
    raw = make_raw([conversation()]).with_columns(pl.lit("x" * 10).alias("huge_unused_column"))
    path = tmp_path / "wide.parquet"
    raw.write_parquet(path)
    seen = {}
    original = pl.read_parquet

    def spy(source, *args, columns=None, **kwargs):
        seen["columns"] = columns
        return original(source, *args, columns=columns, **kwargs)

    monkeypatch.setattr(pl, "read_parquet", spy)
    load_battles(path)
    assert "huge_unused_column" not in seen["columns"] and "messages_a" in seen["columns"]


# ------------------------------------------------------------------------ issue 11 item 7: loader gaps


def test_duplicate_conversations_are_dropped_and_counted():
    raw = make_raw([hand_conversation(), conversation(conv_id="second"), hand_conversation()])
    tidy, report = derive(raw, "dups")
    assert tidy["conv_id"].to_list() == ["hand-1", "second"]
    assert report.dropped["duplicate conversations (repeated conv_id; first kept)"] == 1
    assert report.n_raw == 3 and report.n_rows == 2


def test_zero_row_release_is_refused_by_name(tmp_path):
    empty = tmp_path / "empty.parquet"
    make_raw([hand_conversation()]).head(0).write_parquet(empty)
    with pytest.raises(DataValidationError, match="empty.parquet: the release has no rows"):
        load_battles(empty)


def test_a_folder_is_named_as_a_folder(tmp_path):
    with pytest.raises(DataValidationError, match="is a folder, not a regular file; expected a Search Arena release"):
        load_battles(tmp_path)


def test_truncated_jsonl_names_the_line(tmp_path):
    raw = make_raw([hand_conversation(), conversation(conv_id="second"), conversation(conv_id="third")])
    good = tmp_path / "good.jsonl"
    raw.write_ndjson(good)
    lines = good.read_text().splitlines()
    cut = tmp_path / "cut.jsonl"
    cut.write_text("\n".join([*lines[:2], lines[2][: len(lines[2]) // 2]]) + "\n")
    with pytest.raises(DataValidationError, match=r"cut.jsonl, line 3, column \d+: not valid JSON"):
        load_battles(cut)


def test_upper_case_suffix_is_read(tmp_path):
    raw = make_raw([hand_conversation()])
    upper = tmp_path / "RELEASE.PARQUET"
    raw.write_parquet(upper)
    assert load_battles(upper)["conv_id"].to_list() == ["hand-1"]


def test_cache_is_read_not_recomputed(tmp_path, monkeypatch):
    raw = make_raw([hand_conversation()])
    pq = tmp_path / "r.parquet"
    raw.write_parquet(pq)
    first, rep1 = load_battles_report(pq, cache_dir=tmp_path / "cache")

    def no_derivation(*args, **kwargs):
        raise AssertionError("the cached derivation was not used")

    monkeypatch.setattr(loader, "read_raw", no_derivation)
    monkeypatch.setattr(loader, "derive", no_derivation)
    second, rep2 = load_battles_report(pq, cache_dir=tmp_path / "cache")
    assert first.equals(second) and rep1 == rep2
    monkeypatch.undo()
    make_raw([hand_conversation(), conversation(conv_id="second")]).write_parquet(pq)  # a changed file
    third, _ = load_battles_report(pq, cache_dir=tmp_path / "cache")
    assert third["conv_id"].to_list() == ["hand-1", "second"]
