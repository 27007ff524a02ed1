"""The Jupyter side of a build: papermill, the kernel each chapter runs in, and a notebook's declared parameters.

Kernels run on local (IPC) sockets of their own (:func:`ipc_kernels`); :func:`check_kernel` refuses an unknown
``--kernel`` before anything runs (exit 2, one line naming the installed kernels). Inside a kernel,
:func:`forget_on_error` removes a chapter's results file when a cell fails.
"""

from __future__ import annotations

import os
import tempfile
import uuid
from pathlib import Path
from typing import Any

from analysis_lib.extras import require
from bookbuild.config import EXIT_USAGE, BuildError


def declared_parameters(notebook: Path) -> dict[str, dict]:
    """The parameters a notebook's ``parameters`` cell declares, in order, with their defaults (papermill's
    inspection)."""
    return dict(papermill().inspect_notebook(str(notebook)))


def papermill() -> Any:
    return require("papermill", "book", purpose="running the chapter notebooks")


def ipc_kernels() -> type:
    """nbclient's kernel manager on local (IPC) sockets, each kernel under a short name of its own in the temporary
    folder. Over TCP the manager picks free ports and the kernel binds them a moment later: with several kernels
    starting at once (``--jobs``, the test suite's workers) another process can take a port in between ("Address
    already in use", the kernel dies before replying)."""
    base = require("jupyter_client", "book", purpose="running the chapter notebooks").AsyncKernelManager

    class IPCKernelManager(base):  # type: ignore[misc, valid-type]
        def __init__(self, **kwargs: Any):
            kwargs.setdefault("transport", "ipc")  # socket files <ip>-<n>, removed when the kernel shuts down
            kwargs.setdefault("ip", os.path.join(tempfile.gettempdir(), f"bookbuild-{uuid.uuid4().hex[:12]}"))
            super().__init__(**kwargs)

    return IPCKernelManager


def check_kernel(name: str) -> None:
    """The Jupyter kernel exists (exit 2 with one line naming ``--kernel`` and the kernels there are)."""
    kernelspec = require("jupyter_client.kernelspec", "book", purpose="running the chapter notebooks")
    manager = kernelspec.KernelSpecManager()
    try:
        manager.get_kernel_spec(name)
    except kernelspec.NoSuchKernel:
        known = ", ".join(sorted(manager.find_kernel_specs())) or "none"
        raise BuildError(f"--kernel {name[:80]!r}: no such Jupyter kernel (installed: {known})", EXIT_USAGE) from None


def forget_on_error(path: Path) -> None:
    """In an IPython kernel (a chapter run by papermill, the runner or JupyterLab): a cell that ends in an error
    removes the results file ``path``, so a run that fails (papermill stops at the failing cell) leaves none behind
    for a later build to read; the recorder's next number writes it again with everything it holds. A kernel killed
    mid-run leaves what it had written (the runner stages results and keeps only a finished chapter's)."""
    try:
        from IPython import get_ipython  # noqa: PLC0415 - only inside a kernel
    except ImportError:
        return
    shell = get_ipython()
    if shell is None:
        return

    def after(result: Any) -> None:
        if not result.success:
            path.unlink(missing_ok=True)

    shell.events.register("post_run_cell", after)
