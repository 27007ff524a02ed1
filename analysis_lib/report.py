"""Record every number a notebook computes beside the paper's value, for the reproduction-status page.

Each chapter notebook creates one :class:`Recorder` and calls :meth:`Recorder.number` for each number it
computes. The paper's values are data, not notebook code: ``resources/paper_values/<paper>.csv`` (one file per
paper: ``sa``, ``ng``, ``dr``, ``ae``) holds one row per recorded quantity, keyed by ``(analysis_id, quantity)``,
with the paper's value (empty when the paper gives none), the tolerance, an optional bound, the source and a note.
:func:`paper_values` reads them; :meth:`Recorder.number` looks the row up, so a notebook passes only its own
number. The recorder keeps a table of the notebook's results and rewrites ``<results_dir>/<notebook>.json`` after
every call, so an interrupted run keeps what it finished; :meth:`Recorder.section` renders one analysis ID's
numbers beside the paper's as an HTML table for the page.

Status of one result:

- ``match``     computed on real or published data and within ``tol`` of the paper's value;
- ``differs``   computed on real or published data and outside ``tol`` (the notebook must say why);
- ``simulated`` computed on the project's simulator: the paper's value is shown for orientation only;
- ``computed``  no paper value to compare with (a new number, or a property of the method);
- ``not run``   needs an LLM endpoint or data that this build did not have; no number is shown.
"""

from __future__ import annotations

import csv
import functools
import html
import json
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import polars as pl

DataKind = Literal["real", "published", "simulated", "llm-cache", "none"]
Status = Literal["match", "differs", "simulated", "computed", "not run"]
Bound = Literal["lower", "upper"]

PAPER_VALUES_DIR = Path(__file__).resolve().parent / "resources" / "paper_values"
PAPER_VALUE_COLUMNS = ("analysis_id", "quantity", "paper", "tol", "bound", "source", "note")


@dataclass(frozen=True)
class PaperValue:
    """One row of a paper-values table: what the paper reports for one recorded quantity (``paper`` is None when
    the paper gives no number for it), and where the row lives (``file``, ``line``) for error messages."""

    analysis_id: str
    quantity: str
    paper: float | str | None
    tol: float | None
    bound: Bound | None
    source: str
    note: str
    file: str
    line: int


def _cell_value(text: str) -> float | str | None:
    text = text.strip()
    if not text:
        return None
    try:
        return float(text)
    except ValueError:
        return text


def read_paper_values(path: str | Path) -> dict[tuple[str, str], PaperValue]:
    """Read one paper-values CSV (columns :data:`PAPER_VALUE_COLUMNS`), validating every row.

    Raises ``ValueError`` naming the file, line and column for a missing column, an empty key, a non-numeric
    tolerance, an unknown bound or a duplicated ``(analysis_id, quantity)``.
    """
    path = Path(path)
    out: dict[tuple[str, str], PaperValue] = {}
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in PAPER_VALUE_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{path}: missing column(s) {missing}; expected {list(PAPER_VALUE_COLUMNS)}")
        for line, row in enumerate(reader, start=2):
            aid, quantity = (row["analysis_id"] or "").strip(), (row["quantity"] or "").strip()
            if not aid or not quantity:
                raise ValueError(f"{path}, line {line}: analysis_id and quantity must both be non-empty")
            tol_text = (row["tol"] or "").strip()
            try:
                tol = float(tol_text) if tol_text else None
            except ValueError:
                raise ValueError(f"{path}, line {line}, column tol: expected a number, got {tol_text!r}") from None
            bound = (row["bound"] or "").strip() or None
            if bound not in (None, "lower", "upper"):
                raise ValueError(f"{path}, line {line}, column bound: expected '', 'lower' or 'upper', got {bound!r}")
            key = (aid, quantity)
            if key in out:
                raise ValueError(f"{path}, line {line}: duplicate row for {aid} / {quantity!r} "
                                 f"(first at line {out[key].line})")
            out[key] = PaperValue(aid, quantity, _cell_value(row["paper"] or ""), tol, bound,  # type: ignore[arg-type]
                                  (row["source"] or "").strip(), (row["note"] or "").strip(), str(path), line)
    return out


@functools.cache
def paper_values(directory: str | Path | None = None) -> Mapping[tuple[str, str], PaperValue]:
    """Every paper value of the compendium: the union of ``<directory>/*.csv`` (default: the library's
    ``resources/paper_values``). A key defined in two files is an error."""
    directory = Path(directory) if directory is not None else PAPER_VALUES_DIR
    out: dict[tuple[str, str], PaperValue] = {}
    for path in sorted(directory.glob("*.csv")):
        for key, value in read_paper_values(path).items():
            if key in out:
                raise ValueError(f"{key[0]} / {key[1]!r} is defined in both {out[key].file} and {path}")
            out[key] = value
    return out


def paper_value(analysis_id: str, quantity: str) -> PaperValue:
    """The paper-values row for one quantity; ``KeyError`` saying where to add it when there is none."""
    try:
        return paper_values()[(analysis_id, quantity)]
    except KeyError:
        paper = analysis_id.split("-")[0].lower()
        raise KeyError(
            f"no paper value for {analysis_id} / {quantity!r}: add a row to "
            f"analysis_lib/resources/paper_values/{paper}.csv (leave 'paper' empty when the paper gives no number)"
        ) from None



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


class _Lookup:
    def __repr__(self) -> str:
        return "<look up the paper-values table>"


_LOOKUP: Any = _Lookup()


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
    results: list[Result] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.results_dir = Path(self.results_dir)
        self.results_dir.mkdir(parents=True, exist_ok=True)
        self._save()

    @property
    def path(self) -> Path:
        return Path(self.results_dir) / f"{self.notebook}.json"

    def number(
        self,
        analysis_id: str,
        quantity: str,
        ours: Any,
        paper: Any = _LOOKUP,
        *,
        tol: float | None = None,
        source: str = "",
        note: str = "",
        data: DataKind | None = None,
        digits: int = 3,
        bound: Bound | None = None,
        planted: Any = None,
    ) -> None:
        """Record one number and persist.

        The paper's value, tolerance, bound and source come from the paper-values table
        (:func:`paper_value`); ``note`` adds to the table's note. ``planted`` is the value the simulator planted
        (shown beside the recovered one). Prints nothing: show a section's numbers with :meth:`section`.

        Passing ``paper`` (with ``tol``, ``source``, ``bound``) explicitly is the older form: it prints a one-line
        comparison and skips the table; chapters are moving off it.
        """
        ours, planted = _plain(ours), _plain(planted)
        kind = data or self.data
        legacy = paper is not _LOOKUP
        if legacy:
            paper = _plain(paper)
        else:
            row = paper_value(analysis_id, quantity)
            paper, tol, bound, source = row.paper, row.tol, row.bound, row.source
            note = "; ".join(n for n in (row.note, note) if n)
        result = Result(
            analysis_id=analysis_id,
            quantity=quantity,
            ours=ours,
            paper=paper,
            data=kind,
            status=compare(ours, paper, kind, tol, bound),
            tol=tol,
            source=source,
            note=note,
            planted=planted,
            bound=bound if paper is not None else None,
        )
        self.results = [r for r in self.results if (r.analysis_id, r.quantity) != (analysis_id, quantity)]
        self.results.append(result)
        self._save()
        if legacy:
            print(self._line(result, digits))

    def not_run(self, analysis_id: str, quantity: str, paper: Any = _LOOKUP, *, reason: str) -> None:
        """Record that an analysis did not run in this build (no endpoint, no data); shows no number."""
        self.number(analysis_id, quantity, None, paper, note=reason, data="none")

    def section(self, analysis_id: str, digits: int = 3) -> HTMLTable:
        """This notebook's numbers for one analysis ID beside the paper's, as an HTML table for the page:
        quantity, this build, the paper (with its source), planted (when any), status and note."""
        rows = [r for r in self.results if r.analysis_id == analysis_id]
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

    @staticmethod
    def _line(r: Result, digits: int) -> str:
        paper = f" (paper: {format_paper(r, digits)})" if r.paper is not None else ""
        note = f" — {r.note}" if r.note else ""
        return f"{r.analysis_id} {r.quantity}: {format_value(r.ours, digits)}{paper} [{r.status}]{note}"


def _plain(v: object) -> float | str | None:
    """Numbers (Python or numpy, bools excluded) as float, strings as str, so results serialise as JSON."""
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, (int, float, np.integer, np.floating)):
        return float(v)
    raise TypeError(f"recorded values must be numbers or strings, got {type(v).__name__}: {v!r}")


def format_value(v: float | str | None, digits: int = 3) -> str:
    """Numbers rounded to ``digits`` decimals (significant digits for tiny p-values); ``—`` for none."""
    if v is None:
        return "—"
    if isinstance(v, float):
        if v != 0 and abs(v) < 1e-3:
            return f"{v:.{digits}g}"
        return f"{round(v, digits):g}"
    return str(v)


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


SEARCH_ARENA_RERUN = "make book DATA=path/to/search-arena-chat-24k.parquet"


def data_banner(
    kind: DataKind,
    detail: str = "",
    *,
    simulator: str = "Search Arena simulator",
    rerun: str = SEARCH_ARENA_RERUN,
) -> str:
    """Markdown banner for the top of a page: says which data the numbers on it come from.

    On simulated data it names the ``simulator`` and the command (``rerun``) that runs the page on real inputs.
    Rendered by the book as an admonition (MyST syntax, enabled in ``_config.yml``).
    """
    if kind == "simulated":
        return (
            ":::{admonition} Simulated data\n:class: warning\n"
            f"The numbers on this page come from the project's **{simulator}**, not from the real "
            "data: they show that the analysis runs and what it recovers, not the paper's findings. "
            f"Run `{rerun}` to reproduce the paper.\n"
            + (f"\n{detail}\n" if detail else "")
            + ":::"
        )
    label = {"real": "real public data", "published": "published aggregates", "llm-cache": "cached LLM outputs"}.get(
        kind, kind
    )
    return f":::{{admonition}} Data: {label}\n:class: note\n{detail}\n:::"


# ------------------------------------------------------------------------------------------- HTML tables

STATUS_STYLE = {
    "match": ("#1b7837", "#e7f4e4"),
    "differs": ("#b35806", "#fdebd3"),
    "simulated": ("#5e3c99", "#eee8f6"),
    "computed": ("#2166ac", "#e3eef8"),
    "not run": ("#555555", "#eeeeee"),
}
_TABLE_STYLE = ("border-collapse:collapse;font-size:0.85em;margin:0.4em 0 1em 0;width:auto;")
_CELL = "padding:3px 8px;border-bottom:1px solid #ddd;text-align:left;vertical-align:top;"


@dataclass(frozen=True)
class HTMLTable:
    """A rendered table: Jupyter shows its ``html`` (``_repr_html_``); ``text`` is a plain fallback."""

    html: str
    text: str

    def _repr_html_(self) -> str:
        return self.html

    def __repr__(self) -> str:
        return self.text


def _status_badge(status: str) -> str:
    fg, bg = STATUS_STYLE.get(status, ("#333", "#fff"))
    return (f'<span style="color:{fg};background:{bg};border-radius:3px;padding:1px 6px;white-space:nowrap;'
            f'font-weight:600">{html.escape(status)}</span>')


SCROLL_HINT_ROWS = 12
"""Tables longer than this get a "scroll inside the table" line (a 480 px box shows about 14 short rows)."""


def html_table(
    frame: pl.DataFrame,
    *,
    caption: str = "",
    raw_html_columns: tuple[str, ...] = (),
    max_height_px: int | None = 480,
    digits: int = 3,
) -> HTMLTable:
    """Every row and column of ``frame`` as an HTML table (never truncated), scrolling inside a box taller
    than ``max_height_px`` with its header row kept in view; a table of more than :data:`SCROLL_HINT_ROWS` rows
    (which may not fit the box) is announced with its row count, so no reader takes it for truncated. Numbers
    are rounded to ``digits`` decimals, booleans read "yes" / "no"; cells of ``raw_html_columns`` are inserted
    as HTML, every other cell is escaped."""

    def cell(col: str, v: object) -> str:
        if col in raw_html_columns:
            return str(v)
        if v is None:
            return "—"
        if isinstance(v, bool):
            return "yes" if v else "no"
        if isinstance(v, float):
            return html.escape(format_value(v, digits))
        return html.escape(str(v))

    sticky = "position:sticky;top:0;background:#fff;" if max_height_px else ""
    head = "".join(f'<th style="{_CELL}{sticky}border-bottom:2px solid #999">{html.escape(c)}</th>'
                   for c in frame.columns)
    body = "".join(
        "<tr>" + "".join(f'<td style="{_CELL}">{cell(c, v)}</td>' for c, v in zip(frame.columns, row)) + "</tr>"
        for row in frame.iter_rows()
    )
    cap = f'<caption style="caption-side:top;text-align:left;font-weight:600">{html.escape(caption)}</caption>' \
        if caption else ""
    table = f'<table style="{_TABLE_STYLE}">{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
    box = f"max-height:{max_height_px}px;overflow:auto;" if max_height_px else ""
    hint = ""
    if max_height_px and frame.height > SCROLL_HINT_ROWS:
        hint = (f'<div style="font-size:0.85em;color:#666">{frame.height} rows: scroll inside the table to see them '
                "all</div>")
    wrapped = f'{hint}<div style="{box}max-width:100%;overflow-x:auto">{table}</div>'
    return HTMLTable(wrapped,
                     f"<table: {frame.height} rows × {frame.width} columns{': ' + caption if caption else ''}>")


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
