"""Where things are: the package's resources, the repository root (when there is one) and the cache folder.

A leaf module (imports nothing from ``analysis_lib``) that works for an editable and a non-editable install:

- :func:`resource` finds a file shipped inside the package (``importlib.resources``);
- :func:`repo_root` is the checkout holding the package (a folder with ``pyproject.toml`` and ``.git`` or
  ``data_manifest.csv`` above ``analysis_lib/``), or ``None`` for an installed package;
- :func:`cache_dir` is where everything computed may be written: ``$ANALYSIS_CACHE_DIR`` when set (the book
  runner sets it to the build's cache), else ``<repo>/.cache`` in a checkout, else the user cache folder
  (``$XDG_CACHE_HOME/analysis_lib`` or ``~/.cache/analysis_lib``). Never the package folder;
- :func:`atomic_write` replaces a cache file whole (a temporary name, then a rename).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from functools import cache
from importlib import resources
from pathlib import Path

CACHE_ENV = "ANALYSIS_CACHE_DIR"
PACKAGE = "analysis_lib"


def package_dir() -> Path:
    """The installed ``analysis_lib`` folder."""
    return Path(str(resources.files(PACKAGE)))


def resource(*parts: str) -> Path:
    """A file or folder under ``analysis_lib/resources`` (``resource("prompts", "x.txt")``)."""
    return Path(str(resources.files(PACKAGE).joinpath("resources", *parts)))


@cache
def repo_root() -> Path | None:
    """The repository checkout containing the package, or ``None`` when the package is installed elsewhere."""
    parent = package_dir().parent
    if (parent / "pyproject.toml").exists() and ((parent / ".git").exists() or (parent / "data_manifest.csv").exists()):
        return parent
    return None


def display_path(path: str | Path, root: str | Path | None = None) -> str:
    """How a page shows a path: relative to ``root`` (default: the repository root) when it lies inside it,
    else by its last component, so a page never shows the build machine's absolute folders."""
    path = Path(path)
    base = Path(root) if root is not None else repo_root()
    if base is not None and path.resolve().is_relative_to(base.resolve()):
        return path.resolve().relative_to(base.resolve()).as_posix()
    return path.name


def cache_dir(*parts: str) -> Path:
    """The cache folder (see the module doc), with ``parts`` appended; not created here."""
    env = os.environ.get(CACHE_ENV)
    if env:
        base = Path(env).expanduser()
    elif repo_root() is not None:
        base = repo_root() / ".cache"  # type: ignore[operator]
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        base = (Path(xdg) if xdg else Path.home() / ".cache") / PACKAGE
    return base.joinpath(*parts)


def atomic_write(path: Path, write: Callable[[Path], object]) -> None:
    """``write(tmp)`` to a temporary name of this process's own beside ``path``, then rename it to ``path``: a
    reader (another process, say) sees the old file or the whole new one, never a part of it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.part")
    try:
        write(tmp)
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)
