"""A quiet console while the notebooks run: the runner's lines and one progress bar per notebook on the screen,
everything else (the kernels' own warnings, library warnings, tracebacks) in the log file the runner names.

:func:`quiet` points file descriptor 2 at the log for its duration, so the kernels, which inherit it, write their
stderr there, and so do Python's warnings and logging in the runner; the bars and the runner's lines go to a
duplicate of the original stderr (the terminal). Descriptor 2 is restored on exit, whatever happened.

The kernels' own output reaches the log through :meth:`Screen.kernel_stream` (papermill's ``stdout_file`` /
``stderr_file``: every stream a cell prints, as it comes, each line prefixed ``[<chapter>]``), and the runner writes
each failed notebook's traceback there (:meth:`Screen.log_block`); the console gets one ``FAIL`` line per failure
as it happens and the list at the end.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

#: The most characters of one chapter's kernel output kept in the log (the rest is counted, not written).
MAX_KERNEL_OUTPUT = 1_000_000


@dataclass
class Screen:
    """Where the runner's lines (stdout), the notebooks' progress bars (the terminal's stderr) and the log go."""

    bars: IO[str]
    log: IO[str] | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def line(self, text: str) -> None:
        print(text, flush=True)

    def log_block(self, text: str) -> None:
        """Write ``text`` (whole lines) to the log in one piece, never interleaved with another chapter's lines."""
        if self.log is None:
            return
        with self.lock:
            self.log.write(text if text.endswith("\n") else text + "\n")
            self.log.flush()

    def kernel_stream(self, stem: str, name: str) -> KernelStream:
        """A file-like object for papermill's ``stdout_file`` / ``stderr_file``: the kernel's ``name`` stream of
        chapter ``stem`` into the log, line by line, each line prefixed ``[stem]`` (``[stem:stderr]``)."""
        return KernelStream(self, f"[{stem}]" if name == "stdout" else f"[{stem}:{name}]")

    def bar_options(self, stem: str) -> dict[str, Any]:
        """papermill's ``progress_bar`` options: one bar per notebook, left on the screen when it finishes."""
        return {"desc": f"  {stem}", "leave": True, "dynamic_ncols": True, "file": self.bars}


class KernelStream:
    """One kernel stream written to the log as whole prefixed lines (a partial line waits for its end or
    :meth:`close`); at most :data:`MAX_KERNEL_OUTPUT` characters, then one line saying how many were left out."""

    def __init__(self, screen: Screen, prefix: str):
        self.screen, self.prefix = screen, prefix
        self.pending = ""
        self.written = 0
        self.dropped = 0

    def write(self, text: str) -> int:
        room = MAX_KERNEL_OUTPUT - self.written
        kept = text[:max(0, room)]
        self.dropped += len(text) - len(kept)
        self.written += len(kept)
        lines = (self.pending + kept).split("\n")
        self.pending = lines.pop()
        if lines:
            self.screen.log_block("\n".join(f"{self.prefix} {ln}" for ln in lines))
        return len(text)

    def flush(self) -> None:
        """Nothing to do: whole lines are written as they come (papermill calls this after each output)."""

    def close(self) -> None:
        if self.pending:
            self.screen.log_block(f"{self.prefix} {self.pending}")
            self.pending = ""
        if self.dropped:
            self.screen.log_block(f"{self.prefix} ... {self.dropped:,} more characters of output not kept in the log")
            self.dropped = 0


@contextmanager
def quiet(log_path: Path) -> Iterator[Screen]:
    """Send descriptor 2 (and ``sys.stderr``) to ``log_path`` (appended) while the block runs."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(2)
    bars = os.fdopen(os.dup(saved), "w", buffering=1)
    previous_stderr = sys.stderr
    with log_path.open("a", buffering=1) as log:
        os.dup2(log.fileno(), 2)
        sys.stderr = log
        # papermill logs at INFO through the root logger: its records go to the log, not the terminal
        handler = logging.StreamHandler(log)
        root = logging.getLogger()
        root.addHandler(handler)
        try:
            yield Screen(bars, log)
        finally:
            root.removeHandler(handler)
            log.flush()
            sys.stderr = previous_stderr
            os.dup2(saved, 2)
            os.close(saved)
            bars.close()
