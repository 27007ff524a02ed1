"""``make lab`` (``python -m bookbuild.lab [options of jupyter lab]``): JupyterLab on the chapter notebooks, run from
the repository root, with the kernel the runner uses.

The server's root is ``notebooks/`` and a notebook opens in :data:`~bookbuild.config.DEFAULT_KERNEL` (a missing
kernel stops it with exit 2 and one line naming the installed ones, as ``--kernel`` does for the runner). The
kernels find the data mirror the runner's find (``$ANALYSIS_DATA_MIRROR``, else the library's default for ``<root>``:
:func:`analysis_lib.fetch.default_mirror`) and the library's cache under ``<root>/.cache``. Options
for ``jupyter lab`` come after the command or, from ``make lab LAB_ARGS="..."``, in ``$BOOK_LAB_ARGS`` (split as a
shell would split words; never run by a shell).
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from analysis_lib.fetch import MIRROR_ENV, default_mirror
from bookbuild.config import DEFAULT_KERNEL, EXIT_USAGE, BuildError
from bookbuild.kernels import check_kernel

#: ``make lab``'s ``LAB_ARGS``: options for ``jupyter lab``.
ARGS_ENV = "BOOK_LAB_ARGS"


def lab_command(root: Path, options: Sequence[str] = ()) -> list[str]:
    """``jupyter lab`` of this environment, serving ``<root>/notebooks`` with :data:`DEFAULT_KERNEL` for a new
    notebook, then ``options``."""
    jupyter = Path(sys.executable).with_name("jupyter")
    return [str(jupyter), "lab", f"--ServerApp.root_dir={root / 'notebooks'}",
            f"--MappingKernelManager.default_kernel_name={DEFAULT_KERNEL}", *options]


def lab_environment(root: Path, environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` with the runner's data mirror default for the kernels (set only where the variable is unset)."""
    env = dict(environ)
    if not env.get(MIRROR_ENV) and (mirror := default_mirror(root)) is not None:
        env[MIRROR_ENV] = str(mirror)
    return env


def main(argv: Sequence[str] | None = None) -> int:
    root = Path.cwd()
    try:
        try:
            given = shlex.split(os.environ.get(ARGS_ENV, ""))
        except ValueError as exc:  # an unclosed quote
            raise BuildError(f"LAB_ARGS: {exc}", EXIT_USAGE) from None
        options = [*given, *(sys.argv[1:] if argv is None else argv)]
        if not (root / "notebooks").is_dir():
            raise BuildError(f"no notebooks/ in {root}: run it from the repository root", EXIT_USAGE)
        check_kernel(DEFAULT_KERNEL)
    except BuildError as exc:
        print(f"bookbuild.lab: {exc}", file=sys.stderr)
        return exc.exit_code
    command = lab_command(root, options)
    os.execve(command[0], command, lab_environment(root, os.environ))  # the server in this process, until stopped


if __name__ == "__main__":
    sys.exit(main())
