"""What a chapter section hands its notebook cell, in one shape for every paper: the numbers to record
(:class:`Number`: a value, or the reason it did not run), the figures to show (:class:`Figure`, each with the
paper's values to draw), tables with readable column names (:class:`Table`) and reader notes (Markdown,
shown as HTML: :mod:`bookbuild.markup`).

:func:`record` hands the numbers to the book's recorder and :func:`show` shows a whole :class:`Section` in a
notebook; a chapter calls them as the recorder's methods, ``rec.record(numbers)`` and ``rec.show(section, *ids)``
(:class:`bookbuild.recorder.Recorder`), its one way to record. A number with a ``reason`` is recorded as "not run"
with that reason and no value; ``data=None`` is the recorder's own data kind.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

import polars as pl
from matplotlib.figure import Figure as MplFigure

from analysis_lib import plotting
from analysis_lib.extras import require
from analysis_lib.plotting import Reference
from bookbuild import markup
from bookbuild.tables import html_table


class Recorder(Protocol):
    """The methods of ``bookbuild.recorder.Recorder`` that :func:`record` and :func:`show` call."""

    def number(self, analysis_id: str, quantity: str, ours: Any, *, note: str = "", data: Any = None,
               planted: Any = None) -> None: ...

    def not_run(self, analysis_id: str, quantity: str, *, reason: str) -> None: ...

    def section(self, analysis_id: str, digits: int = 3, keep: Callable[[str], bool] | None = None) -> Any: ...


@dataclass(frozen=True)
class Number:
    """One recorded quantity: ``ours`` with its ``note``, ``data`` kind (``None``: the recorder's default) and
    ``planted`` value (simulations), or, when ``reason`` is set, a quantity that did not run."""

    analysis_id: str
    quantity: str
    ours: Any = None
    note: str = ""
    data: str | None = None
    planted: Any = None
    reason: str = ""


class Table(NamedTuple):
    """A table to show: the frame (readable column names), its caption and the decimals of its numbers."""

    frame: pl.DataFrame
    caption: str = ""
    digits: int = 3


class Figure(NamedTuple):
    """A figure to show: the matplotlib figure, its data kind (``real``, ``simulated``, ``published``, ``none``:
    the stamp) and the paper's values to draw on it (None for none)."""

    figure: MplFigure
    kind: str
    reference: Reference | list[Reference] | None = None


@dataclass
class Section:
    """One section's output, in the order a cell shows it: figures, tables, then notes (Markdown); its numbers are
    recorded."""

    numbers: list[Number] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def not_run(analysis_id: str, quantities: Iterable[str], reason: str) -> list[Number]:
    """The same not-run ``reason`` for each quantity."""
    return [Number(analysis_id, q, reason=reason) for q in quantities]


def record(rec: Recorder, numbers: Iterable[Number]) -> None:
    """Record every number in order: ``rec.not_run`` for those with a reason, ``rec.number`` for the rest."""
    for n in numbers:
        if n.reason:
            rec.not_run(n.analysis_id, n.quantity, reason=n.reason)
        else:
            rec.number(n.analysis_id, n.quantity, n.ours, note=n.note, data=n.data, planted=n.planted)


def show(sec: Section, rec: Recorder, *ids: str, digits: int = 3, keep: Callable[[str], bool] | None = None) -> None:
    """Show one section in a notebook: its figures (:func:`analysis_lib.plotting.show`, the paper's values drawn),
    its tables (:func:`bookbuild.tables.html_table`), its notes; record its numbers and show the numbers of each
    analysis ID in ``ids`` beside the paper's (``rec.section``; ``keep``, a predicate on the quantity, shows part of
    them, for an ID whose numbers span several sections)."""
    ipy = require("IPython.display", "book", purpose="showing a section in a notebook")
    for fig in sec.figures:
        plotting.show(fig.figure, fig.kind, reference=fig.reference)
    for table in sec.tables:
        ipy.display(html_table(table.frame, caption=table.caption, digits=table.digits))
    for note in sec.notes:
        markup.show(note)
    record(rec, sec.numbers)
    for analysis_id in ids:
        ipy.display(rec.section(analysis_id, digits=digits, keep=keep))
