"""Each side's system configuration from the release's ``system_{a,b}_metadata`` (SA App. A.2, Table A.1).

The release records, per side, the API model and its parameters (``llm_config.name``,
``llm_config.params.web_search_options.{search_context_size, user_location.type}``) and whether the answer was
shown in the standardised or the provider's original citation style (``citation_format_standardized``; SA App. A.2:
"citation style randomization"). :func:`config_columns` turns them into flat per-side columns of the tidy frame:

- ``api_model_{a,b}``: ``llm_config.name`` (the provider's model id);
- ``search_context_{a,b}``: ``web_search_options.search_context_size`` (``low``/``medium``/``high``; null where the
  provider has no such option, e.g. Gemini);
- ``user_location_{a,b}``: ``web_search_options.user_location.type`` (``approximate`` for the location-enabled
  model; null when no location is passed);
- ``citation_format_{a,b}``: ``standardized`` or ``original``, read from ``citation_format_standardized`` whatever
  its spelling (a boolean, ``true``/``false``, ``1``/``0``, ``standardized``/``original``; :data:`STANDARDIZED`,
  :data:`ORIGINAL`); any other value becomes null and is counted by :func:`unrecognised_styles`.

Every field is optional: a release without it (v1-7k, the citation-attribution subset) gets null columns. A
field that is present with another type raises :class:`~analysis_lib.reading.DataValidationError`
naming it. A leaf module apart from the error type.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from analysis_lib.reading import DataValidationError, one_line

if TYPE_CHECKING:
    from polars._typing import PolarsDataType

#: The two citation styles of the tidy frame.
STYLES: tuple[str, str] = ("standardized", "original")
#: Spellings read as the standardised style (compared in lower case, trimmed).
STANDARDIZED = frozenset({"standardized", "standardised", "standard", "true", "1", "yes", "t", "y"})
#: Spellings read as the provider's original style.
ORIGINAL = frozenset({"original", "false", "0", "no", "f", "n"})

#: Output column base -> path inside ``system_<side>_metadata`` (all strings).
CONFIG_FIELDS: dict[str, tuple[str, ...]] = {
    "api_model": ("llm_config", "name"),
    "search_context": ("llm_config", "params", "web_search_options", "search_context_size"),
    "user_location": ("llm_config", "params", "web_search_options", "user_location", "type"),
}
STYLE_FIELD = "citation_format_standardized"
#: The metadata field holding the API model and its parameters (the first step of every :data:`CONFIG_FIELDS` path).
CONFIG_FIELD = "llm_config"


def _walk(dtype: PolarsDataType, path: tuple[str, ...], where: str) -> PolarsDataType | None:
    """The dtype at ``path`` inside a struct dtype, or None when a step is missing or all-null."""
    for k, name in enumerate(path):
        if dtype == pl.Null:
            return None
        if not isinstance(dtype, pl.Struct):
            inner = ".".join((where, *path[:k]))
            raise DataValidationError(
                f"field {inner!r} has type {one_line(str(dtype), 120)}, expected a struct with field {name!r}"
            )
        fields = {f.name: f.dtype for f in dtype.fields}
        if name not in fields:
            return None
        dtype = fields[name]
    return dtype


def _string_field(raw: pl.DataFrame, side: str, path: tuple[str, ...], origin: str) -> pl.Expr:
    """``system_<side>_metadata.<path>`` as a string expression (null when the field is absent)."""
    column = f"system_{side}_metadata"
    try:
        dtype = _walk(raw.schema[column], path, column)
    except DataValidationError as err:
        raise DataValidationError(f"{origin}: {err}") from None
    if dtype is None or dtype == pl.Null:
        return pl.lit(None, dtype=pl.String)
    if dtype not in (pl.String, pl.Boolean) and not dtype.is_integer():
        raise DataValidationError(
            f"{origin}: field '{column}.{'.'.join(path)}' has type {one_line(str(dtype), 120)}, expected String"
        )
    expr = pl.col(column)
    for name in path:
        expr = expr.struct.field(name)
    return expr.cast(pl.String)


def style_expr(text: pl.Expr) -> pl.Expr:
    """``standardized`` / ``original`` / null from the raw style value (:data:`STANDARDIZED`, :data:`ORIGINAL`)."""
    key = text.str.strip_chars().str.to_lowercase()
    return (
        pl.when(key.is_in(list(STANDARDIZED))).then(pl.lit(STYLES[0]))
        .when(key.is_in(list(ORIGINAL))).then(pl.lit(STYLES[1]))
        .otherwise(pl.lit(None, dtype=pl.String))
    )


def config_columns(raw: pl.DataFrame, sides: tuple[str, ...], origin: str = "input") -> list[pl.Expr]:
    """The per-side configuration columns of the module docstring, as expressions over the raw release."""
    exprs: list[pl.Expr] = []
    for side in sides:
        for base, path in CONFIG_FIELDS.items():
            exprs.append(_string_field(raw, side, path, origin).alias(f"{base}_{side}"))
        style = _string_field(raw, side, (STYLE_FIELD,), origin)
        exprs.append(style_expr(style).alias(f"citation_format_{side}"))
    return exprs


def unrecognised_styles(raw: pl.DataFrame, sides: tuple[str, ...], origin: str = "input") -> dict[str, int]:
    """Per side, the non-null ``citation_format_standardized`` values that are neither style (kept as null)."""
    out = {}
    for side in sides:
        style = _string_field(raw, side, (STYLE_FIELD,), origin)
        bad = raw.select((style.is_not_null() & style_expr(style).is_null()).sum()).item()
        out[side] = int(bad)
    return out
