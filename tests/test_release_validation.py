"""Input validation of the Search Arena release (issue #25): hand-made files in tests/fixtures/search_arena/, each
refused with one line naming the file (and line or column) and what was expected, or loaded with exact counts;
a property test feeding arbitrary bytes and deep JSON to the loader and to validate_release."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analysis_lib import reading
from analysis_lib.nesting import json_depth
from analysis_lib.reading import DataValidationError, quote
from analysis_lib.search_arena import loader
from analysis_lib.search_arena.release import ReleaseCheck, validate_release

FIXTURES = Path(__file__).parent / "fixtures" / "search_arena"


def refusal(path: Path | str, **kwargs: object) -> tuple[str, str]:
    """The loader's and validate_release's messages for one input (both must refuse it)."""
    with pytest.raises(DataValidationError) as load_err:
        loader.load_battles_report(path, **kwargs)  # type: ignore[arg-type]
    with pytest.raises(DataValidationError) as check_err:
        validate_release(path)
    return str(load_err.value), str(check_err.value)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("truncated.parquet", r"truncated\.parquet: could not be read as parquet"),
        ("truncated.jsonl", r"truncated\.jsonl, line 2, column \d+: not valid JSON: truncated or malformed"),
        ("no_winner.parquet", r"no_winner\.parquet: missing column 'winner' \(expected String\)"),
        ("no_winner.jsonl", r"no_winner\.jsonl: missing column 'winner' \(expected String\)"),
        ("zero_rows.parquet", r"zero_rows\.parquet: the release has no rows"),
        ("empty.jsonl", r"empty\.jsonl: is empty \(0 bytes\)"),
        ("blank_lines.jsonl", r"blank_lines\.jsonl: holds no JSON lines \(only blank lines\)"),
        ("bad_utf8.jsonl", r"bad_utf8\.jsonl, line 2: not valid UTF-8 at byte \d+"),
        ("deep.jsonl", r"deep\.jsonl, line 3: JSON nested deeper than 64 levels"),
        ("deep.parquet", r"deep\.parquet, column 'model_a': nested deeper than 64 levels"),
        ("not_object.jsonl", r"not_object\.jsonl, line 2: not a JSON object \(a list\)"),
        ("long_winner.jsonl", r"long_winner\.jsonl: column 'winner' has 1 value\(s\) outside .* row 2 = 'model_axx"),
    ],
)
def test_each_bad_fixture_is_refused_naming_the_file_and_what_was_expected(name, expected):
    for message in refusal(FIXTURES / name):
        assert "\n" not in message  # one line
        assert re.search(expected, message), message


def test_a_long_bad_value_is_quoted_by_a_short_prefix_only():
    load_message, check_message = refusal(FIXTURES / "long_winner.jsonl")
    for message in (load_message, check_message):
        assert "(5,007 characters)" in message
        assert len(message) < 300 and "x" * 50 not in message


def test_missing_file_folder_fifo_and_device_are_refused_before_reading(tmp_path):
    assert "nope.parquet: no such file" in refusal(tmp_path / "nope.parquet")[0]
    assert "is a folder" in refusal(tmp_path)[0]
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)  # opening it for reading would block forever: it must never be opened
    for message in refusal(fifo):
        assert message == f"{fifo}: is a FIFO (named pipe), not a regular file; expected a Search Arena release"
    if Path("/dev/zero").exists():  # an endless file: refused by its kind, not read
        assert "/dev/zero: is a character device" in refusal("/dev/zero")[0]


def test_unknown_suffix_and_size_bound(tmp_path):
    text = tmp_path / "release.csv"
    text.write_text("model_a,model_b\n")
    assert "unsupported file type '.csv'" in refusal(text)[0]
    big = tmp_path / "release.parquet"
    shutil.copy(FIXTURES / "release_small.parquet", big)
    with pytest.raises(DataValidationError, match=r"release\.parquet: is [\d,]+ bytes, more than the 100 bytes"):
        loader.load_battles(big, max_bytes=100)
    with pytest.raises(DataValidationError, match="more than the 100 bytes"):
        validate_release(big, max_bytes=100)


@pytest.mark.parametrize("name", ["release_small.parquet", "release_small.jsonl"])
def test_small_release_loads_with_exact_counts(name):
    tidy, report = loader.load_battles_report(FIXTURES / name)
    assert (report.n_raw, report.n_rows) == (5, 4)
    assert tidy["conv_id"].to_list() == ["c1", "c2", "c3", "c4"]
    assert report.dropped["duplicate conversations (repeated conv_id; first kept)"] == 1
    assert report.flags["no vote (winner is null)"] == 1
    assert report.flags["self-battles (model_a == model_b)"] == 1
    assert report.flags["citation_format_standardized values that are neither style (side b; kept as null)"] == 1
    assert report.flags["citation_format_standardized values that are neither style (side a; kept as null)"] == 0
    assert tidy["citation_format_a"].to_list() == ["standardized", "original", "standardized", "original"]
    assert tidy["citation_format_b"].to_list() == ["original", "original", "standardized", None]
    check = validate_release(FIXTURES / name)
    # the fixture's metadata hold no llm_config: an optional field, reported (SA-TA1's configuration counts skip)
    assert check == ReleaseCheck(str(FIXTURES / name), name.split(".")[1], 5, 5, check.columns, ("llm_config",))
    assert report.absent == ["llm_config"]
    assert {"winner", "system_a_metadata", "messages_b"} <= set(check.columns)


def test_validate_release_names_only_sources_need_no_file():
    assert validate_release("sample:500").format == "sample"
    assert validate_release("hf").format == "hf"
    with pytest.raises(DataValidationError, match="sample:N"):
        validate_release("sample:lots")


def test_validate_release_reads_a_bounded_head(tmp_path):
    # 2,000 lines whose last one is broken: the cheap check reads the first 1,000 only and passes; the loader
    # reads everything and names the line
    first = (FIXTURES / "release_small.jsonl").read_bytes().splitlines()[0]
    body = []
    for k in range(1999):
        row = json.loads(first)
        row["system_a_metadata"]["conv_id"] = f"k{k}"
        body.append(json.dumps(row).encode() + b"\n")
    path = tmp_path / "long.jsonl"
    path.write_bytes(b"".join(body) + b'{"model_a": \n')
    check = validate_release(path)
    assert (check.rows, check.rows_checked) == (None, 1000)
    with pytest.raises(DataValidationError, match=r"long\.jsonl, line 2000, column \d+: not valid JSON"):
        loader.load_battles(path)


def nesting(value: object) -> int:
    """Depth of a parsed JSON value by recursion (an independent reference for small values)."""
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return 1 + max((nesting(v) for v in value), default=0)
    return 0


@settings(max_examples=200, deadline=None)
@given(value=st.recursive(st.none() | st.integers() | st.text(alphabet='[]{}"\\ab', max_size=6),
                          lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text('[]{}"\\x', max_size=4), c,
                                                                               max_size=3), max_leaves=30))
def test_json_depth_matches_the_parsed_nesting(value):
    assert json_depth(json.dumps(value).encode()) == nesting(value)


def test_quote_and_json_depth():
    assert quote("abc") == "'abc'"
    assert quote("y" * 100, 5) == "'yyyyy'… (100 characters)"
    assert quote(b"\xff" * 60, 4).endswith("(60 bytes)")
    assert json_depth(b"1") == 0 and json_depth(b"[]") == 1 and json_depth(b'{"a": [[{}]]}') == 4
    assert json_depth(b'{"a": "[[[[\\"[[", "b": ["\\\\"]}') == 2  # brackets in strings, escaped quotes
    assert json_depth(b"[" * 100_000 + b"]" * 100_000) == 100_000  # no recursion, no parsing


# ------------------------------------------------------------------------------------------ property tests

NAMES = st.sampled_from(["release.jsonl", "release.parquet", "release.ndjson"])
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)
RELEASE_KEYS = ["model_a", "model_b", "winner", "turn", "messages_a", "messages_b", "system_a_metadata",
                "system_b_metadata", "primary_intent", "secondary_intent", "languages", "timestamp"]


def assert_loads_or_names_the_file(path: Path) -> None:
    for run in (lambda: loader.load_battles_report(path), lambda: validate_release(path)):
        try:
            result = run()
        except DataValidationError as err:
            assert str(path) in str(err), str(err)
            assert "\n" not in str(err) and len(str(err)) < 2000
        else:
            frame = result[0] if isinstance(result, tuple) else None
            assert frame is None or isinstance(frame, pl.DataFrame)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=3000), name=NAMES)
def test_arbitrary_bytes_load_or_raise_naming_the_file(tmp_path, data, name):
    path = tmp_path / name
    path.write_bytes(data)
    assert_loads_or_names_the_file(path)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(depth=st.integers(1, 5000), brackets=st.sampled_from([("[", "]"), ('{"k":', "}")]),
       key=st.sampled_from(RELEASE_KEYS + ["unused"]), valid_first=st.booleans())
def test_deep_json_loads_or_raises_naming_the_file(tmp_path, depth, brackets, key, valid_first):
    opening, closing = brackets
    deep = f'{{"{key}": {opening * depth}{"1" if closing == "}" else ""}{closing * depth}}}\n'
    first = (FIXTURES / "release_small.jsonl").read_bytes().splitlines(keepends=True)[0] if valid_first else b""
    path = tmp_path / "deep.jsonl"
    path.write_bytes(first + deep.encode())
    assert_loads_or_names_the_file(path)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.dictionaries(st.sampled_from(RELEASE_KEYS), json_values, max_size=12), min_size=1,
                     max_size=4))
def test_arbitrary_json_objects_load_or_raise_naming_the_file(tmp_path, rows):
    path = tmp_path / "objects.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert_loads_or_names_the_file(path)


def test_every_line_is_checked_before_polars_reads_it(tmp_path, monkeypatch):
    shallow = [json.dumps({"k": [[["[[[[[" * 20]]], "q": 'a\\"[' * 30}) for _ in range(40)]
    deep = '{"x": "\\\\", "y": ' + "[" * 65 + "]" * 65 + "}"
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join([*shallow[:23], deep, *shallow[23:]]) + "\n")
    with pytest.raises(DataValidationError, match=r"mixed\.jsonl, line 24, field 'y': JSON nested deeper than 64"):
        reading.check_json_lines(path, "a test file")
    path.write_text("\n".join(shallow))  # no trailing newline, brackets inside strings only
    assert reading.check_json_lines(path, "a test file") == 40
    monkeypatch.setattr(reading, "MAX_LINE_BYTES", 500)
    path.write_text(shallow[0] + "\n" + "x" * 2000 + "\n")
    with pytest.raises(DataValidationError, match=r"mixed\.jsonl, line 2: longer than 500 bytes"):
        reading.check_json_lines(path, "a test file")
