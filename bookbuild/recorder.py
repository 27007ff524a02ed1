"""Record every number a notebook computes beside the paper's value, for the reproduction-status page.

Each chapter notebook creates one :class:`Recorder` and calls :meth:`Recorder.number` for each number it
computes. The paper's values are data, not notebook code (:mod:`bookbuild.paper_values`: one row per recorded
quantity, keyed by ``(analysis_id, quantity)``); :meth:`Recorder.number` looks the row up, so a notebook passes only
its own number. The recorder keeps a table of the notebook's results and rewrites ``<results_dir>/<notebook>.json``
after every call, so a killed kernel keeps what it finished, while a cell that ends in an error removes the file
(:func:`bookbuild.kernels.forget_on_error`: a failed run leaves nothing for a later build to read);
:meth:`Recorder.section` renders one analysis ID's numbers beside the paper's as an HTML table for the page.

The evidence model and the status rule are :mod:`bookbuild.evidence`'s; this module records and shows.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from bookbuild import fieldpath, kernels, paper_values, sections
from bookbuild.evidence import NO_VALUE, NOTE_SEPARATOR, DataKind, Result, compare, data_kind, llm_source, miss_note
from bookbuild.paper_values import PaperValue
from bookbuild.section_tables import results_frame, section_table
from bookbuild.sections import Section, Table
from bookbuild.tables import HTMLTable

#: A value that did not run, with its reason (``NotRun("the release has no languages list")``): a chapter puts it in
#: the result it records where one field cannot be computed; :meth:`Recorder.record` records that row as not run.
NotRun = fieldpath.Missing

__all__ = ["NotRun", "Recorder", "Result", "llm_source"]


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
        Default data kind for this notebook's numbers (``"simulated"`` on the offline default; ``"user"`` for a
        user's file, ``"real"`` only for inputs the data manifest vouches for).
    llm:
        The model, endpoint and kind of call behind this notebook's ``llm`` numbers (``"gpt-4.1 @ https://host/v1
        (chat)"``), shown beside each of them; default :func:`llm_source` (from the environment the chapter runs in).
    values:
        The paper-values table (default: :func:`bookbuild.paper_values.table`). A quantity without a row is
        recorded as ``computed`` with no paper value: a model, provider or intent the paper did not have is a
        new row of the page, never an error.
    """

    results_dir: str | Path
    notebook: str
    data: DataKind = "real"
    values: Mapping[tuple[str, str], PaperValue] | None = None
    results: list[Result] = field(default_factory=list)
    llm: str | None = None

    def __post_init__(self) -> None:
        if self.llm is None:
            self.llm = llm_source()
        self.results_dir = Path(self.results_dir)
        self.results_dir.mkdir(parents=True, exist_ok=True)
        self.data = data_kind(self.data)
        self._save()
        kernels.forget_on_error(self.path)

    @property
    def path(self) -> Path:
        return Path(self.results_dir) / f"{self.notebook}.json"

    def paper_value(self, analysis_id: str, quantity: str) -> PaperValue | None:
        """The paper-values row of one quantity (from ``values`` when the recorder was given a table, else
        :func:`bookbuild.paper_values.table`); ``None`` when the paper has no row for it."""
        table = paper_values.table() if self.values is None else self.values
        return table.get((analysis_id, quantity))

    def number(
        self,
        analysis_id: str,
        quantity: str,
        ours: Any,
        *,
        note: str = "",
        data: DataKind | None = None,
        planted: Any = None,
        reason: str = "",
        interval: tuple[float, float] | None = None,
        row_note: str | None = None,
        llm: str | None = None,
    ) -> None:
        """Record one number and persist.

        The paper's value, tolerance, bound and source come from the paper-values table (:meth:`paper_value`); a
        quantity the table does not have is recorded with no paper value (status ``computed``, or ``simulated``
        on the simulator). ``note`` adds to the table's note. ``planted`` is the value the simulator planted
        (shown beside the recovered one). ``reason``: why ``ours`` may have no value (``None`` or NaN: a model the
        data lacks); such a number is recorded as not run with that reason. ``interval``: the number's 95% interval;
        on the simulator, a number outside the tolerance of the value it was calibrated to says beside it whether the
        interval covers that value (:func:`miss_note`: sampling noise of one simulated release, or not). ``llm``: what
        produced an ``llm`` number (:func:`llm_source`), when not the recorder's. Prints nothing: show a section's
        numbers with :meth:`section`.
        """
        ours, planted = _plain(ours), _plain(planted)
        if (ours is None or (isinstance(ours, float) and math.isnan(ours))) and data != "none":
            # a number with no value (NaN): not run, and the page says why
            self.not_run(analysis_id, quantity, reason=reason or NO_VALUE)
            return
        kind = data_kind(data or self.data)
        row = self.paper_value(analysis_id, quantity)
        paper = row.paper if row is not None else None
        discrepancy = row.discrepancy if row is not None else None
        status = compare(ours, paper, kind, row.tol if row else None, row.bound if row else None, discrepancy)
        if interval is not None and kind == "simulated" and row is not None:
            note = NOTE_SEPARATOR.join(n for n in (note, miss_note(ours, row, interval)) if n)
        result = Result(
            analysis_id=analysis_id,
            quantity=quantity,
            ours=ours,
            paper=paper,
            data=kind,
            status=status,
            tol=row.tol if row is not None else None,
            source=row.source if row is not None else "",
            note=NOTE_SEPARATOR.join(n for n in (row_note if row_note is not None else row.note if row is not None
                                                 else "", note) if n),
            planted=planted,
            bound=row.bound if row is not None and paper is not None else None,
            reason=discrepancy.reason if discrepancy is not None and status == discrepancy.kind else "",
            llm=(llm if llm is not None else self.llm or "") if kind == "llm" and status != "not run" else "",
        )
        self.results = [r for r in self.results if (r.analysis_id, r.quantity) != (analysis_id, quantity)]
        self.results.append(result)
        self._save()

    def record(self, analysis_id: str, result: Any, *, note: str = "", data: DataKind | None = None,
               reason: str = "", planted: Any = None, intervals: Mapping[str, tuple[float, float]] | None = None,
               notes: Mapping[str, str] | None = None, llm: str | None = None) -> None:
        """Record every number of ``analysis_id`` from the library's ``result``: each paper-values row of the ID,
        in the file's order, names the field it compares with (its ``result`` path, :mod:`bookbuild.fieldpath`),
        so one call records the whole ID and grepping a row finds this call.

        A template row (``board[model=*].rating``, quantity ``{model} rating``) gives one number per row of the
        frame, except the quantities that have a row of their own (those compare with the paper's value). A path
        that reaches no value records the number as not run, with the reason the result gives or ``reason``;
        ``result`` ``None`` records every row of the ID as not run with ``reason``. The row's note is formatted with
        the fields of the value's record and of ``result`` (``{n_left_out}``), then ``note`` (every number) and
        ``notes[quantity]`` are added. ``data``: the data kind of the numbers whose row fixes none (a row's
        ``data`` wins; default: the recorder's). ``planted``: the simulator's truth, read with the same paths (a
        mapping of quantities, or a result of the same shape); ``intervals``: 95% intervals by quantity
        (:meth:`number`); ``llm``: what produced its ``llm`` numbers (:func:`llm_source` with the step's model and
        kind of call), when not the recorder's."""
        rows = paper_values.rows_of(analysis_id, self.values)
        if not rows:
            raise KeyError(f"{self.notebook}: the paper values have no row for {analysis_id}")
        unnamed = [r.quantity for r in rows if not r.result]
        if unnamed:
            raise ValueError(f"{rows[0].file}: rows of {analysis_id} without a result field: {unnamed}")
        if result is None and not reason:
            raise ValueError(f"{analysis_id}: no result and no reason why it did not run")
        explicit = {r.quantity for r in rows}
        notes = notes or {}
        for row in rows:
            path = fieldpath.parse(row.result)
            if result is None:
                found: list[fieldpath.Found] = [({}, fieldpath.Missing(reason), None)]
            elif path.template:
                found = [f for f in fieldpath.expand(result, path) if row.quantity.format_map(f[0]) not in explicit]
            else:
                value, owner = fieldpath.resolve(result, path)
                found = [({}, value, owner)]
            for keys, value, owner in found:
                quantity = row.quantity.format_map(keys) if keys else row.quantity
                row_note = _format_note(row.note, fieldpath.Context(keys, owner, result))
                if isinstance(value, fieldpath.Missing):
                    self.not_run(analysis_id, quantity, reason=value.reason or reason or NO_VALUE, row_note=row_note)
                    continue
                extra = NOTE_SEPARATOR.join(n for n in (note, notes.get(quantity, "")) if n)
                self.number(analysis_id, quantity, value, note=extra, data=row.data or data or None,  # type: ignore[arg-type]
                            planted=_planted(planted, quantity, path, keys), reason=reason,
                            interval=(intervals or {}).get(quantity), row_note=row_note, llm=llm)

    def show(self, content: Section, *ids: str, tables: Iterable[Table] = (),
             notes: Iterable[str] = (), digits: int = 3, keep: Callable[[str], bool] | None = None) -> None:
        """Show one section in a notebook (:func:`bookbuild.sections.show`): the figures, tables and notes of
        ``content`` (a :class:`~bookbuild.sections.Section`), then ``tables`` and ``notes``, then the numbers of each
        analysis ID in ``ids`` beside the paper's (``keep``: which quantities, for an ID whose numbers span several
        sections)."""
        sec = Section(content.figures, [*content.tables, *tables], [*content.notes, *notes])
        sections.show(sec, self, *ids, digits=digits, keep=keep)

    def not_run(self, analysis_id: str, quantity: str, *, reason: str, row_note: str | None = None) -> None:
        """Record that an analysis did not run in this build (no endpoint, no data, a field the release lacks);
        shows no number. The ``reason`` is added to the row's note (``row_note``: that note as :meth:`record`
        formatted it) and kept as the result's ``reason`` (the status page says it)."""
        self.number(analysis_id, quantity, None, note=reason, data="none", row_note=row_note)
        last = self.results[-1]
        self.results[-1] = Result(**{**asdict(last), "reason": _reason_text(reason)})
        self._save()

    def section(self, analysis_id: str, digits: int = 3, keep: Callable[[str], bool] | None = None) -> HTMLTable:
        """This notebook's numbers for one analysis ID beside the paper's, as an HTML table for the page:
        quantity, this build, the paper (with its source; "—" where the paper has no number), planted (when any),
        status and note; ``keep`` (a predicate on the quantity) shows part of them, for an ID whose numbers span
        several sections."""
        rows = [r for r in self.results if r.analysis_id == analysis_id and (keep is None or keep(r.quantity))]
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


def _planted(planted: Any, quantity: str, path: fieldpath.Path, keys: Mapping[str, str]) -> Any:
    """The planted value of one number: ``planted[quantity]`` from a mapping of quantities, else the value at the
    row's path in a result of the same shape (the template's row fixed by ``keys``); ``None`` where there is none."""
    if planted is None:
        return None
    if isinstance(planted, Mapping) and not any(s.name in planted for s in path.steps[:1]):
        return planted.get(quantity)
    if keys:
        fixed = fieldpath.Path(path.text, tuple(
            fieldpath.Step(s.name, tuple((c, keys.get(c, v) if v == "*" else v) for c, v in s.select), s.index)
            for s in path.steps), path.factor)
        path = fixed
    try:
        value, _ = fieldpath.resolve(planted, path)
    except fieldpath.PathError:  # the truth need not have every field of the result (what was not planted)
        return None
    return None if isinstance(value, fieldpath.Missing) else value


def _format_note(note: str, context: fieldpath.Context) -> str:
    """A row's note with its ``{placeholders}`` read from ``context``; a part (between ``; ``) whose fields the
    result does not give (a number that did not run) is left out rather than shown with its braces."""
    if "{" not in note:
        return note
    parts = []
    for part in note.split(NOTE_SEPARATOR):
        try:
            parts.append(part.format_map(context))
        except (KeyError, AttributeError, IndexError, TypeError, ValueError):
            continue
    return NOTE_SEPARATOR.join(parts)


def _reason_text(reason: str) -> str:
    """A not-run reason without a leading ``not run:`` (the status says it already)."""
    text = reason.strip()
    return text[len("not run:"):].strip() if text.lower().startswith("not run:") else text


def _plain(v: object) -> float | str | None:
    """Numbers (Python or numpy, bools excluded) as float, strings as str, so results serialise as JSON."""
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, (int, float, np.integer, np.floating)):
        return float(v)
    raise TypeError(f"recorded values must be numbers or strings, got {type(v).__name__}: {v!r}")
