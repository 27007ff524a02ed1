"""Reading and validating a raw Search Arena release: the raw schema the loader needs, the readers (parquet,
jsonl, the Hugging Face hub, the simulator, an in-memory frame), the schema check and the cheap check of a
release before a build (:func:`validate_release`).

Files are opened by the one safe reader, :mod:`analysis_lib.reading` (regular file, size, UTF-8 and a byte-order
mark, JSON lines checked line by line, parquet nesting); this module adds the release's schema: the JSON types of
each record (:func:`release_record_problem`) and the columns (:func:`validate_raw`). Every failure is a
:class:`~analysis_lib.reading.DataValidationError` naming the file, the line or row and the field.
:mod:`analysis_lib.search_arena.loader` derives the tidy battle frame from what this module reads (and re-exports its
names).
"""

from __future__ import annotations

import io
import json
import math
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

import polars as pl

from analysis_lib import sources
from analysis_lib.reading import (
    INT64_RANGE,
    DataValidationError,
    check_file,
    json_lines,
    located,
    name_expr,
    one_line,
    parquet_columns,
    parquet_head,
    quote,
    read_frame,
)
from analysis_lib.search_arena import hub
from analysis_lib.search_arena.hub import HF_DATASET as HF_DATASET
from analysis_lib.search_arena.hub import HF_FILE as HF_FILE
from analysis_lib.search_arena.hub import HF_REVISION as HF_REVISION
from analysis_lib.search_arena.schema import (
    ATTRIBUTION_COUNTS,
    FULL_SIZE,
    MAX_RELEASE_BYTES,
    RELEASE_FORMATS,
    SIDES,
    WINNERS,
)
from analysis_lib.search_arena.simulate.conversations import simulate_release
from analysis_lib.search_arena.system_config import CONFIG_FIELD, STYLE_FIELD

if TYPE_CHECKING:
    from polars._typing import PolarsDataType



RELEASE = "a Search Arena release"

_MESSAGES = pl.List(pl.Struct({"content": pl.String, "role": pl.String}))
_TRACE = pl.List(pl.List(pl.List(pl.String)))

#: Raw columns every analysis needs, with the dtype the loader expects (nested struct fields it reads are checked
#: too): a release without one of them is refused.
REQUIRED_COLUMNS: dict[str, pl.DataType | type[pl.DataType]] = {
    "model_a": pl.String,
    "model_b": pl.String,
    "winner": pl.String,
    "turn": pl.Int64,
    "messages_a": _MESSAGES,
    "messages_b": _MESSAGES,
    "system_a_metadata": pl.Struct,
    "system_b_metadata": pl.Struct,
}
#: Labels the papers derived themselves (intents with an LLM, languages with a detector): checked when present;
#: a release without them is read, and the loader says which it lacks (:attr:`LoadReport.absent`).
OPTIONAL_COLUMNS: dict[str, pl.DataType | type[pl.DataType]] = {
    "primary_intent": pl.String,
    "secondary_intent": pl.String,
    "languages": pl.List(pl.String),
}
#: Fields a release may lack (earlier exports, other arenas in the schema): without one, the analyses that need it
#: do not run and say so; every other analysis runs. Columns, then ``system_{a,b}_metadata`` fields.
OPTIONAL_FIELDS: tuple[str, ...] = (*OPTIONAL_COLUMNS, "timestamp", "judge", STYLE_FIELD, CONFIG_FIELD)
#: Every raw column the loader may use; other columns (``formatted_messages`` lives inside the metadata
#: structs, but whole extra columns of a release) are not read from disk.
READ_COLUMNS = frozenset(
    [*REQUIRED_COLUMNS, *OPTIONAL_COLUMNS, "judge", "timestamp", "conv_metadata"]
    + [f"{base}_{side}" for base in ATTRIBUTION_COUNTS for side in SIDES]
)

#: Fields of ``system_{a,b}_metadata`` the loader reads.
METADATA_FIELDS: dict[str, pl.DataType] = {
    "client_country": pl.String(),
    "conv_id": pl.String(),
    "web_search_trace": _TRACE,
}


# --------------------------------------------------------------------------------------------------------
# Reading


def read_raw(
    source: str | Path | pl.DataFrame,
    *,
    seed: int = 0,
    max_bytes: int = MAX_RELEASE_BYTES,
    columns: Collection[str] | None = None,
) -> tuple[pl.DataFrame, str]:
    """The raw release as a polars frame, and a label naming where it came from.

    A path must be a regular, non-empty release file of at most ``max_bytes``
    (:func:`~analysis_lib.reading.check_file`); a file that cannot be read raises
    :class:`DataValidationError` naming it (and, for JSON lines, the first bad line and why). ``columns``: only
    those of the loader's columns the release has (a file reads no other column; default: all the loader reads).
    """
    if isinstance(source, pl.DataFrame):
        return _only(source, columns), "in-memory frame"
    parsed = sources.parse(source)
    if parsed.kind == "sample":
        n = parsed.n if parsed.n is not None else FULL_SIZE
        raw = simulate_release(n=n, seed=seed).raw
        return _only(raw, columns), f"simulator (n={n:,}, seed={seed})"
    if parsed.kind == "hf":
        wanted = READ_COLUMNS if columns is None else READ_COLUMNS & set(columns)
        return _read_hf(parsed.ref, wanted, max_bytes=max_bytes), hub.target(parsed.ref).label
    path, fmt = check_file(parsed.text, RELEASE, RELEASE_FORMATS, max_bytes=max_bytes)
    wanted = READ_COLUMNS if columns is None else READ_COLUMNS & set(columns)
    return read_frame(path, fmt, RELEASE, wanted=wanted.__contains__, record_check=release_record_problem), str(path)


def _only(raw: pl.DataFrame, columns: Collection[str] | None) -> pl.DataFrame:
    return raw if columns is None else raw.select([c for c in raw.columns if c in set(columns)])


_TEXT_FIELDS = ("model_a", "model_b", "winner", "judge", "primary_intent", "secondary_intent")
_OBJECT_FIELDS = ("system_a_metadata", "system_b_metadata", "conv_metadata")


def _kind(value: object) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a whole number",
            float: "a number", type(None): "null"}.get(type(value), type(value).__name__)


def release_record_problem(record: dict[str, Any]) -> str | None:
    """Why one parsed JSON record does not have the JSON types of the release columns the loader reads (``field
    '<name>': expected …, got …``), or None. Polars infers one type per column over the whole file, so a line of
    another type either fails without a line ("failed to determine supertype") or is coerced (a number read as
    text): this names it. Checked (when present): the model, vote, judge and intent fields and the metadata's
    ``conv_id`` and ``client_country`` are strings or null; ``turn`` a whole number or null; ``messages_a/b``
    lists of ``{content, role}`` objects with string (or null) values; the metadata fields objects;
    ``languages`` a list of strings; ``timestamp`` a string, number or null."""
    texts = [(name, record.get(name)) for name in _TEXT_FIELDS]
    for side in SIDES:
        meta = record.get(f"system_{side}_metadata")
        if isinstance(meta, dict):
            texts += [(f"system_{side}_metadata.{k}", meta.get(k)) for k in ("conv_id", "client_country")]
    for name, v in texts:
        if v is not None and not isinstance(v, str):
            return f"field {name!r}: expected a string or null, got {_kind(v)} {quote(v)}"
    turn = record.get("turn")
    if turn is not None and (isinstance(turn, bool) or not isinstance(turn, int)):
        return f"field 'turn': expected a whole number or null, got {_kind(turn)} {quote(turn)}"
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
                    return (f"field '{name}[{i}].{key}': expected a string or null, got {_kind(msg[key])} "
                            f"{quote(msg[key])}")
    for name in _OBJECT_FIELDS:
        v = record.get(name)
        if v is not None and not isinstance(v, dict):
            return f"field {name!r}: expected an object or null, got {_kind(v)} {quote(v)}"
    langs = record.get("languages")
    if langs is not None and (not isinstance(langs, list) or any(x is not None and not isinstance(x, str)
                                                                 for x in langs)):
        return f"field 'languages': expected a list of strings or null, got {quote(langs)}"
    ts = record.get("timestamp")
    if ts is not None and (isinstance(ts, (bool, dict, list)) or not isinstance(ts, (str, int, float))):
        return f"field 'timestamp': expected a date-time string, an epoch number or null, got {_kind(ts)}"
    return None


@dataclass(frozen=True)
class ReleaseCheck:
    """What :func:`validate_release` checked: the source, its format (``parquet``, ``jsonl``, ``sample``, ``hf``),
    its rows when known without reading them all (parquet metadata, or a JSON-lines file read to its end), the
    rows read and checked, and the columns the loader reads."""

    source: str
    format: str
    rows: int | None
    rows_checked: int
    columns: tuple[str, ...]
    absent: tuple[str, ...] = ()


def validate_release(
    source: str | Path, *, max_rows: int = 1000, max_bytes: int = MAX_RELEASE_BYTES
) -> ReleaseCheck:
    """Cheap check of a release before any notebook runs: the file, its schema and its first ``max_rows`` rows.

    ``sample[:N]`` and ``hf[:REF]`` are checked as strings only (the simulator always fits the schema; the hub is
    not contacted). A path must pass :func:`~analysis_lib.reading.check_file`; a parquet file's
    schema and row count come from its metadata, then the first ``max_rows`` rows of the columns the loader
    reads are validated (:func:`validate_raw`); a JSON-lines file's first ``max_rows`` lines (at most 64 MiB) are
    checked line by line (UTF-8, JSON, nesting, one object) and validated the same way. Raises
    :class:`DataValidationError` naming the file and what was expected.
    """
    try:
        parsed = sources.parse(source)
    except ValueError as err:
        raise DataValidationError(str(err)) from None
    if parsed.kind != "path":
        return ReleaseCheck(parsed.text, parsed.kind, parsed.n if parsed.kind == "sample" else None, 0, ())
    path, fmt = check_file(parsed.text, RELEASE, RELEASE_FORMATS, max_bytes=max_bytes)
    rows: int | None = None
    if fmt == "parquet":
        head, rows = parquet_head(path, list(parquet_columns(path, READ_COLUMNS.__contains__)), max_rows)
    else:
        kept: list[dict[str, Any]] = []
        for number, value in json_lines(path):
            if len(kept) == max_rows:
                break
            problem = (release_record_problem(value) if isinstance(value, dict)
                       else f"not a JSON object (a {type(value).__name__})")
            if problem:
                raise located(f"{path}, line {number}", problem)
            kept.append(value)
        else:
            rows = len(kept)
        if not kept:
            raise DataValidationError(f"{path}: holds no JSON lines (only blank lines); expected {RELEASE}")
        data = "\n".join(json.dumps(v) for v in kept).encode()
        head = pl.read_ndjson(io.BytesIO(data), infer_schema_length=None)
        head = head.select([c for c in head.columns if c in READ_COLUMNS])
    if rows == 0 or head.height == 0:
        raise DataValidationError(f"{path}: the release has no rows (an empty file or an empty selection)")
    head, _ = v1_7k_traces(head, str(path))
    validate_raw(head, str(path))
    return ReleaseCheck(str(path), fmt, rows, head.height, tuple(head.columns), tuple(absent_fields(head)))


def _read_hf(ref: str | None, columns: Collection[str], *, max_bytes: int = MAX_RELEASE_BYTES) -> pl.DataFrame:
    """The release ``hf[:REF]`` names, only the loader's ``columns`` of it, through the hub cache and ``datasets``
    (:func:`analysis_lib.search_arena.hub.read`: downloaded online, read from ``$HF_HUB_CACHE`` with
    ``HF_HUB_OFFLINE=1``, checked against the hub's sha256)."""
    return hub.read(ref, columns, max_bytes=max_bytes)


# --------------------------------------------------------------------------------------------------------
# Validation


def v1_7k_traces(raw: pl.DataFrame, origin: str = "input") -> tuple[pl.DataFrame, bool]:
    """The v1-7k release's ``web_search_trace`` in the 24k layout; returns the frame and whether it converted.

    v1-7k stores one record per turn with ``search_results``, a list of records with a ``url`` (the nugget
    authors' ``download_urls.py`` reads ``web_search_trace[turn]["search_results"][k]["url"]`` there and
    ``trace[turn][k][1]`` in the 24k release). Each turn becomes the 24k list of ``[marker, url]`` pairs, the
    marker being the result's 1-based position; a turn with null results has none. Citation features of such a
    release therefore count search results (cited or not). A 24k-layout trace is returned unchanged.
    """
    converted = False
    for side in SIDES:
        name = f"system_{side}_metadata"
        meta = raw.schema.get(name)
        if not isinstance(meta, pl.Struct):
            continue
        trace = {f.name: f.dtype for f in meta.fields}.get("web_search_trace")
        if not (isinstance(trace, pl.List) and isinstance(trace.inner, pl.Struct)):
            continue
        turn = {f.name: f.dtype for f in trace.inner.fields}
        results = turn.get("search_results")
        if not (isinstance(results, pl.List) and isinstance(results.inner, pl.Struct)
                and "url" in {f.name for f in results.inner.fields}):
            raise DataValidationError(
                f"{origin}: field '{name}.web_search_trace' holds records ({', '.join(turn)}), expected the 24k "
                "layout (lists of [marker, url]) or v1-7k's records with search_results: [{url, ...}]"
            )
        pairs = pl.col(name).struct.field("web_search_trace").list.eval(
            pl.element().struct.field("search_results").list.eval(
                pl.concat_list([(pl.int_range(pl.len()) + 1).cast(pl.String), pl.element().struct.field("url")])
            ).fill_null(pl.lit([], dtype=_TRACE.inner))
        )
        raw = raw.with_columns(pl.col(name).struct.with_fields(pairs.alias("web_search_trace")))
        converted = True
    return raw, converted


def absent_fields(raw: pl.DataFrame) -> list[str]:
    """The :data:`OPTIONAL_FIELDS` the raw release lacks (a metadata field counts as absent when either side's
    struct lacks it)."""
    absent = [c for c in (*OPTIONAL_COLUMNS, "timestamp", "judge") if c not in raw.columns]
    for name in (STYLE_FIELD, CONFIG_FIELD):
        sides = [raw.schema.get(f"system_{s}_metadata") for s in SIDES]
        if not all(isinstance(m, pl.Struct) and name in {f.name for f in m.fields} for m in sides):
            absent.append(name)
    return absent


def validate_raw(raw: pl.DataFrame, origin: str = "input") -> None:
    """Check the raw columns and nested fields the loader reads; raise naming the column and expectation."""
    schema = raw.schema
    for name, expected in {**REQUIRED_COLUMNS, **OPTIONAL_COLUMNS}.items():
        if name not in schema:
            if name in OPTIONAL_COLUMNS:
                continue
            raise DataValidationError(f"{origin}: missing column {quote(name)} (expected {expected})")
        got = schema[name]
        if got == pl.Null:  # an all-null column read from jsonl
            continue
        ok = isinstance(got, pl.Struct) if expected is pl.Struct else _compatible(got, expected)
        if not ok:
            raise DataValidationError(
                f"{origin}: column {name!r} has type {one_line(str(got), 120)}, expected {expected}")
    for side in SIDES:
        meta = schema[f"system_{side}_metadata"]
        # a Struct by the column check above (an all-null metadata column fails here, as it always did)
        fields = {f.name: f.dtype for f in cast(pl.Struct, meta).fields}
        for fname, expected in METADATA_FIELDS.items():
            if fname not in fields:
                raise DataValidationError(
                    f"{origin}: column 'system_{side}_metadata' lacks field {fname!r} (expected {expected})"
                )
            if fields[fname] != pl.Null and not _compatible(fields[fname], expected):
                raise DataValidationError(
                    f"{origin}: field 'system_{side}_metadata.{fname}' has type {one_line(str(fields[fname]), 120)}, "
                    f"expected {expected}"
                )
    if problem := timestamp_problem(raw):
        raise DataValidationError(f"{origin}: {problem}")
    bad = raw.with_row_index("row", offset=1).filter(pl.col("winner").is_not_null()
                                                     & ~pl.col("winner").is_in(WINNERS))
    if bad.height:
        sample = ", ".join(f"row {r} = {quote(w)}" for r, w in bad.select("row", "winner").head(5).iter_rows())
        raise DataValidationError(
            f"{origin}: column 'winner' has {bad.height} value(s) outside {list(WINNERS)} or null: {sample}"
        )


def _compatible(got: PolarsDataType, expected: Any) -> bool:
    """Dtype equality that accepts integer widths and Null-typed nested leaves (all-null jsonl fields)."""
    if got == expected:
        return True
    if expected == pl.Int64 and got.is_integer():
        return True
    if isinstance(got, pl.List) and isinstance(expected, pl.List):
        return got.inner == pl.Null or _compatible(got.inner, expected.inner)
    if isinstance(got, pl.Struct) and isinstance(expected, pl.Struct):
        have = {f.name: f.dtype for f in got.fields}
        return all(f.name in have and _compatible(have[f.name], f.dtype) for f in expected.fields)
    return False


# --------------------------------------------------------------------------------------------------------
# Derivation


#: What a timestamp may be: a nanosecond datetime holds 1677-09-21 to 2262-04-11; one outside is kept as null and
#: flagged by its rows (a year-9999 "never" marker, say).
TIMESTAMP_RANGE = (datetime(1677, 9, 22), datetime(2262, 4, 11))
#: Epoch units by magnitude (2025 is ~1.7e9 s, 1.7e12 ms, 1.7e15 us, 1.7e18 ns), with nanoseconds per unit.
EPOCH_UNITS: dict[str, tuple[float, int]] = {"seconds": (1e11, 10**9), "milliseconds": (1e14, 10**6),
                                             "microseconds": (1e17, 10**3), "nanoseconds": (math.inf, 1)}
#: ISO 8601 with a zone (``Z``, ``+02:00``, ``+0200``, ``+02``): read as UTC.
_ZONED = r"(Z|[+-]\d\d(:?\d\d)?)$"


def _epoch_unit(expr: pl.Expr) -> pl.Expr:
    """The unit of each epoch number, by its magnitude (:data:`EPOCH_UNITS`; null for null)."""
    out = pl.lit(None, dtype=pl.String)
    for unit, (below, _) in reversed(EPOCH_UNITS.items()):
        out = pl.when(expr.abs() < below).then(pl.lit(unit)).otherwise(out)
    return out


def timestamp_problem(raw: pl.DataFrame) -> str | None:
    """Epoch-number timestamps in more than one unit (``field 'timestamp': …`` naming the first rows of each, from
    1), or None: the unit is one per file, and a row of milliseconds among seconds would land in 1970."""
    if "timestamp" not in raw.columns or not raw.schema["timestamp"].is_numeric():
        return None
    units = (raw.select(_epoch_unit(pl.col("timestamp")).alias("unit")).with_row_index("row", offset=1)
             .drop_nulls("unit").group_by("unit", maintain_order=True).agg(pl.len(), pl.col("row").head(3)))
    if units.height < 2:
        return None
    parts = [f"{n:,} in {unit} (row{'s' * (n > 1)} {', '.join(map(str, rows))}{', …' if n > 3 else ''})"
             for unit, n, rows in units.iter_rows()]
    return f"field 'timestamp': epoch numbers in {units.height} units, {'; '.join(parts)}; expected one unit per file"


def parse_timestamps(raw: pl.DataFrame) -> tuple[pl.DataFrame, dict[str, int]]:
    """``timestamp`` as Datetime(ns), and the flags of what was kept as null: values that could not be parsed,
    and values outside :data:`TIMESTAMP_RANGE` (named by their rows: the ``_row`` column when the frame has it).
    Strings are ISO 8601, naive (in the format polars infers from the first) or with ``Z`` or an offset (read as
    UTC); numbers are epoch seconds, milliseconds, micro- or nanoseconds by magnitude (one unit per file:
    :func:`timestamp_problem`); parquet stores datetimes."""
    if "timestamp" not in raw.columns:
        return raw.with_columns(pl.lit(None, dtype=pl.Datetime("ns")).alias("timestamp")), {}
    dtype, ts = raw.schema["timestamp"], pl.col("timestamp")
    if dtype == pl.String:  # parsed in microseconds to test the range (nanoseconds wrap a year 9999 to 1815)
        text = ts.str.strip_chars()
        zoned = text.str.contains(_ZONED)
        iso = (pl.when(zoned).then(text).str.replace(r"^(\d{4}-\d\d-\d\d) ", "${1}T").str.replace(r"Z$", "+00:00"))

        def parsed(unit: Literal["us", "ns"]) -> pl.Expr:
            naive = pl.when(~zoned).then(text).str.to_datetime(time_unit=unit, strict=False)
            aware = iso.str.to_datetime("%Y-%m-%dT%H:%M:%S%.f%#z", time_unit=unit, time_zone="UTC", strict=False)
            return pl.coalesce(naive, aware.dt.replace_time_zone(None))

        wide, exact = parsed("us"), parsed("ns")
    elif dtype.is_numeric():  # one unit per file (timestamp_problem): the unit of the largest value
        top = float(cast(float, raw["timestamp"].abs().max() or 0))
        factor = next(f for below, f in EPOCH_UNITS.values() if top < below)
        fits = ts.abs() <= INT64_RANGE[1] / factor
        ns = (ts * factor).round(0) if dtype.is_float() else ts.cast(pl.Int64, strict=False) * factor
        wide = exact = pl.when(fits).then(ns.cast(pl.Int64, strict=False)).cast(pl.Datetime("ns"))
    else:  # a datetime (a zoned one read as UTC) or a date
        exact = ts.dt.convert_time_zone("UTC").dt.replace_time_zone(None) if getattr(dtype, "time_zone", None) else ts
        wide = exact.cast(pl.Datetime("us"))
    lo, hi = TIMESTAMP_RANGE
    outside = (ts.is_not_null() & (wide.is_null() & pl.lit(dtype.is_numeric()) | (wide < lo) | (wide > hi))
               ).fill_null(False)
    out = raw.with_columns(pl.when(~outside).then(exact).cast(pl.Datetime("ns")).alias("timestamp"),
                           outside.alias("_outside"))
    flags = {"timestamps that could not be parsed (kept as null)":
             int((out["timestamp"].is_null() & raw["timestamp"].is_not_null() & ~out["_outside"]).sum())}
    rows = (out.filter("_outside")["_row"] if "_row" in out.columns else out.with_row_index("_r", 1).filter(
        "_outside")["_r"]).to_list()
    if rows:
        shown = ", ".join(map(str, rows[:5])) + (", …" if len(rows) > 5 else "")
        flags[f"timestamps outside {lo:%Y-%m-%d} to {hi:%Y-%m-%d} (kept as null; rows {shown})"] = len(rows)
    return out.drop("_outside"), flags


def normalise(raw: pl.DataFrame) -> pl.DataFrame:
    """Cast columns whose leaves were inferred as Null (all-empty lists in jsonl) to the expected dtypes, and compare
    model names as :func:`~analysis_lib.reading.name_key` says (NFC, surrounding whitespace stripped; a name of
    whitespace only is no name)."""
    casts = [
        pl.col(name).cast(dtype)
        for name, dtype in {**REQUIRED_COLUMNS, **OPTIONAL_COLUMNS}.items()
        if dtype is not pl.Struct and name in raw.schema and raw.schema[name] != dtype
    ]
    casts += [
        pl.col(f"system_{side}_metadata").struct.with_fields(
            pl.field(name).cast(dtype) for name, dtype in METADATA_FIELDS.items()
        )
        for side in SIDES
    ]
    names = [name_expr(pl.col(c).cast(pl.String)) for c in ("model_a", "model_b")]
    return raw.with_columns(casts).with_columns(pl.when(n != "").then(n).alias(c)
                                                for n, c in zip(names, ("model_a", "model_b"), strict=True))
