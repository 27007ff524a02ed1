"""Nugget-record inputs (issue #25): every bad input is refused with one DataValidationError naming the file (and the
line and field where there is one) and a short quote; what is read is counted; special files are refused unread;
arbitrary bytes and deep JSON either load or raise the package's error naming the file."""

import json
import os
import stat
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analysis_lib import nuggets as ng
from analysis_lib import reading
from analysis_lib.nuggets.records import NO_VOTE, validate_nugget_records
from analysis_lib.reading import DataValidationError

FIXTURES = Path(__file__).parent / "fixtures" / "nuggets"


def _refusal(path, *parts, **kwargs) -> str:
    with pytest.raises(DataValidationError) as err:
        ng.load_nugget_records(path, **kwargs)
    message = str(err.value)
    assert str(path) in message
    for part in parts:
        assert part in message, message
    return message


def test_valid_fixture_loads_with_exact_counts():
    recs = ng.load_nugget_records(FIXTURES / "valid.jsonl")
    assert recs.n_battles == 3 and sorted(recs.sides["qid"].unique()) == ["2", "b1", "b3"]
    assert recs.nuggets.height == 2 * (2 + 1 + 1)
    assert recs.excluded[NO_VOTE] == 1 and recs.excluded["battles with only one side"] == 1
    assert sum(recs.excluded.values()) == 2 and recs.blank_lines == 1
    assert recs.files == (str(FIXTURES / "valid.jsonl"),) and recs.not_read == ()
    assert ng.battle_scores(recs).filter(pl.col("qid") == "b1")["all_a"].item() == pytest.approx(0.5)


def test_validate_summarises_what_was_read():
    summary = validate_nugget_records(FIXTURES / "valid.jsonl")
    assert "3 battles" in summary and "1 without a vote (winner null)" in summary and "1 blank line" in summary


def test_same_id_as_number_and_string_is_refused():
    """qid 7 and "7" would become one battle as text: refused, naming both places."""
    message = _refusal(FIXTURES / "mixed_qid_types.jsonl", "line 2", "field 'qid'",
                       "a number here but a string on line 1")
    assert "same JSON type" in message


@pytest.mark.parametrize("name,parts", [
    ("empty.jsonl", ["no nugget records (the file is empty)"]),
    ("blank_lines.jsonl", ["no nugget records", "3 blank lines"]),
    ("invalid_utf8.jsonl", ["line 2", "not valid UTF-8 at byte"]),
    ("bad_assignment.jsonl", ["line 1", "field 'nuggets[0].assignment'", "got 'yes'"]),
    ("bad_winner.jsonl", ["line 1", "field 'winner'", "got 'draw'"]),
    ("not_an_object.jsonl", ["line 2", "expected a JSON object, got [1, 2, 3]"]),
    ("lone_surrogate.jsonl", ["line 1", "field 'nuggets[0].text'", "lone surrogate \\ud800"]),
    ("all_excluded.jsonl", ["no battle left to score", "2 with only one side"]),
    ("duplicate_side.jsonl", ["line 2", "already given on line 1"]),
])
def test_bad_fixtures_are_refused_naming_file_line_and_field(name, parts):
    _refusal(FIXTURES / name, *parts)


def test_missing_path_is_refused_as_not_found(tmp_path):
    with pytest.raises(DataValidationError, match=r"nope\.jsonl: no such file or folder \(expected nugget records"):
        ng.load_nugget_records(tmp_path / "nope.jsonl")
    assert issubclass(DataValidationError, ValueError)


def test_lmsys_folder_reads_the_record_files_and_says_what_it_left(tmp_path):
    recs = ng.load_nugget_records(FIXTURES / "lmsys_assignments")
    assert recs.n_battles == 2 and [Path(f).name for f in recs.files] == ["assigned_nuggets_0.json",
                                                                          "assigned_nuggets_1.json"]
    assert recs.not_read == ("README.md: not a .json or .jsonl file",)
    assert "not read: 1 other entry of the folder (README.md" in recs.input_text()
    assert sorted(recs.sides["answer_text"].unique()) == ["I do not know.", "Paris is the capital."]


def test_folder_without_record_files_is_refused_with_what_it_holds():
    message = _refusal(FIXTURES / "lmsys_output", "holds no .json or .jsonl file",
                       "assignments: a folder", "skips.txt: not a .json or .jsonl file")
    assert "give its assignments/ folder" in message


def test_fifo_is_refused_without_being_opened(tmp_path):
    fifo = tmp_path / "records.jsonl"
    os.mkfifo(fifo)
    _refusal(fifo, "is a FIFO (named pipe)")  # opening it would block: the test finishing shows it was not


def test_character_device_is_refused():
    if not Path("/dev/zero").exists() or not stat.S_ISCHR(os.stat("/dev/zero").st_mode):
        pytest.skip("no /dev/zero")
    _refusal(Path("/dev/zero"), "is a character device")


def test_special_files_in_a_folder_are_listed_not_read(tmp_path):
    (tmp_path / "a.jsonl").write_bytes((FIXTURES / "valid.jsonl").read_bytes())
    os.mkfifo(tmp_path / "b.jsonl")
    recs = ng.load_nugget_records(tmp_path)
    assert recs.n_battles == 3 and recs.not_read == ("b.jsonl: a FIFO (named pipe)",)


def test_reads_are_bounded(tmp_path, monkeypatch):
    path = tmp_path / "big.jsonl"
    path.write_bytes((FIXTURES / "valid.jsonl").read_bytes() * 3)
    _refusal(path, "exceed 1,000 bytes, the limit of one load", max_bytes=1000)
    monkeypatch.setattr(reading, "MAX_LINE_BYTES", 100)
    with pytest.raises(DataValidationError, match="line 1: longer than 100 bytes"):
        list(reading.json_lines(path, budget=reading.Budget(10**6)))


def test_a_huge_bad_value_is_quoted_by_its_prefix_only(tmp_path):
    path = tmp_path / "huge.jsonl"
    huge = "x" * 10_000_000
    path.write_text(json.dumps({"qid": "q", "side": huge, "winner": "model_a", "nuggets": []}) + "\n")
    message = _refusal(path, "field 'side'", "(10,000,000 characters)")
    assert len(message) < 500


def test_deep_json_is_refused_not_a_recursion_error(tmp_path):
    path = tmp_path / "deep.jsonl"
    path.write_text("[" * 100_000 + "]" * 100_000 + "\n")
    _refusal(path, "line 1", "nested deeper than 64 levels")


def test_deep_values_inside_a_record_are_described_not_printed(tmp_path):
    path = tmp_path / "deep_field.jsonl"
    deep = "[" * 500 + "]" * 500
    path.write_text('{"qid": "q", "side": "a", "winner": "model_a", "nuggets": [], "chunks": ' + deep + "}\n")
    _refusal(path, "field 'chunks'", "JSON nested deeper than 64 levels")


def test_quote_shows_prefixes_and_sizes():
    assert reading.quote("abc") == "'abc'"
    assert reading.quote("y" * 100).endswith("'… (100 characters)") and len(reading.quote("y" * 100)) < 90
    assert reading.quote({"a": 1}) == "{'a': 1}" and reading.quote([1, 2]) == "[1, 2]"  # short ones in full
    assert reading.quote(list(range(100))) == "a list of 100 items" and reading.quote({"k": "v" * 99}) == (
        "an object of 1 item")
    assert reading.quote(10**80).endswith("(81 digits)")


# ------------------------------------------------------------------------------------------- properties

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=30,
)
FIELDS = st.fixed_dictionaries({}, optional={
    "qid": JSON | st.text(max_size=5) | st.integers(0, 5), "side": st.sampled_from(["a", "b", "c"]) | JSON,
    "winner": st.sampled_from(["model_a", "model_b", "tie", "tie (bothbad)", "", "draw"]) | JSON,
    "nuggets": st.lists(st.fixed_dictionaries({}, optional={
        "text": st.text(max_size=10) | JSON, "importance": st.sampled_from(["vital", "okay", "failed"]) | JSON,
        "assignment": st.sampled_from(["support", "partial_support", "not_support"]) | JSON}), max_size=3) | JSON,
    "query_categories": JSON, "chunks": JSON, "answer_text": JSON, "language": JSON,
})


def _loads_or_names_the_file(path: Path) -> None:
    try:
        recs = ng.load_nugget_records(path)
    except DataValidationError as err:
        assert str(path) in str(err)
    else:
        assert recs.n_battles > 0 and recs.sides.height == 2 * recs.n_battles


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=400))
def test_arbitrary_bytes_load_or_raise_the_packages_error(tmp_path, data):
    path = tmp_path / "bytes.jsonl"
    path.write_bytes(data)
    _loads_or_names_the_file(path)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(FIELDS | JSON, min_size=1, max_size=6), depth=st.integers(0, 3000))
def test_arbitrary_json_records_load_or_raise_the_packages_error(tmp_path, lines, depth):
    path = tmp_path / "records.jsonl"
    text = "\n".join(json.dumps(x) for x in lines) + "\n" + "[" * depth + "]" * depth
    path.write_text(text, encoding="utf-8")
    _loads_or_names_the_file(path)
