"""The papers' numbers as data: one row per recorded quantity in ``resources/paper_values/<paper>.csv``.

One file per paper (``sa``, ``ng``, ``dr``, ``ae``), columns :data:`COLUMNS`: the analysis ID and the quantity (the
key), the paper's value (empty when the paper gives none), the tolerance, an optional bound (``lower`` for "more
than x", ``upper`` for "less than x"), the source in the paper (the paper's short name and its section, figure or
table: ``NG later version, §4, Fig 4``), a note, and ``discrepancy``: a known property of the paper's value that
explains why a number computed from real or published data cannot equal it (empty for most rows):

- ``inconsistent: <reason>``  the paper is inconsistent with itself (its text vs its figure, a mistyped list);
- ``assumption: <reason>``    the comparison rests on a number the paper does not publish (an implied group size).

The reason is a word or two (``text vs figure``, ``mistyped list``, ``unpublished n``); it is shown beside the
status. :func:`table` reads them all, :func:`lookup` returns one row. The book's recorder (``bookbuild.recorder``)
compares a computed number with its row; the simulators that plant a paper's numbers read them here too, so every
number of a paper is typed once.
"""

from __future__ import annotations

import csv
import functools
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Bound = Literal["lower", "upper"]
DiscrepancyKind = Literal["inconsistent", "assumption"]

DIRECTORY = Path(__file__).resolve().parent / "resources" / "paper_values"
COLUMNS = ("analysis_id", "quantity", "paper", "tol", "bound", "source", "note", "discrepancy", "result", "data")
#: Columns a file must have; ``discrepancy``, ``result`` and ``data`` may be absent (empty).
REQUIRED_COLUMNS = COLUMNS[:-3]
#: The data kinds a row may fix for its number (empty: the recorder's, the chapter's data).
ROW_DATA_KINDS = ("real", "user", "published", "llm", "simulated", "checked", "transcribed", "none")
DISCREPANCY_KINDS: tuple[str, ...] = ("inconsistent", "assumption")
#: The longest reason a discrepancy may give: it is shown in a status cell, a word or two.
MAX_REASON_CHARS = 24


@dataclass(frozen=True)
class Discrepancy:
    """Why a number computed from real or published data cannot equal the paper's value: the paper is
    ``inconsistent`` with itself, or the comparison rests on an ``assumption`` the paper does not publish;
    ``reason`` says which in a word or two."""

    kind: DiscrepancyKind
    reason: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.reason}"


def parse_discrepancy(text: str) -> Discrepancy | None:
    """``"inconsistent: text vs figure"`` as a :class:`Discrepancy`; ``None`` for an empty cell. ``ValueError``
    (the caller names the file and line) for an unknown kind, an empty reason or one longer than
    :data:`MAX_REASON_CHARS`."""
    text = text.strip()
    if not text:
        return None
    kind, sep, reason = (part.strip() for part in text.partition(":"))
    if not sep or kind not in DISCREPANCY_KINDS:
        raise ValueError(f"expected '<kind>: <reason>' with kind one of {list(DISCREPANCY_KINDS)}, got {text!r}")
    if not reason or len(reason) > MAX_REASON_CHARS:
        raise ValueError(f"the reason must be a word or two (1 to {MAX_REASON_CHARS} characters), got {reason!r}")
    return Discrepancy(kind, reason)  # type: ignore[arg-type]


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
    discrepancy: Discrepancy | None = None
    result: str = ""
    data: str = ""


def _cell_value(text: str) -> float | str | None:
    text = text.strip()
    if not text:
        return None
    try:
        return float(text)
    except ValueError:
        return text


def read_table(path: str | Path) -> dict[tuple[str, str], PaperValue]:
    """Read one paper-values CSV (columns :data:`COLUMNS`), validating every row.

    Raises ``ValueError`` naming the file, line and column for a missing column (``discrepancy`` may be absent), an
    empty key, a non-numeric tolerance, an unknown bound, a malformed discrepancy or a duplicated
    ``(analysis_id, quantity)``.
    """
    path = Path(path)
    out: dict[tuple[str, str], PaperValue] = {}
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in REQUIRED_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{path}: missing column(s) {missing}; expected {list(COLUMNS)}")
        for line, row in enumerate(reader, start=2):
            if row.get(None):  # type: ignore[call-overload]
                raise ValueError(f"{path}, line {line}: more fields than the header's {len(reader.fieldnames or [])}")
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
            try:
                discrepancy = parse_discrepancy(row.get("discrepancy") or "")
            except ValueError as exc:
                raise ValueError(f"{path}, line {line}, column discrepancy: {exc}") from None
            data = (row.get("data") or "").strip()
            if data and data not in ROW_DATA_KINDS:
                raise ValueError(f"{path}, line {line}, column data: expected one of {list(ROW_DATA_KINDS)} or "
                                 f"empty, got {data!r}")
            key = (aid, quantity)
            if key in out:
                raise ValueError(f"{path}, line {line}: duplicate row for {aid} / {quantity!r} "
                                 f"(first at line {out[key].line})")
            out[key] = PaperValue(aid, quantity, _cell_value(row["paper"] or ""), tol, bound,  # type: ignore[arg-type]
                                  (row["source"] or "").strip(), (row["note"] or "").strip(), str(path), line,
                                  discrepancy, (row.get("result") or "").strip(), data)
    return out


@functools.cache
def table(directory: str | Path | None = None) -> Mapping[tuple[str, str], PaperValue]:
    """Every paper value of the compendium, keyed by ``(analysis_id, quantity)``: the union of
    ``<directory>/*.csv`` (default :data:`DIRECTORY`). A key defined in two files is an error."""
    directory = Path(directory) if directory is not None else DIRECTORY
    out: dict[tuple[str, str], PaperValue] = {}
    for path in sorted(directory.glob("*.csv")):
        for key, value in read_table(path).items():
            if key in out:
                raise ValueError(f"{key[0]} / {key[1]!r} is defined in both {out[key].file} and {path}")
            out[key] = value
    return out


def lookup(analysis_id: str, quantity: str) -> PaperValue:
    """The paper-values row for one quantity; ``KeyError`` saying where to add it when there is none."""
    try:
        return table()[(analysis_id, quantity)]
    except KeyError:
        paper = analysis_id.split("-")[0].lower()
        raise KeyError(
            f"no paper value for {analysis_id} / {quantity!r}: add a row to "
            f"bookbuild/resources/paper_values/{paper}.csv (leave 'paper' empty when the paper gives no number)"
        ) from None


def rows_of(analysis_id: str, values: Mapping[tuple[str, str], PaperValue] | None = None) -> list[PaperValue]:
    """The rows of one analysis ID in their file's order (``values``: a table, default :func:`table`)."""
    return [v for (aid, _), v in (table() if values is None else values).items() if aid == analysis_id]
