"""Issue 37: what passes the door runs. Each case on a small hand-made file: refused with one line naming the file,
the line or record and the field, or dropped and counted; each fails on the code before the issue."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import polars as pl
import pytest

from analysis_lib import reading
from analysis_lib.answer_engine.agreement import MAX_ANNOTATORS, load_answer_labels
from analysis_lib.dr_arena import match_log as ml
from analysis_lib.reading import DataValidationError
from analysis_lib.search_arena import duplicates
from analysis_lib.search_arena.attribution_io import validate_attribution
from analysis_lib.search_arena.cross_arena import load_text_arena_report
from analysis_lib.search_arena.cross_arena.text_arena import REPEATED
from analysis_lib.search_arena.release import read_raw

FIXTURES = Path(__file__).parent / "fixtures"
TEXT_ARENA = FIXTURES / "search_arena" / "text_arena_small.jsonl"
ATTRIBUTION = FIXTURES / "search_arena" / "attribution_small.jsonl"


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


# --- one line bound, parser errors as one line with line and field -------------------------------------------


@pytest.mark.parametrize(("bad", "field", "shown"), [
    ('"turn": NaN', "turn", "got NaN"), ('"turn": -Infinity', "turn", "got -Infinity"),
    ('"turn": 1000000000000000000000000000000', "turn", "within 64 bits"),
])
def test_release_parser_errors_name_line_and_field(tmp_path, bad, field, shown):
    lines = ATTRIBUTION.read_text().splitlines()
    lines[1] = lines[1].replace('"turn":1', bad, 1)
    assert bad in lines[1]
    path = _write(tmp_path / "r.jsonl", lines)
    with pytest.raises(DataValidationError, match=rf"r\.jsonl, line 2, field '{field}': .*{shown}"):
        reading.check_json_lines(path, "a release")
    if "Infinity" in bad or "NaN" in bad:  # polars fails to read these ("TapeError at character 116")
        with pytest.raises(DataValidationError, match=rf"r\.jsonl, line 2, field '{field}': .*{shown}"):
            read_raw(str(path))


def test_release_line_of_another_type_is_named(tmp_path):
    """Polars says 'failed to determine supertype of struct[13]' with no line; the reader names line and field."""
    lines = ATTRIBUTION.read_text().splitlines()
    record = json.loads(lines[2])
    nested: object = "x"
    for _ in range(60):
        nested = [nested]
    record["messages_a"] = nested
    lines[2] = json.dumps(record)
    with pytest.raises(DataValidationError, match=r"r\.jsonl, line 3, field 'messages_a\[0\]': expected a "):
        read_raw(str(_write(tmp_path / "r.jsonl", lines)))


def test_gzip_bytes_are_named_not_called_bad_utf8(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(gzip.compress(TEXT_ARENA.read_bytes()))
    with pytest.raises(DataValidationError, match=r"/t\.jsonl: gzip-compressed bytes.*gunzip"):
        load_text_arena_report(path)


@pytest.mark.skipif(os.name != "posix", reason="POSIX file names are bytes")
def test_a_file_name_that_is_not_utf8_is_refused_by_name(tmp_path):
    raw = os.fsencode(tmp_path) + b"/\xff.jsonl"
    with open(raw, "wb") as fh:
        fh.write(ATTRIBUTION.read_bytes())
    with pytest.raises(DataValidationError, match=r"the file's name is not valid UTF-8.*rename") as err:
        read_raw(os.fsdecode(raw))
    str(err.value).encode("utf-8")  # printable


# --- DR-Arena match logs ---------------------------------------------------------------------------------------


def _round(**kw):
    rec = {"match_id": "m1", "tree_id": "t", "model_a": "x", "model_b": "y", "round": 1, "depth": 1, "width": 1,
           "verdict": "A_BETTER", "failure_type": "DEEP", "score_a": 1.0, "score_b": 0.0}
    return json.dumps(rec | kw)


def test_self_match_refused_at_load(tmp_path):
    path = _write(tmp_path / "m.jsonl", [_round(model_b="x")])
    with pytest.raises(DataValidationError, match=r"m\.jsonl, line 1, fields 'model_a'/'model_b': both are 'x'"):
        ml.validate_match_logs(path)


@pytest.mark.parametrize("field", ["depth", "width", "round"])
def test_depth_and_width_bounded(tmp_path, field):
    path = _write(tmp_path / "m.jsonl", [_round(**{field: 10**12})])
    with pytest.raises(DataValidationError, match=rf"line 1, field '{field}': expected an integer from 1 to 10,000"):
        ml.validate_match_logs(path)


def test_scores_contradicting_verdicts_are_listed(tmp_path, caplog):
    lines = [_round(), _round(round=2, verdict="B_BETTER", score_a=2.0, score_b=0.0),
             _round(match_id="m2", verdict="TIE", tie_quality="high", failure_type=None, score_a=0.5, score_b=0.5)]
    path = _write(tmp_path / "m.jsonl", lines)
    bad = ml.score_contradictions(ml.load_match_logs(path))
    assert bad.select("match_id", "round").rows() == [("m1", 2)]  # B_BETTER while A gained a point
    assert bad["change"].to_list() == [1.0]
    with caplog.at_level("WARNING"):
        assert ml.validate_match_logs(path) == 3
    assert "1 round(s) whose scores contradict their verdict" in caplog.text


# --- Text Arena ------------------------------------------------------------------------------------------------


def test_text_arena_battle_repeated_without_id_is_dropped_and_counted(tmp_path):
    record = json.loads(TEXT_ARENA.read_text().splitlines()[0])
    record.pop("question_id", None)
    record.pop("id", None)
    path = _write(tmp_path / "t.jsonl", [json.dumps(record)] * 1000)
    frame, report = load_text_arena_report(path)
    assert frame.height == 1 and report.dropped[REPEATED] == 999


def test_text_arena_rows_sharing_one_id_are_refused(tmp_path):
    rows = [json.loads(x) for x in TEXT_ARENA.read_text().splitlines() if x.strip()]
    for r in rows:
        r.pop("question_id", None)
        r["id"] = "same"
    with pytest.raises(DataValidationError, match=r"t\.jsonl, line 2, field 'id': 'same' already on line 1"):
        load_text_arena_report(_write(tmp_path / "t.jsonl", [json.dumps(r) for r in rows]))


# --- label rows ------------------------------------------------------------------------------------------------


def test_one_label_row_repeated_is_refused_not_averaged(tmp_path):
    path = tmp_path / "labels.csv"
    path.write_text("task,item_id,human\n" + "confidence,a1,4\n" * 1000)
    with pytest.raises(DataValidationError, match=rf"line {MAX_ANNOTATORS + 2}, field 'item_id': .*more than "):
        load_answer_labels(path)


def test_one_annotator_twice_for_one_item_is_refused(tmp_path):
    path = tmp_path / "labels.csv"
    path.write_text("task,item_id,human,annotator\nconfidence,a1,4,ann1\nconfidence,a1,5,ann2\nconfidence,a1,4,ann1\n")
    with pytest.raises(DataValidationError, match=r"line 4, field 'annotator': annotator 'ann1' .* on line 2"):
        load_answer_labels(path)
    path.write_text("task,item_id,human,annotator\nconfidence,a1,4,ann1\nconfidence,a1,5,ann2\n")
    assert load_answer_labels(path)["n_annotators"].to_list() == [2]


# --- attribution ------------------------------------------------------------------------------------------------


def _split_attribution(tmp_path: Path) -> Path:
    """The hand-made subset with its first half's counts moved from ``conv_metadata`` to the top level."""
    records = [json.loads(x) for x in ATTRIBUTION.read_text().splitlines() if x.strip()]
    for r in records[: len(records) // 2]:
        for name in duplicates.COUNT_FIELDS:
            r[name] = r["conv_metadata"].pop(name)
    return _write(tmp_path / "split.jsonl", [json.dumps(r) for r in records])


def test_attribution_counts_at_two_places_refused(tmp_path):
    with pytest.raises(DataValidationError, match=r"/split\.jsonl: attribution counts at two places: \d+ record"):
        validate_attribution(_split_attribution(tmp_path))


def test_attribution_count_bounded(tmp_path):
    lines = ATTRIBUTION.read_text().splitlines()
    record = json.loads(lines[0])
    record["conv_metadata"]["support_count_a"] = 10**12
    lines[0] = json.dumps(record)
    with pytest.raises(DataValidationError, match=r"line 1, field 'conv_metadata\.support_count_a': .*100,000"):
        validate_attribution(_write(tmp_path / "a.jsonl", lines))


def test_attribution_counts_read_from_both_places_for_the_loader(tmp_path):
    split = read_raw(str(_split_attribution(tmp_path)))[0]
    whole = read_raw(str(ATTRIBUTION))[0]
    places = duplicates.attribution_places(split)
    assert places["top level"] > 0 and places["conv_metadata"] > 0
    assert places["top level"] + places["conv_metadata"] == whole.height
    got = split.select(duplicates.attribution_counts(split))
    want = whole.select(pl.col("conv_metadata").struct.field(n).cast(pl.Float64) for n in duplicates.COUNT_FIELDS)
    assert got.equals(want)


# --- Search Arena conversations repeated without conv_id ------------------------------------------------------


def test_conversation_repeated_with_null_conv_id_is_found():
    raw = read_raw(str(ATTRIBUTION))[0]
    meta = pl.col("system_a_metadata")
    no_id = raw.with_columns(meta.struct.with_fields(pl.lit(None, dtype=pl.String).alias("conv_id")))
    repeated = pl.concat([no_id, no_id.head(1).select(pl.all().repeat_by(5).explode())])
    mask = duplicates.repeated_without_id(repeated)
    assert mask.sum() == 5 and not mask.head(raw.height).any()  # the copies only; the first kept
    assert not duplicates.repeated_without_id(pl.concat([raw, raw])).any()  # repeats with an id: the loader's


# --- the door check (bookbuild.inputs) ------------------------------------------------------------------------


def _door(tmp_path: Path, name: str, value: str):
    from bookbuild import inputs
    return inputs.check(name, value, root=tmp_path, state_dir=tmp_path / "state", seed=0,
                        cache_dir=tmp_path / "cache", lib_hash="test")


def _release_with(tmp_path: Path, edit) -> Path:
    records = [json.loads(x) for x in ATTRIBUTION.read_text().splitlines() if x.strip()]
    for i, r in enumerate(records):
        edit(i, r)
    return _write(tmp_path / "release.jsonl", [json.dumps(r) for r in records])


def test_door_and_chapter_agree_on_a_release_whose_timestamps_all_fail(tmp_path):
    """Issue 37: the check let it through and chapter 01 died. Now the door passes it and names the analysis that
    will not run for want of a timestamp (issue 33: an optional field degrades one analysis), and the loader
    reports the field absent, so chapter 01's daily traffic records "not run" instead of failing."""
    from analysis_lib.search_arena import loader
    from bookbuild import fields, inputs
    path = _release_with(tmp_path, lambda i, r: r.update(timestamp=None if i % 2 else "yesterday"))
    described = _door(tmp_path, "data_source", str(path))
    line = inputs.optional_fields_line(described, cache_dir=tmp_path / "cache")
    assert "timestamp (SA-A2)" in line
    _, report = loader.load_battles_report(path)
    assert "timestamp" in report.absent and fields.lacking("SA-A2", report) == ["timestamp"]


def test_door_refuses_a_ten_thousand_character_model_name(tmp_path):
    from bookbuild.inputs import MAX_NAME_CHARS, InputError
    path = _release_with(tmp_path, lambda i, r: r.update(model_b="n" * 10_000) if i == 2 else None)
    with pytest.raises(InputError, match=rf"^DATA: release\.jsonl, record 3 .*field 'model_b': a name of 10,000 "
                                         rf"characters .*at most {MAX_NAME_CHARS}$") as err:
        _door(tmp_path, "data_source", str(path))
    assert len(str(err.value)) < 400  # the value quoted by a short prefix


def test_door_names_line_and_field_of_a_whole_number_beyond_64_bits(tmp_path):
    from bookbuild.inputs import InputError
    path = _release_with(tmp_path, lambda i, r: r.update(turn=10**30) if i == 1 else None)
    with pytest.raises(InputError, match=r"^DATA: release\.jsonl, line 2, field 'turn': expected a whole number "
                                         r"within 64 bits"):
        _door(tmp_path, "data_source", str(path))


@pytest.mark.parametrize(("name", "value"), [("data_source", "sample:1"), ("text_arena_source", "sample:1"),
                                             ("data_source", "sample:1_000_000_000")])
def test_door_bounds_sample_sizes(tmp_path, name, value):
    from bookbuild.inputs import OPTION, InputError
    with pytest.raises(InputError, match=rf"^{OPTION[name]}: .*expected sample:N with N from 10 to 1,000,000$"):
        _door(tmp_path, name, value)


def test_door_refuses_a_self_match(tmp_path):
    from bookbuild.inputs import InputError
    path = _write(tmp_path / "m.jsonl", [_round(model_b="x")])
    with pytest.raises(InputError, match=r"^MATCH_LOGS: .*m\.jsonl, line 1, fields 'model_a'/'model_b'"):
        _door(tmp_path, "match_logs", str(path))


def test_table_cells_and_headings_are_bounded():
    from bookbuild import tables
    name = "<b>" + "n" * 50_000
    table = tables.html_table(pl.DataFrame({name: [name], "x": [1.5]}), caption=name)
    assert len(table.html) < 5_000 and "<b>" not in table.html  # escaped and cut
    assert f"… ({len(name):,} characters)" in table.html
    assert tables.bounded("short", 10) == "short"


def test_the_loader_names_line_and_field_of_a_whole_number_beyond_64_bits(tmp_path):
    """A chapter run directly (papermill, no door check) gets the same one line as the door."""
    from analysis_lib.search_arena import loader
    path = _release_with(tmp_path, lambda i, r: r.update(turn=10**30) if i == 1 else None)
    with pytest.raises(reading.DataValidationError, match=r"release\.jsonl, line 2.*'turn'"):
        loader.load_battles_report(path)
