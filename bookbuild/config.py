"""The build's settings: command line, environment (what ``make book`` passes) and exit codes.

``make book DATA=... NUGGETS=...`` hands its values to the runner through the environment (``BOOK_DATA``,
``BOOK_SEED``, ``BOOK_BOOTSTRAP``, ``BOOK_JOBS``, ``BOOK_MEMORY_GB``, ``BOOK_NUGGETS``, ``BOOK_MATCH_LOGS``,
``BOOK_ANSWERS``, ``BOOK_ANSWER_LABELS``, ``BOOK_ATTRIBUTION``, ``BOOK_TEXT_ARENA``), never through a shell command
line, so no character in a value is interpreted. A command-line option wins over its variable. A bad ``--seed`` or
``--bootstrap`` (``SEED=abc``) raises :class:`BuildError` with exit code 2 (argparse's own errors exit 2 too).
``--bootstrap`` takes 1 to :data:`MAX_BOOTSTRAP` rounds: 0 is refused because the chapters compare ranks with the
papers' through their bootstrap intervals (without intervals the ranks are strict and not comparable), and a bound
keeps a typo (10⁹) from running until killed. A folder option (``--state-dir``, ``--cache-dir``, ``--book-dir``,
``--root``, ``--notebooks-dir``) naming a file, inside a file, or on a symlink loop is refused the same way
(:func:`check_folders`).

``--set NAME=VALUE`` (repeatable) sets any other parameter a chapter's ``parameters`` cell declares (for example
``--set min_cluster_size=30`` for the topics, or smaller study sizes for a quick build); ``VALUE`` is read as a
Python literal (``3``, ``0.5``, ``None``, ``"text"``) and as text otherwise. The parameters the runner manages
(``data_source``, ``seed``, ``n_bootstrap``, ``results_dir``, ``cache_dir`` and the user inputs) have their own
options and cannot be set this way.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

EXIT_OK, EXIT_NOTEBOOK, EXIT_USAGE, EXIT_BOOK = 0, 1, 2, 3
#: The most bootstrap rounds a build takes (``--bootstrap`` / ``BOOTSTRAP``); the default is 100.
MAX_BOOTSTRAP = 10_000
#: The Jupyter kernel the chapters run in (``--kernel``; ``make lab`` opens them with it): the ipykernel that
#: ``make install`` puts into .venv/ (``.venv/share/jupyter/kernels/python3``, this environment's Python).
DEFAULT_KERNEL = "python3"
EXIT_MEANING = {EXIT_OK: "done", EXIT_NOTEBOOK: "a notebook failed", EXIT_USAGE: "bad arguments or inputs",
                EXIT_BOOK: "the book build failed"}

#: user inputs: command-line option -> (environment variable, notebook parameter)
USER_INPUTS: dict[str, tuple[str, str]] = {
    "nuggets": ("BOOK_NUGGETS", "nugget_records"),
    "match_logs": ("BOOK_MATCH_LOGS", "match_logs"),
    "answers": ("BOOK_ANSWERS", "answer_records"),
    "answer_labels": ("BOOK_ANSWER_LABELS", "answer_labels"),
    "attribution": ("BOOK_ATTRIBUTION", "attribution_source"),
    "text_arena": ("BOOK_TEXT_ARENA", "text_arena_source"),
}
#: Parameters the runner sets itself (``--data``, ``--seed``, ... and the user inputs): not settable by ``--set``.
MANAGED_PARAMETERS = frozenset({"data_source", "seed", "n_bootstrap", "results_dir", "cache_dir",
                                *(param for _, param in USER_INPUTS.values())})


class BuildError(RuntimeError):
    """A build step failed; ``exit_code`` is the process exit status to use; ``summary``: what the build did before
    (a build whose chapters failed still ran the others and built the book)."""

    def __init__(self, message: str, exit_code: int, summary: Summary | None = None):
        super().__init__(message)
        self.exit_code = exit_code
        self.summary = summary


@dataclass
class Config:
    """Everything one build needs; paths are absolute. ``inputs`` maps notebook parameter names
    (``nugget_records``...) to user-supplied paths ("" = not given: the chapter runs on its simulator)."""

    root: Path
    notebooks_dir: Path
    book_dir: Path
    state_dir: Path
    cache_dir: Path
    data: str = "sample"
    seed: int = 0
    n_bootstrap: int = 100
    kernel: str = DEFAULT_KERNEL
    #: chapters run at once (the status page always runs alone, last)
    jobs: int = 1
    #: memory the chapters running at once may plan to use, in GB (their measured peaks, bookbuild.schedule)
    memory_gb: float = 3.0
    only: list[str] | None = None
    force: bool = False
    book: bool = True
    strict: bool = False
    inputs: dict[str, str] = field(default_factory=dict)
    #: ``--set NAME=VALUE``: other declared parameters, injected where declared and part of each chapter's identity
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def chapters_dir(self) -> Path:
        return self.book_dir / "chapters"

    @property
    def results_dir(self) -> Path:
        return self.book_dir / "_results"

    @property
    def html_dir(self) -> Path:
        return self.book_dir / "_build" / "html"

    @property
    def work_dir(self) -> Path:
        """Partial executed copies while a notebook runs, and the copies of failed runs (``failed/``)."""
        return self.book_dir / "_build" / "runs"

    @property
    def log_path(self) -> Path:
        """Where the kernels' output, warnings and tracebacks go (the console keeps the runner's lines and bars)."""
        return self.work_dir / "build.log"


@dataclass
class NotebookRun:
    name: str
    action: str  # "ran" | "skipped" | "failed"
    seconds: float = 0.0


@dataclass
class Summary:
    runs: list[NotebookRun] = field(default_factory=list)
    html: Path | None = None
    warnings: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    #: chapters that failed in this build: stem -> one-line error, and stem -> where it failed (cell, copy, log)
    errors: dict[str, str] = field(default_factory=dict)
    details: dict[str, str] = field(default_factory=dict)

    @property
    def failed(self) -> list[str]:
        return [r.name for r in self.runs if r.action == "failed"]

    @property
    def ran(self) -> list[str]:
        return [r.name for r in self.runs if r.action == "ran"]

    @property
    def skipped(self) -> list[str]:
        return [r.name for r in self.runs if r.action == "skipped"]


def _env(name: str, default: str) -> str:
    value = os.environ.get(name)
    return default if value is None or value == "" else value


def _count(name: str, text: str) -> int:
    """A non-negative integer option (``SEED``, ``JOBS``); anything else is a usage error (exit 2, one line)."""
    try:
        value = int(str(text).strip())
    except ValueError:
        value = -1
    if value < 0:
        raise BuildError(f"{name} must be a non-negative integer, got {_quoted(text)}", EXIT_USAGE)
    return value


def _quoted(text: object, limit: int = 40) -> str:
    """A user's value in a message: quoted, at most ``limit`` characters (then an ellipsis)."""
    text = str(text)
    return repr(text) if len(text) <= limit else repr(text[:limit]) + "…"


def bootstrap_rounds(text: str) -> int:
    """``--bootstrap`` / ``BOOTSTRAP``: an integer from 1 to :data:`MAX_BOOTSTRAP` (module doc), else exit 2."""
    try:
        value = int(str(text).strip())
    except ValueError:
        value = -1
    if not 1 <= value <= MAX_BOOTSTRAP:
        why = (" (0 rounds gives no intervals, and the chapters compare ranks with the papers' through them)"
               if value == 0 else "")
        raise BuildError(f"--bootstrap/BOOTSTRAP must be an integer from 1 to {MAX_BOOTSTRAP:,}{why}, got "
                         f"{_quoted(text)}", EXIT_USAGE)
    return value


def _absolute(option: str, value: str | Path) -> Path:
    """``value`` made absolute with symlinks resolved; a symlink loop or an unreadable path is exit 2."""
    try:
        return Path(value).resolve()
    except (OSError, RuntimeError) as exc:  # RuntimeError: Python 3.11's "Symlink loop"
        raise BuildError(f"{option} {_quoted(value, 120)}: cannot resolve the path ({exc})", EXIT_USAGE) from None


def check_folders(cfg: Config) -> None:
    """Each folder the build writes or reads is a folder or can be made one: not a file, not inside a file (exit 2,
    one line naming the option)."""
    for option, path in (("--root", cfg.root), ("--notebooks-dir", cfg.notebooks_dir), ("--book-dir", cfg.book_dir),
                         ("--state-dir", cfg.state_dir), ("--cache-dir", cfg.cache_dir)):
        probe = path
        try:
            while not probe.exists() and probe != probe.parent:
                probe = probe.parent
            problem = "" if probe.is_dir() else ("is a file, not a folder" if probe == path else
                                                 f"lies inside {str(probe)[:120]!r}, which is a file")
        except OSError as exc:
            problem = f"cannot be read ({exc.strerror or exc})"
        if problem:
            raise BuildError(f"{option} {_quoted(path, 120)} {problem}", EXIT_USAGE)


def parse_setting(text: str) -> tuple[str, Any]:
    """``NAME=VALUE`` -> ``(name, value)``: the value as a Python literal where it reads as one, else the text.
    A malformed pair or a managed parameter (:data:`MANAGED_PARAMETERS`) is a usage error (exit 2)."""
    name, sep, raw = text.partition("=")
    name = name.strip()
    if not sep or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise BuildError(f"--set expects NAME=VALUE with NAME a parameter name, got {text!r}", EXIT_USAGE)
    if name in MANAGED_PARAMETERS:
        raise BuildError(f"--set {name}: the runner sets {name!r} itself; use its own option (see --help)",
                         EXIT_USAGE)
    try:
        value = ast.literal_eval(raw.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        value = raw
    try:  # the value goes into the notebook and the chapter's identity as JSON: only what JSON keeps as it is
        same = json.loads(json.dumps(value)) == value and not isinstance(value, tuple)
    except (TypeError, ValueError):
        same = False
    if not same:
        raise BuildError(f"--set {name}: {raw.strip()!r} is not a number, text, None, true/false, list or dict",
                         EXIT_USAGE)
    return name, value


class _Parser(argparse.ArgumentParser):
    """argparse with its errors as one line (:class:`BuildError`, exit 2), not a usage block."""

    def error(self, message: str) -> NoReturn:
        hint = (" (a value that starts with '-' is written --option=VALUE, e.g. --nuggets=-n.jsonl, or as ./-n.jsonl)"
                if "expected one argument" in message else "")
        raise BuildError(f"{message}{hint}", EXIT_USAGE)


def parse_args(argv: Sequence[str] | None = None) -> Config:
    p = _Parser(
        prog="python -m bookbuild",
        description="Run the chapter notebooks with papermill (skipping unchanged ones) and build the book. "
        "Options default to the BOOK_* environment variables that `make book` sets.",
    )
    p.add_argument("--data", default=_env("BOOK_DATA", "sample"),
                   help="data_source: sample, sample:N, hf, hf:REF or a path (default: $BOOK_DATA or sample)")
    p.add_argument("--seed", default=_env("BOOK_SEED", "0"),
                   help="simulator and bootstrap seed (default: $BOOK_SEED or 0)")
    p.add_argument("--bootstrap", default=_env("BOOK_BOOTSTRAP", "100"),
                   help=f"bootstrap rounds, n_bootstrap: 1 to {MAX_BOOTSTRAP:,} (default: $BOOK_BOOTSTRAP or 100)")
    for option, (env, param) in USER_INPUTS.items():
        p.add_argument(f"--{option.replace('_', '-')}", dest=option, default=_env(env, ""),
                       help=f"path injected as `{param}` into notebooks that declare it (default: ${env})")
    p.add_argument(
        "--only", default=None, help="comma-separated notebook names to run, e.g. 01_dataset,99_reproduction_status"
    )
    p.add_argument("--root", default=".", help="repository root: .cache, .build_state and _config.yml (default: .)")
    p.add_argument("--notebooks-dir", default=None, help="notebooks folder (default: <root>/notebooks)")
    p.add_argument("--book-dir", default=None, help="book folder (default: <root>/book)")
    p.add_argument("--state-dir", default=None, help="build state folder (default: <root>/.build_state)")
    p.add_argument("--cache-dir", default=None, help="cache_dir passed to the notebooks (default: <root>/.cache)")
    p.add_argument("--kernel", default=DEFAULT_KERNEL, help=f"Jupyter kernel name (default: {DEFAULT_KERNEL})")
    p.add_argument("--jobs", default=_env("BOOK_JOBS", "1"),
                   help="chapters run at once, each in its own kernel (default: $BOOK_JOBS or 1)")
    p.add_argument("--memory-gb", default=_env("BOOK_MEMORY_GB", "3"),
                   help="with --jobs: chapters start together only while their measured peaks fit in this many GB "
                        "(default: $BOOK_MEMORY_GB or 3)")
    p.add_argument("--force", action="store_true", help="rerun every notebook, changed or not")
    p.add_argument("--no-book", action="store_true", help="run the notebooks only, do not build the book")
    p.add_argument("--strict", action="store_true", help="fail the book build on Sphinx warnings")
    p.add_argument("--set", dest="settings", action="append", default=[], metavar="NAME=VALUE",
                   help="set another parameter that chapters declare (repeatable; VALUE a Python literal or text), "
                        "e.g. --set min_cluster_size=30; injected only where declared")
    a = p.parse_args(argv)
    seed = _count("SEED", a.seed)
    n_bootstrap = bootstrap_rounds(a.bootstrap)
    jobs = _count("JOBS", a.jobs)
    if jobs < 1:
        raise BuildError(f"JOBS must be a positive integer, got {a.jobs!r}", EXIT_USAGE)
    try:
        memory_gb = float(a.memory_gb)
    except ValueError:
        memory_gb = -1.0
    if not memory_gb > 0:
        raise BuildError(f"MEMORY_GB must be a positive number, got {a.memory_gb!r}", EXIT_USAGE)
    settings = dict(parse_setting(t) for t in a.settings)
    root = _absolute("--root", a.root)

    def path(option: str, value: str | None, default: str) -> Path:
        return _absolute(option, value) if value else (root / default)

    return Config(
        root=root,
        notebooks_dir=path("--notebooks-dir", a.notebooks_dir, "notebooks"),
        book_dir=path("--book-dir", a.book_dir, "book"),
        state_dir=path("--state-dir", a.state_dir, ".build_state"),
        cache_dir=path("--cache-dir", a.cache_dir, ".cache"),
        data=a.data,
        seed=seed,
        n_bootstrap=n_bootstrap,
        kernel=a.kernel,
        jobs=jobs,
        memory_gb=memory_gb,
        only=[s.strip() for s in a.only.split(",") if s.strip()] if a.only else None,
        force=a.force,
        book=not a.no_book,
        strict=a.strict,
        inputs={param: getattr(a, option) for option, (_, param) in USER_INPUTS.items()},
        settings=settings,
    )
