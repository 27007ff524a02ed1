"""A section's numbers beside the paper's with one row per subject, for sections whose quantities come in sets
(``gpt-4o rating``, ``gpt-4o rank``): SA-D5's leaderboard reads one row per model instead of a rating row and a rank
row in turn.

:func:`subject_table` groups a section's recorded results by subject (the quantity less its last word, the measure)
and shows, per subject, this build's value of each measure and the paper's (``1065.3 (rank 5)``), their statuses as
the recorder's badges (one when they agree) and their notes, said once under the table where every row has them
(:func:`bookbuild.recorder.shared_notes`, as the recorder's own section table does).
"""

from __future__ import annotations

import html
from collections.abc import Iterable

import polars as pl

from bookbuild.recorder import Result, format_paper, note_text, shared_notes, status_badge
from bookbuild.tables import HTMLTable, format_value, html_table


def _sentence(text: str) -> str:
    return text if text.endswith((".", "!", "?")) else text + "."


def _cell(values: list[tuple[str, str]]) -> str:
    """``first (name value, name value)`` from ``(measure, value)`` pairs; "—" when none."""
    if not values:
        return "—"
    (_, first), rest = values[0], values[1:]
    return html.escape(first + (" (" + ", ".join(f"{m} {v}" for m, v in rest) + ")" if rest else ""))


def subject_table(results: Iterable[Result], analysis_id: str, measures: tuple[str, ...], *, subject: str = "subject",
                  digits: int = 3) -> HTMLTable:
    """One row per subject of ``analysis_id``'s results whose quantity is ``<subject> <measure>`` for a measure of
    ``measures`` (in that order): the subject (column ``subject``), this build's values and the paper's
    (:func:`_cell`: the first measure plain, the others named), the statuses as badges (one when every measure has the
    same) and the notes. Notes on every row and the paper's source, when it is one, are said once under the table.
    ``ValueError`` when no result matches."""
    rows: dict[str, dict[str, Result]] = {}
    for r in results:
        name, _, measure = r.quantity.rpartition(" ")
        if r.analysis_id == analysis_id and name and measure in measures:
            rows.setdefault(name, {})[measure] = r
    if not rows:
        raise ValueError(f"subject_table: no {analysis_id} quantity ends with one of {list(measures)}")
    notes = [note_text("; ".join(r.note for r in by.values() if r.note)) for by in rows.values()]
    every, footnotes, rest = shared_notes(notes)
    sources = {r.source for by in rows.values() for r in by.values() if r.paper is not None and r.source}
    out = []
    for (name, by), own in zip(rows.items(), rest, strict=True):
        present = [m for m in measures if m in by]
        statuses = list(dict.fromkeys((by[m].status, by[m].reason) for m in present))
        badges = (status_badge(*statuses[0]) if len(statuses) == 1 else
                  " ".join(f"{html.escape(m)} {status_badge(by[m].status, by[m].reason)}" for m in present))
        out.append({
            subject: html.escape(name),
            "this build": _cell([(m, format_value(by[m].ours, digits)) for m in present if by[m].ours is not None]),
            "paper": _cell([(m, format_paper(by[m], digits)) for m in present if by[m].paper is not None]),
            "status": badges,
            "note": html.escape("; ".join(p for p in own if not p.startswith("["))) + "".join(
                f" <sup>{html.escape(p)}</sup>" for p in own if p.startswith("[")),
        })
    frame = pl.DataFrame(out, schema={k: pl.String for k in out[0]})
    if all(not v for v in frame["note"]):
        frame = frame.drop("note")
    said = [f"Paper's values: {_sentence(next(iter(sources)))}"] if len(sources) == 1 else []
    if len(measures) > 1:
        said.append(f"Each value: the {measures[0]}, then the {', '.join(measures[1:])} in brackets.")
    said += [f"Every row: {_sentence(p)}" for p in every]
    said += [f"[{i}] {_sentence(p)}" for i, p in enumerate(footnotes, 1)]
    return html_table(frame, raw_html_columns=tuple(frame.columns), fold_rows=None, notes=said,
                      wrap={"this build": "words", "paper": "words", "status": "words"})
