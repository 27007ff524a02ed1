"""MATCH_LOGS validation (issue #25): every bad input is refused with one line naming the file, line and field;
nothing is dropped silently; the hand-made files are in ``tests/fixtures/dr_arena/``."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from analysis_lib.dr_arena import loader as source
from analysis_lib.dr_arena import match_log as ml
from analysis_lib.reading import DataValidationError
from bookbuild.papers import dr_arena as paper

FIX = Path(__file__).parent / "fixtures" / "dr_arena"


def test_folder_reads_every_log_suffix_in_any_case() -> None:
    rounds = ml.load_match_logs(FIX / "logs_mixed_suffixes")
    assert rounds.height == 4  # m1: 2 rounds (a blank line between), m2 (.JSONL), m3 (.json in a subfolder)
    assert sorted(rounds["match_id"].unique()) == ["m1", "m2", "m3"]
    assert ml.skipped_files(FIX / "logs_mixed_suffixes") == ["README.txt: not a .jsonl or .json or .ndjson file"]
    assert ml.validate_match_logs(FIX / "logs_mixed_suffixes") == 4


@pytest.mark.parametrize(("name", "expected"), [
    ("nan_score.jsonl", "line 2, field 'score_a': expected a finite number"),
    ("inf_score.jsonl", "line 2, field 'score_b': expected a finite number"),
    ("huge_negative_score.jsonl", "line 2, field 'score_b': expected a finite number"),
    ("model_b_changes.jsonl", "line 2, field 'model_b': match 'm1' has 'agent-other' where its round 1 has"),
    ("tree_id_changes.jsonl", "line 2, field 'tree_id': match 'm1' has 'tree_0003'"),
    ("empty.jsonl", "is empty (0 bytes)"),
    ("blank_lines.jsonl", "holds no rounds"),
    ("bad_utf8.jsonl", "line 2: not valid UTF-8 at byte"),
    ("deep_json.jsonl", "line 2: JSON nested deeper than 64 levels"),
    ("not_an_object.jsonl", "line 2: not a JSON object (a list)"),
])
def test_bad_file_refused_naming_file_and_line(name: str, expected: str) -> None:
    with pytest.raises(DataValidationError) as err:
        ml.validate_match_logs(FIX / name)
    message = str(err.value)
    assert name in message and expected in message and "\n" not in message


def test_nan_score_no_longer_decides_a_match(tmp_path: Path) -> None:
    """The issue's case: NaN compared as larger made model A the winner; the log is now refused."""
    shutil.copy(FIX / "nan_score.jsonl", tmp_path / "a.jsonl")
    with pytest.raises(DataValidationError, match="a.jsonl, line 2, field 'score_a'.*got NaN"):
        ml.load_match_logs(tmp_path)


def test_bad_file_inside_a_folder_is_named(tmp_path: Path) -> None:
    shutil.copytree(FIX / "logs_mixed_suffixes", tmp_path / "logs")
    shutil.copy(FIX / "tree_id_changes.jsonl", tmp_path / "logs" / "late.Json")
    with pytest.raises(DataValidationError, match=r"late\.Json, line 2, field 'tree_id'"):
        ml.load_match_logs(tmp_path / "logs")


def test_long_bad_value_is_quoted_by_a_prefix(tmp_path: Path) -> None:
    p = tmp_path / "long.jsonl"
    bad = json.loads((FIX / "logs_mixed_suffixes" / "m1.jsonl").read_text().splitlines()[0])
    bad["verdict"] = "X" * 10_000_000
    p.write_text(json.dumps(bad) + "\n")
    with pytest.raises(DataValidationError) as err:
        ml.load_match_logs(p)
    message = str(err.value)
    assert "long.jsonl, line 1, field 'verdict'" in message and len(message) < 400
    assert "10,000,000 characters" in message


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_special_files_refused_before_reading(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(DataValidationError, match="pipe.jsonl: is a FIFO"):
        ml.load_match_logs(fifo)
    with pytest.raises(DataValidationError, match=r"holds no \.jsonl .* \(it holds pipe.jsonl: a FIFO"):
        ml.load_match_logs(tmp_path)  # inside a folder: listed, not read
    with pytest.raises(DataValidationError, match="/dev/null: is a character device, not a regular file"):
        ml.load_match_logs("/dev/null")


def test_missing_and_log_free_folders_refused(tmp_path: Path) -> None:
    with pytest.raises(DataValidationError, match="nope: no such file or folder"):
        ml.validate_match_logs(tmp_path / "nope")
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(DataValidationError, match=r"holds no .jsonl .* \(it holds notes.txt"):
        ml.validate_match_logs(tmp_path)


def _deep(depth: int) -> bytes:
    return b'{"a": ' * depth + b"1" + b"}" * depth


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(st.binary(max_size=400), st.integers(1, 3000).map(_deep),
                 st.recursive(st.none() | st.integers() | st.floats() | st.text(max_size=5),
                              lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=3), c, max_size=3),
                              max_leaves=20).map(lambda v: json.dumps(v).encode())))
@example(b"\x1c")  # blank to str.strip, not to JSON: once reached json.loads unguarded
def test_arbitrary_bytes_load_or_raise_the_package_error(tmp_path: Path, data: bytes) -> None:
    p = tmp_path / "fuzz.jsonl"
    p.write_bytes(data)
    try:
        rows = ml.validate_match_logs(p)
    except DataValidationError as err:
        assert "fuzz.jsonl" in str(err)
    else:
        assert rows >= 1


def test_chapter_source_reports_skipped_files_without_the_path() -> None:
    logs = source.load_match_source(str(FIX / "logs_mixed_suffixes"), {})
    assert logs.kind == "user" and logs.rounds.height == 4
    detail = paper.logs_detail(logs)  # the banner's sentence, on the book side
    assert "3 log file(s): 3 matches, 4 rounds" in detail
    assert "1 other file(s)" in detail and "README.txt" in detail
    assert str(FIX) not in detail
