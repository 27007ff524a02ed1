"""Cross-arena vote coding, tabulation, the Text Arena loader and the Text Arena simulator."""

import json

import polars as pl
import pytest
from scipy import stats as sps

from analysis_lib.cross_arena import (
    INTENT_ORDER,
    SEARCH_ARENA_NON_SEARCH_MODEL,
    TEXT_ARENA_SEARCH_MODEL,
    TextArenaFormatError,
    load_text_arena,
    load_text_arena_report,
    orient_votes,
    search_arena_cross_battles,
    vote_shares_long,
    vote_table,
)
from analysis_lib.simulate.text_arena import PLANTED_COUNTS, planted_counts, text_arena

S, NS = TEXT_ARENA_SEARCH_MODEL, "gemini-2.5-pro-exp-03-25"
CONV = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]


def _row(**kw):
    row = {"model_a": S, "model_b": NS, "winner": "model_a", "intent": "Factual Lookup",
           "conversation_a": CONV, "conversation_b": CONV}
    row.update(kw)
    return row


def _write(tmp_path, rows, raw_lines=()):
    path = tmp_path / "text_arena_battles.jsonl"
    lines = [json.dumps(r) for r in rows] + list(raw_lines)
    path.write_text("\n".join(lines) + "\n")
    return path


# ------------------------------------------------------------------------------------------- coding


def test_orient_votes_codes_both_ties_as_tie():
    frame = pl.DataFrame(
        {
            "winner": ["model_a", "model_b", "tie", "tie (bothbad)", "model_a", "model_b", None],
            "search_side": ["model_a", "model_a", "model_a", "model_b", "model_b", "model_b", "model_a"],
        }
    )
    assert orient_votes(frame)["vote"].to_list() == ["search", "non-search", "tie", "tie", "non-search", "search", None]


def test_search_arena_selection_and_orientation():
    W = SEARCH_ARENA_NON_SEARCH_MODEL
    battles = pl.DataFrame(
        {
            "raw_model_a": [W, "sonar", W, "gpt-4o-search-preview", W, "sonar-pro", W],
            "raw_model_b": ["sonar", W, "gemini-2.0-flash-grounding", W, "sonar", "sonar", W],
            "winner": ["model_a", "model_a", "tie (bothbad)", "model_b", None, "model_a", "tie"],
            "primary_intent": ["Factual Lookup"] * 7,
        }
    )
    out = search_arena_cross_battles(battles)
    # kept: rows 0, 1, 2 (gpt opponent, no vote, no non-search model and self-battle dropped)
    assert out.height == 3
    assert out["vote"].to_list() == ["non-search", "search", "tie"]
    assert out["search_model"].to_list() == ["sonar", "sonar", "gemini-2.0-flash-grounding"]


def test_vote_table_counts_and_tests():
    frame = pl.DataFrame(
        {
            "intent": ["Factual Lookup"] * 10 + ["Other"] * 3,
            "vote": ["search"] * 7 + ["non-search"] * 2 + ["tie"] + ["non-search", "tie", "tie"],
        }
    )
    table = vote_table(frame)
    assert table["intent"].to_list()[: len(INTENT_ORDER)] == list(INTENT_ORDER)
    assert table["intent"].to_list()[-1] == "Other"
    fact = table.filter(pl.col("intent") == "Factual Lookup").row(0, named=True)
    assert (fact["n"], fact["search"], fact["non_search"], fact["tie"]) == (10, 7, 2, 1)
    assert fact["p_value"] == pytest.approx(sps.binomtest(7, 9, alternative="greater").pvalue)
    assert fact["favours"] == "search"
    empty = table.filter(pl.col("intent") == "Guidance").row(0, named=True)
    assert empty["n"] == 0
    overall = vote_table(frame, by=None).row(0, named=True)
    assert (overall["search"], overall["non_search"], overall["tie"]) == (7, 3, 3)
    with_null = vote_table(pl.concat([frame, pl.DataFrame({"intent": [None], "vote": ["tie"]}, schema=frame.schema)]))
    assert with_null["intent"].to_list()[-2:] == ["Other", None]
    long = vote_shares_long(table)
    assert set(long["vote"]) == {"search", "non-search", "tie"}
    assert "Other" not in long["intent"].to_list()


# ------------------------------------------------------------------------------------------- loader


def test_loader_reads_conversation_and_messages_fields(tmp_path):
    rows = [
        _row(),
        _row(model_a=NS, model_b=S, winner="model_a", intent="Text Processing"),
        {k.replace("conversation", "messages"): v for k, v in _row(winner="tie (bothbad)").items()},
        _row(winner=None),
    ]
    frame, report = load_text_arena_report(_write(tmp_path, rows, raw_lines=[""]))
    assert frame.height == 3 and report.lines == 4 and report.battles == 3
    assert report.dropped == {"no vote (winner null)": 1}
    assert frame["vote"].to_list() == ["search", "non-search", "tie"]
    assert frame["search_side"].to_list() == ["model_a", "model_b", "model_a"]
    assert frame["prompt"].to_list() == ["hi"] * 3
    assert "conversation" in report.conversation_field and "messages" in report.conversation_field


def test_loader_accepts_primary_intent(tmp_path):
    row = _row()
    row["primary_intent"] = row.pop("intent")
    assert load_text_arena(_write(tmp_path, [row]))["intent"].to_list() == ["Factual Lookup"]


@pytest.mark.parametrize(
    "bad,match",
    [
        (_row(winner="model_c"), r"line 2, field 'winner': 'model_c'"),
        ({k: v for k, v in _row().items() if k != "winner"}, r"line 2, field 'winner': missing"),
        ({k: v for k, v in _row().items() if k != "intent"}, r"line 2, field 'intent'"),
        (_row(model_a=None), r"line 2, field 'model_a'"),
        ({k: v for k, v in _row().items() if not k.startswith("conversation")}, r"line 2: no conversation field"),
        ({k: v for k, v in _row().items() if k != "conversation_b"}, r"line 2, field 'conversation_b': missing"),
        (_row(conversation_a=[]), r"line 2, field 'conversation_a': expected a non-empty list"),
        (_row(conversation_b=[{"role": "user"}]), r"line 2, field 'conversation_b'\[0\]: expected a dict"),
        (
            _row(conversation_a=[{"role": "assistant", "content": "x"}]),
            r"line 2, field 'conversation_a'\[0\]: the first",
        ),
        (_row(model_a="gpt-4o", model_b="claude"), r"line 2, fields 'model_a'/'model_b': neither side"),
        (_row(model_b=S), r"line 2, fields 'model_a'/'model_b': both sides"),
        ([1, 2], r"line 2: expected a JSON object"),
    ],
)
def test_loader_names_line_and_field(tmp_path, bad, match):
    with pytest.raises(TextArenaFormatError, match=match):
        load_text_arena(_write(tmp_path, [_row(), bad]))


def test_loader_rejects_invalid_json_line(tmp_path):
    with pytest.raises(TextArenaFormatError, match=r"line 2: not valid JSON"):
        load_text_arena(_write(tmp_path, [_row()], raw_lines=['{"model_a": ']))


def test_loader_missing_file_says_where_to_get_it(tmp_path):
    with pytest.raises(FileNotFoundError, match="lmarena/search-arena"):
        load_text_arena(tmp_path / "nope.jsonl")


# ---------------------------------------------------------------------------------------- simulator


def test_planted_counts_equal_published_totals():
    counts = planted_counts()
    totals = (counts["search"].sum(), counts["non_search"].sum(), counts["tie"].sum(), counts["n"].sum())
    assert totals == (143, 156, 245, 544)
    assert planted_counts(1000)["n"].sum() == 1000
    assert planted_counts(7)["n"].sum() == 7


def test_simulator_round_trip_recovers_planted_counts(tmp_path):
    rows, planted = text_arena(n=544, seed=3)
    assert len(rows) == 544
    frame = load_text_arena(_write(tmp_path, rows))
    table = vote_table(frame, order=list(PLANTED_COUNTS))
    got = table.select("intent", "search", "non_search", "tie", "n")
    assert got.equals(planted.counts.select("intent", "search", "non_search", "tie", "n").cast(got.schema))
    overall = vote_table(frame, by=None).row(0, named=True)
    assert round(overall["p_value"], 3) == 0.244


@pytest.mark.parametrize(
    "intent,p,alt",
    [("Factual Lookup", 0.012, "greater"), ("Info Synthesis", 0.095, "greater"), ("Text Processing", 0.077, "less")],
)
def test_simulator_per_intent_calibrated_to_paper(intent, p, alt):
    rows, _ = text_arena(seed=0)
    table = vote_table(load_text_arena(rows))
    row = table.filter(pl.col("intent") == intent).row(0, named=True)
    assert row["alternative"] == alt and round(row["p_value"], 3) == p


def test_simulator_is_seeded_and_sample_source_works():
    a, _ = text_arena(n=50, seed=1)
    b, _ = text_arena(n=50, seed=1)
    c, _ = text_arena(n=50, seed=2)
    assert a == b and a != c
    frame, report = load_text_arena_report("sample:60", seed=1)
    assert frame.height == 60 and report.source == "sample:60"
