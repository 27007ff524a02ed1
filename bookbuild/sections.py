"""What a chapter section shows besides its numbers, in one shape for every paper: the figures (:class:`Figure`,
each with the paper's values to draw), tables with readable column names (:class:`Table`) and reader notes
(Markdown, shown as HTML: :mod:`bookbuild.markup`).

A chapter records its numbers with ``rec.record(analysis_id, result)`` and shows a :class:`Section` with
``rec.show(section, *ids)`` (:class:`bookbuild.recorder.Recorder`, which calls :func:`show`): its figures, tables
and notes, then the numbers of each ID beside the paper's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

import polars as pl

from analysis_lib.extras import require
from bookbuild import markup
from bookbuild.tables import html_table

if TYPE_CHECKING:  # matplotlib and the plotting package load when a section is shown, not with the recorder
    from matplotlib.figure import Figure as MplFigure

    from analysis_lib.plotting import Reference


class Recorder(Protocol):
    """The method of ``bookbuild.recorder.Recorder`` that :func:`show` calls."""

    def section(self, analysis_id: str, digits: int = 3, keep: Callable[[str], bool] | None = None) -> Any: ...


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
    """One section's output, in the order a cell shows it: figures, tables, then notes (Markdown)."""

    figures: list[Figure] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def show(sec: Section, rec: Recorder, *ids: str, digits: int = 3, keep: Callable[[str], bool] | None = None) -> None:
    """Show one section in a notebook: its figures (:func:`analysis_lib.plotting.show`, the paper's values drawn),
    its tables (:func:`bookbuild.tables.html_table`), its notes; then the numbers of each analysis ID in ``ids``
    beside the paper's (``rec.section``; ``keep``, a predicate on the quantity, shows part of
    them, for an ID whose numbers span several sections)."""
    from analysis_lib import plotting  # matplotlib and seaborn: loaded by the first section shown

    ipy = require("IPython.display", "book", purpose="showing a section in a notebook")
    for fig in sec.figures:
        plotting.show(fig.figure, fig.kind, reference=fig.reference)
    for table in sec.tables:
        ipy.display(html_table(table.frame, caption=table.caption, digits=table.digits))
    for note in sec.notes:
        markup.show(note)
    for analysis_id in ids:
        ipy.display(rec.section(analysis_id, digits=digits, keep=keep))
