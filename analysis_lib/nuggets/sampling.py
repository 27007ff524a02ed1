"""Seeded samples of battles, for the analyses that run on a subset (NG-T2 cosine, NG-Q, NG-NLI, NG-F8).

One rule everywhere: from a population of battle ids in a stated order, ``n`` ids are drawn without replacement
by ``numpy.random.default_rng(seed).choice``; when ``n`` is ``None`` or at least the population, every id is
kept (no draw). The population's order is part of the sample's definition: NG-T2's battles are drawn
from the battles in record order and NG-Q's, NG-NLI's and NG-F8's from the battle ids sorted, so a seed names
one sample. :func:`sample_note` says in words what was drawn, for a table note.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import polars as pl

from analysis_lib.nuggets.records import NuggetRecords


def sample_ids(population: Sequence[str] | np.ndarray | pl.Series, n: int | None, seed: int) -> np.ndarray:
    """``n`` battle ids drawn without replacement from ``population`` (in its order) with
    ``default_rng(seed)``, in draw order; all of ``population`` when ``n`` is ``None`` or ``n ≥ len``."""
    ids = population.to_numpy() if isinstance(population, pl.Series) else np.asarray(population)
    if n is not None and n < 0:
        raise ValueError(f"sample size must be positive or None, got {n}")
    if n is None or n >= ids.size:
        return ids
    return np.random.default_rng(seed).choice(ids, size=n, replace=False)


def record_order_ids(records: NuggetRecords) -> pl.Series:
    """The records' battle ids in the order their nuggets first appear (the population of the NG-T2 sample, the
    order of :func:`analysis_lib.nuggets.diversity.battle_diversity`'s rows)."""
    return records.nuggets.filter(pl.col("side") == "a")["qid"].unique(maintain_order=True)


def sorted_ids(records: NuggetRecords) -> pl.Series:
    """The records' battle ids, sorted (the population of the NG-Q, NG-NLI and NG-F8 samples)."""
    return records.sides["qid"].unique().sort()


def sample_rows(frame: pl.DataFrame, n: int | None, seed: int, column: str = "qid") -> pl.DataFrame:
    """The rows of ``frame`` (one per battle, in the population's order) whose ``column`` was drawn by
    :func:`sample_ids`, kept in frame order."""
    if n is None or n >= frame.height:
        return frame
    keep = sample_ids(frame[column], n, seed)
    return frame.filter(pl.col(column).is_in(pl.Series(keep).implode()))


def subset_records(records: NuggetRecords, ids: Sequence[str] | np.ndarray) -> NuggetRecords:
    """The records of the battles in ``ids`` (sides and nuggets), nothing else changed."""
    keep = pl.Series(np.asarray(ids, dtype=object), dtype=pl.String).implode()
    return replace(records, sides=records.sides.filter(pl.col("qid").is_in(keep)),
                   nuggets=records.nuggets.filter(pl.col("qid").is_in(keep)))


def sample_records(records: NuggetRecords, n: int | None, seed: int) -> NuggetRecords:
    """A random ``n`` of the records' battles (from the sorted ids, :func:`sample_ids`); all when ``n`` is
    ``None`` or not smaller than the number of battles."""
    if n is None or n >= records.n_battles:
        return records
    return subset_records(records, sample_ids(sorted_ids(records), n, seed))


def sample_note(drawn: int, population: int, what: str = "battles") -> str:
    """``"a random 300 of 9,900 battles"`` when a sample was drawn, ``"all 9,900 battles"`` otherwise."""
    return f"a random {drawn:,} of {population:,} {what}" if drawn < population else f"all {population:,} {what}"
