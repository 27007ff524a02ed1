"""The status rule and the recorder's persistence."""

from __future__ import annotations

import json

import numpy as np
import pytest

from analysis_lib.report import Recorder, compare


@pytest.mark.parametrize(
    ("ours", "paper", "data", "tol", "bound", "expected"),
    [
        (16.32, 16.3, "real", 0.05, None, "match"),
        (16.40, 16.3, "real", 0.05, None, "differs"),
        (16.40, 16.3, "simulated", 0.05, None, "simulated"),
        (None, 16.3, "real", 0.05, None, "not run"),
        (float("nan"), 16.3, "real", 0.05, None, "not run"),
        (3.0, None, "real", None, None, "computed"),
        (12.0, 11.0, "real", 0.0, "lower", "match"),
        (10.0, 11.0, "real", 0.0, "lower", "differs"),
        (0.004, 0.01, "published", 0.0, "upper", "match"),
        ("a", "a", "real", None, None, "match"),
    ],
)
def test_compare(ours, paper, data, tol, bound, expected):
    assert compare(ours, paper, data, tol, bound) == expected


def test_recorder_persists_after_each_call_and_coerces_numpy(tmp_path, capsys):
    rec = Recorder(tmp_path, "01_x", data="real")
    rec.number("SA-T1", "count", np.int64(4326), 4326, tol=0)
    rec.number("SA-T1", "share", np.float32(0.5), None)
    rec.number("SA-T1", "count", 4325, 4326, tol=0)  # replaces the earlier value of the same quantity
    saved = json.loads((tmp_path / "01_x.json").read_text())["results"]
    assert [(r["quantity"], r["ours"], r["status"]) for r in saved] == [("share", 0.5, "computed"), ("count", 4325.0, "differs")]
    assert "SA-T1 count: 4325 (paper: 4326) [differs]" in capsys.readouterr().out
    with pytest.raises(TypeError, match="numbers or strings"):
        rec.number("SA-T1", "bad", [1, 2])
