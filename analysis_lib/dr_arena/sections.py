"""What a DR-Arena chapter section hands the notebook: numbers to record, figures and tables to show.

A section function of :mod:`.chapter_published` or :mod:`.chapter_logs` returns a :class:`Section`; the notebook
shows its figures (``plotting.show``), records its numbers (:func:`analysis_lib.recording.record`, any
recorder with ``number`` / ``not_run``) and shows its tables, in a few lines.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import polars as pl
from matplotlib.figure import Figure

from analysis_lib.plotting import Reference
from analysis_lib.recording import Number


class Table(NamedTuple):
    """A table to show: the frame, its caption and the decimals of its numbers."""

    frame: pl.DataFrame
    caption: str = ""
    digits: int = 3


class Shown(NamedTuple):
    """A figure to show: the figure, its data kind (``real``, ``simulated``, ``published``) and the paper's values
    to draw on it (``plotting.Reference``, None for none)."""

    figure: Figure
    kind: str
    reference: Reference | list[Reference] | None = None


@dataclass
class Section:
    """One section's output: numbers to record, figures to show (in order), tables to show after them and notes
    (Markdown) to show after the tables."""

    numbers: list[Number] = field(default_factory=list)
    figures: list[Shown] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
