"""The platform and its models (SA App. A.1 and A.2): daily traffic (Fig A.2) and the model configurations
(Table A.1), from the tidy battle frame of :func:`analysis_lib.search_arena.loader.load_battles`.

**Daily traffic.** A conversation's day is the calendar day of its ``timestamp`` in :data:`TIME_ZONE`
(``America/Los_Angeles``, as the authors count days; the release stores UTC without a zone, so a naive timestamp is
read as UTC and converted); :func:`daily_traffic` counts conversations and voted conversations per day over every
day from the first to the last (a day without any conversation counts 0), marks weekends, and counts the undated
conversations it leaves out. The paper's "roughly 800–1,500 conversations per day" counts what the platform
*recorded*; the release keeps ~24,000 conversations "after filtering out examples with server errors, inconsistent
configurations, or other quality issues" (App. A.1), so the release's own daily counts are lower;
:func:`retained_share` states the share of the recorded traffic the release implies. The third-party counts of
the real release (``published/search_arena_24k_daily_traffic.csv``, UTC days) are read by
:func:`release_traffic_facts`.

**Model configurations.** :func:`model_configurations` summarises each raw model id of a release from its
system metadata (columns ``api_model``, ``search_context``, ``user_location``, ``citation_format`` of
:mod:`analysis_lib.search_arena.system_config`); :func:`paper_table_a1` reads the paper's Table A.1 (12 models;
``published/search_arena_table_a1_models.csv``) and names each row by the paper's model name used elsewhere in
the paper (:func:`table_a1_name`: the table's ``pplx-`` / ``api-`` prefixes and ``-preview`` suffix dropped);
:func:`table_a1_comparison` sets the two side by side.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import cache

import polars as pl

from analysis_lib import fetch
from analysis_lib.search_arena import models
from analysis_lib.search_arena.schema import SIDES

#: Table A.1's prefixes and suffix that the rest of the paper drops from its model names (an observation on the
#: paper's two spellings, e.g. ``api-gpt-4o-search-preview`` in Table A.1 and ``gpt-4o-search`` in Table D.1).
A1_PREFIXES = ("pplx-", "api-")
A1_SUFFIX = "-preview"
#: The time zone whose calendar days :func:`daily_traffic` counts: the authors' (LMArena's) Pacific time.
TIME_ZONE = "America/Los_Angeles"


def daily_traffic(battles: pl.DataFrame, *, time_zone: str = TIME_ZONE) -> tuple[pl.DataFrame, int]:
    """``(days, undated)``: one row per calendar day in ``time_zone`` from the first to the last dated
    conversation, with ``day`` (Date), ``conversations``, ``voted`` (non-null ``winner``), ``weekend`` (Saturday
    or Sunday in ``time_zone``); and the number of conversations without a timestamp (left out, counted).

    A conversation's day is ``date(convert(t, UTC → time_zone))``: a naive timestamp (the release's) is read as UTC,
    a zone-aware one is converted from its own zone.
    The default ``America/Los_Angeles`` is the authors' day (it puts the real release's last conversation,
    2025-05-09 05:20 UTC, on May 8: 52 days, March 18 to May 8 as §2 states; ``time_zone="UTC"`` gives 53)."""
    dated = battles.filter(pl.col("timestamp").is_not_null())
    undated = battles.height - dated.height
    schema = {"day": pl.Date, "conversations": pl.Int64, "voted": pl.Int64, "weekend": pl.Boolean}
    if dated.height == 0:
        return pl.DataFrame(schema=schema), undated
    stamp = pl.col("timestamp")
    if getattr(dated.schema["timestamp"], "time_zone", None) is None:
        stamp = stamp.dt.replace_time_zone("UTC")
    day = stamp.dt.convert_time_zone(time_zone).dt.date()
    per_day = dated.group_by(day.alias("day")).agg(
        pl.len().cast(pl.Int64).alias("conversations"),
        pl.col("winner").is_not_null().sum().cast(pl.Int64).alias("voted"),
    )
    first, last = per_day["day"].min(), per_day["day"].max()
    days = pl.DataFrame({"day": pl.date_range(first, last, "1d", eager=True)})  # type: ignore[arg-type]
    out = (
        days.join(per_day, on="day", how="left")
        .with_columns(pl.col("conversations", "voted").fill_null(0), (pl.col("day").dt.weekday() >= 6).alias("weekend"))
        .sort("day")
    )
    return out.select(list(schema)), undated


@dataclass(frozen=True)
class TrafficSummary:
    """Conversations per calendar day of a release (:func:`traffic_summary`): the mean, peak and minimum per day,
    the days counted, and ``weekend_ratio``, the mean per weekend day over the mean per weekday (below 1 when
    weekends dip, as Fig A.2 shows; NaN without both kinds of day)."""

    mean_per_day: float
    peak_per_day: float
    min_per_day: float
    days: int
    weekend_ratio: float


def traffic_summary(days: pl.DataFrame) -> TrafficSummary:
    """The :class:`TrafficSummary` of :func:`daily_traffic`'s days."""
    per = days["conversations"].cast(pl.Float64)
    weekend = days.filter(pl.col("weekend"))["conversations"].cast(pl.Float64)
    weekday = days.filter(~pl.col("weekend"))["conversations"].cast(pl.Float64)
    ratio = float(weekend.mean()) / float(weekday.mean()) if weekend.len() and weekday.len() else float("nan")  # type: ignore[arg-type]
    return TrafficSummary(float(per.mean()), float(per.max()), float(per.min()), days.height, ratio)  # type: ignore[arg-type]


def retained_share(mean_per_day: float, recorded_per_day: tuple[float, float]) -> tuple[float, float]:
    """Share of the platform's recorded traffic that a release of ``mean_per_day`` conversations per day keeps,
    for the two ends of the paper's range of recorded conversations per day: ``(mean / high, mean / low)``."""
    low, high = recorded_per_day
    return mean_per_day / high, mean_per_day / low


@cache
def release_traffic_facts() -> dict[str, float]:
    """The real release's daily traffic as counted by a third party (statistic -> value; see SOURCES.md)."""
    with fetch.published("search_arena_24k_daily_traffic").open(newline="", encoding="utf-8") as fh:
        return {row["statistic"]: float(row["value"]) for row in csv.DictReader(fh)}


# ----------------------------------------------------------------------------------------- Table A.1


def table_a1_name(name: str) -> str:
    """The paper's model name elsewhere (Table D.1) of a Table A.1 name: ``pplx-``/``api-`` and ``-preview``
    dropped (``api-gpt-4o-search-preview-high`` -> ``gpt-4o-search-high``)."""
    for prefix in A1_PREFIXES:
        name = name.removeprefix(prefix)
    return name.replace(A1_SUFFIX, "")


def paper_table_a1() -> pl.DataFrame:
    """Table A.1 as published: ``provider, model, base_model, details`` and ``paper_name`` (:func:`table_a1_name`)."""
    table = pl.read_csv(fetch.published("search_arena_table_a1_models"), infer_schema_length=0)
    return table.with_columns(pl.col("model").map_elements(table_a1_name, return_dtype=pl.String).alias("paper_name"))


def _sides(battles: pl.DataFrame) -> pl.DataFrame:
    """One row per side of every conversation: raw model, paper name and the side's configuration."""
    cols = ("raw_model", "model", "api_model", "search_context", "user_location", "citation_format")
    return pl.concat([
        battles.select(**{c: pl.col(f"{c}_{s}") for c in cols})
        for s in SIDES
    ])


def _joined(values: pl.Expr) -> pl.Expr:
    """The distinct non-null values of a group, most frequent first, joined with ", " (null when none)."""
    top = values.drop_nulls().value_counts(sort=True).struct.field(values.meta.output_name())
    return pl.when(top.len() > 0).then(top.str.join(", ")).otherwise(None)


def model_configurations(battles: pl.DataFrame) -> pl.DataFrame:
    """Per raw model id of the release (every side of every conversation): ``raw_model``, ``model`` (paper name),
    ``provider``, ``sides``, ``api_model`` and ``search_context`` (distinct values, most frequent first),
    ``user_location_share`` (fraction of the model's sides with a user location), ``styled_sides`` (sides whose
    citation style is known) and ``standardized_share`` (fraction of those in the standardised style), sorted by
    provider and name."""
    sides = _sides(battles)
    out = sides.group_by("raw_model", "model").agg(
        pl.len().cast(pl.Int64).alias("sides"),
        _joined(pl.col("api_model")).alias("api_model"),
        _joined(pl.col("search_context")).alias("search_context"),
        pl.col("user_location").is_not_null().mean().alias("user_location_share"),
        pl.col("citation_format").is_not_null().sum().cast(pl.Int64).alias("styled_sides"),
        (pl.col("citation_format") == "standardized").sum().truediv(pl.col("citation_format").is_not_null().sum())
        .alias("standardized_share"),
    )
    return out.with_columns(models.provider_of(pl.col("raw_model")).alias("provider")).select(
        "provider", "raw_model", "model", "sides", "api_model", "search_context", "user_location_share",
        "styled_sides", "standardized_share",
    ).sort("provider", "model", "raw_model")


@dataclass(frozen=True)
class ConfigurationCounts:
    """What Table A.1 states, counted in a release (:func:`configuration_counts`): search-augmented models and all
    models by paper name, raw model ids, models whose main setting is ``search_context_size=high``, models with a
    user location (on most of their sides), and the percentage of sides shown in the standardised citation style
    (weighted by sides; NaN when no side's style is known)."""

    search_models: int
    models: int
    raw_ids: int
    context_high: int
    user_location: int
    standardized_sides_pct: float


def configuration_counts(configs: pl.DataFrame) -> ConfigurationCounts:
    """The :class:`ConfigurationCounts` of :func:`model_configurations`' frame."""
    first_context = pl.col("search_context").str.split(", ").list.first()
    search = set(models.model_table().filter(pl.col("search"))["model"].to_list())
    named = configs.filter(pl.col("model").is_in(list(search)))
    known = configs.filter(pl.col("styled_sides") > 0)
    weights = known["styled_sides"].cast(pl.Float64)
    return ConfigurationCounts(
        search_models=named["model"].n_unique(),
        models=configs["model"].n_unique(),
        raw_ids=configs.height,
        context_high=configs.filter(first_context == "high")["model"].n_unique(),
        user_location=configs.filter(pl.col("user_location_share") > 0.5)["model"].n_unique(),
        standardized_sides_pct=(100 * float((known["standardized_share"] * weights).sum()) / float(weights.sum())
                                if known.height else float("nan")),
    )


def table_a1_comparison(configs: pl.DataFrame) -> pl.DataFrame:
    """Table A.1 beside the release: one row per Table A.1 model (in the table's order), then the release's
    models that the table does not list (no Table A.1 columns); the release's columns aggregate the raw ids of
    each paper name, with the shares of sides with a user location and with the standardised style as %."""
    paper = paper_table_a1().with_row_index("order")
    release = configs.group_by("model").agg(
        pl.col("raw_model").str.join(", ").alias("release ids"),
        _joined(pl.col("api_model").str.split(", ").explode()).alias("API model"),
        _joined(pl.col("search_context").str.split(", ").explode()).alias("search context"),
        (100 * (pl.col("user_location_share") * pl.col("sides")).sum() / pl.col("sides").sum())
        .alias("user location (% of sides)"),
        (100 * (pl.col("standardized_share") * pl.col("styled_sides")).sum() / pl.col("styled_sides").sum())
        .alias("standardised style (% of sides)"),
        pl.col("sides").sum().alias("sides"),
    )
    joined = paper.join(release, left_on="paper_name", right_on="model", how="full", coalesce=True)
    return joined.with_columns(
        pl.coalesce("provider", models.provider_of(pl.col("paper_name"))).alias("provider"),
        pl.col("order").fill_null(len(paper)),
    ).sort("order", "paper_name").drop("order", "paper_name").rename(
        {"model": "Table A.1 model", "base_model": "base model", "details": "details (Table A.1)"})
