"""The paper-values tables (bookbuild/resources/paper_values/*.csv): they parse, their keys are unique and
name catalogue IDs, every row names the result it compares with, and the chapters record each ID with one call,
``rec.record(id, result)``, that reads those rows (never a quantity typed in a notebook).

That every row of a built chapter is recorded needs a whole build: tests/test_book_claims.py checks it against the
results of the book the test run builds.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from bookbuild import catalogue, fieldpath, paper_values

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))
ID = re.compile(r"^[A-Z]{2,3}(-[A-Za-z0-9]+)?$")
FILES = {"sa": "SA", "ng": "NG", "dr": "DR", "ae": "AE"}


def _calls(notebook: Path):
    """(cell index, line, method, ast.Call) of every ``<x>.record(...)`` / ``.number(...)`` / ``.not_run(...)`` call
    whose first argument is an analysis-ID string, in the notebook's code cells (IPython magics skipped)."""
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    for index, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        lines = ["" if ln.lstrip().startswith(("%", "!")) else ln for ln in source.splitlines()]
        try:
            tree = ast.parse("\n".join(lines))
        except SyntaxError as exc:
            pytest.fail(f"{notebook.name}, cell {index}: not valid Python ({exc})")
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("record", "number", "not_run")
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
                and ID.match(node.args[0].value)
            ):
                yield index, node.lineno, node.func.attr, node


def test_tables_parse_with_the_expected_columns():
    files = sorted(paper_values.DIRECTORY.glob("*.csv"))
    assert {f.stem for f in files} <= set(FILES), f"unexpected paper-values files: {[f.name for f in files]}"
    for path in files:
        header = path.read_text(encoding="utf-8").splitlines()[0].split(",")
        assert tuple(header) == paper_values.COLUMNS, path.name
        paper_values.read_table(path)  # raises naming file and line on a malformed row or a duplicate
    paper_values.table.cache_clear()
    paper_values.table()  # raises on a key defined in two files


def test_duplicate_rows_are_refused(tmp_path):
    path = tmp_path / "sa.csv"
    path.write_text(",".join(paper_values.COLUMNS) + "\nSA-D5,rating,1,,,,\nSA-D5,rating,2,,,,\n")
    with pytest.raises(ValueError, match="line 3: duplicate row for SA-D5"):
        paper_values.read_table(path)


def test_rows_name_catalogue_ids_of_their_paper():
    ids = set(catalogue.read()["analysis_id"])
    wrong = []
    for (aid, quantity), v in paper_values.table().items():
        if aid in catalogue.PROJECT_CHECKS:
            continue
        if aid not in ids:
            wrong.append(f"{v.file}, line {v.line}: {aid} is not in the catalogue")
        elif FILES.get(Path(v.file).stem) != aid.split("-")[0]:
            wrong.append(f"{v.file}, line {v.line}: {aid} belongs in {aid.split('-')[0].lower()}.csv")
    assert wrong == []


def test_rows_are_consistent():
    """A tolerance or a bound needs a numeric paper value; every paper value names its source."""
    bad = []
    for (aid, quantity), v in paper_values.table().items():
        where = f"{Path(v.file).name}, line {v.line} ({aid} / {quantity})"
        if (v.tol is not None or v.bound is not None) and not isinstance(v.paper, float):
            bad.append(f"{where}: tol/bound given but the paper value {v.paper!r} is not a number")
        if v.tol is not None and v.tol < 0:
            bad.append(f"{where}: negative tolerance")
        if v.paper is not None and not v.source:
            bad.append(f"{where}: a paper value without its source")
    assert bad == []


def test_chapters_record_by_path_only():
    """A chapter records an ID with ``rec.record(id, result)``; no notebook types a quantity (``rec.number(id,
    quantity, ...)`` / ``rec.not_run(id, quantity, ...)``), so grepping a row's ID finds the one line recording it."""
    typed = [f"{nb.name}, cell {i}, line {line}: {method}" for nb in NOTEBOOKS for i, line, method, _ in _calls(nb)
             if method != "record"]
    assert typed == []


def test_every_recording_id_has_rows():
    """An ID a chapter records has rows, and every ID with rows is recorded by some chapter."""
    with_rows = {aid for aid, _ in paper_values.table()}
    recorded = {call.args[0].value: f"{nb.name}, cell {i}" for nb in NOTEBOOKS for i, _, _, call in _calls(nb)}
    missing = sorted(f"{aid} ({where})" for aid, where in recorded.items() if aid not in with_rows)
    assert missing == []
    assert sorted(with_rows - set(recorded)) == []


def test_every_row_names_the_result_it_compares_with_as_a_path():
    """One record per number: each row names the field of a library result it reads (``bookbuild.fieldpath``), a
    template's quantity names its selected columns, and the data kind a row fixes is a known one."""
    for (aid, quantity), row in paper_values.table().items():
        assert row.result, f"{row.file}, line {row.line}: {aid} / {quantity!r} names no result"
        path = fieldpath.parse(row.result)  # raises naming the cell when malformed
        for column in path.template:
            assert "{" + column + "}" in quantity, f"{row.file}, line {row.line}: template {column!r} not in quantity"
        assert not row.data or row.data in paper_values.ROW_DATA_KINDS
