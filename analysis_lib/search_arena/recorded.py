"""What a Search Arena chapter records, decided in the library: each quantity's value, or why it did not run.

A section's checks (thresholds, minimum sample sizes, what an absent LLM endpoint means) return :class:`Row`
objects; :func:`record` hands them to the book's recorder (any object with the ``number`` and ``not_run`` methods
of ``bookbuild.recorder.Recorder``; the library never imports the book). :func:`llm_note` and :func:`why_not`
word the LLM steps' availability once for a chapter and once per row.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

#: A not-run row whose reason is the chapter-wide one (no endpoint, offline, budget) says this instead.
SEE_ABOVE = "LLM step not run (see the note at the top)"
#: The note of a battle-data number that the simulator is built to reproduce (shown when the data are simulated).
CALIBRATION_TARGET = "calibration target: the simulator is built to reproduce this value"


@dataclass(frozen=True)
class Row:
    """One recorded quantity: its ``value`` (None: not run, ``note`` says why), a ``note`` for the row and the
    data kind when it differs from the chapter's (``data``: ``real``, ``simulated``, ...)."""

    quantity: str
    value: float | str | None
    note: str = ""
    data: str | None = None


class Recorder(Protocol):
    """The two methods of ``bookbuild.recorder.Recorder`` that :func:`record` calls."""

    def number(self, analysis_id: str, quantity: str, ours: Any, *, note: str = "", data: Any = None,
               planted: Any = None) -> None: ...

    def not_run(self, analysis_id: str, quantity: str, *, reason: str) -> None: ...


def record(rec: Recorder, analysis_id: str, rows: Iterable[Row]) -> None:
    """Record every row of one analysis ID: a number, or not run with the row's note as the reason."""
    for row in rows:
        if row.value is None:
            rec.not_run(analysis_id, row.quantity, reason=row.note)
        else:
            rec.number(analysis_id, row.quantity, row.value, note=row.note, data=row.data)


def rows_of(values: dict[str, Any], *, data: str | None = None, notes: dict[str, str] | None = None) -> list[Row]:
    """Rows from ``quantity -> value``, each with its note from ``notes`` (if any) and the data kind ``data``."""
    notes = notes or {}
    return [Row(q, v, notes.get(q, ""), data) for q, v in values.items()]


def llm_note(available: bool, model: str, reason: str, steps: str) -> str:
    """The chapter's one note on its LLM steps (Markdown admonition): where the calls go, or that ``steps`` show
    cached results or *not run* and why (``reason``: the client's ``not_run_reason()``)."""
    if available:
        return (f":::{{admonition}} LLM steps\n:class: note\nLLM calls go to the configured endpoint (default model "
                f"`{model}`) and are cached.\n:::")
    return (":::{admonition} LLM steps without an endpoint\n:class: note\nThis build has no LLM endpoint: "
            f"{steps} show cached results where there are any, else *not run* ({reason.removeprefix('not run: ')}). "
            "Set `OPENAI_BASE_URL` and `OPENAI_API_KEY` to run them.\n:::")


def why_not(note: str | None, chapter_reason: str) -> str:
    """A step's not-run reason for its row: the chapter's reason (said once, in :func:`llm_note`) becomes
    :data:`SEE_ABOVE`; a step's own reason (a failed reply, an unreadable input) is kept."""
    return SEE_ABOVE if not note or note == chapter_reason else note
