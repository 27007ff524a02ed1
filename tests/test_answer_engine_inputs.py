"""Input validation of the answer-engine package (issue #25): answer records, support results and human labels.

Each refusal is checked on a small hand-made file in ``tests/fixtures/answer_engine/`` (or, for special files and
sizes that cannot be committed, one made in ``tmp_path``): one ``DataValidationError`` line naming the file, the
record or line, the field and what was expected; good files load with exact counts.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analysis_lib import answer_engine as ae
from analysis_lib.answer_engine import input_checks
from analysis_lib.answer_engine import records as ae_records
from analysis_lib.answer_engine.agreement import read_label_rows
from analysis_lib.reading import DataValidationError

FIXTURES = Path(__file__).parent / "fixtures" / "answer_engine"


def fx(name: str) -> Path:
    return FIXTURES / name


def refusal(fn, path, *args) -> str:
    with pytest.raises(DataValidationError) as err:
        fn(path, *args)
    message = str(err.value)
    assert str(path) in message, message
    assert "\n" not in message, message
    return message


# --- answer records ------------------------------------------------------------------------------------------


def test_good_records_load_with_exact_counts():
    records = ae.load_answer_records(fx("answers_two_engines.json"))
    assert [r.id for r in records] == ["y1", "y2", "m1", "m2"]
    assert [r.engine for r in records] == ["YouCom", "YouCom", "MyEngine", "MyEngine"]
    assert [len(r.statements) for r in records] == [3, 3, 3, 3]
    assert [r.confidence for r in records] == [5, 4, 5, 3]
    line = input_checks.validate_answers(fx("answers_two_engines.json"))
    assert "4 answer records from 2 engine(s) (MyEngine, YouCom); 4 with statements and confidence, 0 to judge" in line


@pytest.mark.parametrize(("name", "needles"), [
    ("answers_id_list.json", ["record 2", "field 'id'", "expected a non-empty string or an integer", "[1, 2]"]),
    ("answers_id_nan.json", ["record 2", "field 'id'", "got NaN"]),
    ("answers_bool_sources.json", ["record 2 (id 'y2')", "field 'core_statements[0].supporting_sources'",
                                   "source numbers 1–10", "[True, False]"]),
    ("answers_duplicate_statement.json", ["record 1 (id 'y2')", "field 'core_statements[2].id'", "duplicate of "
                                          "core_statements[0]"]),
    ("answers_empty_list.json", ["no answer records (an empty list)"]),
    ("answers_not_a_list.json", ["expected a JSON list of answer records, got a JSON dict"]),
    ("answers_bad_utf8.json", ["line 2", "not valid UTF-8", "byte 18 of the line"]),
    ("answers_truncated.json", ["not valid JSON", "expected a JSON list of answer records"]),
])
def test_bad_records_are_refused_naming_file_record_and_field(name, needles):
    message = refusal(ae.load_answer_records, fx(name))
    for needle in needles:
        assert needle in message, (needle, message)
    assert refusal(input_checks.validate_answers, fx(name)) == message


def test_records_refuse_bools_and_lists_where_numbers_or_ids_are_expected():
    base = json.loads(fx("answers_two_engines.json").read_text())[0]
    bad_cites = json.loads(json.dumps(base))
    bad_cites["core_statements"][0]["citations"] = [True]
    with pytest.raises(DataValidationError, match=r"core_statements\[0\]\.citations"):
        ae.parse_records([bad_cites], "x.json")
    bad_index = json.loads(json.dumps(base))
    bad_index["core_statements"][0]["supporting_sources"] = [11]
    with pytest.raises(DataValidationError, match="source numbers 1–10, got \\[11\\]"):
        ae.parse_records([bad_index], "x.json")
    with pytest.raises(DataValidationError, match="field 'answer_engine': expected an engine name"):
        ae.parse_records([{**base, "answer_engine": " "}], "x.json")
    with pytest.raises(DataValidationError, match="x.json: no answer records"):
        ae.parse_records([], "x.json")
    # integer ids are the released layout's alternative to strings, and stay what they were
    assert ae.parse_records([{**base, "id": 7}], "x.json")[0].id == "7"


def test_a_huge_bad_value_is_quoted_by_a_short_prefix(tmp_path):
    base = json.loads(fx("answers_two_engines.json").read_text())[0]
    path = tmp_path / "big.json"
    path.write_text(json.dumps([{**base, "confidence_score": "x" * 10_000_000}]))
    message = refusal(ae.load_answer_records, path)
    assert len(message) < 400 and "10,000,000 characters" in message


def test_deep_and_long_json_are_refused_not_crashed(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    assert "nested deeper than 64 levels" in refusal(ae.load_answer_records, deep)
    long_int = tmp_path / "long.json"
    long_int.write_text("[" + "9" * 5000 + "]")
    assert "expected a whole number within 64 bits" in refusal(ae.load_answer_records, long_int)
    # a nested value at a depth Python can read is refused by type, its quote cut at two levels
    base = json.loads(fx("answers_two_engines.json").read_text())[0]
    nested = tmp_path / "nested.json"
    nested.write_text(json.dumps([{**base, "Question": json.loads("[" * 500 + "]" * 500)}]))
    assert "record 1, field 'Question': JSON nested deeper than 64 levels" in refusal(ae.load_answer_records, nested)


def test_citation_numbers_too_long_for_int_do_not_stop_the_reader():
    assert ae_records.parse_citations("x [" + "9" * 5000 + "]") == (10**18,)
    assert ae_records.text_citations("x [1, " + "9" * 5000 + "]") == (1, 10**18)


# --- special files and limits ----------------------------------------------------------------------------------


def test_folders_fifos_devices_and_dangling_links_are_refused(tmp_path):
    assert "is a folder" in refusal(ae.load_answer_records, tmp_path)
    assert "no such file" in refusal(ae.load_answer_records, tmp_path / "absent.json")
    link = tmp_path / "dangling.json"
    link.symlink_to(tmp_path / "nowhere.json")
    assert "no such file" in refusal(ae.load_answer_records, link)
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    assert "not a regular file" in refusal(ae.load_answer_records, fifo)  # refused before open: no hang
    assert "not a regular file" in refusal(ae.load_answer_records, Path("/dev/zero"))
    assert "not a regular file" in refusal(read_label_rows, Path("/dev/zero"))
    assert "not a regular file" in refusal(ae.records.load_support_results, fifo)


def test_files_over_the_limit_are_refused_before_reading(tmp_path):
    path = tmp_path / "a.json"
    shutil.copy(fx("answers_two_engines.json"), path)
    size = path.stat().st_size
    assert len(ae.load_answer_records(path, limit=size)) == 4
    assert f"is {size:,} bytes, more than the {size - 1:,} bytes" in refusal(ae.load_answer_records, path, size - 1)


def test_empty_and_blank_files_are_refused(tmp_path):
    for name, fn in [("a.json", ae.load_answer_records), ("s.jsonl", ae.records.load_support_results),
                     ("l.csv", ae.load_answer_labels)]:
        path = tmp_path / name
        path.write_text(" \n\n")
        assert "is empty" in refusal(fn, path)
    assert "is empty" in refusal(ae.load_answer_labels, fx("labels_empty.csv"))


# --- support results -------------------------------------------------------------------------------------------


def test_support_results_load_and_count_superseded_lines():
    sup = ae.records.load_support_results(fx("support_results.jsonl"))
    assert sup.height == 2 and int(sup["n_lines"].sum()) == 3
    first = sup.filter(sup["verif_id"] == "y1_1_s1").row(0, named=True)
    assert first["support"] == "partial" and first["n_lines"] == 2  # the later line wins, the earlier is counted
    assert input_checks.validate_support_results(fx("support_results.jsonl")) == \
        "support_results.jsonl: 3 support judgements (2 pairs)"


@pytest.mark.parametrize(("name", "needle"), [
    ("support_bad_line.jsonl", "line 2: expected a JSON object, got a JSON list"),
    ("support_bool_index.jsonl", "line 1, field 'source_idx': expected an integer 1–10, got True"),
])
def test_bad_support_lines_are_refused(name, needle):
    assert needle in refusal(ae.records.load_support_results, fx(name))


def test_support_json_errors_name_the_file_line(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text(fx("support_results.jsonl").read_text() + '{"sample_id": \n')
    assert "s.jsonl, line 4, column 15: not valid JSON" in refusal(ae.records.load_support_results, path)


# --- human labels ----------------------------------------------------------------------------------------------


def test_good_labels_load_with_exact_counts():
    rows = read_label_rows(fx("labels.csv"))
    assert len(rows) == 9 and rows[4] == ("confidence", "m2", 3.0) and rows[7] == ("support", "y1_1_s3", 0.0)
    labels = ae.load_answer_labels(fx("labels.csv"))
    assert labels.height == 8 and labels.filter(labels["item_id"] == "y1")["human"].item() == 4.5
    assert input_checks.validate_labels(fx("labels.csv")) == "labels.csv: 9 label rows (confidence 5, support 4)"


@pytest.mark.parametrize(("name", "needle"), [
    ("labels_header_only.csv", "a header and no label rows"),
    ("labels_ragged.csv", "line 3: expected 3 fields (as the header), got 4"),
    ("labels_missing_column.csv", "line 1 (header): missing column(s) ['item_id']"),
])
def test_bad_labels_are_refused_naming_file_and_line(name, needle):
    assert needle in refusal(ae.load_answer_labels, fx(name))
    assert needle in refusal(input_checks.validate_labels, fx(name))


def test_label_values_outside_their_scale_are_refused(tmp_path):
    path = tmp_path / "l.csv"
    path.write_text("task,item_id,human\nsupport,a_1_s,nan\n")
    assert "line 2, field 'human': expected one of ['full', 'partial', 'none'] or a number in [0, 1]" in \
        refusal(ae.load_answer_labels, path)
    path.write_text('task,item_id,human\nconfidence,a,"' + "7" * 200_000 + '"\n')
    assert "unreadable CSV" in refusal(ae.load_answer_labels, path)  # the csv module's field limit


# --- the loader writes under the cache only -------------------------------------------------------------------------


def test_loader_reads_the_users_support_file_and_writes_nothing_beside_the_input(tmp_path):
    folder = tmp_path / "user"
    folder.mkdir()
    shutil.copy(fx("answers_two_engines.json"), folder / "mine.json")
    shutil.copy(fx("support_results.jsonl"), folder / "mine_support_results.jsonl")
    data = ae.load_answers(folder / "mine.json", cache_dir=tmp_path / "cache")
    assert data.support is not None and data.support.height == 2 and data.judging is None
    assert sorted(p.name for p in folder.iterdir()) == ["mine.json", "mine_support_results.jsonl"]


def test_unjudged_records_without_an_endpoint_stay_unjudged_and_nothing_is_written(tmp_path, monkeypatch):
    for var in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "ANALYSIS_LLM_MODEL"):
        monkeypatch.delenv(var, raising=False)
    folder = tmp_path / "user"
    folder.mkdir()
    shutil.copy(fx("answers_unjudged.json"), folder / "mine.json")
    (folder / "mine_support_results.jsonl").symlink_to(tmp_path / "elsewhere.jsonl")  # dangling: ignored
    data = ae.load_answers(folder / "mine.json", cache_dir=tmp_path / "cache")
    assert data.converted.meta.height == 0 and data.converted.excluded.height == 2
    assert data.judging is not None and data.judging.not_run > 0 and "no LLM endpoint" in data.judging.not_run_reason
    assert not (tmp_path / "elsewhere.jsonl").exists()
    assert sorted(p.name for p in folder.iterdir()) == ["mine.json", "mine_support_results.jsonl"]
    assert not (tmp_path / "cache" / "answer_engine").exists()  # nothing judged, nothing written


def test_judged_support_goes_under_the_cache_keyed_by_content(tmp_path):
    a = ae.judged_support_path("[1]", "", "gpt-4o", tmp_path)
    assert a.parent == tmp_path / "answer_engine" and a.name.startswith("support-")
    assert a != ae.judged_support_path("[2]", "", "gpt-4o", tmp_path)
    assert a != ae.judged_support_path("[1]", "", "other-model", tmp_path)
    assert a == ae.judged_support_path("[1]", "", "gpt-4o", tmp_path)


# --- property tests: arbitrary bytes and deep JSON ----------------------------------------------------------------

JSON_SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20)
JSON_VALUES = st.recursive(JSON_SCALARS, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=20)
READERS = [ae.load_answer_records, ae.records.load_support_results, ae.load_answer_labels]


def _loads_or_refuses(fn, path: Path) -> None:
    try:
        fn(path)
    except DataValidationError as err:
        assert str(path) in str(err)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=400))
def test_arbitrary_bytes_load_or_raise_the_package_error(tmp_path, data):
    path = tmp_path / "input"
    path.write_bytes(data)
    for fn in READERS:
        _loads_or_refuses(fn, path)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=JSON_VALUES, depth=st.integers(0, 200_000), opener=st.sampled_from(["[", '{"a": ']))
def test_json_of_any_shape_and_depth_loads_or_raises_the_package_error(tmp_path, value, depth, opener):
    closer = "]" if opener == "[" else "}"
    path = tmp_path / "input"
    path.write_text(opener * depth + json.dumps(value) + closer * depth)
    for fn in READERS:
        _loads_or_refuses(fn, path)
    path.write_text("\n".join([json.dumps(value)] * 3))  # the same value as JSONL lines
    _loads_or_refuses(ae.records.load_support_results, path)
