"""The files of one chapter and how a run replaces them atomically.

While a chapter runs, papermill writes its executed copy to ``<book>/_build/runs/partial/<name>`` and the chapter's
recorder writes its results into a staging folder, ``<book>/_build/runs/results/<stem>/`` (the ``results_dir`` the
chapter gets). Only when the notebook finished are the results (with the chapter's identity added) moved into
``<book>/_results`` and the executed copy into ``<book>/chapters``, each by a rename. A failed or killed run
therefore never leaves partial results where the status page reads them: they stay in staging (cleared by the next
run) and the last good results, page and state stay in place. A failed run's executed copy is kept in
``<book>/_build/runs/failed/`` with its traceback.

The executed copy shows on the page (:func:`finish_page`): the parameters cell (folded) rewritten with the values
the run actually used, a user's file by its name and sha256, never an absolute path; papermill's injected cell
removed (its values, and papermill's metadata, made relative: the copy is also the notebook a reader downloads);
each section heading linked to its status row and indexed; and under the title the chapter's identity
(:func:`bookbuild.identity.page_cell_source`), with a warning when the chapter was computed from other inputs than
the rest of the book (:func:`mark_identity`).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from analysis_lib import sources
from analysis_lib.extras import require
from bookbuild import catalogue, identity, keys, markup, navigation, status, status_page, toc
from bookbuild.config import Config

#: Parameters the runner sets to the build's own folders: shown relative to the repository on the page.
BUILD_FOLDERS = {"results_dir": "book/_results", "cache_dir": ".cache", "chapters_dir": "book/chapters"}


def _nbformat() -> Any:
    return require("nbformat", "book", purpose="the executed chapters")


class Chapter:
    """One chapter's executed copy, results, state, staging folder and failed copy."""

    def __init__(self, cfg: Config, nb: Path):
        self.nb = nb
        self.stem = nb.stem
        self.output = cfg.chapters_dir / nb.name
        self.partial = cfg.work_dir / "partial" / nb.name
        self.failed_copy = cfg.work_dir / "failed" / nb.name
        self.staging = cfg.work_dir / "results" / nb.stem
        self.results_dir = cfg.results_dir
        self.results = cfg.results_dir / f"{nb.stem}.json"
        self.state = cfg.state_dir / f"{nb.stem}.json"

    def prepare(self) -> None:
        """An empty staging folder and the run folders (what a killed run left there is discarded)."""
        shutil.rmtree(self.staging, ignore_errors=True)
        for d in (self.staging, self.partial.parent, self.failed_copy.parent, self.results_dir):
            d.mkdir(parents=True, exist_ok=True)
        self.partial.unlink(missing_ok=True)

    def commit(self, ident: Mapping[str, Any]) -> None:
        """Move the finished run's results (with ``ident`` added) and executed copy into place."""
        staged = self.staging / self.results.name
        if staged.exists():
            payload = json.loads(staged.read_text())
            payload["identity"] = dict(ident)
            keys.write_json(staged, payload)
        for entry in sorted(self.staging.iterdir()):
            target = self.results_dir / entry.name
            if entry.is_dir():
                shutil.rmtree(target, ignore_errors=True)
            entry.replace(target)
        self.partial.replace(self.output)
        self.failed_copy.unlink(missing_ok=True)
        shutil.rmtree(self.staging, ignore_errors=True)

    def roll_back(self) -> None:
        """A failed run: its executed copy is kept aside; its partial results are discarded."""
        if self.partial.exists():
            self.partial.replace(self.failed_copy)
        shutil.rmtree(self.staging, ignore_errors=True)


def recover_legacy(cfg: Config) -> None:
    """Results set aside by an older runner that was killed (``<state>/last_good/``) go back into place."""
    last_good = cfg.state_dir / "last_good"
    if last_good.is_dir():
        for path in last_good.glob("*.json"):
            path.replace(cfg.results_dir / path.name)
        shutil.rmtree(last_good, ignore_errors=True)


def shown_value(name: str, value: Any, described: Mapping[str, Mapping[str, Any]]) -> str:
    """A parameter's value as its page shows it (a Python literal, with a comment for a user's input)."""
    if name in BUILD_FOLDERS and isinstance(value, str) and Path(value).is_absolute():
        return f"{BUILD_FOLDERS[name]!r}  # set by the build"
    if isinstance(value, str) and value and not sources.is_named(value) and Path(value).is_absolute():
        info = described.get(value) or {"name": Path(value).name}
        facts = [f"sha256 {str(info['sha256'])[:12]}…"] if info.get("sha256") else []
        facts += [f"{int(info['rows']):,} {info.get('unit', 'rows')}"] if info.get("rows") is not None else []
        return f"{info['name']!r}  # the user's {'folder' if Path(value).is_dir() else 'file'}" + (
            f" ({', '.join(facts)})" if facts else "")
    return repr(value)


def parameters_source(inspected: Mapping[str, Mapping[str, Any]], injected: Mapping[str, Any],
                      described: Mapping[str, Mapping[str, Any]]) -> str:
    """The parameters cell as the page shows it: one line per declared parameter, the value this run used
    (:func:`shown_value`) or the notebook's default, with the default's comment."""
    lines = ["# the parameters of this build (the notebook's defaults where the build set nothing)"]
    for name, spec in inspected.items():
        if name in injected:
            lines.append(f"{name} = {shown_value(name, injected[name], described)}")
        else:
            help_text = f"  # {spec['help']}" if spec.get("help") else ""
            lines.append(f"{name} = {spec.get('default')}{help_text}")
    return "\n".join(lines)


def shown_parameter(name: str, value: Any, described: Mapping[str, Mapping[str, Any]]) -> Any:
    """A parameter's value as the downloadable notebook keeps it: a build folder relative to the repository
    (:data:`BUILD_FOLDERS`), a user's file or folder by its name, anything else as it is. Never an absolute path."""
    if isinstance(value, str) and value and not sources.is_named(value) and Path(value).is_absolute():
        if name in BUILD_FOLDERS:
            return BUILD_FOLDERS[name]
        return str((described.get(value) or {}).get("name") or Path(value).name)
    return value


def injected_source(injected: Mapping[str, Any], described: Mapping[str, Mapping[str, Any]]) -> str:
    """Papermill's injected-parameters cell with the values of :func:`shown_parameter` (what the page shows)."""
    lines = ["# Parameters (set by the build; paths relative to the repository)"]
    lines += [f"{name} = {shown_parameter(name, value, described)!r}" for name, value in injected.items()]
    return "\n".join(lines) + "\n"


def _relative_papermill(meta: dict, described: Mapping[str, Mapping[str, Any]]) -> None:
    """Papermill's notebook metadata without the build machine's paths: the parameters as
    :func:`shown_parameter` keeps them, the input and output paths by the notebook's name."""
    for key in ("parameters", "default_parameters"):
        if isinstance(meta.get(key), dict):
            meta[key] = {k: shown_parameter(k, v, described) for k, v in meta[key].items()}
    if meta.get("input_path"):
        meta["input_path"] = f"notebooks/{Path(str(meta['input_path'])).name}"
    if meta.get("output_path"):
        meta["output_path"] = f"{BUILD_FOLDERS['chapters_dir']}/{Path(str(meta['output_path'])).name}"
    meta["environment_variables"] = {}


def finish_page(executed: Path, inspected: Mapping[str, Mapping[str, Any]], injected: Mapping[str, Any],
                described: Mapping[str, Mapping[str, Any]]) -> None:
    """Fold the parameters cell (tag ``hide-cell``) showing the values used, and remove papermill's
    injected-parameters cell from the page (tag ``remove-cell``). The executed copy is also the notebook a reader
    downloads, so it carries no path of the build machine: the injected cell and papermill's metadata hold the
    values the page shows (:func:`shown_parameter`: ``results_dir = 'book/_results'``). Each analysis section
    heading of a catalogued ID gets an index entry and a link to its status row
    (:func:`bookbuild.navigation.link_sections`). A Markdown output left by a cell is replaced by its HTML
    (:func:`bookbuild.markup.safe_outputs`): the book parses no output as MyST."""
    nbformat = _nbformat()
    nb = nbformat.read(executed, as_version=4)
    markup.safe_outputs(nb.cells)
    known = {*catalogue.read()["analysis_id"], *catalogue.PROJECT_CHECKS}  # the IDs with a row on the status page
    for cell in nb.cells:
        tags = cell.get("metadata", {}).get("tags", [])
        wanted = "remove-cell" if "injected-parameters" in tags else "hide-cell" if "parameters" in tags else None
        if wanted and wanted not in tags:
            cell.setdefault("metadata", {})["tags"] = [*tags, wanted]
        if "parameters" in tags and inspected:
            cell.source = parameters_source(inspected, injected, described)
        if "injected-parameters" in tags and injected:
            cell.source = injected_source(injected, described)
        if cell.cell_type == "markdown":
            cell.source = navigation.link_sections(cell.source, known)
    if isinstance(nb.metadata.get("papermill"), dict):
        _relative_papermill(nb.metadata["papermill"], described)
    nbformat.write(nb, executed)


def mark_identity(executed: Path, ident: Mapping[str, Any] | None, stale: list[str],
                  used: Sequence[str] = (), lead: str = "", badges: Mapping[str, str] | None = None) -> bool:
    """Put (or refresh) the identity cell under the chapter's title (``used``: the LLM models its numbers rest on;
    ``lead``: what its sections ran on, :func:`bookbuild.status_page.chapter_data_line`) and, where ``badges`` gives
    them, the verdict badges under its section headings (:func:`bookbuild.navigation.link_sections`); returns
    whether the file changed."""
    nbformat = _nbformat()
    nb = nbformat.read(executed, as_version=4)
    source = identity.page_cell_source(ident, stale, used, lead)
    cells = [c for c in nb.cells if c.get("id") != identity.CELL_ID]
    current = next((c for c in nb.cells if c.get("id") == identity.CELL_ID), None)
    changed = False
    if badges:
        known = {*catalogue.read()["analysis_id"], *catalogue.PROJECT_CHECKS}
        for cell in cells:
            if cell.cell_type == "markdown":
                linked = navigation.link_sections(cell.source, known, badges)
                changed |= linked != cell.source
                cell.source = linked
    if current is not None and current.source == source and not changed:
        return False
    if source:
        at = 1 if cells and cells[0].cell_type == "markdown" else 0
        cells.insert(at, nbformat.v4.new_markdown_cell(source, id=identity.CELL_ID))
    if current is None and not source and not changed:
        return False
    nb.cells = cells
    nbformat.write(nb, executed)
    return True


def collapse_setup_cells(executed: Path) -> None:
    """Fold the parameter cell (tag ``hide-cell``) and remove papermill's injected-parameters cell (tag
    ``remove-cell``) of an executed chapter; :func:`bookbuild.chapter.finish_page` without rewriting the values."""
    finish_page(executed, {}, {}, {})


def report_identity(cfg: Config, reference: Mapping[str, Any]) -> dict[str, list[str]]:
    """Mark every executed chapter with its identity (a warning when stale), what its sections ran on where they ran on
    different data, and each section's verdict badge (from the status table of this build, so a verdict that another
    chapter changed is refreshed); write the front page's line; return the stale chapters (stem -> differences)."""
    stale = identity.stale_chapters(cfg.results_dir, reference)
    recorded = identity.read_identities(cfg.results_dir)
    used = identity.read_used_models(cfg.results_dir)
    build = status.load_build(cfg.results_dir, cfg.chapters_dir)
    table = status.status_table(build.results, catalogue.for_reader(catalogue.read()), build.where, build.failed_ids)
    rows = {row["id"]: row for row in table.iter_rows(named=True)}
    marks_path = cfg.state_dir / "identity_cells.json"
    marks = keys.read_json(marks_path) or {}
    for stem in executed_chapters(cfg):
        if stem == toc.STATUS_NOTEBOOK:
            continue
        path = cfg.chapters_dir / f"{stem}.ipynb"
        ids = list(dict.fromkeys(s.analysis_id for s in navigation.read_chapter(path).sections
                                 if s.analysis_id in rows))
        lead = status_page.chapter_data_line([rows[aid] for aid in ids])
        badges = {aid: status_page.section_badge(rows[aid]) for aid in ids}
        source = identity.page_cell_source(recorded.get(stem), stale.get(stem, []), used.get(stem, []), lead)
        digest = hashlib.sha256(json.dumps([source, badges], sort_keys=True).encode()).hexdigest()
        mark = [digest, path.stat().st_mtime_ns]
        if marks.get(stem) != mark:  # an unchanged page is not read again (warm builds)
            mark_identity(path, recorded.get(stem), stale.get(stem, []), used.get(stem, []), lead, badges)
            marks[stem] = [digest, path.stat().st_mtime_ns]
    keys.write_json(marks_path, marks)
    front = cfg.book_dir / "_build" / identity.FRONT_PAGE_FILE
    front.parent.mkdir(parents=True, exist_ok=True)
    built = executed_chapters(cfg)
    status_doc = f"chapters/{toc.STATUS_NOTEBOOK}" if toc.STATUS_NOTEBOOK in built else None
    counts = status_page.front_page_counts(table, status_doc) if status_doc else ""
    every = sorted({m for models in used.values() for m in models})
    text = identity.front_page_line(reference, stale, status_doc, counts, every)
    if not front.exists() or front.read_text() != text:
        front.write_text(text)
    if stale:
        listed = "; ".join(f"{stem} ({', '.join(d.split(' (this build')[0] for d in diff)})"
                           for stem, diff in sorted(stale.items()))
        print(f"stale: {len(stale)} chapter(s) were computed from other inputs than this build's and are flagged "
              f"on their pages and the status page: {listed}", flush=True)
    return stale


def executed_chapters(cfg: Config) -> list[str]:
    """Stems of the notebooks whose executed copy comes from a run that finished, in book order."""
    names = []
    for nb in sorted(cfg.notebooks_dir.glob("*.ipynb")):
        state = keys.read_json(cfg.state_dir / f"{nb.stem}.json")
        output = cfg.chapters_dir / nb.name
        if output.exists() and state is not None and state.get("output") == str(output):
            names.append(nb.stem)
    return toc.order_chapters(names, toc.chapter_order(cfg.root / "_toc.yml"))
