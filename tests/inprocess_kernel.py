"""Papermill without a kernel, for the runner tests that check its bookkeeping (skip and rerun, ``--only``, staging,
failure records, the TOC) rather than papermill or the kernel itself.

:func:`use` replaces the runner's papermill with :class:`InProcessPapermill`: papermill itself parameterises the
notebook (``prepare_only``: the injected-parameters cell, the metadata, exactly as a real run writes them), then
the code cells run in this process, in a fresh namespace, in the notebook's working folder, one notebook at a
time; what they display is kept as display outputs (IPython's own formatter), what they print as a stream output.
A failing cell raises papermill's own ``PapermillExecutionError`` with the cell's index, as a kernel run does,
after writing the notebook run so far. A fixture notebook starts in milliseconds instead of a kernel's second or
more.

Tests that check what only a kernel does (the kernel's environment and caches, the console and log streams, a killed
kernel, a plain papermill run) are marked ``real_kernel`` and keep papermill as it is.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import threading
import traceback
from pathlib import Path
from typing import Any

import IPython.display
import nbformat
import papermill
import pytest
from IPython.core.formatters import DisplayFormatter
from papermill.exceptions import PapermillExecutionError

_ONE_AT_A_TIME = threading.Lock()  # the cells change the working folder: notebooks run one after another


class _ThisThread(io.TextIOBase):
    """Standard output while a cell runs: what the cell's thread prints goes to ``buffer``, what the runner's other
    threads print (``--jobs``: the console lines of the chapters beside it) to the stream that was there."""

    def __init__(self, buffer: io.StringIO):
        self.buffer, self.thread, self.original = buffer, threading.current_thread(), sys.stdout

    def write(self, text: str) -> int:
        return (self.buffer if threading.current_thread() is self.thread else self.original).write(text)

    def flush(self) -> None:
        self.original.flush()


class InProcessPapermill:
    """The two papermill calls the runner makes: ``inspect_notebook`` (papermill's own) and ``execute_notebook``."""

    inspect_notebook = staticmethod(papermill.inspect_notebook)

    @staticmethod
    def execute_notebook(input_path: str, output_path: str, parameters: dict | None = None, cwd: str | None = None,
                         stdout_file: Any = None, **_: Any) -> None:
        papermill.execute_notebook(input_path, output_path, parameters=parameters, prepare_only=True,
                                   progress_bar=False, kernel_name="python3")
        nb = nbformat.read(output_path, as_version=4)
        namespace: dict[str, Any] = {"__name__": "__main__"}
        formatter = DisplayFormatter()
        shown: list[Any] = []

        def display(*objs: Any, **_: Any) -> None:
            for obj in objs:
                data, metadata = formatter.format(obj)
                shown.append(nbformat.v4.new_output("display_data", data=data, metadata=metadata))

        with _ONE_AT_A_TIME, contextlib.chdir(cwd or os.getcwd()), pytest.MonkeyPatch.context() as patch:
            patch.setattr(IPython.display, "display", display)
            for index, cell in enumerate(nb.cells):
                if cell.cell_type != "code":
                    continue
                printed = io.StringIO()
                shown.clear()
                try:
                    with contextlib.redirect_stdout(_ThisThread(printed)):
                        exec(compile(cell.source, f"<{Path(input_path).name} cell {index}>", "exec"), namespace)
                except Exception as exc:
                    nbformat.write(nb, output_path)
                    raise PapermillExecutionError(index, index, cell.source, type(exc).__name__, str(exc),
                                                  traceback.format_exception(exc)) from exc
                finally:
                    cell.outputs = list(shown)
                    if printed.getvalue():
                        cell.outputs.append(nbformat.v4.new_output("stream", name="stdout", text=printed.getvalue()))
                        if stdout_file is not None:
                            stdout_file.write(printed.getvalue())
        nbformat.write(nb, output_path)


def use(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run the runner's notebooks in this process, unless the test is marked ``real_kernel``."""
    if request.node.get_closest_marker("real_kernel") is None:
        from bookbuild import runner

        monkeypatch.setattr(runner, "papermill", lambda: InProcessPapermill)
