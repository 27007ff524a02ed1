"""The book as a reader walks it: chapter titles, section anchors, the papers' figure numbers, the TOC.

A chapter notebook (contract in ``notebooks/README.md``) opens with a title cell ``# <title>`` and gives each
analysis a section: a markdown cell whose first lines are a MyST target and a heading naming the ID,

.. code-block:: markdown

    (sa-d5)=
    ## SA-D5 · Leaderboard and its subsets (Table D.1, Fig D.5)

The target ``(sa-d5)=`` (the ID in lower case) becomes the HTML anchor ``#sa-d5`` of the section in the built
book, and the parenthesis that closes the heading names the paper's figures and tables. That heading is the one
place where a section's paper figure number is written: :func:`figure_index` reads it back from the executed
chapters, so the index of figures and the status page's links are generated, never typed twice.

A build's table of contents (the committed ``_toc.yml`` restricted to the chapters that finished) is written by
the runner, ``bookbuild.toc``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import polars as pl

#: ``## SA-D5 · Leaderboard (Table D.1)``: the ID, the separator (middle dot, colon or dash), the title.
# an ID is a paper prefix and a name (``SA-D5``) or a bare upper-case name (``VAL``, the methods-validation checks)
_HEADING = re.compile(
    r"^##\s+(?P<id>[A-Z]{2,3}-[A-Za-z0-9]+|[A-Z]{3,5})(?![A-Za-z0-9])\s*(?:[·:—–-]\s*)?(?P<title>.*?)\s*$"
)
_TARGET = re.compile(r"^\((?P<label>[A-Za-z0-9_.:-]+)\)=\s*$")
#: The closing parenthesis of a heading, when it names a figure, table or appendix of the paper.
_PAPER_REF = re.compile(r"\((?P<ref>(?:Fig|Figure|Table|Tables|Appendix|App\.|§)[^()]*)\)\s*$")
FAILED_FILE = "_failed.json"


@dataclass(frozen=True)
class Section:
    """One analysis section of a chapter: its ID, its MyST target (``None`` when the heading has none), the
    heading's title and the paper's figure/table reference taken from the heading (``None`` when it names none)."""

    analysis_id: str
    anchor: str | None
    title: str
    paper_ref: str | None


@dataclass(frozen=True)
class Chapter:
    """A chapter page: notebook stem, title (its ``# `` heading) and its analysis sections, in page order."""

    stem: str
    title: str
    sections: tuple[Section, ...]

    def section(self, analysis_id: str) -> Section | None:
        """The first section of this chapter for ``analysis_id`` (``None`` when the chapter has none)."""
        return next((s for s in self.sections if s.analysis_id == analysis_id), None)


def parse_sections(markdown_cells: Iterable[str]) -> tuple[str | None, tuple[Section, ...]]:
    """The title (first ``# `` heading) and the analysis sections of a chapter's markdown cells.

    A section heading is a level-2 heading that starts with an analysis ID; its anchor is the MyST target on
    the line just above it (blank lines between are allowed), in the same cell.
    """
    title = None
    sections: list[Section] = []
    for text in markdown_cells:
        target = None
        for line in text.splitlines():
            stripped = line.strip()
            if title is None and stripped.startswith("# "):
                title = stripped[2:].strip()
            m_target = _TARGET.match(stripped)
            if m_target:
                target = m_target.group("label")
                continue
            m_heading = _HEADING.match(stripped)
            if m_heading:
                heading = m_heading.group("title")
                ref = _PAPER_REF.search(heading)
                sections.append(
                    Section(m_heading.group("id"), target, heading, ref.group("ref").strip() if ref else None)
                )
            if stripped:
                target = None
    return title, tuple(sections)


def read_chapter(path: str | Path) -> Chapter:
    """Parse one chapter notebook (source or executed copy). ``ValueError`` naming the file when it is not a
    notebook; a chapter without a ``# `` title gets its stem as title."""
    path = Path(path)
    try:
        nb = json.loads(path.read_text(encoding="utf-8"))
        cells = nb["cells"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{path}: not a readable notebook ({exc})") from exc
    markdown = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
                for c in cells if c.get("cell_type") == "markdown"]
    title, sections = parse_sections(markdown)
    return Chapter(path.stem, title or path.stem, sections)


def read_failed(results_dir: str | Path) -> dict[str, str]:
    """Chapters that failed in this build, from ``<results_dir>/_failed.json`` (written by the runner as
    ``{"failed": [{"notebook": stem, "error": one line}]}``): stem → error. Empty when the file is absent."""
    path = Path(results_dir) / FAILED_FILE
    if not path.exists():
        return {}
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))["failed"]
        return {str(e["notebook"]): str(e.get("error", "")).strip() for e in entries}
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{path}: expected {{'failed': [{{'notebook': stem, 'error': text}}]}} ({exc})") from exc


def built_chapters(chapters_dir: str | Path, exclude: Iterable[str] = ()) -> dict[str, Chapter]:
    """The executed chapters of a build (``<chapters_dir>/*.ipynb``), by stem, leaving out ``exclude``
    (the failed ones: their executed copy holds a traceback and is not in the book's table of contents)."""
    skip = set(exclude)
    folder = Path(chapters_dir)
    if not folder.is_dir():
        return {}
    return {p.stem: read_chapter(p) for p in sorted(folder.glob("*.ipynb")) if p.stem not in skip}


INDEX_COLUMNS = ("paper", "paper_ref", "analysis_id", "title", "chapter", "chapter_title", "anchor")


def figure_index(chapters: Mapping[str, Chapter], catalogue: pl.DataFrame) -> pl.DataFrame:
    """Every paper figure or table a built chapter reproduces, mapped to its section.

    One row per (chapter, section) whose heading names a paper reference, in catalogue order of the IDs (then
    chapter order); columns :data:`INDEX_COLUMNS`. ``paper`` is the catalogue's paper code (``?`` for an ID
    not in the catalogue).
    """
    order = {aid: i for i, aid in enumerate(catalogue["analysis_id"])}
    paper_of = dict(zip(catalogue["analysis_id"], catalogue["paper"]))
    rows = []
    for chapter in chapters.values():
        for s in chapter.sections:
            if s.paper_ref is None:
                continue
            rows.append((order.get(s.analysis_id, len(order)), chapter.stem, paper_of.get(s.analysis_id, "?"),
                         s.paper_ref, s.analysis_id, s.title, chapter.stem, chapter.title, s.anchor))
    rows.sort(key=lambda r: (r[0], r[1]))
    return pl.DataFrame([r[2:] for r in rows], schema={c: pl.String for c in INDEX_COLUMNS}, orient="row")


@dataclass(frozen=True)
class IndexEntry:
    """One figure or table of a paper in the book's index: where the paper numbers it (``label``, ``Fig 2``), in
    NG's earlier version too (``earlier``), its caption, and either the sections that reproduce it (``links``:
    ``(analysis_id, href or None, text)``; no href when no built chapter has the ID's section) or the reason it
    cannot be reproduced."""

    paper: str
    label: str
    earlier: str | None
    caption: str
    links: tuple[tuple[str, str | None, str], ...]
    reason: str | None

    @property
    def anchor(self) -> str:
        """The row's HTML id: ``fig-ng-fig-2``, ``fig-ae-table-7``."""
        return "fig-" + re.sub(r"[^a-z0-9]+", "-", f"{self.paper} {self.label}".lower()).strip("-")


def _label(kind: str, number: str) -> str:
    return f"{'Fig' if kind == 'Figure' else 'Table'} {number}"


def paper_figure_index(figures: pl.DataFrame, chapters: Mapping[str, Chapter],
                       ids: list[list[str]]) -> list[IndexEntry]:
    """Every figure and table of the papers (``figures``: :func:`bookbuild.catalogue.read_figures`, its IDs per row
    ``ids``) with the sections of the built ``chapters`` that reproduce it, named ``<ID> · <section title>``; an ID
    no built chapter has a section for is named, not linked. (The status page draws each ID's verdict beside it.)"""
    sections: dict[str, tuple[Chapter, Section]] = {}
    for chapter in chapters.values():
        for s in chapter.sections:
            sections.setdefault(s.analysis_id, (chapter, s))
    out = []
    for row, row_ids in zip(figures.iter_rows(named=True), ids, strict=True):
        links: list[tuple[str, str | None, str]] = []
        for aid in row_ids:
            if aid in sections:
                chapter, s = sections[aid]
                links.append((aid, section_href(chapter, aid), f"{aid} · {s.title}"))
            else:
                links.append((aid, None, f"{aid}: no section in this build"))
        earlier = row["number_earlier_version"]
        out.append(IndexEntry(row["paper"], _label(row["kind"], row["number"]),
                              _label(row["kind"], earlier) if earlier else None, row["caption"], tuple(links),
                              row["reason"] if row["reproducible"] == "no" else None))
    return out


def section_href(chapter: Chapter, analysis_id: str) -> str:
    """Link from a page beside the chapter (same folder) to the ID's section: ``03_preferences.html#sa-d5``;
    the page alone when the chapter has no target for the ID."""
    s = chapter.section(analysis_id)
    anchor = s.anchor if s is not None and s.anchor else None
    return f"{chapter.stem}.html" + (f"#{anchor}" if anchor else "")


#: The status page beside the chapters (``bookbuild.toc.STATUS_NOTEBOOK``, rendered).
STATUS_PAGE = "99_reproduction_status.html"
#: The class of the link under a section heading back to its status row (:func:`link_sections`).
STATUS_LINK_CLASS = "section-status"


def status_anchor(analysis_id: str) -> str:
    """The HTML id of an ID's row in the status table: ``status-sa-d5``."""
    return "status-" + analysis_id.lower()


def _index_entry(analysis_id: str, title: str) -> str:
    """A Sphinx ``single`` index entry: the ID, with the section's title as its sub-entry (``;`` and ``!`` would
    start another level or mark it main, so they become commas)."""
    sub = re.sub(r"[;!]", ",", " ".join(title.split())).strip(" ,")
    return f"{analysis_id}; {sub}" if sub else analysis_id


def link_sections(source: str, known: Collection[str] | None = None, badges: Mapping[str, str] | None = None) -> str:
    """A chapter's markdown cell with, under each analysis section heading (:func:`parse_sections`' rule) whose ID
    is in ``known`` (the IDs the status page has a row for; ``None``: any), a MyST ``{index}`` directive (the
    general index lists the ID, its sub-entry the section's title, pointing here) and a small link to the ID's row
    of the status page (``99_reproduction_status.html#status-<id>``), the reverse of the status row's link to the
    section. The link reads ``badges[id]`` (HTML: the ID's verdict badge, :func:`bookbuild.status_page.section_badge`)
    where given, else "status of <ID>". A heading that has them already keeps its index entry, and its link is
    rewritten only when ``badges`` gives one (idempotent)."""
    lines = source.split("\n")
    out: list[str] = []
    skip: set[int] = set()
    for i, line in enumerate(lines):
        if i in skip:
            continue
        out.append(line)
        m = _HEADING.match(line.strip())
        if not m or (known is not None and m.group("id") not in known):
            continue
        aid = m.group("id")
        href = f"{STATUS_PAGE}#{status_anchor(aid)}"
        text = (badges or {}).get(aid)
        link = (f'<a class="{STATUS_LINK_CLASS}" href="{href}" title="status of {aid}">{text}</a>' if text
                else f'<a class="{STATUS_LINK_CLASS}" href="{href}">status of {aid}</a>')
        existing = next((j for j in range(i + 1, min(i + 5, len(lines))) if f'href="{href}"' in lines[j]), None)
        if existing is None:
            out += ["", f":::{{index}} single: {_index_entry(aid, m.group('title'))}", ":::", link]
        elif text:
            out += lines[i + 1:existing] + [link]
            skip |= set(range(i + 1, existing + 1))
    return "\n".join(out)


# --- the table of contents of one build -----------------------------------------------------------------------


