"""A quiet console while the notebooks run: the runner's lines and one progress bar per notebook on the screen,
everything else (the kernels' own warnings, library warnings, tracebacks) in the log file the runner names.

:func:`quiet` points file descriptor 2 at the log for its duration, so the kernels, which inherit it, write their
stderr there, and so do Python's warnings and logging in the runner; the bars and the runner's lines go to a
duplicate of the original stderr (the terminal). Descriptor 2 is restored on exit, whatever happened.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any


@dataclass
class Screen:
    """Where the runner's lines (stdout) and the notebooks' progress bars (the terminal's stderr) go."""

    bars: IO[str]

    def line(self, text: str) -> None:
        print(text, flush=True)

    def bar_options(self, stem: str) -> dict[str, Any]:
        """papermill's ``progress_bar`` options: one bar per notebook, left on the screen when it finishes."""
        return {"desc": f"  {stem}", "leave": True, "dynamic_ncols": True, "file": self.bars}


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
            yield Screen(bars)
        finally:
            root.removeHandler(handler)
            log.flush()
            sys.stderr = previous_stderr
            os.dup2(saved, 2)
            os.close(saved)
            bars.close()
