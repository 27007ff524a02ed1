"""Appendix F of the Search Arena paper: the published cross-benchmark scores (Table F.1, Fig F.2;
:func:`table_f1`, :func:`figure_f2_scores`), each Gemini model's change with search (:func:`search_vs_nonsearch_gains`)
and the check of the authors' hand-typed Fact+Synth list behind Table F.1's correlations
(:func:`fact_synth_transcription`). The correlations themselves are :func:`analysis_lib.stats.benchmark_correlations`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import polars as pl

from analysis_lib.fetch import published
from analysis_lib.stats import benchmark_correlations

#: Readable names of the Table F.1 score columns (win rates or accuracies, %).
F1_COLUMNS = {"search_arena": "Search Arena", "fact_synth": "Search Arena (Fact+Synth)", "simpleqa": "SimpleQA",
              "arenahard_v2": "ArenaHard-v2", "other": "Search Arena (Other)"}


def table_f1() -> pl.DataFrame:
    """Table F.1 as published: one row per model, the :data:`F1_COLUMNS` scores with their ``_lo`` (negative) and
    ``_hi`` interval offsets."""
    return pl.read_csv(published("search_arena_table_f1_cross_benchmark"))


def authors_fact_synth_list() -> pl.DataFrame:
    """The authors' hand-typed Fact+Synth list (``model``, ``fact_synth_authors``) from their analysis notebook."""
    return pl.read_csv(published("search_arena_authors_fact_synth_list"))


def figure_f2_scores() -> pl.DataFrame:
    """Fig F.2 as published: ``model``, ``variant`` (search / non-search), ``simpleqa``, ``arenahard_v2`` with
    their ``_lo`` / ``_hi`` offsets."""
    return pl.read_csv(published("search_arena_figure_f2_search_vs_nonsearch"))


def search_vs_nonsearch_gains(frame: pl.DataFrame) -> pl.DataFrame:
    """Figure F.2 values as one row per model: each benchmark's search and non-search scores and the change
    ``<benchmark>_gain`` = search - non-search (points). ``frame`` is the published F.2 table (columns
    ``model``, ``variant``, ``simpleqa``, ``arenahard_v2``)."""
    wide = frame.pivot(on="variant", index="model", values=["simpleqa", "arenahard_v2"])
    return wide.with_columns(
        (pl.col(f"{b}_search") - pl.col(f"{b}_non-search")).alias(f"{b}_gain") for b in ("simpleqa", "arenahard_v2")
    )


@dataclass(frozen=True)
class FactSynthTranscription:
    """What the authors' hand-typed Fact+Synth list changes in Table F.1 (see :func:`fact_synth_transcription`).

    ``table`` / ``authors``: the correlation row (:func:`analysis_lib.stats.benchmark_correlations`, no
    bootstrap) of the Fact+Synth column against ``other`` from the table and from the authors' list;
    ``repeated``: values that occur more often in the authors' list than in the table; ``missing``: table
    values that occur less often in the list; ``positions``: 1-based positions where the two differ.
    """

    table: dict[str, Any]
    authors: dict[str, Any]
    repeated: tuple[float, ...]
    missing: tuple[float, ...]
    positions: tuple[int, ...]


def fact_synth_transcription(
    f1: pl.DataFrame,
    authors: pl.DataFrame,
    column: str = "fact_synth",
    authors_column: str = "fact_synth_authors",
    other: str = "arenahard_v2",
) -> FactSynthTranscription:
    """Correlate Table F.1's ``column`` and the authors' hand-typed list with ``other`` and name the differences.

    ``f1`` is the published Table F.1 frame; ``authors`` the published
    ``search_arena_authors_fact_synth_list`` (``model``, ``fact_synth_authors``), joined on ``model``. The
    authors' notebook computes Table F.1's correlations from hand-typed lists; its Fact+Synth list is not the
    table's column, and that, not a different method, is why the paper's r for Fact+Synth vs ArenaHard-v2
    cannot be reproduced from the table.
    """
    joined = (
        f1.select("model", column, other)
        .with_row_index("_row")
        .join(authors.select("model", authors_column), on="model", how="inner")
        .sort("_row")  # table order: ordinal ranks break ties by it
        .drop("_row")
    )
    if joined.height != f1.height or joined.height != authors.height:
        raise ValueError(
            f"the authors' list and Table F.1 do not name the same models ({authors.height} vs {f1.height} rows, "
            f"{joined.height} matched)"
        )

    def corr(col: str) -> dict[str, Any]:
        return benchmark_correlations(joined.select("model", col, other), rounds=0).row(0, named=True)

    t = joined[column].to_list()
    a = joined[authors_column].to_list()
    values = sorted(set(t) | set(a), reverse=True)
    repeated = tuple(v for v in values if a.count(v) > t.count(v))
    missing = tuple(v for v in values if t.count(v) > a.count(v))
    positions = tuple(i + 1 for i, (x, y) in enumerate(zip(t, a, strict=True)) if x != y)
    return FactSynthTranscription(corr(column), corr(authors_column), repeated, missing, positions)
