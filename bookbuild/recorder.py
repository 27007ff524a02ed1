"""Record every number a notebook computes beside the paper's value, for the reproduction-status page.

Each chapter notebook creates one :class:`Recorder` and calls :meth:`Recorder.number` for each number it
computes. The paper's values are data, not notebook code (:mod:`analysis_lib.paper_values`: one row per recorded
quantity, keyed by ``(analysis_id, quantity)``); :meth:`Recorder.number` looks the row up, so a notebook passes only
its own number. The recorder keeps a table of the notebook's results and rewrites ``<results_dir>/<notebook>.json``
after every call, so an interrupted run keeps what it finished; :meth:`Recorder.section` renders one analysis ID's
numbers beside the paper's as an HTML table for the page.

Status of one result:

- ``match``     computed on real or published data and within ``tol`` of the paper's value;
- ``differs``   computed on real or published data and outside ``tol`` (the notebook must say why);
- ``simulated`` computed on the project's simulator: the paper's value is shown for orientation only;
- ``computed``  no paper value to compare with (a new number, or a property of the method);
- ``not run``   needs an LLM endpoint or data that this build did not have; no number is shown.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import polars as pl

from analysis_lib import paper_values
from analysis_lib.paper_values import Bound, PaperValue
from bookbuild.tables import HTMLTable, format_value, html_table

DataKind = Literal["real", "published", "simulated", "llm-cache", "none"]
Status = Literal["match", "differs", "simulated", "computed", "not run"]

@dataclass(frozen=True)
class Result:
    """One reproduced number."""

    analysis_id: str
    quantity: str
    ours: float | str | None
    paper: float | str | None
    data: DataKind
    status: Status
    tol: float | None = None
    source: str = ""
    note: str = ""
    planted: float | str | None = None
    bound: Bound | None = None


def compare(
    ours: float | str | None,
    paper: float | str | None,
    data: DataKind,
    tol: float | None,
    bound: Bound | None = None,
) -> Status:
    """The status rule stated in the module docstring.

    ``bound="lower"`` reads the paper's value as a lower bound ("more than 11%"): ``ours >= paper - tol``
    matches; ``"upper"`` likewise for "less than".
    """
    if ours is None or (isinstance(ours, float) and math.isnan(ours)):
        return "not run"
    if data == "simulated":
        return "simulated"
    if paper is None:
        return "computed"
    if isinstance(ours, str) or isinstance(paper, str):
        return "match" if str(ours) == str(paper) else "differs"
    tol = 0.0 if tol is None else tol
    x, p = float(ours), float(paper)
    if bound == "lower":
        return "match" if x >= p - tol - 1e-12 else "differs"
    if bound == "upper":
        return "match" if x <= p + tol + 1e-12 else "differs"
    return "match" if abs(x - p) <= tol + 1e-12 else "differs"


@dataclass
class Recorder:
    """Collects the results of one notebook and persists them as JSON after every call.

    Parameters
    ----------
    results_dir:
        Directory shared by all notebooks of one build (the runner passes it as a parameter).
    notebook:
        Stem of the notebook, e.g. ``"01_dataset"``; names the JSON file.
    data:
        Default data kind for this notebook's numbers (``"simulated"`` on the offline default).
    """

    results_dir: str | Path
    notebook: str
    data: DataKind = "real"
    values: Mapping[tuple[str, str], PaperValue] | None = None
    results: list[Result] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.results_dir = Path(self.results_dir)
        self.results_dir.mkdir(parents=True, exist_ok=True)
        self._save()

    @property
    def path(self) -> Path:
        return Path(self.results_dir) / f"{self.notebook}.json"

    def paper_value(self, analysis_id: str, quantity: str) -> PaperValue:
        """The paper-values row of one quantity: from ``values`` when the recorder was given a table (tests,
        fixtures), else :func:`analysis_lib.paper_values.lookup` (``KeyError`` naming the file to edit)."""
        if self.values is None:
            return paper_values.lookup(analysis_id, quantity)
        try:
            return self.values[(analysis_id, quantity)]
        except KeyError:
            raise KeyError(f"no paper value for {analysis_id} / {quantity!r} in this recorder's table") from None

    def number(
        self,
        analysis_id: str,
        quantity: str,
        ours: Any,
        *,
        note: str = "",
        data: DataKind | None = None,
        planted: Any = None,
    ) -> None:
        """Record one number and persist.

        The paper's value, tolerance, bound and source come from the paper-values table (:meth:`paper_value`);
        ``note`` adds to the table's note. ``planted`` is the value the simulator planted (shown beside the
        recovered one). Prints nothing: show a section's numbers with :meth:`section`.
        """
        ours, planted = _plain(ours), _plain(planted)
        kind = data or self.data
        row = self.paper_value(analysis_id, quantity)
        result = Result(
            analysis_id=analysis_id,
            quantity=quantity,
            ours=ours,
            paper=row.paper,
            data=kind,
            status=compare(ours, row.paper, kind, row.tol, row.bound),
            tol=row.tol,
            source=row.source,
            note="; ".join(n for n in (row.note, note) if n),
            planted=planted,
            bound=row.bound if row.paper is not None else None,
        )
        self.results = [r for r in self.results if (r.analysis_id, r.quantity) != (analysis_id, quantity)]
        self.results.append(result)
        self._save()

    def not_run(self, analysis_id: str, quantity: str, *, reason: str) -> None:
        """Record that an analysis did not run in this build (no endpoint, no data); shows no number."""
        self.number(analysis_id, quantity, None, note=reason, data="none")

    def section(self, analysis_id: str, digits: int = 3, keep: Callable[[str], bool] | None = None) -> HTMLTable:
        """This notebook's numbers for one analysis ID beside the paper's, as an HTML table for the page:
        quantity, this build, the paper (with its source), planted (when any), status and note; ``keep`` (a
        predicate on the quantity) shows part of them, for an ID whose numbers span several sections."""
        rows = [r for r in self.results if r.analysis_id == analysis_id and (keep is None or keep(r.quantity))]
        if not rows:
            raise KeyError(f"{self.notebook}: nothing recorded for {analysis_id} yet")
        return section_table(rows, digits)

    def table(self) -> pl.DataFrame:
        """This notebook's results as a frame (for display at the end of a chapter)."""
        return results_frame(self.results)

    def _save(self) -> None:
        payload = {"notebook": self.notebook, "results": [asdict(r) for r in self.results]}
        tmp = self.path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(payload, indent=1, ensure_ascii=False))
        tmp.replace(self.path)


def _plain(v: object) -> float | str | None:
    """Numbers (Python or numpy, bools excluded) as float, strings as str, so results serialise as JSON."""
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, (int, float, np.integer, np.floating)):
        return float(v)
    raise TypeError(f"recorded values must be numbers or strings, got {type(v).__name__}: {v!r}")


def format_paper(r: Result | PaperValue, digits: int = 3) -> str:
    """The paper's value as the paper states it: ``> x`` for a lower bound ("more than x", "positive" for x = 0),
    ``< x`` for an upper bound ("less than x"), else the value (:func:`format_value`)."""
    text = format_value(r.paper, digits)
    if r.paper is None or r.bound is None:
        return text
    return ("> " if r.bound == "lower" else "< ") + text


def results_frame(results: list[Result]) -> pl.DataFrame:
    """A list of results as a frame with string-typed value columns (numbers and labels mix)."""
    schema = {
        "analysis_id": pl.String,
        "quantity": pl.String,
        "ours": pl.String,
        "paper": pl.String,
        "data": pl.String,
        "status": pl.String,
        "source": pl.String,
        "note": pl.String,
    }
    rows = [
        {
            "analysis_id": r.analysis_id,
            "quantity": r.quantity,
            "ours": None if r.ours is None else format_value(r.ours, 4),
            "paper": None if r.paper is None else format_paper(r, 4),
            "data": r.data,
            "status": r.status,
            "source": r.source,
            "note": r.note,
        }
        for r in results
    ]
    return pl.DataFrame(rows, schema=schema)


# ---------------------------------------------------------------------------------------- section tables

STATUS_STYLE = {
    "match": ("#1b7837", "#e7f4e4"),
    "differs": ("#b35806", "#fdebd3"),
    "simulated": ("#5e3c99", "#eee8f6"),
    "computed": ("#2166ac", "#e3eef8"),
    "not run": ("#555555", "#eeeeee"),
}


def _status_badge(status: str) -> str:
    fg, bg = STATUS_STYLE.get(status, ("#333", "#fff"))
    return (f'<span style="color:{fg};background:{bg};border-radius:3px;padding:1px 6px;white-space:nowrap;'
            f'font-weight:600">{html.escape(status)}</span>')


def section_table(results: list[Result], digits: int = 3) -> HTMLTable:
    """The our-number-beside-the-paper's table of one section (see :meth:`Recorder.section`)."""
    with_planted = any(r.planted is not None for r in results)
    rows = []
    for r in results:
        paper = format_paper(r, digits) if r.paper is not None else "no paper number"
        row = {
            "quantity": html.escape(r.quantity),
            "this build": html.escape(format_value(r.ours, digits)),
            "paper": html.escape(paper) + (f'<br><small style="color:#666">{html.escape(r.source)}</small>'
                                           if r.source and r.paper is not None else ""),
        }
        if with_planted:
            row["planted"] = html.escape(format_value(r.planted, digits)) if r.planted is not None else "—"
        row["status"] = _status_badge(r.status)
        row["note"] = html.escape(r.note)
        rows.append(row)
    frame = pl.DataFrame(rows, schema={k: pl.String for k in rows[0]})
    return html_table(frame, raw_html_columns=tuple(frame.columns), max_height_px=None)
