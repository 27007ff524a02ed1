"""The one safe reader of user files: every loader of the library opens a user's file here, and only here.

Every failure is a :class:`DataValidationError` (a ``ValueError``) with one line naming the file, the line (JSON
lines, CSV), row or record, the field and the problem; a bad value is shown by :func:`quote`, a short prefix.

- Files (:func:`check_file`, :func:`list_files`): regular files only (a folder, FIFO, device or socket is refused
  before a byte is read), not empty, at most ``max_bytes``, a UTF-8 name, a suffix the loader reads, first bytes
  that agree with it (gzip and a parquet file under a text suffix are named as such).
- Text is UTF-8; a byte-order mark at the start of a file is accepted by every reader.
- JSON (:func:`parse_json`, :func:`json_lines`): nesting at most :data:`MAX_JSON_DEPTH` levels (measured before
  parsing), no ``NaN`` / ``Infinity``, whole numbers within 64 bits, no lone surrogate, in every field (named by
  its path); JSON lines counted from 1, each at most :data:`MAX_LINE_BYTES`; blank = JSON's whitespace only.
- Parquet (:func:`parquet_columns`): the schema's nesting checked before a column is read.
- Names used as keys (models, engines, agents, annotators, headers) are compared after one normalisation,
  :func:`name_key` / :func:`name_expr`: Unicode NFC, surrounding whitespace stripped.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import unicodedata
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from analysis_lib.nesting import dtype_depth, json_depth

#: Longest JSON line any reader accepts, in bytes (a Search Arena conversation is a few hundred kB at most).
MAX_LINE_BYTES = 64 * 1024**2
#: Deepest JSON (or parquet) nesting accepted (the release nests six levels).
MAX_JSON_DEPTH = 64
#: Whole numbers a value may hold: a signed 64-bit integer's (what polars and parquet store).
INT64_RANGE = (-(2**63), 2**63 - 1)
#: Characters of a bad value shown in a message.
PREFIX = 40
#: The whitespace JSON allows between values (RFC 8259).
JSON_WHITESPACE = " \t\r\n"
BOM = b"\xef\xbb\xbf"
GZIP_MAGIC = b"\x1f\x8b"
PARQUET_MAGIC = b"PAR1"
NEWLINE = b"\n"


class DataValidationError(ValueError):
    """A user's input that cannot be used; the one-line message names the file, the line, row or record, the field
    and what was expected."""


def located(where: str, problem: str) -> DataValidationError:
    """The error for ``problem`` at ``where`` (``"<file>, line 3"``): ``"<where>, field 'x': …"`` when the problem
    names a field, else ``"<where>: …"``."""
    return DataValidationError(f"{where}, {problem}" if problem.startswith("field ") else f"{where}: {problem}")


def quote(value: object, limit: int = PREFIX) -> str:
    """A bad value for a message: text by ``repr`` cut to ``limit`` characters (``'abc'… (1,234 characters)``),
    bytes likewise, numbers by ``repr`` (``… (81 digits)`` when long), lists and objects by kind and size only."""
    if isinstance(value, (bytes, bytearray)):
        text, n, unit = bytes(value[: limit + 1]).decode("utf-8", errors="replace"), len(value), "bytes"
    elif isinstance(value, str):
        text, n, unit = value, len(value), "characters"
    elif isinstance(value, (list, tuple, dict)):
        try:  # a short container in full; else by kind and size only (never a long repr)
            text = repr(value) if len(value) <= 8 else ""
        except RecursionError:
            text = ""
        kind = "an object" if isinstance(value, dict) else "a list"
        return text if 0 < len(text) <= limit else f"{kind} of {len(value):,} item{'s' * (len(value) != 1)}"
    else:
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        text = repr(value) if number or value is None or isinstance(value, bool) else one_line(repr(value), 10**6)
        return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} {'digits' if number else 'characters'})"
    return repr(text) if n <= limit else f"{text[:limit]!r}… ({n:,} {unit})"


def one_line(text: object, limit: int = 200) -> str:
    """``text`` on one line (newlines as `` | ``), cut to ``limit`` characters."""
    flat = " | ".join(part.strip() for part in str(text).splitlines() if part.strip())
    return flat if len(flat) <= limit else flat[:limit] + "…"


def polars_failure(err: BaseException) -> str:
    """A reader's exception as ``TypeName: first line of its message`` (no traceback, no huge values)."""
    return f"{type(err).__name__}: {one_line(str(err))}"


def name_key(name: str) -> str:
    """A name as it is compared and counted: Unicode NFC, surrounding whitespace stripped."""
    return unicodedata.normalize("NFC", name).strip()


def name_expr(expr: pl.Expr) -> pl.Expr:
    """:func:`name_key` of a string column."""
    return expr.str.normalize("NFC").str.strip_chars()


def blank(line: str) -> bool:
    """Whether a line holds nothing but :data:`JSON_WHITESPACE` (``str.strip`` would also strip ``\\x1c``, which
    JSON does not accept: such a line is bad JSON, named, never skipped)."""
    return not line.strip(JSON_WHITESPACE)


# --- files ----------------------------------------------------------------------------------------------------


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def _stat(path: Path, what: str) -> os.stat_result:
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        raise DataValidationError(f"{ascii(str(path))}: the file's name is not valid UTF-8 (the readers cannot open "
                                  "it by name); rename the file") from None
    try:
        return path.stat()
    except FileNotFoundError:
        raise DataValidationError(f"{path}: no such file or folder (expected {what})") from None
    except OSError as err:
        raise DataValidationError(f"{path}: cannot be opened ({err.strerror or one_line(err)}); expected {what}"
                                  ) from None


Formats = Mapping[str, str] | str


def check_file(path: str | Path, what: str, formats: Formats, *, max_bytes: int) -> tuple[Path, str]:
    """``(path, format)`` of a file that may be read as ``what``, its format the one ``formats`` gives its suffix
    (``{".jsonl": "jsonl", ...}``, any case; a string: that format, whatever the suffix); refused, before any
    byte but the first four is read: see the module docstring."""
    path = Path(path).expanduser()
    info = _stat(path, what)
    if not stat.S_ISREG(info.st_mode):
        raise DataValidationError(f"{path}: is {_kind(info.st_mode)}, not a regular file; expected {what}")
    fmt = formats if isinstance(formats, str) else formats.get(path.suffix.lower())
    if fmt is None:
        raise DataValidationError(f"{path}: unsupported file type {quote(path.suffix)}; expected {what} "
                                  f"({', '.join(sorted(formats))})")
    if info.st_size == 0:
        raise DataValidationError(f"{path}: is empty (0 bytes); expected {what}")
    if info.st_size > max_bytes:
        raise DataValidationError(f"{path}: is {info.st_size:,} bytes, more than the {max_bytes:,} bytes {what} may "
                                  "have")
    with path.open("rb") as fh:
        head = fh.read(4)
    if head[:2] == GZIP_MAGIC:
        raise DataValidationError(f"{path}: gzip-compressed bytes, not {fmt} (decompress the file first, e.g. with "
                                  "gunzip)")
    if head == PARQUET_MAGIC and fmt != "parquet":
        raise DataValidationError(f"{path}: a parquet file named {path.suffix}; expected {fmt} (rename it .parquet "
                                  "if the reader takes parquet)")
    return path, fmt


def list_files(path: str | Path, what: str, suffixes: tuple[str, ...], *,
               recursive: bool = False) -> tuple[list[Path], list[str]]:
    """``(files, not_read)``: ``[path]`` when it is a regular file (any name), else the regular files of the folder
    (``recursive``: of its subfolders too) whose suffix is one of ``suffixes`` (any case), sorted, and the other
    entries as ``"name: why"``. A folder with no such file is refused, naming what it holds."""
    path = Path(path).expanduser()
    mode = _stat(path, what).st_mode
    if stat.S_ISREG(mode):
        return [path], []
    if not stat.S_ISDIR(mode):
        raise DataValidationError(f"{path}: is {_kind(mode)}, not a regular file or a folder; expected {what}")
    try:
        entries = sorted(path.rglob("*") if recursive else path.iterdir())
    except OSError as err:
        raise DataValidationError(f"{path}: cannot list the folder ({err.strerror or one_line(err)})") from None
    files: list[Path] = []
    not_read: list[str] = []
    for entry in entries:
        try:
            entry_mode = entry.stat().st_mode
        except OSError:
            not_read.append(f"{entry.relative_to(path)}: cannot be read (a broken link?)")
            continue
        if stat.S_ISDIR(entry_mode) and recursive:
            continue
        if not stat.S_ISREG(entry_mode):
            not_read.append(f"{entry.relative_to(path)}: {_kind(entry_mode)}")
        elif entry.suffix.lower() not in suffixes:
            not_read.append(f"{entry.relative_to(path)}: not a {' or '.join(suffixes)} file")
        else:
            files.append(entry)
    if not files:
        held = "; ".join(not_read[:5]) + ("; …" if len(not_read) > 5 else "") if not_read else "nothing"
        raise DataValidationError(f"{path}: the folder holds no {' or '.join(suffixes)} file to read (it holds "
                                  f"{held}); expected {what}")
    return files, not_read


@dataclass
class Budget:
    """Bytes a load may read (``limit``), shared by its files, the bytes ``used`` and the blank lines skipped."""

    limit: int
    used: int = 0
    blank_lines: int = 0

    def take(self, file: Path, n: int) -> None:
        self.used += n
        if self.used > self.limit:
            raise DataValidationError(f"{file}: the files read so far exceed {self.limit:,} bytes, the limit of one "
                                      "load (pass a larger max_bytes to read more)")


def _utf8(data: bytes, where: str, *, first: bool, whole: bool = False) -> str:
    """``data`` decoded (a byte-order mark dropped where ``first``); not UTF-8: the error naming the byte of the
    line (``whole``: ``data`` is a whole file, and the line is named too)."""
    try:
        return data.decode("utf-8").removeprefix("\ufeff" if first else "")
    except UnicodeDecodeError as err:
        start = data.rfind(NEWLINE, 0, err.start) + 1
        line = f", line {data.count(NEWLINE, 0, err.start) + 1:,}" if whole else ""
        raise DataValidationError(f"{where}{line}: not valid UTF-8 at byte {err.start - start + 1:,} of the line "
                                  f"({quote(data[err.start:err.start + 8])})") from None


def read_text(path: str | Path, what: str, formats: Formats, *, max_bytes: int) -> str:
    """The UTF-8 text of a whole file (:func:`check_file`; at most ``max_bytes`` bytes are ever read, so a file
    growing while read is caught too); a file of whitespace only is refused."""
    path, _ = check_file(path, what, formats, max_bytes=max_bytes)
    with path.open("rb") as fh:
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise DataValidationError(f"{path}: more than the {max_bytes:,} bytes {what} may have")
    text = _utf8(data, str(path), first=True, whole=True)
    if not text.strip():
        raise DataValidationError(f"{path}: is empty (only whitespace); expected {what}")
    return text


# --- JSON -----------------------------------------------------------------------------------------------------

def first_path(value: object, hit: Callable[[object, int], bool]) -> tuple[str, Any] | None:
    """``(path, node)``: the path (``messages_a[0].content``; "" for the value itself) of the first node of parsed
    JSON, depth first, for which ``hit(node, depth)`` is true, or None; iterative, so any depth is safe."""
    stack: list[tuple[str, object, int]] = [("", value, 0)]
    while stack:
        where, item, depth = stack.pop()
        if hit(item, depth):
            return where, item
        if isinstance(item, dict):
            stack.extend((f"{where}.{k}" if where else str(k), v, depth + 1) for k, v in reversed(item.items()))
        elif isinstance(item, list):
            stack.extend((f"{where}[{i}]", v, depth + 1) for i, v in reversed(list(enumerate(item))))
    return None


class _NotJson:
    """A number JSON or a frame cannot hold, while a text is parsed: ``NaN`` / ``Infinity`` (or a number that
    overflows to one), ``kind`` "constant"; a whole number of more than 19 digits, ``kind`` "integer"."""

    def __init__(self, text: str, kind: str = "constant") -> None:
        self.text, self.kind = text, kind


def _lone(text: object) -> int | None:
    """The position of the first lone surrogate in a string, or None."""
    if isinstance(text, str):
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as err:
            return err.start
    return None


#: A ``\\uD800``–``\\uDFFF`` escape: the only way a JSON text holds a lone surrogate (checked exactly after parsing).
_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")
#: The top-level part of a path: ``[3].Question`` of ``[3].Question.x[0]``, ``chunks`` of ``chunks[0][1]``.
_TOP = re.compile(r"(\[\d+\]\.?)?[^.\[]*")


def _field(where: str, records: bool) -> str:
    """A path as a message names it: ``record 4, field 'Question'`` for ``[3].Question`` of a list of
    ``records``, else ``field '[3].Question'``."""
    m = re.match(r"\[(\d+)\]\.?", where)
    if m is None or not records:
        return f"field {where or '(the value)'!r}"
    return f"record {int(m.group(1)) + 1:,}" + (f", field {where[m.end():]!r}" if where[m.end():] else "")


class JsonSyntaxError(ValueError):
    """Text that is not JSON, at ``line`` and ``column`` of the text."""

    def __init__(self, msg: str, line: int, column: int) -> None:
        super().__init__(f"not valid JSON: truncated or malformed ({msg})")
        self.line, self.column = line, column


def _number_problem(leaf: _NotJson | int) -> str:
    if isinstance(leaf, _NotJson) and leaf.kind == "constant":
        return f"expected a finite number or null, got {leaf.text[:24]} (not JSON: RFC 8259 has no NaN or Infinity)"
    return (f"expected a whole number within 64 bits ({INT64_RANGE[0]:,} to {INT64_RANGE[1]:,}), got "
            f"{quote(getattr(leaf, 'text', str(leaf)), 24)}")


def parse_json(text: str, *, records: bool = False) -> Any:
    """One JSON text parsed with the checks of the module docstring; raise ``ValueError`` whose message is the
    problem (``field 'turn': …`` or, in a list of ``records``, ``record 4, field 'x': …``;
    :class:`JsonSyntaxError` for text that is not JSON)."""
    if text.count("[") + text.count("{") > MAX_JSON_DEPTH and json_depth(text.encode()) > MAX_JSON_DEPTH:
        try:  # name the top-level field when Python's parser can still read it (a few hundred levels)
            deep = first_path(json.loads(text), lambda item, d: isinstance(item, (dict, list)) and d >= MAX_JSON_DEPTH)
        except (ValueError, RecursionError):
            deep = None
        top = _TOP.match(deep[0] if deep else "").group(0).rstrip(".")  # type: ignore[union-attr]
        named = f"{_field(top, records)}: " if top and (records or not top.startswith("[")) else ""
        raise ValueError(f"{named}JSON nested deeper than {MAX_JSON_DEPTH} levels")
    odd: list[str] = []

    def constant(name: str) -> _NotJson:
        odd.append(name)
        return _NotJson(name)

    def integer(digits: str) -> int | _NotJson:
        if len(digits) > 18:
            odd.append(digits)
            if len(digits.lstrip("-")) > 19:  # beyond 64 bits (Python's int() stops at 4,300 digits)
                return _NotJson(digits, "integer")
        return int(digits)

    try:
        value = json.loads(text, parse_constant=constant, parse_int=integer,
                           parse_float=lambda t: float(t) if math.isfinite(float(t)) else constant(t))
    except json.JSONDecodeError as err:
        raise JsonSyntaxError(err.msg, err.lineno, err.colno) from None
    except (RecursionError, ValueError) as err:
        raise ValueError(f"not valid JSON ({quote(str(err), 80)})") from None
    if odd and (found := first_path(value, lambda leaf, _: isinstance(leaf, _NotJson) or (
            isinstance(leaf, int) and not isinstance(leaf, bool) and not INT64_RANGE[0] <= leaf <= INT64_RANGE[1]))):
        raise ValueError(f"{_field(found[0], records)}: {_number_problem(found[1])}")
    if _SURROGATE.search(text):
        found = first_path(value, lambda item, _: _lone(item) is not None or (
            isinstance(item, dict) and any(_lone(k) is not None for k in item)))
        if found is not None:
            where, item = found
            at = _lone(item)
            problem = (f"not text: a lone surrogate \\u{ord(item[at]):04x} at character {at + 1:,}; expected UTF-8 text"
                       if at is not None else "a field name holds a lone surrogate; expected UTF-8 text")
            raise ValueError(f"{_field(where, records)}: {problem}")
    return value


def parse_json_file(path: str | Path, what: str, formats: Formats, *, max_bytes: int) -> Any:
    """A whole JSON document (:func:`read_text`, :func:`parse_json`); a problem names the file, and the line or
    the record and field."""
    text = read_text(path, what, formats, max_bytes=max_bytes)
    try:
        return parse_json(text, records=True)
    except JsonSyntaxError as err:
        raise DataValidationError(f"{path}, line {err.line:,}, column {err.column:,}: {err}; expected {what}"
                                  ) from None
    except ValueError as err:
        raise located(str(path), str(err)) from None


def json_lines(path: str | Path, *, budget: Budget | None = None) -> Iterator[tuple[int, Any]]:
    """``(line number, parsed value)`` for every non-blank line of a JSON-lines file (checked as the module
    docstring says; blank lines counted in ``budget``); the file itself is the caller's to check
    (:func:`check_file`)."""
    path = Path(path)
    with path.open("rb") as fh:
        for number, line in enumerate(iter(lambda: fh.readline(MAX_LINE_BYTES + 1), b""), start=1):
            if budget is not None:
                budget.take(path, len(line))
            if len(line) > MAX_LINE_BYTES:
                raise DataValidationError(f"{path}, line {number}: longer than {MAX_LINE_BYTES:,} bytes")
            text = _utf8(line, f"{path}, line {number}", first=number == 1)
            if blank(text):
                if budget is not None:
                    budget.blank_lines += 1
                continue
            try:
                value = parse_json(text.rstrip("\r\n"))
            except JsonSyntaxError as err:
                raise DataValidationError(f"{path}, line {number}, column {err.column:,}: {err}") from None
            except ValueError as err:
                raise located(f"{path}, line {number}", str(err)) from None
            yield number, value


RecordCheck = Callable[[dict[str, Any]], "str | None"]


def check_json_lines(path: str | Path, what: str, record_check: RecordCheck | None = None) -> int:
    """The number of records of a JSON-lines file whose every non-blank line is one JSON object that passes
    ``record_check`` (which returns the problem or None); else the error naming the line."""
    n = 0
    for number, value in json_lines(path):
        if not isinstance(value, dict):
            raise DataValidationError(f"{path}, line {number}: not a JSON object (a {type(value).__name__}); "
                                      f"expected {what}, one object per line")
        problem = record_check(value) if record_check is not None else None
        if problem:
            raise located(f"{path}, line {number}", problem)
        n += 1
    if n == 0:
        raise DataValidationError(f"{path}: holds no JSON lines (only blank lines); expected {what}")
    return n


# --- parquet --------------------------------------------------------------------------------------------------


def parquet_columns(path: str | Path, wanted: Callable[[str], bool] = lambda name: True) -> dict[str, pl.DataType]:
    """The schema of a parquet file's ``wanted`` columns, each checked to nest at most :data:`MAX_JSON_DEPTH`
    levels (polars crashes on very deep nesting) before any is read."""
    try:
        schema = pl.read_parquet_schema(path)
    except BaseException as err:  # noqa: BLE001 - polars raises several types, a panic is a BaseException
        if isinstance(err, (KeyboardInterrupt, SystemExit)):
            raise
        raise DataValidationError(f"{path}: could not be read as parquet (truncated, or not a parquet file; "
                                  f"{polars_failure(err)})") from None
    out = {}
    for name, dtype in schema.items():
        if wanted(name):
            if dtype_depth(dtype) > MAX_JSON_DEPTH:
                raise DataValidationError(f"{path}, column {quote(name)}: nested deeper than {MAX_JSON_DEPTH} levels")
            out[name] = dtype
    return out


#: Errors a polars reader may raise on a corrupt file: its own, Arrow's, OS errors, and a Rust panic (a
#: ``BaseException`` in polars).
READ_ERRORS: tuple[type[BaseException], ...] = (Exception, pl.exceptions.PanicException)


def read_frame(path: Path, fmt: str, what: str, *, wanted: Callable[[str], bool] = lambda name: True,
               record_check: RecordCheck | None = None) -> pl.DataFrame:
    """The ``wanted`` columns of a file :func:`check_file` passed, as a frame: parquet after
    :func:`parquet_columns`; JSON lines after every line passed :func:`check_json_lines` with ``record_check``
    (polars would crash on deep nesting and coerce a number where another line has text); CSV."""
    names = list(parquet_columns(path, wanted)) if fmt == "parquet" else None
    if fmt == "jsonl":
        check_json_lines(path, what, record_check)
    try:
        if names is not None:
            return pl.read_parquet(path, columns=names)
        if fmt == "csv":  # polars drops a byte-order mark
            frame = pl.read_csv(path, infer_schema_length=10_000)
            return frame.select([c for c in frame.columns if wanted(c)])
        with path.open("rb") as fh:
            if fh.read(3) == BOM:  # polars refuses a byte-order mark: read from after it
                frame = pl.read_ndjson(fh, infer_schema_length=None)
                return frame.select([c for c in frame.columns if wanted(c)])
        lazy = pl.scan_ndjson(path, infer_schema_length=None)
        return lazy.select([c for c in lazy.collect_schema().names() if wanted(c)]).collect()
    except READ_ERRORS as err:
        raise DataValidationError(f"{path}: could not be read as {fmt} ({polars_failure(err)})") from None


def parquet_head(path: Path, columns: list[str], n: int) -> tuple[pl.DataFrame, int]:
    """The first ``n`` rows of ``columns`` of a parquet file whose schema :func:`parquet_columns` checked, and
    its number of rows (from the metadata)."""
    try:
        rows = int(pl.scan_parquet(path).select(pl.len()).collect().item())
        return pl.scan_parquet(path).select(columns).head(n).collect(), rows
    except READ_ERRORS as err:
        raise DataValidationError(f"{path}: could not be read as parquet ({polars_failure(err)})") from None
