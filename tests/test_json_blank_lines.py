"""A JSON line is blank only when it holds JSON's whitespace (space, tab, CR, LF). Python's ``str.strip`` also strips
control characters such as ``\\x1c`` (a "file separator"), which JSON does not accept: every JSON-lines reader refuses
such a line naming the file and line, as it refuses any other bad JSON, and skips truly blank lines (hypothesis found
the attribution reader raising a bare ``JSONDecodeError`` on the one-byte file ``b"\\x1c"``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analysis_lib import answer_engine as ae
from analysis_lib import nuggets as ng
from analysis_lib.reading import DataValidationError, blank
from analysis_lib.search_arena.attribution_io import load_attribution
from analysis_lib.search_arena.cross_arena import validate_text_arena
from analysis_lib.search_arena.loader import load_battles

FIXTURES = Path(__file__).parent / "fixtures"
SUPPORT = json.dumps({"sample_id": "a", "source_idx": 1, "core_statement_id": "s", "support": "full"}) + "\n"


def _lines(path: Path) -> bytes:
    """The fixture's non-blank lines, each ending in one newline."""
    return b"".join(line.rstrip(b"\r\n") + b"\n" for line in path.read_bytes().splitlines() if line.strip())


READERS = [
    ("release.jsonl", _lines(FIXTURES / "search_arena" / "release_small.jsonl"), load_battles, DataValidationError),
    ("attribution.jsonl", _lines(FIXTURES / "search_arena" / "attribution_small.jsonl"), load_attribution,
     DataValidationError),
    ("text_arena.jsonl", _lines(FIXTURES / "search_arena" / "text_arena_small.jsonl"), validate_text_arena,
     DataValidationError),
    ("nuggets.jsonl", _lines(FIXTURES / "nuggets" / "valid.jsonl"), ng.load_nugget_records, DataValidationError),
    ("x_support_results.jsonl", SUPPORT.encode(), ae.records.load_support_results, DataValidationError),
]


def test_blank_means_json_whitespace():
    assert blank("") and blank(" \t\r\n") and blank("\n")
    assert not blank("\x1c\n") and not blank("\x0c\n") and not blank("\x85\n")  # FS, form feed, NEL


@pytest.mark.parametrize(("name", "good", "read", "error"), READERS, ids=[r[0] for r in READERS])
def test_a_control_character_line_is_bad_json_named_by_file_and_line(tmp_path, name, good, read, error):
    path = tmp_path / name
    path.write_bytes(good + b"\x1c\n")
    bad_line = len(good.splitlines()) + 1
    with pytest.raises(error, match=rf"{name}, line {bad_line}\b") as err:
        read(path)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(("name", "good", "read", "error"), READERS, ids=[r[0] for r in READERS])
def test_whitespace_lines_are_skipped(tmp_path, name, good, read, error):
    path = tmp_path / name
    path.write_bytes(b" \t\r\n" + good + b"\n  \n")
    read(path)  # no error: the blank lines are not records
