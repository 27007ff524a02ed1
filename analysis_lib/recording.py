"""What a chapter records: one :class:`Number` per recorded quantity, built by a paper package's section functions
(``answer_engine.chapter``, ``answer_engine.chapter_answers``, ``dr_arena.chapter_*``), and :func:`record`, which hands
them to the book's recorder.

The recorder is passed in (anything with the :class:`Recorder` methods), so the library never imports the book.
A number with a ``reason`` is recorded as "not run" with that reason and no value.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol


class Recorder(Protocol):
    """The two methods of ``bookbuild.recorder.Recorder`` that :func:`record` calls."""

    def number(self, analysis_id: str, quantity: str, ours: Any, *, note: str = "", data: Any = None,
               planted: Any = None) -> None: ...

    def not_run(self, analysis_id: str, quantity: str, *, reason: str) -> None: ...


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
