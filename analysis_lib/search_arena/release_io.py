"""Reading a Search Arena release file safely: which files are read, how much, and what a failure says.

Every failure is a :class:`DataValidationError` (the package's one error type, a ``ValueError``) with a one-line
message that names the file, the line (JSON lines) or column where it can, and what was expected; a bad value is
quoted by a short prefix (:func:`short`), never in full.

- :func:`check_file`: only a regular file is read (a folder, a FIFO, ``/dev/zero`` or another device is refused
  before any byte is read), not an empty one, not one larger than ``max_bytes`` (:data:`MAX_RELEASE_BYTES`), and
  only with a release suffix (``.parquet``; ``.jsonl``, ``.ndjson``, ``.json``).
- :func:`jsonl_problem`: the first line of a JSON-lines file that is not one JSON object, and why: gzip bytes
  (decompress first), not UTF-8 (with the byte offset), truncated or malformed JSON, nested deeper than
  :data:`MAX_JSON_DEPTH`, not an object, longer than :data:`~analysis_lib.jsonl.MAX_LINE_BYTES` (the bound every
  JSON-lines reader shares), ``NaN`` / ``Infinity`` or a whole number outside 64 bits (:func:`parse_line`, with
  the field's path), or a release column of the wrong JSON type (:func:`release_record_problem`, with the
  field: what polars reports as "failed to determine supertype"); reads at most ``max_lines`` lines.
- :func:`first_deep_line`, :func:`dtype_depth`: nesting checked before polars reads a file (polars crashes the
  process on JSON objects nested a few hundred levels deep; a parquet schema is checked the same way).
- :func:`jsonl_head`: the first lines of a JSON-lines file (bounded in lines and bytes), checked line by line,
  for the cheap check of :func:`analysis_lib.search_arena.release.validate_release`.
- :func:`polars_failure`: a reader's exception (polars raises several types, a Rust panic is a
  ``BaseException``) as one line.

A leaf module: it imports nothing from :mod:`analysis_lib` but :mod:`analysis_lib.jsonl`.
"""

from __future__ import annotations

import json
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from analysis_lib.jsonl import MAX_LINE_BYTES, blank

#: Largest release file read (the real 24k release is 1.22 GB as JSON lines, ~0.4 GB as parquet).
MAX_RELEASE_BYTES = 16 * 1024**3
#: Deepest JSON nesting accepted (the release nests six levels: metadata > trace > turn > pair > string).
MAX_JSON_DEPTH = 64
#: The first two bytes of a gzip file (RFC 1952).
GZIP_MAGIC = b"\x1f\x8b"
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

    Refused, before any byte is read: a name that is not valid UTF-8 (shown escaped), a missing path, a folder,
    anything but a regular file (FIFO, device, socket; symbolic links are followed), an empty file, a file over
    ``max_bytes``, an unknown suffix.
    """
    path = Path(path).expanduser()
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        raise DataValidationError(
            f"{ascii(str(path))}: the file's name is not valid UTF-8 (the readers cannot open it by name); "
            "rename the file") from None
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


#: Whole numbers a JSON value may hold: those of a signed 64-bit integer (what polars and parquet store).
INT64_RANGE = (-(2**63), 2**63 - 1)


class _NotJson:
    """Stands for a ``NaN`` / ``Infinity`` / ``-Infinity`` constant while a line is parsed (JSON has none)."""

    def __init__(self, text: str) -> None:
        self.text = text


def first_leaf(value: object, hit: Callable[[object], bool]) -> tuple[str, object] | None:
    """``(path, leaf)``: the dotted path (``messages_a[0].content``) and value of the first leaf of a parsed JSON
    ``value`` for which ``hit(leaf)`` is true (None if none; the path is "" for the value itself); iterative, so
    any depth is safe."""
    stack: list[tuple[str, object]] = [("", value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, dict):
            stack.extend((f"{where}.{k}" if where else str(k), v) for k, v in reversed(list(item.items())))
        elif isinstance(item, list):
            stack.extend((f"{where}[{i}]", v) for i, v in reversed(list(enumerate(item))))
        elif hit(item):
            return where, item
    return None


def _out_of_int64(leaf: object) -> bool:
    return isinstance(leaf, int) and not isinstance(leaf, bool) and not INT64_RANGE[0] <= leaf <= INT64_RANGE[1]


def parse_line(text: str | bytes) -> object:
    """One JSON text parsed as the readers need it; raise ``ValueError`` starting ``field '<path>':`` for what
    JSON or a frame cannot hold: ``NaN`` / ``Infinity`` (Python's parser accepts them, RFC 8259 does not) and
    whole numbers outside the signed 64-bit range (polars fails on them with "conversion from i128 to i64")."""
    odd: list[str] = []

    def constant(name: str) -> _NotJson:
        odd.append("constant")
        return _NotJson(name)

    def integer(digits: str) -> int:
        if len(digits) > 18:
            odd.append("integer")
        return int(digits)

    value = json.loads(text, parse_constant=constant, parse_int=integer)
    if not odd:
        return value
    found = first_leaf(value, lambda leaf: isinstance(leaf, _NotJson))
    if found is not None:
        where, leaf = found
        raise ValueError(f"field {where or '(the value)'!r}: expected a finite number or null, got "
                         f"{leaf.text} (not JSON: RFC 8259 has no NaN or Infinity)")  # type: ignore[attr-defined]
    found = first_leaf(value, _out_of_int64)
    if found is not None:
        where, leaf = found
        raise ValueError(f"field {where or '(the value)'!r}: expected a whole number within 64 bits "
                         f"({INT64_RANGE[0]:,} to {INT64_RANGE[1]:,}), got {short(str(leaf), 24)}")
    return value


def locate(where: str, problem: str) -> str:
    """``where`` and ``problem`` joined as the project writes them: ``"<file>, line 3, field 'turn': …"`` when the
    problem names a field, else ``"<file>, line 3: …"``."""
    return f"{where}, {problem}" if problem.startswith("field ") else f"{where}: {problem}"


def line_problem(line: bytes) -> str | None:
    """Why one JSON line is not one JSON object of the release, or None when it is (a blank line is None too)."""
    if len(line) > MAX_LINE_BYTES:
        return f"longer than {MAX_LINE_BYTES:,} bytes"
    if line[:2] == GZIP_MAGIC:
        return "gzip-compressed bytes, not JSON text (decompress the file first, e.g. with gunzip)"
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as err:
        return f"not valid UTF-8 at byte {err.start} ({short(line[err.start:err.start + 8])})"
    if blank(line):
        return None
    if too_deep(line):  # before parsing: Python's parser recurses once per level
        return f"JSON nested deeper than {MAX_JSON_DEPTH} levels"
    try:
        value = parse_line(text)
    except (ValueError, RecursionError) as err:
        if str(err).startswith("field "):
            return str(err)
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


_TEXT_FIELDS = ("model_a", "model_b", "winner", "judge", "primary_intent", "secondary_intent")
_OBJECT_FIELDS = ("system_a_metadata", "system_b_metadata", "conv_metadata")


def _kind(value: object) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a whole number",
            float: "a number", type(None): "null"}.get(type(value), type(value).__name__)


def release_record_problem(record: dict[str, object]) -> str | None:
    """Why one parsed record does not have the JSON types of the release columns the loader reads (``field
    '<name>': expected …, got …``), or None. Polars infers one type per column over the whole file, so one line of
    another type makes it fail without a line ("failed to determine supertype of struct…"); this names it.
    Checked (when present): the model, vote, judge and intent fields are strings or null; ``turn`` a whole number
    or null; ``messages_a/b`` lists of ``{content, role}`` objects with string (or null) values; the metadata
    fields objects; ``languages`` a list of strings; ``timestamp`` a string, number or null."""
    for name in _TEXT_FIELDS:
        v = record.get(name)
        if v is not None and not isinstance(v, str):
            return f"field {name!r}: expected a string or null, got {_kind(v)} {short(v)}"
    turn = record.get("turn")
    if turn is not None and (isinstance(turn, bool) or not isinstance(turn, int)):
        return f"field 'turn': expected a whole number or null, got {_kind(turn)} {short(turn)}"
    for name in ("messages_a", "messages_b"):
        v = record.get(name)
        if v is None:
            continue
        if not isinstance(v, list):
            return f"field {name!r}: expected a list of {{content, role}} objects, got {_kind(v)}"
        for i, msg in enumerate(v):
            if msg is None:
                continue
            if not isinstance(msg, dict):
                return f"field '{name}[{i}]': expected a {{content, role}} object, got {_kind(msg)}"
            for key in ("content", "role"):
                if msg.get(key) is not None and not isinstance(msg[key], str):
                    return f"field '{name}[{i}].{key}': expected a string or null, got {_kind(msg[key])}"
    for name in _OBJECT_FIELDS:
        v = record.get(name)
        if v is not None and not isinstance(v, dict):
            return f"field {name!r}: expected an object or null, got {_kind(v)} {short(v)}"
    langs = record.get("languages")
    if langs is not None and (not isinstance(langs, list) or any(x is not None and not isinstance(x, str)
                                                                 for x in langs)):
        return f"field 'languages': expected a list of strings or null, got {short(langs)}"
    ts = record.get("timestamp")
    if ts is not None and (isinstance(ts, (bool, dict, list)) or not isinstance(ts, (str, int, float))):
        return f"field 'timestamp': expected a date-time string, an epoch number or null, got {_kind(ts)}"
    return None


RecordCheck = Callable[[dict[str, object]], "str | None"]


def jsonl_problem(path: str | Path, *, max_lines: int | None = None,
                  record_check: RecordCheck | None = release_record_problem) -> str:
    """``", line N: why"`` for the first bad line of a JSON-lines file ("" if every line read is a JSON object
    that passes ``record_check``; default: the release's column types, :func:`release_record_problem`; None: any
    object).

    A file of blank lines only gives ``": holds no JSON lines"``.
    """
    seen = False
    for number, line in _lines(Path(path), max_lines):
        problem = line_problem(line)
        if problem is None and record_check is not None and not blank(line):
            problem = record_check(json.loads(line))
        if problem:
            return locate(f", line {number}", problem)
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
            raise DataValidationError(locate(f"{path}, line {number}", problem))
        if not blank(line):
            kept.append(line.rstrip(b"\r\n") + b"\n")
            size += len(line)
    if not kept:
        raise DataValidationError(f"{path}: holds no JSON lines (only blank lines); expected a Search Arena release")
    return JsonlHead(b"".join(kept), len(kept), complete)
