"""A failed chapter: its one-line error, its details, its traceback in the log, and the book's list of failures.

A chapter that fails does not stop the book (:mod:`bookbuild.runner`): the runner rolls it back
(:meth:`bookbuild.chapter.Chapter.roll_back`), prints ``FAIL  <notebook>: <one line>`` on the console at once, writes
the traceback and the failing cell into the log (:func:`log_failure`; the kernel's own output is already there,
streamed line by line, :meth:`bookbuild.console.Screen.kernel_stream`), lists the chapter in
``<results_dir>/_failed.json`` (:func:`record_failures`, read by the status page) and goes on with the other
chapters. At the end the runner lists every failure (:func:`closing_message`) and exits 1, after building the book
from what finished.
"""

from __future__ import annotations

import re
import traceback
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from analysis_lib.extras import require
from bookbuild import keys
from bookbuild.navigation import FAILED_FILE

#: The most characters of one failure's one-line error (on the console, in ``_failed.json``).
ONE_LINE_CHARS = 300
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def execution_error() -> Any:
    """papermill's exception for a cell that raised (it carries the kernel's traceback)."""
    return require("papermill.exceptions", "book", purpose="running the chapter notebooks").PapermillExecutionError


def one_line(exc: BaseException) -> str:
    """The error in one line of at most :data:`ONE_LINE_CHARS` characters: ``Type: message``."""
    text = f"{exc.ename}: {exc.evalue}" if isinstance(exc, execution_error()) else f"{type(exc).__name__}: {exc}"
    return " ".join(text.split())[:ONE_LINE_CHARS]


def details(nb: Path, output: Path, exc: BaseException, log: Path) -> str:
    """Where it failed: the cell, the executed copy with the traceback, the log."""
    if isinstance(exc, execution_error()):
        first_line = next((ln for ln in (exc.source or "").splitlines() if ln.strip()), "")
        return (
            f"notebook {nb.name} failed at cell index {exc.cell_index} (execution count {exc.exec_count}, "
            f"counting papermill's injected-parameters cell): {exc.ename}: {exc.evalue}\n"
            f"  cell starts: {first_line[:120]}\n"
            f"  executed copy with the traceback: {output}\n"
            f"  kernel log: {log}"
        )
    return (f"notebook {nb.name} could not be executed: {type(exc).__name__}: {exc}\n  output: {output}\n"
            f"  log: {log}")


def traceback_text(exc: BaseException) -> str:
    """The kernel's traceback of a failing cell (colour codes removed), else the runner's own traceback."""
    if isinstance(exc, execution_error()) and getattr(exc, "traceback", None):
        return _ANSI.sub("", "\n".join(exc.traceback))
    return "".join(traceback.format_exception(exc)).rstrip()


def log_failure(screen: Any, nb: Path, exc: BaseException, output: Path, seconds: float) -> None:
    """Write the failure of ``nb`` into the build log: a header, where it failed, the failing cell and the
    traceback (``screen``: :class:`bookbuild.console.Screen`)."""
    when = datetime.now(UTC).isoformat(timespec="seconds")
    parts = [f"===== {nb.stem}: FAILED after {seconds:.1f} s at {when}: {one_line(exc)}",
             details(nb, output, exc, Path(getattr(screen.log, "name", "build.log")))]
    source = getattr(exc, "source", None)
    if source:
        parts.append("----- the failing cell:\n" + source.rstrip())
    parts.append("----- traceback:\n" + traceback_text(exc))
    parts.append(f"===== end of {nb.stem}'s failure")
    screen.log_block("\n".join(parts))


def record_failures(results_dir: Path, failed: Mapping[str, str | None]) -> None:
    """Update ``_failed.json`` (``{"failed": [{"notebook": stem, "error": one line}]}``): a stem mapped to an error
    is added, to ``None`` removed; no entries: no file."""
    path = results_dir / FAILED_FILE
    current = {f["notebook"]: f["error"] for f in (keys.read_json(path) or {}).get("failed", [])}
    for stem, error in failed.items():
        if error is None:
            current.pop(stem, None)
        else:
            current[stem] = error
    if current:
        keys.write_json(path, {"failed": [{"notebook": k, "error": v} for k, v in sorted(current.items())]})
    else:
        path.unlink(missing_ok=True)


def closing_message(errors: Mapping[str, str], details_by_stem: Mapping[str, str]) -> str:
    """The end of a build with failures: one line listing every failed chapter (stem and error, book order as
    given), then each failure's details."""
    head = (f"{len(errors)} chapter{'s' if len(errors) != 1 else ''} failed: "
            + "; ".join(f"{stem} ({error})" for stem, error in errors.items()))
    return "\n".join([head, *(details_by_stem[s] for s in errors if s in details_by_stem)])
