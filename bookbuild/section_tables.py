"""A section's numbers beside the paper's, as the page shows them: :func:`section_table` (one row per number:
this build, the paper with its source, planted, status, note; a note or a source every row shares said once under
it; the numbers that did not run on one line), :func:`subject_table` (one row per subject for quantities that come
in sets, ``gpt-4o rating`` / ``gpt-4o rank``: SA-D5's leaderboard), the status badges and the notes' parts, and
:func:`results_frame` (a notebook's results as a frame).
"""

from __future__ import annotations

import html
from collections.abc import Iterable

import polars as pl

from bookbuild.evidence import EVIDENCE_LABEL, NOTE_SEPARATOR, Result, status_label
from bookbuild.paper_values import PaperValue
from bookbuild.tables import HTMLTable, format_value, html_table


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
            "status": r.label,
            "source": r.source,
            "note": note_text(r.note),
        }
        for r in results
    ]
    return pl.DataFrame(rows, schema=schema)


# ---------------------------------------------------------------------------------------- section tables

STATUS_STYLE = {
    "match": ("#1b7837", "#e7f4e4"),
    "differs": ("#b35806", "#fdebd3"),
    "inconsistent": ("#8a4f00", "#fff3cd"),
    "assumption": ("#6d4c00", "#fdf6dc"),
    "simulated": ("#5e3c99", "#eee8f6"),
    "computed": ("#2166ac", "#e3eef8"),
    "not run": ("#555555", "#eeeeee"),
}


def status_badge(status: str, reason: str = "") -> str:
    """A status as a small coloured label (HTML; the reason, if any, escaped)."""
    fg, bg = STATUS_STYLE.get(status, ("#333", "#fff"))
    return (f'<span style="color:{fg};background:{bg};border-radius:3px;padding:1px 6px;'
            f'font-weight:600">{html.escape(status_label(status, reason))}</span>')


def note_parts(note: str) -> list[str]:
    """A note's parts: the recorder joins a row's note and the chapter's with :data:`NOTE_SEPARATOR`; a note is
    split at that separator only outside brackets, so a parenthesis with semicolons of its own ("(Google: all 21
    participants; each engine: its 7)") stays in its sentence."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(note):
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(ch, 0)
        if depth <= 0 and note.startswith(NOTE_SEPARATOR, i):
            parts.append(note[start:i])
            start = i + len(NOTE_SEPARATOR)
    parts.append(note[start:])
    return [p.strip() for p in parts if p.strip()]


def note_text(note: str) -> str:
    """A note on one line: its parts joined with :data:`NOTE_SEPARATOR`."""
    return NOTE_SEPARATOR.join(note_parts(note))


def shared_notes(notes: list[str]) -> tuple[list[str], list[str], list[list[str]]]:
    """Notes repeated over the rows of a table, said once.

    Returns ``(every, footnotes, rest)``: the note parts (:func:`note_parts`) found on every row (when there are
    two rows or more), the parts found on two rows or more but not all (numbered footnotes ``[1]``, ``[2]`` in
    order of first appearance), and per row what is left: its own parts, then the markers of its footnotes.
    """
    parts = [list(dict.fromkeys(note_parts(n))) for n in notes]
    counts: dict[str, int] = {}
    for row in parts:
        for part in row:
            counts[part] = counts.get(part, 0) + 1
    n = len(parts)
    every = [p for p, c in counts.items() if n >= 2 and c == n]
    footnotes = [p for p, c in counts.items() if c >= 2 and p not in every]
    rest = [[p for p in row if counts[p] < 2] + [f"[{footnotes.index(p) + 1}]" for p in row if p in footnotes]
            for row in parts]
    return every, footnotes, rest


def _sentence(text: str) -> str:
    return text if text.endswith((".", "!", "?")) else text + "."


def _paper_cell(r: Result, digits: int, with_source: bool) -> str:
    if r.paper is None:
        return "—"
    source = f'<br><small style="color:#666">{html.escape(r.source)}</small>' if with_source and r.source else ""
    return html.escape(format_paper(r, digits)) + source


#: Evidence classes said under a number's status: those that are neither the chapter's data nor a plain "no data".
_NAMED_EVIDENCE = ("user", "llm", "checked", "transcribed")


def _evidence_line(r: Result) -> str:
    """``user data``, ``LLM output``, ``check of the paper``, ``transcribed from the paper`` under a status, so a
    match on such evidence never reads as a reproduction."""
    ev = r.evidence
    if ev not in _NAMED_EVIDENCE:
        return ""
    return f'<br><small style="color:#666">{html.escape(EVIDENCE_LABEL[ev])}</small>'


def _source_line(r: Result) -> str:
    """The LLM that produced an ``llm`` number, under it."""
    return f'<br><small style="color:#666">{html.escape(r.llm)}</small>' if r.llm else ""


def _not_run_row(skipped: list[Result], digits: int, with_planted: bool) -> dict[str, str]:
    """One line for an ID's numbers that did not run: how many, folded list of them, the reason once."""
    items = "".join(
        f"<li>{html.escape(r.quantity)}" + (f" (paper {html.escape(format_paper(r, digits))})" if r.paper is not None
                                            else "") + "</li>"
        for r in skipped
    )
    reasons = list(dict.fromkeys(r.reason or note_text(r.note) for r in skipped if r.reason or r.note))
    row = {"quantity": f"<details><summary>{len(skipped)} numbers not run</summary><ul>{items}</ul></details>",
           "this build": "—", "paper": "—"}
    if with_planted:
        row["planted"] = "—"
    row["status"] = status_badge("not run")
    row["note"] = html.escape(" / ".join(reasons))
    return row


def section_table(results: list[Result], digits: int = 3) -> HTMLTable:
    """The our-number-beside-the-paper's table of one section (see :meth:`Recorder.section`).

    Columns: quantity, this build, the paper's value, planted (only when a number has one), status and note. Said
    once under the table instead of on every row: the paper's source when every paper value has the same one,
    note parts shared by every row, and note parts shared by several rows (numbered footnotes). An ID's numbers
    that did not run collapse to one line (two or more of them) with their reason once.
    """
    if not results:
        raise ValueError("section_table: no results to show")
    skipped = [r for r in results if r.status == "not run"]
    shown = [r for r in results if r.status != "not run"] if len(skipped) >= 2 else list(results)
    with_planted = any(r.planted is not None for r in shown)
    sources = {r.source for r in shown if r.paper is not None}
    one_source = len(sources) == 1 and len([r for r in shown if r.paper is not None]) >= 2
    every, footnotes, rest = shared_notes([r.note for r in shown])
    rows = []
    for r, note in zip(shown, rest, strict=True):
        row = {
            "quantity": html.escape(r.quantity),
            "this build": html.escape(format_value(r.ours, digits)) + _source_line(r),
            "paper": _paper_cell(r, digits, with_source=not one_source),
        }
        if with_planted:
            row["planted"] = html.escape(format_value(r.planted, digits)) if r.planted is not None else "—"
        row["status"] = status_badge(r.status, r.reason) + _evidence_line(r)
        row["note"] = html.escape("; ".join(p for p in note if not p.startswith("["))) + "".join(
            f" <sup>{html.escape(p)}</sup>" for p in note if p.startswith("["))
        rows.append(row)
    if len(skipped) >= 2:
        rows.append(_not_run_row(skipped, digits, with_planted))
    frame = pl.DataFrame(rows, schema={k: pl.String for k in rows[0]})
    if all(not v for v in frame["note"]):
        frame = frame.drop("note")
    notes = ([f"Paper's values: {_sentence(next(iter(sources)))}"] if one_source else []) + [
        f"Every row: {_sentence(p)}" for p in every] + [f"[{i}] {_sentence(p)}" for i, p in enumerate(footnotes, 1)]
    wrap = {"this build": "nowrap", "planted": "nowrap", "paper": "words", "status": "words"}
    return html_table(frame, raw_html_columns=tuple(frame.columns), fold_rows=None, notes=notes,
                      wrap={c: m for c, m in wrap.items() if c in frame.columns})


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
