"""Conversations repeated without an id, and attribution counts kept in two places: found in a raw release.

Two checks on a raw Search Arena frame (as :func:`analysis_lib.search_arena.release.read_raw` returns it), for the
loader to call (:mod:`analysis_lib.search_arena.loader`):

- :func:`repeated_without_id`: a conversation whose ``system_a_metadata.conv_id`` is null and whose
  :data:`CONTENT_KEY` (the two model ids and the two message lists) an earlier row with a null ``conv_id`` had is
  the same conversation read twice (a concatenated or re-exported file): the first copy is kept, the others are
  dropped and counted, as repeated ``conv_id`` values are. The key is a 64-bit polars hash of those four columns;
  two different conversations share one with probability about ``n² / 2⁶⁵`` (1.6e-11 for the 24k release).
- :func:`attribution_places` / :func:`attribution_counts`: the six attribution counts may sit at the top level or
  under ``conv_metadata``; a file may hold both (some records each way). :func:`attribution_counts` reads each
  count from the top level and, where that is null, from ``conv_metadata`` (the place
  :func:`analysis_lib.search_arena.attribution_io.validate_attribution` reads), so no record drops out.
"""

from __future__ import annotations

import polars as pl

from analysis_lib.search_arena.schema import ATTRIBUTION_COUNTS, SIDES

#: The columns whose values make a conversation without ``conv_id`` the same conversation.
CONTENT_KEY: tuple[str, ...] = ("model_a", "model_b", "messages_a", "messages_b")
#: The loader's drop reason for :func:`repeated_without_id`.
REPEATED = "repeated conversations without conv_id (same models and messages; first kept)"
COUNT_FIELDS: tuple[str, ...] = tuple(f"{c}_{s}" for c in ATTRIBUTION_COUNTS for s in SIDES)


def repeated_without_id(raw: pl.DataFrame) -> pl.Series:
    """Boolean mask of the rows to drop: a null ``conv_id`` and a :data:`CONTENT_KEY` seen on an earlier row with a
    null ``conv_id`` (rows with a ``conv_id`` are all False: the loader drops their repeats by id)."""
    no_id = pl.col("system_a_metadata").struct.field("conv_id").is_null()
    key = pl.struct([c for c in CONTENT_KEY if c in raw.columns]).hash(seed=0)
    first = pl.when(no_id).then(key).otherwise(None).is_first_distinct()
    return raw.select((no_id & ~first).alias("repeated")).to_series()


def _meta_fields(raw: pl.DataFrame) -> set[str]:
    meta = raw.schema.get("conv_metadata")
    return {f.name for f in meta.fields} if isinstance(meta, pl.Struct) else set()


def attribution_counts(raw: pl.DataFrame) -> list[pl.Expr]:
    """One expression per count present in either place: the top-level value, else ``conv_metadata``'s (as
    Float64, named by the count). The loader divides each by ``turn``."""
    meta = _meta_fields(raw)
    exprs = []
    for name in COUNT_FIELDS:
        places = ([pl.col(name).cast(pl.Float64)] if name in raw.columns else []) + (
            [pl.col("conv_metadata").struct.field(name).cast(pl.Float64)] if name in meta else [])
        if places:
            exprs.append(pl.coalesce(places).alias(name))
    return exprs


def attribution_places(raw: pl.DataFrame) -> dict[str, int]:
    """``{"top level": n, "conv_metadata": m}``: rows with at least one count at the top level, and rows with none
    there but at least one under ``conv_metadata`` (both non-zero: a file with counts in two places)."""
    meta = _meta_fields(raw)
    top = [pl.col(n).is_not_null() for n in COUNT_FIELDS if n in raw.columns]
    under = [pl.col("conv_metadata").struct.field(n).is_not_null() for n in COUNT_FIELDS if n in meta]
    at_top = pl.any_horizontal(top) if top else pl.lit(False)
    at_meta = (~at_top & pl.any_horizontal(under)) if under else pl.lit(False)
    counts = raw.select(at_top.sum().alias("top level"), at_meta.sum().alias("conv_metadata"))
    return {k: int(v[0]) for k, v in counts.to_dict(as_series=False).items()}
