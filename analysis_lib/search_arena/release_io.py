"""Reading a Search Arena release file safely: which files are read, how much, and what a failure says.

Every failure is a :class:`DataValidationError` (the package's one error type, a ``ValueError``) with a one-line
message that names the file, the line (JSON lines) or column where it can, and what was expected; a bad value is
quoted by a short prefix (:func:`short`), never in full.

- :func:`check_file`: only a regular file is read (a folder, a FIFO, ``/dev/zero`` or another device is refused
  before any byte is read), not an empty one, not one larger than ``max_bytes`` (:data:`MAX_RELEASE_BYTES`), and
  only with a release suffix (``.parquet``; ``.jsonl``, ``.ndjson``, ``.json``).
- :func:`jsonl_problem`: the first line of a JSON-lines file that is not one JSON object, and why: not UTF-8
  (with the byte offset), truncated or malformed JSON, nested deeper than :data:`MAX_JSON_DEPTH`, not an
  object, or longer than :data:`MAX_LINE_BYTES`; reads at most ``max_lines`` lines.
- :func:`first_deep_line`, :func:`dtype_depth`: nesting checked before polars reads a file (polars crashes the
  process on JSON objects nested a few hundred levels deep; a parquet schema is checked the same way).
- :func:`jsonl_head`: the first lines of a JSON-lines file (bounded in lines and bytes), checked line by line,
  for the cheap check of :func:`analysis_lib.search_arena.release.validate_release`.
- :func:`polars_failure`: a reader's exception (polars raises several types, a Rust panic is a
  ``BaseException``) as one line.

A leaf module: it imports nothing from :mod:`analysis_lib`.
"""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from analysis_lib.jsonl import blank

#: Largest release file read (the real 24k release is 1.22 GB as JSON lines, ~0.4 GB as parquet).
MAX_RELEASE_BYTES = 16 * 1024**3
#: Longest JSON line read while locating a bad line (a real conversation is a few hundred kB at most).
MAX_LINE_BYTES = 64 * 1024**2
#: Deepest JSON nesting accepted (the release nests six levels: metadata > trace > turn > pair > string).
MAX_JSON_DEPTH = 64
#: Characters of a bad value quoted in a message.
PREFIX = 40

Format = Literal["parquet", "jsonl"]
SUFFIXES: dict[str, Format] = {".parquet": "parquet", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl"}


class DataValidationError(ValueError):
    """The input does not have the shape of a Search Arena release; the message names where and what."""


def short(value: object, limit: int = PREFIX) -> str:
    """``repr`` of ``value`` cut to its first ``limit`` characters (``…`` and the full length when cut)."""
    if isinstance(value, (bytes, bytearray)):
        text = bytes(value[: limit + 1]).decode("utf-8", errors="replace")
        n = len(value)
    else:
        text = value if isinstance(value, str) else repr(value)
        n = len(text)
    if n <= limit:
        return repr(text) if isinstance(value, (str, bytes, bytearray)) else text
    return f"{text[:limit]!r}… ({n:,} {'bytes' if isinstance(value, (bytes, bytearray)) else 'characters'})"


def one_line(text: str, limit: int = 200) -> str:
    """``text`` on one line (newlines as `` | ``), cut to ``limit`` characters."""
    flat = " | ".join(part.strip() for part in str(text).splitlines() if part.strip())
    return flat if len(flat) <= limit else flat[:limit] + "…"


def polars_failure(err: BaseException) -> str:
    """A reader's exception as ``TypeName: first line of its message`` (no traceback, no huge values)."""
    return f"{type(err).__name__}: {one_line(str(err))}"


def _kind_of(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def check_file(path: str | Path, *, max_bytes: int = MAX_RELEASE_BYTES) -> tuple[Path, Format]:
    """``(path, format)`` of a release file that may be read; raise :class:`DataValidationError` otherwise.

    Refused, before any byte is read: a missing path, a folder, anything but a regular file (FIFO, device,
    socket; symbolic links are followed), an empty file, a file over ``max_bytes``, an unknown suffix.
    """
    path = Path(path).expanduser()
    try:
        info = path.stat()
    except FileNotFoundError:
        raise DataValidationError(
            f"{path}: no such file (expected a Search Arena release .parquet or .jsonl)") from None
    except OSError as err:
        raise DataValidationError(f"{path}: cannot be opened ({one_line(str(err))})") from None
    if stat.S_ISDIR(info.st_mode):
        raise DataValidationError(f"{path}: is a folder; expected a Search Arena release file (.parquet or .jsonl)")
    if not stat.S_ISREG(info.st_mode):
        raise DataValidationError(
            f"{path}: is {_kind_of(info.st_mode)}; expected a regular Search Arena release file (.parquet or .jsonl)"
        )
    fmt = SUFFIXES.get(path.suffix.lower())
    if fmt is None:
        raise DataValidationError(f"{path}: unsupported file type {short(path.suffix)}; expected .parquet or .jsonl")
    if info.st_size == 0:
        raise DataValidationError(f"{path}: is empty (0 bytes); expected a Search Arena release")
    if info.st_size > max_bytes:
        raise DataValidationError(
            f"{path}: is {info.st_size:,} bytes, more than the {max_bytes:,} bytes a release may have "
            "(pass a larger max_bytes to read it)"
        )
    return path, fmt


#: The bytes that decide JSON nesting: newline, quote, backslash and the four brackets.
_SPECIAL = np.zeros(256, dtype=bool)
_SPECIAL[[0x0A, 0x22, 0x5B, 0x5C, 0x5D, 0x7B, 0x7D]] = True


def _depths(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(positions, depth)``: the bracket depth after each structural byte of ``a`` (bytes of whole JSON
    lines), brackets inside strings not counted, the count restarted at every newline. Vectorised over the few
    structural bytes only (newline, quote, backslash, brackets), so a block of text costs one table lookup per
    byte. A quote preceded by an odd run of backslashes is text."""
    pos = np.flatnonzero(_SPECIAL[a])
    kind = a[pos]
    n = pos.size
    j = np.arange(n, dtype=np.int64)
    backslash = kind == 0x5C
    touching = np.zeros(n, dtype=bool)  # entry i sits right after entry i - 1 in the text
    touching[1:] = (pos[1:] - pos[:-1]) == 1
    continues = backslash & np.concatenate([[False], backslash[:-1]]) & touching
    run_start = np.maximum.accumulate(np.where(backslash & ~continues, j, -1))
    run = np.where(backslash, j - run_start + 1, 0)
    before = np.zeros(n, dtype=np.int64)  # backslashes right before each entry
    before[1:] = np.where(backslash[:-1] & touching[1:], run[:-1], 0)
    real = (kind == 0x22) & (before % 2 == 0)
    last_newline = np.maximum.accumulate(np.where(kind == 0x0A, j, -1))
    start = np.maximum(last_newline, 0)
    quotes = np.cumsum(real, dtype=np.int64)
    inside = (quotes - np.where(last_newline >= 0, quotes[start], 0)) % 2 == 1
    opens = ((kind == 0x5B) | (kind == 0x7B)) & ~inside
    closes = ((kind == 0x5D) | (kind == 0x7D)) & ~inside
    depth = np.cumsum(opens.astype(np.int64) - closes, dtype=np.int64)
    return pos, depth - np.where(last_newline >= 0, depth[start], 0)


def json_depth(line: bytes) -> int:
    """Deepest nesting of ``[`` / ``{`` in one JSON text, brackets inside strings not counted (numpy, no
    recursion and no parsing: safe for any depth; polars crashes on objects nested a few hundred levels deep
    and Python's parser recurses, so depth is measured before either sees a line)."""
    _, depth = _depths(np.frombuffer(line, dtype=np.uint8))
    return int(depth.max()) if depth.size else 0


def too_deep(line: bytes) -> bool:
    """More than :data:`MAX_JSON_DEPTH` levels (a line with fewer brackets than that is not measured)."""
    return line.count(b"[") + line.count(b"{") > MAX_JSON_DEPTH and json_depth(line) > MAX_JSON_DEPTH


def line_problem(line: bytes) -> str | None:
    """Why one JSON line is not one JSON object of the release, or None when it is (a blank line is None too)."""
    if len(line) > MAX_LINE_BYTES:
        return f"longer than {MAX_LINE_BYTES:,} bytes"
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as err:
        return f"not valid UTF-8 at byte {err.start} ({short(line[err.start:err.start + 8])})"
    if blank(line):
        return None
    if too_deep(line):  # before parsing: Python's parser recurses once per level
        return f"JSON nested deeper than {MAX_JSON_DEPTH} levels"
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as err:
        return f"not valid JSON: truncated or malformed ({one_line(str(err), 80)})"
    if not isinstance(value, dict):
        return f"not a JSON object (a {type(value).__name__})"
    return None


def _lines(path: Path, max_lines: int | None) -> Iterator[tuple[int, bytes]]:
    """``(number, line)`` pairs, each line read up to :data:`MAX_LINE_BYTES` + 1 bytes (longer ones are cut)."""
    with path.open("rb") as fh:
        number = 0
        while max_lines is None or number < max_lines:
            line = fh.readline(MAX_LINE_BYTES + 1)
            if not line:
                return
            number += 1
            if len(line) > MAX_LINE_BYTES:  # skip the rest of an over-long line
                while line and not line.endswith(b"\n"):
                    line = fh.readline(MAX_LINE_BYTES + 1)
                yield number, b"x" * (MAX_LINE_BYTES + 1)
                continue
            yield number, line


BLOCK_BYTES = 8 * 1024**2


def first_deep_line(path: str | Path) -> str:
    """``", line N: JSON nested deeper than …"`` for the first line of a JSON-lines file nested deeper than
    :data:`MAX_JSON_DEPTH` ("" if none is): run over the whole file, in blocks of whole lines, before polars
    reads it, because polars crashes the process (not an exception) on objects nested a few hundred levels
    deep. Memory is bounded: a block is :data:`BLOCK_BYTES`, and a line still without its end after
    :data:`MAX_LINE_BYTES` is reported as too long."""
    lines_before = 0
    with Path(path).open("rb") as fh:
        carry = b""
        while True:
            chunk = fh.read(BLOCK_BYTES)
            block = carry + chunk
            if not block:
                return ""
            cut = block.rfind(b"\n") + 1 if chunk else len(block)
            if cut == 0:  # no newline yet: one line longer than a block
                if len(block) > MAX_LINE_BYTES:
                    return f", line {lines_before + 1}: longer than {MAX_LINE_BYTES:,} bytes"
                carry = block
                continue
            whole, carry = block[:cut], block[cut:]
            if whole.count(b"[") + whole.count(b"{") > MAX_JSON_DEPTH:
                pos, depth = _depths(np.frombuffer(whole, dtype=np.uint8))
                deep = np.flatnonzero(depth > MAX_JSON_DEPTH)
                if deep.size:
                    number = lines_before + whole.count(b"\n", 0, int(pos[deep[0]])) + 1
                    return f", line {number}: JSON nested deeper than {MAX_JSON_DEPTH} levels"
            lines_before += whole.count(b"\n")
            if not chunk:
                return ""


def dtype_depth(dtype: object) -> int:
    """Nesting depth of a polars dtype (List and Struct levels; iterative)."""
    deepest = 0
    stack = [(dtype, 0)]
    while stack:
        item, level = stack.pop()
        inner = getattr(item, "inner", None)
        fields = getattr(item, "fields", None)
        if inner is not None:
            stack.append((inner, level + 1))
            deepest = max(deepest, level + 1)
        if fields:
            stack.extend((f.dtype, level + 1) for f in fields)
            deepest = max(deepest, level + 1)
    return deepest


def jsonl_problem(path: str | Path, *, max_lines: int | None = None) -> str:
    """``", line N: why"`` for the first bad line of a JSON-lines file ("" if every line read is a JSON object).

    A file of blank lines only gives ``": holds no JSON lines"``.
    """
    seen = False
    for number, line in _lines(Path(path), max_lines):
        problem = line_problem(line)
        if problem:
            return f", line {number}: {problem}"
        seen = seen or not blank(line)
    return "" if seen else ": holds no JSON lines (only blank lines)"


@dataclass(frozen=True)
class JsonlHead:
    """The first lines of a JSON-lines file: their bytes (checked), how many, and whether the file has more."""

    data: bytes
    lines: int
    complete: bool


def jsonl_head(path: str | Path, *, max_lines: int = 1000, max_bytes: int = 64 * 1024**2) -> JsonlHead:
    """The first ``max_lines`` non-blank lines (at most ``max_bytes``), each checked by :func:`line_problem`;
    raise :class:`DataValidationError` naming the file and line of the first bad one."""
    path = Path(path)
    kept: list[bytes] = []
    size = 0
    complete = True
    for number, line in _lines(path, None):
        if kept and (len(kept) >= max_lines or size + len(line) > max_bytes):
            complete = False
            break
        problem = line_problem(line)
        if problem:
            raise DataValidationError(f"{path}, line {number}: {problem}")
        if not blank(line):
            kept.append(line.rstrip(b"\r\n") + b"\n")
            size += len(line)
    if not kept:
        raise DataValidationError(f"{path}: holds no JSON lines (only blank lines); expected a Search Arena release")
    return JsonlHead(b"".join(kept), len(kept), complete)
