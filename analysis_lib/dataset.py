"""Descriptive statistics of a Search Arena release (Search Arena §2, Appendix B.1) and of the benchmark
prompt sets it is compared with (Table 1, Fig 2).

All functions take the tidy battle frame of :func:`analysis_lib.data.load_battles` (one row per
conversation) and return small polars frames: ``share`` columns are percentages of the rows counted.
"""

from __future__ import annotations

import polars as pl

from analysis_lib.fetch import fetch

#: The mirrored describing-differences files that hold the benchmark prompt sets (Appendix C.1 inputs).
PROMPT_SET_FILES = {
    "describing_diffs/search_arena_vs_simpleqa": {"search_arena": "Search Arena", "simpleqa": "SimpleQA"},
    "describing_diffs/search_arena_vs_browsecomp": {"search_arena": "Search Arena", "browsecomp": "BrowseComp"},
}


def shares(frame: pl.DataFrame, column: str, *, top: int | None = None, exclude: tuple[str, ...] = ()) -> pl.DataFrame:
    """Counts and percentage shares of the values of ``column`` (nulls and ``exclude`` left out of the base).

    Returns columns ``column``, ``count``, ``share`` (in %), sorted by count; with ``top``, the first ``top``.
    """
    kept = frame.filter(pl.col(column).is_not_null() & ~pl.col(column).is_in(list(exclude)))
    out = (
        kept.group_by(column)
        .len("count")
        .with_columns((100.0 * pl.col("count") / kept.height).alias("share"))
        .sort(["count", column], descending=[True, False])
    )
    return out.head(top) if top else out


def prompt_sets(*, cache_dir: str | None = None, dedupe_search_arena: bool = True) -> pl.DataFrame:
    """The real prompt sets of Table 1 / Fig 2: SimpleQA (4,326), BrowseComp (1,266) and the English Search
    Arena prompts the authors paired with them (deduplicated across both files unless told otherwise).

    Columns: ``dataset``, ``text``, ``words`` (whitespace word count). BrowseComp problems are for
    statistics only: never print their text.
    """
    parts = []
    for data_id, groups in PROMPT_SET_FILES.items():
        frame = pl.read_csv(fetch(data_id, cache_dir=cache_dir), infer_schema=False)
        missing = {"text", "group_name"} - set(frame.columns)
        if missing:
            raise ValueError(f"{data_id}: missing column(s) {sorted(missing)}; expected text, group_name")
        unknown = set(frame["group_name"].unique().to_list()) - set(groups)
        if unknown:
            raise ValueError(f"{data_id}: unexpected group_name value(s) {sorted(unknown)}; expected {sorted(groups)}")
        parts.append(frame.select(pl.col("group_name").replace_strict(groups).alias("dataset"), pl.col("text")))
    sets = pl.concat(parts)
    if dedupe_search_arena:
        arena = sets.filter(pl.col("dataset") == "Search Arena").unique("text", maintain_order=True)
        sets = pl.concat([arena, sets.filter(pl.col("dataset") != "Search Arena")])
    return sets.with_columns(pl.col("text").str.count_matches(r"\S+").cast(pl.Int64).alias("words"))


def dataset_comparison(battles: pl.DataFrame, sets: pl.DataFrame) -> pl.DataFrame:
    """Table 1: conversations, languages and multi-turn share per dataset.

    SimpleQA and BrowseComp are single-turn English sets (their size is counted from the real files);
    Search Arena's numbers come from the battle frame (languages = distinct ``language`` values).
    """
    bench = (
        sets.filter(pl.col("dataset") != "Search Arena")
        .group_by("dataset", maintain_order=True)
        .agg(pl.len().alias("conversations"))
        .with_columns(languages=pl.lit(1, dtype=pl.UInt32), multi_turn_share=pl.lit(0.0))
    )
    arena = battles.select(
        pl.lit("Search Arena").alias("dataset"),
        pl.len().alias("conversations"),
        pl.col("language").n_unique().cast(pl.UInt32).alias("languages"),
        (100.0 * (pl.col("turn") > 1).mean()).alias("multi_turn_share"),
    )
    return pl.concat([bench, arena], how="vertical_relaxed")


def multilingual_share(battles: pl.DataFrame) -> float:
    """Percentage of conversations whose ``languages`` list names more than one language."""
    return float(100.0 * (battles["languages"].list.len() > 1).mean())


def turn_distribution(battles: pl.DataFrame, *, max_turns: int = 10) -> pl.DataFrame:
    """Conversations per number of turns (``max_turns`` and above pooled), with shares in %."""
    capped = battles.select(pl.col("turn").clip(upper_bound=max_turns).alias("turns"))
    return (
        capped.group_by("turns")
        .len("count")
        .sort("turns")
        .with_columns((100.0 * pl.col("count") / capped.height).alias("share"))
    )


def trimmed(frame: pl.DataFrame, column: str, lower: float = 0.01, upper: float = 0.99) -> pl.DataFrame:
    """Rows whose ``column`` lies within its [lower, upper] quantiles over the whole frame (Fig B.2's trim)."""
    lo, hi = frame.select(pl.col(column).quantile(lower).alias("lo"), pl.col(column).quantile(upper).alias("hi")).row(0)
    return frame.filter(pl.col(column).is_between(lo, hi))


def mean_by(frame: pl.DataFrame, value: str, by: str) -> pl.DataFrame:
    """Mean, standard deviation and count of ``value`` per ``by`` group, sorted by the mean (descending)."""
    return (
        frame.filter(pl.col(by).is_not_null())
        .group_by(by)
        .agg(pl.col(value).mean().alias("mean"), pl.col(value).std().alias("std"), pl.len().alias("n"))
        .sort("mean", descending=True)
    )
