"""Each side's configuration from the system metadata (search_arena.system_config): the citation-style
vocabulary, absent and mistyped fields, and the columns the loader derives from a raw release."""

from __future__ import annotations

import polars as pl
import pytest
from raw_factory import conversation, make_raw

from analysis_lib.reading import DataValidationError
from analysis_lib.search_arena import system_config
from analysis_lib.search_arena.loader import derive

SIDES = ("a", "b")


def test_style_vocabulary():
    raw = pl.Series(["standardized", " True", "1", "standardised", "original", "FALSE", "0", "maybe", None])
    styles = pl.select(system_config.style_expr(pl.lit(raw))).to_series().to_list()
    assert styles == ["standardized"] * 4 + ["original"] * 3 + [None, None]


def with_config(raw: pl.DataFrame, side: str, llm_config: dict | None, style: object = "true") -> pl.DataFrame:
    meta = f"system_{side}_metadata"
    fields = [pl.lit(style).alias("citation_format_standardized")]
    if llm_config is not None:
        fields.append(pl.lit(llm_config).alias("llm_config"))
    return raw.with_columns(pl.col(meta).struct.with_fields(*fields))


def test_config_columns_from_nested_metadata_and_absent_fields():
    raw = make_raw([conversation(conv_id="c1"), conversation(conv_id="c2")])
    config = {"name": "gpt-4o-search-preview",
              "params": {"web_search_options": {"search_context_size": "high",
                                                "user_location": {"approximate": {"country": "US"},
                                                                  "type": "approximate"}}}}
    raw = with_config(raw, "a", config)
    raw = with_config(raw, "b", None, style=False)  # side b: no llm_config at all, a boolean style
    tidy, report = derive(raw, "configs")
    assert tidy["api_model_a"].to_list() == ["gpt-4o-search-preview"] * 2
    assert tidy["search_context_a"].to_list() == ["high"] * 2
    assert tidy["user_location_a"].to_list() == ["approximate"] * 2
    assert tidy["api_model_b"].to_list() == [None, None] and tidy["search_context_b"].null_count() == 2
    assert tidy["citation_format_a"].to_list() == ["standardized"] * 2
    assert tidy["citation_format_b"].to_list() == ["original"] * 2
    assert report.flags["citation_format_standardized values that are neither style (side a; kept as null)"] == 0


def test_a_mistyped_field_is_named():
    raw = make_raw([conversation()])
    raw = raw.with_columns(pl.col("system_a_metadata").struct.with_fields(pl.lit("gpt-4o").alias("llm_config")))
    with pytest.raises(DataValidationError, match=r"bad: field 'system_a_metadata\.llm_config' has type String, "
                                                  r"expected a struct with field 'name'"):
        derive(raw, "bad")
    raw = make_raw([conversation()]).with_columns(
        pl.col("system_b_metadata").struct.with_fields(pl.lit([1, 2]).alias("citation_format_standardized")))
    with pytest.raises(DataValidationError, match=r"citation_format_standardized' has type List\(Int\d+\), "
                                                  r"expected String"):
        derive(raw, "bad")


def test_unrecognised_styles_are_counted_per_side():
    raw = make_raw([conversation(conv_id=f"c{k}") for k in range(3)])
    raw = raw.with_columns(pl.col("system_b_metadata").struct.with_fields(
        pl.Series("citation_format_standardized", ["true", "sometimes", None])))
    assert system_config.unrecognised_styles(raw, SIDES) == {"a": 0, "b": 1}
