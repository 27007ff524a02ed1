"""``Recorder.record``: one call records an analysis ID by reading each paper-values row's ``result`` path from the
library's result (fields, frame rows, templates, factors, notes with placeholders, not-run reasons)."""

from __future__ import annotations

import csv
from dataclasses import dataclass

import polars as pl
import pytest

from bookbuild import fieldpath, paper_values
from bookbuild.recorder import Recorder

HEADER = ("analysis_id", "quantity", "paper", "tol", "bound", "source", "note", "discrepancy", "result", "data")


@dataclass(frozen=True)
class Traffic:
    mean_per_day: float
    n_days: int
    share_mobile: float
    board: pl.DataFrame
    left_out: int = 0
    peak: float | None = None
    reason: str = ""


def _values(tmp_path, rows):
    path = tmp_path / "xx.csv"
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(HEADER)
        for r in rows:
            w.writerow([*r, *[""] * (len(HEADER) - len(r))])
    return paper_values.read_table(path)


ROWS = [
    ("XX-1", "mean per day", "1000", "0.1", "", "P §1", "over {n_days} days", "", "mean_per_day"),
    ("XX-1", "mobile (%)", "40", "", "", "P §1", "", "", "share_mobile * 100"),
    ("XX-1", "alpha rating", "1010", "5", "", "P T1", "", "", "board[model=alpha].rating"),
    ("XX-1", "{model} rating", "", "", "", "", "{left_out} left out; {n} battles", "", "board[model=*].rating"),
    ("XX-1", "peak", "7", "", "", "P §1", "", "", "peak"),
    ("XX-1", "gamma rating", "990", "", "", "P T1", "", "", "board[model=gamma].rating"),
    ("XX-2", "published days", "30", "", "", "P §2", "", "", "n_days", "published"),
]


def _traffic(**kw):
    board = pl.DataFrame({"model": ["alpha", "beta", "delta"], "rating": [1012.0, 1001.0, 980.0], "n": [5, 6, 7]})
    return Traffic(**{"mean_per_day": 1050.0, "n_days": 52, "share_mobile": 0.4, "board": board, "left_out": 3,
                      "reason": "the release has no peak", **kw})


def test_record_reads_every_row_of_an_id_from_its_result(tmp_path):
    rec = Recorder(tmp_path, "xx", data="real", values=_values(tmp_path, ROWS))
    rec.record("XX-1", _traffic(), note="every row")
    got = {r.quantity: r for r in rec.results}
    assert list(got) == ["mean per day", "mobile (%)", "alpha rating", "beta rating", "delta rating", "peak",
                         "gamma rating"]
    assert got["mean per day"].ours == 1050.0 and got["mean per day"].note == "over 52 days; every row"
    assert got["mobile (%)"].ours == pytest.approx(40.0) and got["mobile (%)"].status == "match"
    assert got["alpha rating"].ours == 1012.0 and got["alpha rating"].paper == 1010
    # the template gives the models without a row of their own, its note formatted from the model's record
    assert got["beta rating"].paper is None and got["beta rating"].note == "3 left out; 6 battles; every row"
    assert "alpha rating" not in [q for q in got if got[q].note.startswith("3 left")]
    # None, and a selection with no row: not run, with the reason the result gives or the data's
    assert got["peak"].status == "not run" and got["peak"].reason == "the release has no peak"
    assert got["gamma rating"].status == "not run" and "model gamma" in got["gamma rating"].reason


def test_record_takes_the_rows_data_kind_and_a_reason_for_no_result(tmp_path):
    rec = Recorder(tmp_path, "xx", data="simulated", values=_values(tmp_path, ROWS))
    rec.record("XX-2", _traffic())
    assert rec.results[-1].data == "published" and rec.results[-1].status == "differs"
    rec.record("XX-1", None, reason="no endpoint")
    assert {r.status for r in rec.results if r.analysis_id == "XX-1"} == {"not run"}
    with pytest.raises(ValueError, match="no reason"):
        rec.record("XX-1", None)


def test_record_reads_planted_values_with_the_same_paths(tmp_path):
    rec = Recorder(tmp_path, "xx", data="simulated", values=_values(tmp_path, ROWS))
    truth = _traffic(mean_per_day=1000.0)
    rec.record("XX-1", _traffic(), planted=truth)
    got = {r.quantity: r for r in rec.results}
    assert got["mean per day"].planted == 1000.0 and got["beta rating"].planted == 1001.0


@pytest.mark.parametrize("path, message", [
    ("no_such_field", "has no field 'no_such_field'"),
    ("board[colour=red].rating", "no column 'colour'"),
    ("board.rating", "frame of 3 rows"),
    ("board[model=alpha", "cannot read"),
])
def test_a_path_the_result_does_not_have_is_an_error_naming_it(tmp_path, path, message):
    rows = [("XX-3", "q", "", "", "", "", "", "", path)]
    rec = Recorder(tmp_path, "xx", values=_values(tmp_path, rows))
    with pytest.raises(fieldpath.PathError, match=message):
        rec.record("XX-3", _traffic())


def test_an_id_with_a_row_that_names_no_result_is_refused(tmp_path):
    rec = Recorder(tmp_path, "xx", values=_values(tmp_path, [("XX-4", "q", "1")]))
    with pytest.raises(ValueError, match="without a result field"):
        rec.record("XX-4", _traffic())


def test_a_number_that_did_not_run_keeps_the_parts_of_its_note_it_can_fill(tmp_path):
    rows = [("XX-5", "peak", "", "", "", "", "over {n_days} days; peak on {peak_day}", "", "peak")]
    rec = Recorder(tmp_path, "xx", data="real", values=_values(tmp_path, rows))
    rec.record("XX-5", _traffic())
    (got,) = rec.results
    assert got.status == "not run" and got.note.startswith("over 52 days; ") and "{" not in got.note


def test_planted_values_may_lack_fields_of_the_result(tmp_path):
    rec = Recorder(tmp_path, "xx", data="simulated", values=_values(tmp_path, ROWS))
    rec.record("XX-1", _traffic(), planted={"board": _traffic().board})  # no mean_per_day planted
    got = {r.quantity: r for r in rec.results}
    assert got["mean per day"].planted is None and got["beta rating"].planted == 1001.0
