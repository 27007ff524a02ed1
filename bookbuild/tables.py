"""The book's HTML tables: every row and column of a frame, numbers rounded, never truncated, never wider than
the page; a text cell longer than :data:`MAX_CELL_CHARS` and a heading or caption longer than
:data:`MAX_HEADING_CHARS` characters are cut with an ellipsis and their length (text from data can be any length).

:func:`html_table` renders a polars frame for a chapter page (Jupyter shows :class:`HTMLTable` as HTML);
:func:`folded` puts one in a closed ``<details>`` block; :func:`format_value` is the rounding every table and the
status page use; :func:`readable` turns a column name into words. A table takes at most the width of the content
column: its cells wrap (long words and identifiers break where they must), and a table with too many columns to
wrap scrolls sideways inside a box, with space after the box. A table is never cut by a fixed height: one of more
than :data:`FOLD_ROWS` rows is folded whole behind a line naming it and its row count, which opens it.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass

import polars as pl

_TABLE_STYLE = "border-collapse:collapse;font-size:0.85em;margin:0.4em 0 0.4em 0;width:auto;max-width:100%;"
_CELL = "padding:3px 8px;border-bottom:1px solid #ddd;text-align:left;vertical-align:top;"
#: How a column's cells may wrap: ``nowrap`` (numbers), ``words`` (at spaces only: short labels, badges) or
#: ``anywhere`` (text: long identifiers and URLs break where they must, so the table fits the column).
WRAP_STYLE = {
    "nowrap": "white-space:nowrap;",
    "words": "overflow-wrap:normal;word-break:normal;",
    "anywhere": "overflow-wrap:anywhere;",
}
_HEAD = "overflow-wrap:normal;word-break:normal;"
_NOTES_STYLE = "font-size:0.8em;color:#555;margin:0 0 0.4em 0;overflow-wrap:anywhere;"
#: The space after a table's box, so the next paragraph does not touch a scroll bar.
_BOX_STYLE = "max-width:100%;overflow-x:auto;margin-bottom:1.2em;"

#: Words a column name is spelled out with (``ci_lower`` -> ``CI lower``).
_ACRONYMS = {"ci": "CI", "bt": "BT", "se": "SE", "sd": "SD", "id": "ID", "url": "URL", "urls": "URLs", "n": "n",
             "llm": "LLM", "elo": "Elo", "p": "p"}

#: Longest text cell shown, in characters (longer: cut with an ellipsis and its length; a model name of 50 MB
#: would otherwise be the page). Numbers are never cut.
MAX_CELL_CHARS = 1000
#: Longest column heading, caption or note shown, in characters.
MAX_HEADING_CHARS = 200


def bounded(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis and the full length when longer (before escaping)."""
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters)"


#: A table of more rows than this is folded (:func:`folded`) behind a line naming it and its row count.
FOLD_ROWS = 15


def readable(name: str) -> str:
    """A column name as words: underscores become spaces, known acronyms take their capitals (``ci_lower`` ->
    ``CI lower``, ``p_two_sided`` -> ``p two sided``); a name with a space is left as it is."""
    if " " in name or "_" not in name:
        return name
    return " ".join(_ACRONYMS.get(w.lower(), w) for w in name.split("_") if w)


def format_value(v: float | str | None, digits: int = 3) -> str:
    """Numbers rounded to ``digits`` decimals (significant digits for tiny p-values); ``—`` for none."""
    if v is None:
        return "—"
    if isinstance(v, float):
        if v != 0 and abs(v) < 1e-3:
            return f"{v:.{digits}g}"
        return f"{round(v, digits):g}"
    return str(v)


@dataclass(frozen=True)
class HTMLTable:
    """A rendered table: Jupyter shows its ``html`` (``_repr_html_``); ``text`` is a plain fallback."""

    html: str
    text: str

    def _repr_html_(self) -> str:
        return self.html

    def __repr__(self) -> str:
        return self.text


def folded(table: HTMLTable, summary: str) -> HTMLTable:
    """``table`` inside a closed ``<details>`` block whose line reads ``summary`` (for long number tables a
    reader opens on demand)."""
    return HTMLTable(f"<details><summary>{html.escape(summary)}</summary>{table.html}</details>",
                     f"{summary}\n{table.text}")


def html_table(
    frame: pl.DataFrame,
    *,
    caption: str = "",
    raw_html_columns: tuple[str, ...] = (),
    fold_rows: int | None = FOLD_ROWS,
    digits: int = 3,
    notes: tuple[str, ...] | list[str] = (),
    headers: dict[str, str] | None = None,
    wrap: dict[str, str] | None = None,
) -> HTMLTable:
    """Every row and column of ``frame`` as an HTML table (never truncated, never cut by a fixed height); missing
    values and NaN show as "—", booleans as yes / no. A table of more than ``fold_rows`` rows (``None``: never) is
    folded whole behind a line naming it (its caption) and its row count, which a reader opens (:func:`folded`).
    Numbers are rounded to ``digits`` decimals; cells of ``raw_html_columns`` are inserted as HTML, every other
    cell is escaped.

    Column headers are ``headers[name]`` where given, else :func:`readable` (``p_two_sided`` -> ``p two sided``).
    ``notes`` are sentences said once under the table (what would repeat on every row). The caption, headers and
    notes are escaped. The table is never wider than the content column (see the module docstring): headers wrap
    at spaces, numeric columns do not wrap, text columns break where they must; ``wrap`` (column ->
    :data:`WRAP_STYLE` key) overrides a column's rule."""

    def cell(col: str, v: object) -> str:
        if col in raw_html_columns:
            return str(v)
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return "—"
        if isinstance(v, bool):
            return "yes" if v else "no"
        if isinstance(v, float):
            return html.escape(format_value(v, digits))
        return html.escape(bounded(str(v), MAX_CELL_CHARS))

    names = headers or {}
    modes = {c: "nowrap" if frame[c].dtype.is_numeric() else "anywhere" for c in frame.columns} | (wrap or {})
    unknown = sorted(set(modes.values()) - set(WRAP_STYLE))
    if unknown:
        raise ValueError(f"html_table: unknown wrap mode(s) {unknown}; expected one of {list(WRAP_STYLE)}")
    styles = [f"{_CELL}{WRAP_STYLE[modes[c]]}" for c in frame.columns]
    head = "".join(f'<th style="{_CELL}{_HEAD}border-bottom:2px solid #999">'
                   f"{html.escape(bounded(names.get(c, readable(c)), MAX_HEADING_CHARS))}</th>" for c in frame.columns)
    body = "".join(
        "<tr>" + "".join(f'<td style="{st}">{cell(c, v)}</td>' for c, v, st in zip(frame.columns, row, styles))
        + "</tr>"
        for row in frame.iter_rows()
    )
    shown_caption = html.escape(bounded(caption, MAX_HEADING_CHARS))
    cap = (f'<caption style="caption-side:top;text-align:left;font-weight:600">{shown_caption}</caption>'
           if caption else "")
    table = f'<table style="{_TABLE_STYLE}">{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
    below = "".join(f"<div>{html.escape(bounded(n, MAX_CELL_CHARS))}</div>" for n in notes)
    below = f'<div class="table-notes" style="{_NOTES_STYLE}">{below}</div>' if below else ""
    # tex2jax_ignore: MathJax (2 and 3) leaves the table alone, so a cell's \( ... \) or $ ... $ stays text
    wrapped = f'<div class="table-box tex2jax_ignore" style="{_BOX_STYLE}">{table}{below}</div>'
    out = HTMLTable(wrapped, f"<table: {frame.height} rows × {frame.width} columns{': ' + caption if caption else ''}>")
    if fold_rows is not None and frame.height > fold_rows:
        name = bounded(caption, MAX_HEADING_CHARS) if caption else "The table"
        return folded(out, f"{name}: all {frame.height:,} rows (click to show)")
    return out
