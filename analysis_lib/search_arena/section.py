"""What a Search Arena chapter section hands its notebook cell: the numbers to record (:class:`Number`), the
figures to show (each with the paper's values to draw, :class:`Figure`), tables with readable column names
(:class:`Table`) and reader text (Markdown); :func:`record` gives the numbers to the book's recorder.

The recorder is passed in (anything with the :class:`Recorder` methods), so the library never imports the book. A
number with a ``reason`` is recorded as "not run" with that reason and no value; ``data=None`` is the recorder's
own data kind.
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


class Recorder(Protocol):
    """The two methods of ``bookbuild.recorder.Recorder`` that :func:`record` calls."""

    def number(self, analysis_id: str, quantity: str, ours: Any, *, note: str = "", data: Any = None,
               planted: Any = None) -> None: ...

    def not_run(self, analysis_id: str, quantity: str, *, reason: str) -> None: ...

    def section(self, analysis_id: str, digits: int = 3) -> Any: ...


@dataclass(frozen=True)
class Number:
    """One recorded quantity: ``ours`` with its ``note``, ``data`` kind and ``planted`` value (simulations), or,
    when ``reason`` is set, a quantity that did not run."""

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
    """A figure to show: the matplotlib figure, its data kind (the stamp) and the paper's values to draw."""

    figure: MplFigure
    kind: str
    reference: Reference | None = None


@dataclass
class Section:
    """One section's output, in the order the cell shows it: text, figures, tables (numbers are recorded)."""

    numbers: list[Number] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    text: str = ""


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


def show(sec: Section, rec: Recorder, html_table: Callable[..., Any], *ids: str, digits: int = 3) -> None:
    """Show one section in a notebook: its figures (:func:`analysis_lib.plotting.show`, the paper's values drawn),
    its tables (``html_table``: the book's table renderer), its text; record its numbers and show the numbers of
    each analysis ID in ``ids`` beside the paper's (``rec.section``)."""
    ipy = require("IPython.display", "book", purpose="showing a section in a notebook")
    for fig in sec.figures:
        plotting.show(fig.figure, fig.kind, reference=fig.reference)
    for table in sec.tables:
        ipy.display(html_table(table.frame, caption=table.caption, digits=table.digits))
    if sec.text:
        ipy.display(ipy.Markdown(sec.text))
    record(rec, sec.numbers)
    for analysis_id in ids:
        ipy.display(rec.section(analysis_id, digits=digits))
