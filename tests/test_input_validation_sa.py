"""Input validation of the Text Arena battles (TEXT_ARENA) and the citation-attribution subset (ATTRIBUTION), issue
#25: each bad hand-made file is refused with one line naming the file, the line or row, the field and what was
expected; the good ones load with exact counts; arbitrary bytes and deep JSON load or raise the package's error."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analysis_lib.reading import DataValidationError
from analysis_lib.search_arena import attribution_io
from analysis_lib.search_arena.attribution_io import load_attribution, validate_attribution
from analysis_lib.search_arena.cross_arena import load_text_arena_report, validate_text_arena

FIXTURES = Path(__file__).parent / "fixtures" / "search_arena"
EXPECTED_COUNT = "expected a whole number of claim–citation pairs from 0 to 100,000"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("text_arena_duplicate_id.jsonl",
         r"text_arena_duplicate_id\.jsonl, line 3, field 'question_id': 'q1' already on line 1 \(expected each "
         r"battle once\)$"),
        ("text_arena_no_votes.jsonl", r"text_arena_no_votes\.jsonl: holds no voted battle \(2 rows, 2 without a vote"),
        ("text_arena_empty.jsonl", r"text_arena_empty\.jsonl: is empty \(0 bytes\); expected the Text Arena battles$"),
        ("text_arena_turn_nan.jsonl",
         r"text_arena_turn_nan\.jsonl, line 2, field 'turn': expected a finite number or null, got NaN"),
        ("text_arena_turn_inf.jsonl",
         r"text_arena_turn_inf\.jsonl, line 1, field 'turn': expected a finite number or null, got Infinity"),
        ("text_arena_bad_utf8.jsonl", r"text_arena_bad_utf8\.jsonl, line 2: not valid UTF-8 at byte 20 of the line"),
        ("text_arena_deep.jsonl",
         r"text_arena_deep\.jsonl, line 2, field 'intent': JSON nested deeper than 64 levels$"),
    ],
)
def test_text_arena_refusals_name_file_line_and_field(name, expected):
    with pytest.raises(DataValidationError, match=expected) as err:
        validate_text_arena(FIXTURES / name)
    assert "\n" not in str(err.value) and str(FIXTURES / name) in str(err.value)  # one line naming the file
    assert isinstance(err.value, DataValidationError) and isinstance(err.value, ValueError)


def test_text_arena_small_file_loads_with_exact_counts():
    frame, report = load_text_arena_report(FIXTURES / "text_arena_small.jsonl")
    assert (report.n_raw, report.n_rows, report.dropped) == (4, 3, {"no vote (winner null)": 1})
    assert frame["battle_id"].to_list() == ["q1", "q2", "q3"]
    assert frame["vote"].to_list() == ["search", "tie", "search"]  # q3: search model on side b wins
    assert frame["turn"].to_list() == [1, 1, 1]
    assert validate_text_arena(FIXTURES / "text_arena_small.jsonl") == 3


@pytest.mark.parametrize(
    ("turn", "shown"), [(1.5, "1.5"), (0, "0"), ('"2"', "'2'"), ("true", "True"), (-1, "-1")]
)
def test_text_arena_turn_must_be_a_positive_whole_number(tmp_path, turn, shown):
    line = (FIXTURES / "text_arena_small.jsonl").read_text().splitlines()[0].replace('"turn": 1', f'"turn": {turn}')
    path = tmp_path / "t.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(DataValidationError, match=rf"/t\.jsonl, line 1, field 'turn': .* got {shown}$"):
        validate_text_arena(path)


def test_text_arena_long_bad_value_is_quoted_by_a_short_prefix(tmp_path):
    row = json.loads((FIXTURES / "text_arena_small.jsonl").read_text().splitlines()[0])
    row["winner"] = "x" * 10_000_000
    path = tmp_path / "long.jsonl"
    path.write_text(json.dumps(row) + "\n")
    with pytest.raises(DataValidationError) as err:
        validate_text_arena(path)
    message = str(err.value)
    assert "long.jsonl, line 1, field 'winner': 'xxxx" in message and "(10,000,000 characters)" in message
    assert len(message) < 300


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("attribution_negative.jsonl",
         rf"attribution_negative\.jsonl, line 3, field 'conv_metadata\.support_count_a': {EXPECTED_COUNT}, got -2$"),
        ("attribution_string.jsonl",
         rf"attribution_string\.jsonl, line 3, field 'conv_metadata\.irrelevant_count_b': {EXPECTED_COUNT}, got '3'$"),
        ("attribution_many.jsonl", rf"attribution_many\.jsonl, line 3, .*_count_a': {EXPECTED_COUNT}, got 'many'$"),
        ("attribution_nan.jsonl",
         r"attribution_nan\.jsonl, line 3, field '.*_count_a': expected a finite number or null, got NaN"),
        ("attribution_fraction.jsonl", rf"attribution_fraction\.jsonl, line 3, .*: {EXPECTED_COUNT}, got 1\.5$"),
        ("attribution_negative.parquet",
         rf"attribution_negative\.parquet, row 1, column 'conv_metadata\.support_count_a': {EXPECTED_COUNT}, "
         r"got -3\.0$"),
        ("attribution_no_counts.jsonl", r"attribution_no_counts\.jsonl: none of its 12 records has all six"),
    ],
)
def test_attribution_refusals_name_file_line_and_field(name, expected):
    for check in (validate_attribution, load_attribution):
        with pytest.raises(DataValidationError, match=expected) as err:
            check(FIXTURES / name)
        assert "\n" not in str(err.value) and isinstance(err.value, DataValidationError)


@pytest.mark.parametrize("name", ["attribution_small.jsonl", "attribution_small.parquet"])
def test_attribution_small_file_loads_with_exact_counts(name):
    subset = load_attribution(FIXTURES / name)
    assert subset.kind == "user" and subset.planted is None  # a user's file, not the manifest's
    assert subset.check == attribution_io.AttributionCheck(name, 12, 11)
    assert subset.check.n_unlabelled == 1  # the record with a null support_count_a, reported, not refused
    assert subset.tidy.height == 12
    assert subset.tidy["support_count_a"].null_count() == 1


def test_attribution_simulated_source():
    subset = load_attribution("sample:40", seed=2)
    assert subset.kind == "simulated" and subset.check is None and subset.planted is not None
    assert subset.tidy.height == 40


def test_attribution_long_bad_value_is_quoted_by_a_short_prefix(tmp_path):
    lines = (FIXTURES / "attribution_small.jsonl").read_text().splitlines()
    record = json.loads(lines[0])
    record["conv_metadata"]["support_count_b"] = "9" * 10_000_000
    path = tmp_path / "long.jsonl"
    path.write_text(json.dumps(record) + "\n")
    with pytest.raises(DataValidationError) as err:
        validate_attribution(path)
    assert "(10,000,000 characters)" in str(err.value) and len(str(err.value)) < 300


@pytest.mark.parametrize("check", [validate_attribution, validate_text_arena])
def test_folder_fifo_device_and_missing_are_refused_before_reading(tmp_path, check):
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    for path, expected in [(tmp_path, "is a folder"), (fifo, "is a FIFO"), (Path("/dev/zero"), "character device"),
                           (tmp_path / "missing.jsonl", "missing.jsonl: ")]:
        with pytest.raises(DataValidationError, match=expected):
            check(path)


# ------------------------------------------------------------------------------------------ property tests

LOADERS = [("attribution.jsonl", load_attribution, DataValidationError),
           ("text_arena_battles.jsonl", validate_text_arena, DataValidationError),
           ("attribution.parquet", load_attribution, DataValidationError)]


def loads_or_names_the_file(path: Path, check, error) -> None:
    try:
        check(path)
    except error as err:
        assert path.name in str(err) and "\n" not in str(err)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=2000), which=st.sampled_from(LOADERS))
def test_arbitrary_bytes_load_or_raise_naming_the_file(tmp_path, data, which):
    name, check, error = which
    path = tmp_path / name
    path.write_bytes(data)
    loads_or_names_the_file(path, check, error)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3),
    max_leaves=12,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=json_values, field=st.sampled_from(["turn", "winner", "question_id", "model_a", "intent",
                                                 "support_count_a", "conv_metadata"]), depth=st.integers(0, 3000))
def test_arbitrary_values_and_deep_json_load_or_raise_naming_the_file(tmp_path, value, field, depth):
    for fixture, check, error in [("text_arena_small.jsonl", validate_text_arena, DataValidationError),
                                  ("attribution_small.jsonl", load_attribution, DataValidationError)]:
        record = json.loads((FIXTURES / fixture).read_text().splitlines()[0])
        record[field] = "@"
        text = json.dumps(record).replace('"@"', "[" * depth + json.dumps(value) + "]" * depth)
        path = tmp_path / fixture
        path.write_text(text + "\n")
        loads_or_names_the_file(path, check, error)
