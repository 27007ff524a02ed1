"""Descriptive statistics of a Search Arena release (Search Arena §2, Appendix B.1) and of the benchmark
prompt sets it is compared with (Table 1, Fig 2).

All functions take the tidy battle frame of :func:`analysis_lib.search_arena.loader.load_battles` (one row per
conversation) and return small polars frames; ``share`` columns are fractions (0–1) of the rows counted,
as everywhere in the library (notebooks show them as percentages).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import polars as pl

from analysis_lib.search_arena import languages, loader
from analysis_lib.search_arena.prompt_sets import benchmark_prompts, search_arena_prompts

#: Quantile interpolations of :func:`trimmed` (polars' names; ``"linear"`` is pandas' and numpy's default).
Interpolation = Literal["nearest", "higher", "lower", "midpoint", "linear"]


def shares(
    frame: pl.DataFrame,
    column: str,
    *,
    top: int | None = None,
    exclude: tuple[str, ...] = (),
    base: Literal["all", "shown"] = "all",
) -> pl.DataFrame:
    """Counts and shares of the values of ``column``; ``exclude`` values are left out of the rows returned.

    ``share = count(v) / N`` with ``N`` the base: ``base="all"`` (default, the Search Arena authors' Fig 1: their
    code divides each intent's count by all labelled prompts, *Other* included, then drops *Other*'s bar)
    counts every non-null value, ``exclude`` included, so the shares returned sum to less than 1 when something
    is excluded; ``base="shown"`` counts only the non-null values not in ``exclude`` (shares sum to 1). Nulls
    are never in the base. Returns columns ``column``, ``count``, ``share`` (0–1), sorted by count; with ``top``,
    the first ``top`` rows (shares stay relative to the base).
    """
    if base not in ("all", "shown"):
        raise ValueError(f"base must be 'all' or 'shown', not {base!r}")
    known = frame.filter(pl.col(column).is_not_null())
    kept = known.filter(~pl.col(column).is_in(list(exclude)))
    n = known.height if base == "all" else kept.height
    out = (
        kept.group_by(column)
        .len("count")
        .with_columns((pl.col("count") / n).alias("share"))
        .sort(["count", column], descending=[True, False])
    )
    return out.head(top) if top else out


def users_by_country(battles: pl.DataFrame, countries: Sequence[str] = ()) -> pl.DataFrame:
    """Users per client country (Fig B.1): one row per country with ``users`` and ``share`` (0–1).

    A user is a distinct ``judge`` id; a user's country is the most frequent non-null ``client_country`` among
    their conversations (ties: alphabetical). Users with no known country are left out of the base. ``countries``
    are listed even when no user is from them (0 users, share 0; NaN when no user has a known country).
    """
    known = battles.filter(pl.col("judge").is_not_null() & pl.col("client_country").is_not_null())
    per_user = (
        known.group_by("judge", "client_country")
        .len()
        .sort(["judge", "len", "client_country"], descending=[False, True, False])
        .unique("judge", keep="first")
    )
    counts = per_user.group_by("client_country").len("users")
    absent = [c for c in dict.fromkeys(countries) if c not in set(counts["client_country"].to_list())]
    counts = pl.concat([counts, pl.DataFrame({"client_country": absent, "users": [0] * len(absent)},
                                             schema=counts.schema)])
    return (
        counts.with_columns((pl.col("users") / per_user.height).alias("share"))
        .sort(["users", "client_country"], descending=[True, False])
    )


def prompt_sets(*, cache_dir: str | None = None) -> pl.DataFrame:
    """The real prompt sets of Table 1 / Fig 2: all SimpleQA (4,326) and BrowseComp (1,266) problems and the
    English Search Arena prompts the authors paired with them (deduplicated;
    :mod:`analysis_lib.search_arena.prompt_sets`).

    Columns: ``dataset``, ``text``, ``words`` (whitespace word count). BrowseComp problems are for
    statistics only: never print their text.
    """
    parts = [
        ("Search Arena", search_arena_prompts("all", cache_dir=cache_dir)),
        ("SimpleQA", benchmark_prompts("simpleqa", cache_dir=cache_dir)),
        ("BrowseComp", benchmark_prompts("browsecomp", cache_dir=cache_dir)),
    ]
    sets = pl.concat(
        [pl.DataFrame({"dataset": name, "text": texts}, schema={"dataset": pl.String, "text": pl.String})
         for name, texts in parts]
    )
    return sets.with_columns(loader.words_expr(pl.col("text")).cast(pl.Int64).alias("words"))


def dataset_comparison(battles: pl.DataFrame, sets: pl.DataFrame) -> pl.DataFrame:
    """Table 1: conversations, those with a vote (``voted``), users, languages and multi-turn share (0–1) per
    dataset.

    SimpleQA and BrowseComp are single-turn English sets (their sizes are counted from the real files);
    Search Arena's row comes from the battle frame: users = distinct ``judge`` ids, languages = distinct
    non-null prompt languages (:func:`analysis_lib.search_arena.languages.n_languages`).
    """
    bench = (
        sets.filter(pl.col("dataset") != "Search Arena")
        .group_by("dataset", maintain_order=True)
        .agg(pl.len().cast(pl.Int64).alias("conversations"))
        .with_columns(voted=pl.lit(None, dtype=pl.Int64), users=pl.lit(None, dtype=pl.Int64),
                      languages=pl.lit(1, dtype=pl.Int64),
                      multi_turn_share=pl.lit(0.0))
    )
    arena = pl.DataFrame(
        {
            "dataset": ["Search Arena"],
            "conversations": [battles.height],
            "voted": [int(battles["winner"].is_not_null().sum())],
            "users": [battles["judge"].drop_nulls().n_unique()],
            "languages": [languages.n_languages(battles)],
            # polars types Series.mean() as any Python literal; a Boolean series gives a float
            "multi_turn_share": [float((battles["turn"] > 1).mean())],  # type: ignore[arg-type]
        },
        schema={"dataset": pl.String, "conversations": pl.Int64, "voted": pl.Int64, "users": pl.Int64,
                "languages": pl.Int64, "multi_turn_share": pl.Float64},
    )
    return pl.concat([bench, arena], how="vertical_relaxed")


def turn_distribution(battles: pl.DataFrame, *, max_turns: int = 10) -> pl.DataFrame:
    """Conversations per number of turns, one row for every count from 1 to the longest (``max_turns`` and above
    pooled; a count no conversation has is 0), with ``share`` (0–1)."""
    capped = battles.select(pl.col("turn").clip(upper_bound=max_turns).alias("turns"))
    longest = int(capped["turns"].max() or 1)  # type: ignore[arg-type]
    every = pl.DataFrame({"turns": pl.int_range(1, longest + 1, eager=True).cast(capped["turns"].dtype)})
    return (
        every.join(capped.group_by("turns").len("count"), on="turns", how="left")
        .with_columns(pl.col("count").fill_null(0).cast(pl.UInt32))
        .with_columns((pl.col("count") / capped.height).alias("share"))
    )


def trimmed(
    frame: pl.DataFrame,
    column: str,
    lower: float = 0.01,
    upper: float = 0.99,
    *,
    strict: bool = True,
    interpolation: Interpolation = "linear",
) -> pl.DataFrame:
    """Rows whose ``column`` lies between its ``lower`` and ``upper`` quantiles over the whole frame (Fig B.2's
    1–99% trim), as the Search Arena authors' code trims (``data_eda.ipynb``).

    The quantiles ``q_l``, ``q_u`` are taken over every non-null value of ``column`` in ``frame``; with
    ``interpolation="linear"`` (the default, pandas' ``Series.quantile``), for the sorted values
    ``x_(0) ≤ … ≤ x_(n−1)`` and ``h = (n − 1) p``, ``q_p = x_(⌊h⌋) + (h − ⌊h⌋)(x_(⌊h⌋+1) − x_(⌊h⌋))``.
    ``strict=True`` (default, the authors') keeps ``q_l < x < q_u``; ``strict=False`` keeps
    ``q_l ≤ x ≤ q_u``. Rows with a null ``column`` are never kept.
    """
    lo, hi = frame.select(
        pl.col(column).quantile(lower, interpolation).alias("lo"),
        pl.col(column).quantile(upper, interpolation).alias("hi"),
    ).row(0)
    return frame.filter(pl.col(column).is_between(lo, hi, closed="none" if strict else "both"))


def mean_by(frame: pl.DataFrame, value: str, by: str) -> pl.DataFrame:
    """Mean, standard deviation and count of ``value`` per ``by`` group, sorted by the mean (descending)."""
    return (
        frame.filter(pl.col(by).is_not_null())
        .group_by(by)
        .agg(pl.col(value).mean().alias("mean"), pl.col(value).std().alias("std"), pl.len().alias("n"))
        .sort("mean", descending=True)
    )


FACTUAL = "Factual Lookup"


def factual_vs_rest(battles: pl.DataFrame) -> tuple[pl.DataFrame, int]:
    """Prompt length of Factual Lookup prompts vs all others (SA §2.2: 17.2 vs 66.7 words).

    Untrimmed whitespace word counts of the first prompt (``prompt_words``), by primary intent: ``Factual
    Lookup``; ``other intents`` (every other label, *Other* included: the paper's "remaining set"); and ``other
    intents, Other excluded`` (the eight intents Fig 1 shows), with ``n``, ``mean`` and ``median``. Returns the frame
    and the conversations left out for a null intent or a null prompt length (counted, not silently dropped).
    """
    known = battles.filter(pl.col("primary_intent").is_not_null() & pl.col("prompt_words").is_not_null())
    groups = {
        FACTUAL: pl.col("primary_intent") == FACTUAL,
        "other intents": pl.col("primary_intent") != FACTUAL,
        "other intents, Other excluded": ~pl.col("primary_intent").is_in([FACTUAL, "Other"]),
    }
    rows = [
        known.filter(mask).select(
            pl.lit(name).alias("group"), pl.len().cast(pl.Int64).alias("n"),
            pl.col("prompt_words").cast(pl.Float64).mean().alias("mean"),
            pl.col("prompt_words").cast(pl.Float64).median().alias("median"),
        )
        for name, mask in groups.items()
    ]
    return pl.concat(rows), battles.height - known.height


def factual_vs_rest_samples(battles: pl.DataFrame) -> dict[str, np.ndarray]:
    """Prompt lengths (words) of Factual Lookup prompts and of all other prompts with a known intent (the two
    groups of :func:`factual_vs_rest` that the paper compares)."""
    known = battles.filter(pl.col("primary_intent").is_not_null() & pl.col("prompt_words").is_not_null())
    factual = pl.col("primary_intent") == FACTUAL
    return {FACTUAL: known.filter(factual)["prompt_words"].to_numpy(),
            "other intents": known.filter(~factual)["prompt_words"].to_numpy()}
