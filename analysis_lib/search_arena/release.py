"""Reading and validating a raw Search Arena release: the raw schema the loader needs, the readers (parquet,
jsonl, the Hugging Face hub, the simulator, an in-memory frame), the schema check and the cheap check of a
release before a build (:func:`validate_release`).

Which files are read and how a failure is worded (one line naming the file, the line or column, and what was
expected) is :mod:`analysis_lib.search_arena.release_io`'s; every failure is a :class:`DataValidationError`.
:mod:`analysis_lib.search_arena.loader` derives the tidy battle frame from what this module reads (and re-exports its
names).
"""

from __future__ import annotations

import io
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

import polars as pl

from analysis_lib import sources
from analysis_lib.search_arena import hub
from analysis_lib.search_arena.hub import HF_DATASET as HF_DATASET
from analysis_lib.search_arena.hub import HF_FILE as HF_FILE
from analysis_lib.search_arena.hub import HF_REVISION as HF_REVISION
from analysis_lib.search_arena.release_io import (
    MAX_JSON_DEPTH,
    MAX_RELEASE_BYTES,
    DataValidationError,
    check_file,
    dtype_depth,
    first_deep_line,
    jsonl_head,
    jsonl_problem,
    one_line,
    polars_failure,
    short,
)
from analysis_lib.search_arena.schema import ATTRIBUTION_COUNTS, FULL_SIZE, SIDES, WINNERS
from analysis_lib.search_arena.simulate.conversations import simulate_release
from analysis_lib.search_arena.system_config import CONFIG_FIELD, STYLE_FIELD

if TYPE_CHECKING:
    from polars._typing import PolarsDataType



_MESSAGES = pl.List(pl.Struct({"content": pl.String, "role": pl.String}))
_TRACE = pl.List(pl.List(pl.List(pl.String)))

#: Raw columns every chapter needs, with the dtype the loader expects (nested struct fields it reads are checked
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


#: Errors a reader may raise on a corrupt file: polars' own, Arrow's, OS errors, and a Rust panic (a
#: ``BaseException`` in polars).
READ_ERRORS: tuple[type[BaseException], ...] = (Exception, pl.exceptions.PanicException)


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
    (:func:`~analysis_lib.search_arena.release_io.check_file`); a file that cannot be read raises
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
    path, fmt = check_file(parsed.text, max_bytes=max_bytes)
    if fmt == "jsonl" and (deep := first_deep_line(path)):
        raise DataValidationError(f"{path}{deep}")
    wanted = READ_COLUMNS if columns is None else READ_COLUMNS & set(columns)
    try:
        if fmt == "parquet":
            return pl.read_parquet(path, columns=[c for c in _parquet_columns(path) if c in wanted]), str(path)
        lazy = pl.scan_ndjson(path, infer_schema_length=None)
        names = lazy.collect_schema().names()
        return lazy.select([c for c in names if c in wanted]).collect(), str(path)
    except DataValidationError:
        raise
    except READ_ERRORS as err:  # polars raises several error types for corrupt files
        if fmt == "jsonl":
            where = jsonl_problem(path)
            if where:
                raise DataValidationError(f"{path}{where}") from None
        hint = "truncated, or not a parquet file" if fmt == "parquet" else "not JSON lines of the release"
        raise DataValidationError(f"{path}: could not be read as {fmt} ({hint}; {polars_failure(err)})") from None


def _only(raw: pl.DataFrame, columns: Collection[str] | None) -> pl.DataFrame:
    return raw if columns is None else raw.select([c for c in raw.columns if c in set(columns)])


def _parquet_columns(path: Path) -> list[str]:
    """The columns of a parquet release that the loader reads, after checking their nesting in the schema
    (polars crashes on very deep nesting; the release nests five levels)."""
    schema = pl.read_parquet_schema(path)
    for name, dtype in schema.items():
        if name in READ_COLUMNS and dtype_depth(dtype) > MAX_JSON_DEPTH:
            raise DataValidationError(f"{path}: column {short(name)} is nested deeper than {MAX_JSON_DEPTH} levels")
    return [c for c in schema if c in READ_COLUMNS]


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
    not contacted). A path must pass :func:`~analysis_lib.search_arena.release_io.check_file`; a parquet file's
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
    path, fmt = check_file(parsed.text, max_bytes=max_bytes)
    rows: int | None = None
    try:
        if fmt == "parquet":
            columns = _parquet_columns(path)
            rows = int(pl.scan_parquet(path).select(pl.len()).collect().item())
            head = pl.scan_parquet(path).select(columns).head(max_rows).collect()
        else:
            lines = jsonl_head(path, max_lines=max_rows)
            head = pl.read_ndjson(io.BytesIO(lines.data), infer_schema_length=None)
            head = head.select([c for c in head.columns if c in READ_COLUMNS])
            rows = lines.lines if lines.complete else None
    except DataValidationError:
        raise
    except READ_ERRORS as err:
        raise DataValidationError(f"{path}: could not be read as {fmt} ({polars_failure(err)})") from None
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
            raise DataValidationError(f"{origin}: missing column {short(name)} (expected {expected})")
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
    bad = raw.with_row_index("row").filter(pl.col("winner").is_not_null() & ~pl.col("winner").is_in(WINNERS))
    if bad.height:
        sample = ", ".join(f"row {r} = {short(w)}" for r, w in bad.select("row", "winner").head(5).iter_rows())
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


def parse_timestamps(raw: pl.DataFrame) -> tuple[pl.DataFrame, int]:
    """``timestamp`` as Datetime(ns): parquet stores it so; jsonl has ISO strings (or epoch numbers)."""
    if "timestamp" not in raw.columns:
        return raw.with_columns(pl.lit(None, dtype=pl.Datetime("ns")).alias("timestamp")), 0
    dtype = raw.schema["timestamp"]
    if dtype == pl.String:
        parsed = pl.col("timestamp").str.to_datetime(time_unit="ns", strict=False)
    elif dtype.is_integer():  # epoch: the unit follows from the magnitude (2025 is ~1.7e9 s, 1.7e18 ns)
        # polars types Series.max() as any Python literal; an integer column gives an int (or None)
        top = cast(int, raw["timestamp"].abs().max() or 0)
        unit: Literal["s", "ms", "us", "ns"] = (
            "s" if top < 10**11 else "ms" if top < 10**14 else "us" if top < 10**17 else "ns"
        )
        parsed = pl.from_epoch(pl.col("timestamp"), time_unit=unit).cast(pl.Datetime("ns"))
    else:
        parsed = pl.col("timestamp").cast(pl.Datetime("ns"))
    out = raw.with_columns(parsed.alias("timestamp"))
    unparsed = int((out["timestamp"].is_null() & raw["timestamp"].is_not_null()).sum())
    return out, unparsed


def normalise(raw: pl.DataFrame) -> pl.DataFrame:
    """Cast columns whose leaves were inferred as Null (all-empty lists in jsonl) to the expected dtypes."""
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
    return raw.with_columns(casts)


