"""Issue 48, third round of hostile inputs: the cases that passed the door with wrong numbers, crashed after it or
said too little, rebuilt on small hand-made files through the library's loaders and the door (``bookbuild.inputs``).
Each is refused with one line naming the file, the line or row and the field, or read with the right numbers. (The
data-rendered-as-markup cases are ``test_markup.py`` and ``test_hostile_build.py``; a rewrite that keeps size and
mtime rerunning a chapter is ``test_build.py``; ``--set encoder_precision=bogus`` is ``test_parameters.py``.)"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import unicodedata
from datetime import datetime
from pathlib import Path

import polars as pl
import pytest

from analysis_lib.answer_engine import agreement, records
from analysis_lib.dr_arena import match_log as ml
from analysis_lib.nuggets import records as ng_records
from analysis_lib.reading import DataValidationError, name_key
from analysis_lib.search_arena import attribution_io, loader
from analysis_lib.search_arena.cross_arena import load_text_arena_report
from bookbuild import inputs, keys

FIXTURES = Path(__file__).parent / "fixtures"
RELEASE = FIXTURES / "search_arena" / "attribution_small.jsonl"  # 12 conversations, 10 models, 7 decided
PARQUET = FIXTURES / "inputs" / "release_a.parquet"
ANSWERS = FIXTURES / "answer_engine" / "answers_two_engines.json"
NUGGETS = FIXTURES / "nuggets" / "valid.jsonl"
TEXT_ARENA = FIXTURES / "search_arena" / "text_arena_small.jsonl"
BOM = b"\xef\xbb\xbf"


def _records(path: Path = RELEASE) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    return path


def _door(tmp_path: Path, name: str, value: Path) -> inputs.Described:
    return inputs.check(name, str(value), root=tmp_path, state_dir=tmp_path / "state", seed=0,
                        cache_dir=tmp_path / "cache", lib_hash="test")


def _refused(tmp_path: Path, name: str, value: Path, *parts: str) -> str:
    with pytest.raises(inputs.InputError) as err:
        _door(tmp_path, name, value)
    message = str(err.value)
    assert "\n" not in message and value.name in message, message
    for part in parts:
        assert part in message, (part, message)
    return message


# --- the door's memo: a file's content and its reader, never its size and mtime ------------------------------


@pytest.mark.parametrize(("old", "new"), [('"winner":"model_a"', '"winner":"model_b"'),  # 58 winners changed
                                          ('"winner":"tie"', '"winner":null ')])  # ties made null, size kept
def test_a_rewrite_with_size_and_mtime_kept_is_validated_and_counted_again(tmp_path, old, new):
    path = tmp_path / "release.jsonl"
    shutil.copy(RELEASE, path)
    first = _door(tmp_path, "data_source", path)
    before = path.stat()
    text = path.read_text()
    assert old in text and len(text.replace(old, new)) == len(text)
    path.write_text(text.replace(old, new))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size and path.stat().st_mtime_ns == before.st_mtime_ns
    second = _door(tmp_path, "data_source", path)
    real = hashlib.sha256(path.read_bytes()).hexdigest()
    assert second.info["sha256"] == real != first.info["sha256"]  # the identity is the file's, not the old one
    assert keys.input_identity(str(path)) == f"sha256:{real}"  # so the chapter's rebuild key changes too
    memo = json.loads((tmp_path / "state" / "validated.json").read_text())
    assert sum(real in key for key in memo) == 1 and len(memo) == 2  # validated again, under its content
    tidy, _ = loader.load_battles_report(path, cache_dir=tmp_path / "cache")  # the loader's cache: by content too
    want = [json.loads(line)["winner"] for line in path.read_text().splitlines()]
    assert tidy["winner"].to_list() == want


def test_a_parquet_file_renamed_jsonl_after_a_good_check_is_refused_in_one_line(tmp_path):
    path = tmp_path / "release.parquet"
    shutil.copy(PARQUET, path)
    assert _door(tmp_path, "data_source", path).info["rows"] == 30
    renamed = path.rename(tmp_path / "release.jsonl")
    _refused(tmp_path, "data_source", renamed, "DATA: release.jsonl: a parquet file named .jsonl")


# --- timestamps ---------------------------------------------------------------------------------------------


def test_epoch_seconds_with_one_row_in_milliseconds_are_refused_naming_the_rows(tmp_path):
    rows = _records()
    for i, r in enumerate(rows):
        r["timestamp"] = 1_743_465_600 + 3600 * i
    rows[7]["timestamp"] *= 1000
    path = _write(tmp_path / "release.jsonl", rows)
    _refused(tmp_path, "data_source", path, "field 'timestamp': epoch numbers in 2 units",
             "11 in seconds (rows 1, 2, 3, …)", "1 in milliseconds (row 8)", "expected one unit per file")
    rows[7]["timestamp"] //= 1000
    days = loader.load_battles_report(_write(tmp_path / "one_unit.jsonl", rows))[0]["timestamp"].dt.date().n_unique()
    assert days == 1  # twelve hours of one day, not 1970


def test_iso_8601_with_z_and_offsets_is_parsed_as_utc(tmp_path):
    stamps = ["2025-04-01T00:43:42Z", "2025-04-01T02:43:42+02:00", "2025-03-31T19:43:42-0500", "2025-04-01 00:43:42Z",
              "2025-04-01T05:43:42.5+05", "2025-04-01T00:43:42.25+00:00"]
    rows = _records()
    for r, stamp in zip(rows, stamps, strict=False):
        r["timestamp"] = stamp
    tidy, report = loader.load_battles_report(_write(tmp_path / "release.jsonl", rows))
    utc = datetime(2025, 4, 1, 0, 43, 42)
    assert tidy["timestamp"].head(len(stamps)).to_list() == [utc] * 4 + [utc.replace(microsecond=500_000),
                                                                         utc.replace(microsecond=250_000)]
    assert "timestamp" not in report.absent and report.flags["timestamps that could not be parsed (kept as null)"] == 0


def test_a_year_9999_timestamp_is_flagged_by_its_row_and_the_rest_kept(tmp_path):
    rows = _records()
    rows[4]["timestamp"] = "9999-12-31 23:59:59"
    path = _write(tmp_path / "release.jsonl", rows)
    assert _door(tmp_path, "data_source", path).info["rows"] == 12
    tidy, report = loader.load_battles_report(path)
    assert report.flags["timestamps outside 1677-09-22 to 2262-04-11 (kept as null; rows 5)"] == 1
    assert tidy["timestamp"].null_count() == 1 and tidy["timestamp"][4] is None
    assert tidy["timestamp"].drop_nulls().dt.year().to_list() == [2025] * 11  # not wrapped to 1816


# --- names compared after one normalisation ---------------------------------------------------------------


def test_engine_names_differing_by_trailing_space_are_one_engine(tmp_path):
    answers = json.loads(ANSWERS.read_text())
    answers[1]["answer_engine"] = "YouCom "  # "bing_chat " beside "bing_chat"
    answers[3]["answer_engine"] = unicodedata.normalize("NFD", " MyEngine")
    path = tmp_path / "answers.json"
    path.write_text(json.dumps(answers))
    loaded = records.load_answer_records(path)
    assert [r.engine for r in loaded] == ["YouCom", "YouCom", "MyEngine", "MyEngine"]
    meta = records.records_to_answers(loaded).meta
    assert dict(meta.group_by("engine").len().iter_rows()) == {"YouCom": 2, "MyEngine": 2}  # no answer lost


def _round(**kw: object) -> dict:
    return {"match_id": "m1", "tree_id": "t", "model_a": "agent-alpha", "model_b": "agent-beta", "round": 1, "depth": 1,
            "width": 1, "verdict": "A_BETTER", "failure_type": "DEEP", "score_a": 1.0, "score_b": 0.0} | kw


@pytest.mark.parametrize("other", ["agent-alpha ", " agent-alpha", "agent-alpha\t"])
def test_a_match_against_the_same_agent_with_spaces_is_a_self_match(tmp_path, other):
    path = _write(tmp_path / "m.jsonl", [_round(model_b=other)])
    with pytest.raises(DataValidationError, match=r"m\.jsonl, line 1, fields 'model_a'/'model_b': both are "
                                                  r"'agent-alpha'"):
        ml.load_match_logs(path)


def test_nfc_and_nfd_spellings_of_one_agent_are_one_agent(tmp_path):
    nfc, nfd = unicodedata.normalize("NFC", "agent-gammá"), unicodedata.normalize("NFD", "agent-gammá")
    assert nfc != nfd and name_key(nfd) == nfc
    path = _write(tmp_path / "m.jsonl", [_round(model_a=nfc, model_b=nfd)])
    _refused(tmp_path, "match_logs", path, "fields 'model_a'/'model_b': both are")
    agents = ["agent-alpha", "agent-beta", nfc, "agent-delta", "agent-eps"]
    rounds = [_round(match_id=f"m{i}", model_a=agents[i], model_b=(nfd if agents[i - 4] == nfc else agents[i - 4]))
              for i in range(5)]
    frame = ml.load_match_logs(_write(tmp_path / "five.jsonl", rounds))
    assert sorted(set(frame["model_a"]) | set(frame["model_b"])) == sorted(agents)  # 5 agents, not 6


def test_annotator_header_in_any_case_and_names_with_spaces(tmp_path):
    path = tmp_path / "labels.csv"
    path.write_text("task, Item_ID ,human,Annotator\nconfidence,y1,4,ann1\nconfidence,y1,5, ann1\n")
    with pytest.raises(DataValidationError, match=r"labels\.csv, line 3, field 'annotator': annotator 'ann1' "
                                                  r"already labelled confidence item 'y1' on line 2"):
        agreement.load_answer_labels(path)


def test_model_names_in_a_release_are_compared_after_normalisation(tmp_path):
    rows = _records()
    rows[0]["model_a"] = rows[0]["model_a"] + "  "
    rows[1]["model_b"] = " " + rows[1]["model_b"]
    tidy = loader.load_battles_report(_write(tmp_path / "release.jsonl", rows))[0]
    want = loader.load_battles_report(RELEASE)[0]
    assert tidy["raw_model_a"].to_list() == want["raw_model_a"].to_list()
    assert tidy["raw_model_b"].to_list() == want["raw_model_b"].to_list()


# --- types checked the same in every reader -------------------------------------------------------------------


def test_a_prompt_given_as_a_number_is_refused_not_read_as_text(tmp_path):
    rows = _records()
    rows[2]["messages_a"][0]["content"] = 12345
    path = _write(tmp_path / "release.jsonl", rows)
    _refused(tmp_path, "data_source", path, "release.jsonl, line 3, field 'messages_a[0].content': expected a string "
             "or null, got a whole number 12345")


@pytest.mark.parametrize(("field", "value", "shown"), [("content", 12345, "got 12345"),
                                                     ("language", 7, "field 'language': expected a string or null")])
def test_text_arena_refuses_a_number_where_text_is_expected(tmp_path, field, value, shown):
    rows = _records(TEXT_ARENA)
    if field == "content":
        rows[1]["conversation_a"][0]["content"] = value
    else:
        rows[1][field] = value
    path = _write(tmp_path / "t.jsonl", rows)
    _refused(tmp_path, "text_arena_source", path, "TEXT_ARENA: ", "t.jsonl, line 2", shown)


@pytest.mark.parametrize("reader", ["release", "match log", "nuggets", "text arena"])
def test_a_lone_surrogate_in_a_name_is_refused_naming_line_and_field(tmp_path, reader):
    surrogate = '"x\\ud800y"'  # a JSON escape no UTF-8 text can hold
    if reader == "release":
        lines, field, load = RELEASE.read_text().splitlines(), "model_a", loader.load_battles_report
        lines[1] = lines[1].replace('"model_a":"sonar-pro-high"', f'"model_a":{surrogate}')
    elif reader == "match log":
        lines, field, load = [json.dumps(_round()), json.dumps(_round(round=2))], "model_b", ml.load_match_logs
        lines[1] = lines[1].replace('"agent-beta"', surrogate)
    elif reader == "nuggets":
        lines, field, load = NUGGETS.read_text().splitlines(), "model", ng_records.load_nugget_records
        lines[1] = lines[1].replace('"language"', f'"model": {surrogate}, "language"')
    else:
        lines, field, load = TEXT_ARENA.read_text().splitlines(), "model_b", load_text_arena_report
        lines[1] = lines[1].replace('"model_b": "', f'"model_b": {surrogate}, "x": "', 1)
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(lines) + "\n")
    assert surrogate in path.read_text()
    with pytest.raises(DataValidationError, match=rf"in\.jsonl, line 2, field '{field}': not text: a lone surrogate "
                                                  r"\\ud800 at character 2"):
        load(path)


@pytest.mark.parametrize(("edit", "field", "problem"), [
    (lambda r: r.update(qid=10**30), "qid", "expected a whole number within 64 bits"),
    (lambda r: r.update(extra=float("nan")), "extra", "expected a finite number or null, got NaN"),
    (lambda r: r["nuggets"][0].update(score=float("inf")), "nuggets[0].score", "got Infinity"),
])
def test_nugget_records_refuse_huge_ids_and_nan_in_any_field(tmp_path, edit, field, problem):
    rows = _records(NUGGETS)
    edit(rows[1])
    path = tmp_path / "records.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))  # json.dumps writes NaN and Infinity as such
    message = _refused(tmp_path, "nugget_records", path, "NUGGETS: ", f"line 2, field '{field}': ", problem)
    assert len(message) < 300


# --- what the chapters cannot compute is refused at the door ------------------------------------------------------


@pytest.mark.parametrize(("edit", "shown"), [
    (lambda rows: rows[:1], "1 conversation(s)"),  # a 1-row release
    (lambda rows: [r | {"winner": "tie"} for r in rows], "0 decided battle(s)"),  # every battle a tie
    (lambda rows: [r | {"model_a": "solo", "model_b": "solo"} for r in rows], "0 model(s) with a vote"),  # one model
])
def test_a_release_the_chapters_cannot_rank_is_refused_in_one_line(tmp_path, edit, shown):
    path = _write(tmp_path / "release.jsonl", edit(_records()))
    _refused(tmp_path, "data_source", path, "DATA: release.jsonl: ", shown,
             "the chapters need at least 10 conversations, two models with a vote and one decided battle")


# --- messages: rows from 1, a byte-order mark in every reader, parser errors as one line ----------------------------


def test_winner_errors_count_rows_from_1(tmp_path):
    rows = _records()
    rows[3]["winner"] = "model_c"
    path = _write(tmp_path / "release.jsonl", rows)
    _refused(tmp_path, "data_source", path, "column 'winner' has 1 value(s) outside", "row 4 = 'model_c'")


@pytest.mark.parametrize(("name", "source", "read"), [
    ("release.jsonl", RELEASE, lambda p: loader.load_battles_report(p)[0].height),
    ("attribution.jsonl", RELEASE, lambda p: attribution_io.validate_attribution(p).n_records),
    ("text_arena.jsonl", TEXT_ARENA, lambda p: load_text_arena_report(p)[0].height),
    ("m.jsonl", None, ml.validate_match_logs),
    ("records.jsonl", NUGGETS, lambda p: ng_records.load_nugget_records(p).n_battles),
    ("answers.json", ANSWERS, lambda p: len(records.load_answer_records(p))),
    ("labels.csv", FIXTURES / "answer_engine" / "labels.csv", lambda p: agreement.load_answer_labels(p).height),
    ("s.jsonl", FIXTURES / "answer_engine" / "support_results.jsonl", lambda p: records.load_support_results(p).height),
])
def test_a_byte_order_mark_is_accepted_by_every_reader(tmp_path, name, source, read):
    body = source.read_bytes() if source else (json.dumps(_round()) + "\n").encode()
    plain, marked = tmp_path / "plain" / name, tmp_path / "marked" / name
    for path, data in ((plain, body), (marked, BOM + body)):
        path.parent.mkdir()
        path.write_bytes(data)
    assert read(marked) == read(plain) > 0


def test_a_release_with_a_bom_passes_the_door(tmp_path):
    path = tmp_path / "release.jsonl"
    path.write_bytes(BOM + RELEASE.read_bytes())
    assert _door(tmp_path, "data_source", path).info["rows"] == 12


def test_an_option_value_starting_with_a_dash_is_one_line_not_a_usage_block(capsys):
    from bookbuild import runner
    assert runner.main(["--nuggets", "-n.jsonl"]) == 2
    err = capsys.readouterr().err
    assert "usage:" not in err and len(err.strip().splitlines()) == 1
    assert err.startswith("bookbuild: exit 2 (bad arguments or inputs): argument --nuggets: expected one argument")
    assert "--nuggets=-n.jsonl" in err


def test_the_epoch_unit_check_names_rows_in_a_frame_too():
    raw = pl.DataFrame({"timestamp": [1_743_465_600, 1_743_465_600_000, None, 1_743_469_200]})
    from analysis_lib.search_arena.release import timestamp_problem
    assert timestamp_problem(raw) == ("field 'timestamp': epoch numbers in 2 units, 2 in seconds (rows 1, 4); "
                                      "1 in milliseconds (row 2); expected one unit per file")
