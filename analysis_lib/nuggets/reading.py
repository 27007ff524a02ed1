"""Reading nugget-record inputs safely: what is read, how much, and one clear error for anything else.

:func:`list_inputs` turns the path a user gives (a JSON Lines file, or a folder of them such as lmsys_nuggetize's
``assignments/``) into the files to read and the folder entries *not* read, each with its reason: only regular
files are read (a FIFO would block, ``/dev/zero`` never ends), in a folder only those ending in ``.json`` or
``.jsonl`` (any case), not recursively. :func:`json_lines` reads one file line by line within byte bounds
(:data:`MAX_BYTES` per load, :data:`MAX_LINE_BYTES` per line), decodes UTF-8 (a byte-order mark at the start is
allowed) and parses each non-blank line as JSON. Every failure is a :class:`NuggetRecordError` naming the file,
the line and what was expected; values are quoted by :func:`quote`, which never shows more than a short prefix.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analysis_lib.jsonl import MAX_LINE_BYTES, blank  # the longest line: one bound for every JSON-lines reader

#: the most bytes one load reads, all files together (records with retrieved chunks run to ~100 kB a side)
MAX_BYTES = 8 * 1024**3
RECORD_SUFFIXES = (".jsonl", ".json")
QUOTE_CHARS = 60


class NuggetRecordError(ValueError):
    """Nugget-record input that cannot be read: the message names the file, the line and field where there is one,
    and what was expected."""


class NuggetRecordsNotFound(NuggetRecordError, FileNotFoundError):
    """The nugget-records path does not exist (also a ``FileNotFoundError``)."""


def quote(value: Any, limit: int = QUOTE_CHARS) -> str:
    """A short description of a bad value for an error message: strings and numbers by ``repr`` cut to ``limit``
    characters (with the full length when cut), containers by type and size only (never their contents)."""
    if isinstance(value, str):
        text = repr(value[:limit])
        return text if len(value) <= limit else f"{text[:-1]}…' ({len(value):,} characters)"
    if isinstance(value, (list, dict)):
        kind = "a list" if isinstance(value, list) else "an object"
        return f"{kind} of {len(value):,} item{'s' * (len(value) != 1)}"
    if value is None or isinstance(value, (bool, int, float)):
        text = repr(value)
        return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} digits)"
    return type(value).__name__


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


@dataclass(frozen=True)
class Listing:
    """The files a load reads and the folder entries it leaves out (``"name: why"``)."""

    path: Path
    files: tuple[Path, ...]
    not_read: tuple[str, ...] = field(default_factory=tuple)


def list_inputs(path: str | Path) -> Listing:
    """The files to read for ``path``: the file itself, or the ``.json`` / ``.jsonl`` regular files directly in the
    folder, sorted by name; other entries of a folder are returned in ``not_read`` with the reason.

    Raises :class:`NuggetRecordsNotFound` when nothing is at ``path``, :class:`NuggetRecordError` when ``path`` is
    neither a regular file nor a folder, or a folder with no file to read (naming what it holds)."""
    path = Path(path).expanduser()
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise NuggetRecordsNotFound(f"{path}: no such nugget-records file or folder") from None
    except OSError as err:
        raise NuggetRecordError(f"{path}: cannot be read ({err.strerror or type(err).__name__})") from None
    if stat.S_ISREG(mode):
        return Listing(path, (path,))
    if not stat.S_ISDIR(mode):
        raise NuggetRecordError(f"{path}: is {_kind(mode)}; expected a JSON Lines file of nugget records or a "
                                "folder of them")
    files, not_read = [], []
    try:
        entries = sorted(os.scandir(path), key=lambda e: e.name)
    except OSError as err:
        raise NuggetRecordError(f"{path}: cannot list the folder ({err.strerror or type(err).__name__})") from None
    for entry in entries:
        try:
            entry_mode = os.stat(entry.path).st_mode
        except OSError:
            not_read.append(f"{entry.name}: cannot be read (a broken link?)")
            continue
        if not stat.S_ISREG(entry_mode):
            not_read.append(f"{entry.name}: {_kind(entry_mode)}")
        elif not entry.name.lower().endswith(RECORD_SUFFIXES):
            not_read.append(f"{entry.name}: not a .json or .jsonl file")
        else:
            files.append(Path(entry.path))
    if not files:
        held = "; ".join(not_read[:5]) + ("; …" if len(not_read) > 5 else "") if not_read else "nothing"
        hint = (" (for lmsys_nuggetize output, give its assignments/ folder)"
                if any(n.startswith("assignments:") for n in not_read) else "")
        raise NuggetRecordError(f"{path}: the folder holds no .json or .jsonl file to read (it holds {held}){hint}")
    return Listing(path, tuple(files), tuple(not_read))


@dataclass
class Budget:
    """Bytes a load may still read (:data:`MAX_BYTES` by default), shared by its files, and the blank lines
    skipped so far."""

    left: int = MAX_BYTES
    limit: int = MAX_BYTES
    blank_lines: int = 0

    def take(self, file: Path, n: int) -> None:
        self.left -= n
        if self.left < 0:
            raise NuggetRecordError(f"{file}: the records read so far exceed {self.limit:,} bytes, the limit of one "
                                    "load (pass max_bytes= to load_nugget_records to read more)")


def json_lines(file: Path, budget: Budget, max_line_bytes: int = MAX_LINE_BYTES) -> Iterator[tuple[int, Any]]:
    """``(line number, parsed JSON value)`` for every non-blank line of ``file`` (module docstring for the bounds);
    blank lines are counted in ``budget.blank_lines``."""
    try:
        fh = file.open("rb")
    except OSError as err:
        raise NuggetRecordError(f"{file}: cannot be opened ({err.strerror or type(err).__name__})") from None
    with fh:
        line = 0
        while True:
            raw = fh.readline(max_line_bytes + 1)
            if not raw:
                break
            line += 1
            budget.take(file, len(raw))
            if len(raw) > max_line_bytes:
                raise NuggetRecordError(f"{file}, line {line}: longer than {max_line_bytes:,} bytes, the limit of one "
                                        "record line")
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as err:
                raise NuggetRecordError(f"{file}, line {line}: not valid UTF-8 (byte {err.start + 1:,} of the "
                                        "line); nugget records are UTF-8 JSON Lines") from None
            if line == 1:
                text = text.removeprefix("\ufeff")
            if blank(text):
                budget.blank_lines += 1
                continue
            try:
                value = json.loads(text)
            except RecursionError:
                raise NuggetRecordError(f"{file}, line {line}: JSON nested too deeply to read; expected one "
                                        "record object per line") from None
            except json.JSONDecodeError as err:
                raise NuggetRecordError(f"{file}, line {line}: not valid JSON ({err.msg} at column "
                                        f"{err.colno:,}); expected one record object per line") from None
            except ValueError as err:  # e.g. an integer longer than Python's digit limit
                raise NuggetRecordError(f"{file}, line {line}: not valid JSON ({quote(str(err))})") from None
            yield line, value
