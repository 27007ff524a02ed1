"""The citation-attribution subset (``citation_attribution_data.jsonl``; SA §3.2, Fig 6 right), read safely.

The subset is a Search Arena release file whose records also carry, per side, the claim–citation pairs an LLM
pipeline labelled as supporting, irrelevant or contradicting: ``support_count_a/b``, ``irrelevant_count_a/b``,
``contradict_count_a/b`` (:data:`COUNT_FIELDS`), in the ``conv_metadata`` object or at the top level. Each count
is a whole number of pairs over the conversation, from 0 to :data:`MAX_COUNT`; the loader divides it by ``turn``.
The counts must sit in one place in every record: a file with some records counting at the top level and others
under ``conv_metadata`` is refused (the loader reads one place per file, so half the conversations dropped out).

:func:`validate_attribution` checks every count before the release loader reads the file, so that a bad count
fails with one line instead of becoming a silent value: a negative count (which made β_support NaN), a string
(``"3"`` was read as 3, ``"many"`` failed inside polars), NaN or Inf, a fraction, a boolean. Failures are
:class:`~analysis_lib.reading.DataValidationError` naming the file, the line (JSON lines) or row (parquet), the
field and what was expected. The file is read by the one safe reader, :mod:`analysis_lib.reading` (regular,
non-empty, bounded; UTF-8, JSON, nesting depth), each record checked as a release record too. A record with a count
missing or null is not an error: it is counted (:attr:`AttributionCheck.n_unlabelled`), and the caller reports
it, because :func:`analysis_lib.search_arena.bt.attribution_battles` leaves such records out; a file where no
record has all six counts is refused.

:func:`load_attribution` is what SA-F6R reads: the simulated subset for ``"sample"`` / ``"sample:N"``, else the
validated file read by :func:`analysis_lib.search_arena.loader.load_battles`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from analysis_lib.reading import (
    DataValidationError,
    check_file,
    json_lines,
    located,
    parquet_columns,
    parquet_head,
    quote,
    read_frame,
)
from analysis_lib.search_arena import loader
from analysis_lib.search_arena.release import release_record_problem
from analysis_lib.search_arena.schema import ATTRIBUTION_COUNTS, MAX_RELEASE_BYTES, RELEASE_FORMATS, SIDES
from analysis_lib.search_arena.simulate import attribution as simulated

#: The six count fields of a record.
COUNT_FIELDS: tuple[str, ...] = tuple(f"{c}_{s}" for c in ATTRIBUTION_COUNTS for s in SIDES)
#: Most claim–citation pairs one count may hold (a conversation has a few dozen citations; 10**30 was accepted).
MAX_COUNT = 100_000
EXPECTED = f"expected a whole number of claim–citation pairs from 0 to {MAX_COUNT:,}"


WHAT = "the citation-attribution subset"


@dataclass(frozen=True)
class AttributionCheck:
    """What :func:`validate_attribution` found: records read, records with all six counts, records without."""

    file: str
    n_records: int
    n_labelled: int

    @property
    def n_unlabelled(self) -> int:
        return self.n_records - self.n_labelled


def count_problem(value: Any) -> str | None:
    """Why ``value`` is not a usable count (``None`` when it is one, or is missing: null is counted, not refused)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"{EXPECTED}, got {quote(value)}"
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value) or not value.is_integer()):
        return f"{EXPECTED}, got {value!r}"
    if not 0 <= value <= MAX_COUNT:
        return f"{EXPECTED}, got {quote(value)}"
    return None


def _split(path: Path, top: tuple[int, int], meta: tuple[int, int], unit: str) -> DataValidationError:
    """The refusal of a file whose counts sit at the top level in some records and under ``conv_metadata`` in
    others (``(records, first line or row)`` of each): the loader reads a count from one place per file, so the
    other records would silently drop out of the analysis."""
    return DataValidationError(
        f"{path}: attribution counts at two places: {top[0]} record(s) at the top level (first: {unit} "
        f"{top[1]}) and {meta[0]} under 'conv_metadata' (first: {unit} {meta[1]}); expected every record to carry "
        "them in one place")


def _field(record: dict[str, Any], name: str) -> tuple[str, Any]:
    """``(shown field name, value)`` of one count: top level first, then ``conv_metadata``."""
    if name in record:
        return name, record[name]
    meta = record.get("conv_metadata")
    if isinstance(meta, dict) and name in meta:
        return f"conv_metadata.{name}", meta[name]
    return name, None


def _check_jsonl(path: Path) -> AttributionCheck:
    n_records = n_labelled = 0
    places = {"top": [0, 0], "meta": [0, 0]}
    for lineno, record in json_lines(path):
        where = f"{path}, line {lineno}"
        problem = (release_record_problem(record) if isinstance(record, dict)
                   else f"not a JSON object (a {type(record).__name__})")
        if problem:
            raise located(where, problem)
        n_records += 1
        present = 0
        place = ""
        for name in COUNT_FIELDS:
            shown, value = _field(record, name)
            why = count_problem(value)
            if why:
                raise DataValidationError(f"{where}, field {shown!r}: {why}")
            present += value is not None
            if value is not None and not place:
                place = "meta" if shown.startswith("conv_metadata.") else "top"
        if place:
            places[place][0] += 1
            places[place][1] = places[place][1] or lineno
        n_labelled += present == len(COUNT_FIELDS)
    if places["top"][0] and places["meta"][0]:
        raise _split(path, tuple(places["top"]), tuple(places["meta"]), "line")  # type: ignore[arg-type]
    return AttributionCheck(path.name, n_records, n_labelled)


def _check_parquet(path: Path) -> AttributionCheck:
    schema = parquet_columns(path)
    meta = schema.get("conv_metadata")
    meta_fields = {f.name: f.dtype for f in meta.fields} if isinstance(meta, pl.Struct) else {}
    exprs: dict[str, pl.Expr] = {}
    both = [n for n in COUNT_FIELDS if n in schema and n in meta_fields]
    if both:
        frame = read_frame(path, "parquet", WHAT, wanted=[*both, "conv_metadata"].__contains__).with_row_index(
            "row", offset=1)
        top = frame.filter(pl.any_horizontal(pl.col(both).is_not_null()))
        under = frame.filter(pl.all_horizontal(pl.col(both).is_null()) & pl.any_horizontal(
            [pl.col("conv_metadata").struct.field(n).is_not_null() for n in both]))
        if top.height and under.height:
            raise _split(path, (top.height, int(top["row"][0])), (under.height, int(under["row"][0])), "row")
    for name in COUNT_FIELDS:
        if name in schema:
            shown, expr, dtype = name, pl.col(name), schema[name]
        elif name in meta_fields:
            shown, expr, dtype = f"conv_metadata.{name}", pl.col("conv_metadata").struct.field(name), meta_fields[name]  # type: ignore[assignment]
        else:
            continue
        if not (dtype.is_numeric() or dtype == pl.Null):
            raise DataValidationError(f"{path}, column {shown!r}: {EXPECTED}, got values of type {dtype}")
        exprs[shown] = expr.cast(pl.Float64).alias(shown)
    frame = read_frame(path, "parquet", WHAT, wanted=("conv_metadata", *COUNT_FIELDS).__contains__)
    counts = frame.select(list(exprs.values())) if exprs else pl.DataFrame()
    for shown in counts.columns:
        v = counts[shown]
        bad = (v.is_nan() | v.is_infinite() | (v < 0) | (v > MAX_COUNT) | (v.round(0) != v)).fill_null(False)
        if bad.any():
            row = int(bad.arg_max())  # type: ignore[arg-type]
            raise DataValidationError(f"{path}, row {row + 1}, column {shown!r}: {EXPECTED}, got {v[row]!r}")
    labelled = (
        int(counts.select(pl.all_horizontal(pl.all().is_not_null())).to_series().sum())
        if len(exprs) == len(COUNT_FIELDS) else 0
    )
    return AttributionCheck(path.name, parquet_head(path, [], 0)[1], labelled)


def validate_attribution(path: str | Path) -> AttributionCheck:
    """Check a citation-attribution file (see the module docstring) before any other reader sees it; the book's
    runner calls this before any notebook runs. Raises :class:`~analysis_lib.reading.DataValidationError`."""
    checked, fmt = check_file(path, WHAT, RELEASE_FORMATS, max_bytes=MAX_RELEASE_BYTES)
    check = _check_jsonl(checked) if fmt == "jsonl" else _check_parquet(checked)
    if check.n_labelled == 0:
        raise DataValidationError(
            f"{path}: none of its {check.n_records} records has all six attribution counts "
            f"({', '.join(COUNT_FIELDS)}); expected the citation-attribution subset")
    return check


@dataclass(frozen=True)
class AttributionSubset:
    """The subset as SA-F6R uses it: the tidy battles, ``"simulated"`` or ``"real"``, the planted truth of
    a simulated subset (else ``None``) and the check of a file (else ``None``)."""

    tidy: pl.DataFrame
    kind: str
    planted: simulated.AttributionPlanted | None
    check: AttributionCheck | None


def load_attribution(source: str | Path, *, seed: int = 0, cache_dir: str | Path | None = None) -> AttributionSubset:
    """``"sample"`` / ``"sample:N"`` / ``""``: the simulated subset of :func:`simulated.simulate_attribution`
    (``N`` conversations, default :data:`simulated.N_SUBSET`); else the file, validated by
    :func:`validate_attribution` and read by :func:`analysis_lib.search_arena.loader.load_battles`."""
    source = source or "sample"
    n = loader.sample_size(source, simulated.N_SUBSET)
    if n is not None:
        sim = simulated.simulate_attribution(n, seed=seed)
        return AttributionSubset(loader.load_battles(sim.raw), "simulated", sim.planted, None)
    check = validate_attribution(source)
    tidy = loader.load_battles(source, cache_dir=cache_dir)
    return AttributionSubset(tidy, loader.data_kind(source), None, check)
