"""Releases in the published schema that the papers never saw, made from a small simulated release: the next
release's new models, an earlier export without the optional citation-style field, a release without the intent and
language labels, and the paper's columns in another order with extra unknown columns (issue: the next release); and
a release whose users are all in one country, without the models' configurations (issue 44).

Each variant is written as parquet, as a user would pass it (``make book DATA=...``).
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from analysis_lib.search_arena.simulate.conversations import simulate_release

#: Two of the paper's models under new ids, and one model the paper did not have (it takes over some battles of a
#: third model, so that it meets every opponent).
RENAMED = {"sonar-pro": "sonar-2026-search", "gpt-4o-search-preview": "gpt-5-search-2026"}
NEW_MODEL, REPLACED = "acme-deepsearch-1", "gemini-2.0-flash-grounding"
LABEL_COLUMNS = ("primary_intent", "secondary_intent", "languages")
STYLE_FIELD = "citation_format_standardized"


def base(n: int = 3000, seed: int = 0) -> pl.DataFrame:
    """The raw simulated release the variants start from."""
    return simulate_release(n=n, seed=seed).raw


def new_models(raw: pl.DataFrame) -> pl.DataFrame:
    """(a) Two models renamed and one new model: every other battle of :data:`REPLACED` is fought by
    :data:`NEW_MODEL` instead."""
    every_other = pl.int_range(pl.len()) % 2 == 0
    out = raw.with_columns(
        [pl.col(c).replace(RENAMED) for c in ("model_a", "model_b")]
    )
    return out.with_columns(
        [pl.when(every_other & (pl.col(c) == REPLACED)).then(pl.lit(NEW_MODEL)).otherwise(pl.col(c)).alias(c)
         for c in ("model_a", "model_b")]
    )


def no_citation_style(raw: pl.DataFrame) -> pl.DataFrame:
    """(b) An earlier export: the metadata structs without ``citation_format_standardized``."""
    cols = []
    for side in ("a", "b"):
        name = f"system_{side}_metadata"
        fields = [f.name for f in raw.schema[name].fields if f.name != STYLE_FIELD]  # type: ignore[union-attr]
        cols.append(pl.struct([pl.col(name).struct.field(f) for f in fields]).alias(name))
    return raw.with_columns(cols)


def no_labels(raw: pl.DataFrame) -> pl.DataFrame:
    """(c) No intent and language columns."""
    return raw.drop([c for c in LABEL_COLUMNS if c in raw.columns])


def us_only_without_config(raw: pl.DataFrame) -> pl.DataFrame:
    """(e) Every side's client country ``US`` (a field present, with no user elsewhere) and no ``llm_config`` in the
    metadata structs (an export without the models' configurations). Not part of ``combined``."""
    cols = []
    for side in ("a", "b"):
        name = f"system_{side}_metadata"
        kept = [f.name for f in raw.schema[name].fields  # type: ignore[union-attr]
                if f.name not in ("llm_config", "client_country")]
        cols.append(pl.struct([*(pl.col(name).struct.field(f) for f in kept), pl.lit("US").alias("client_country")])
                    .alias(name))
    return raw.with_columns(cols)


def reordered(raw: pl.DataFrame) -> pl.DataFrame:
    """(d) The paper's columns in reverse order, with two extra columns the loader does not know."""
    extra = raw.with_columns(pl.lit("x").alias("release_note_2027"), pl.int_range(pl.len()).alias("row_number_2027"))
    return extra.select(list(reversed(extra.columns)))


VARIANTS = {"new_models": new_models, "no_citation_style": no_citation_style, "no_labels": no_labels,
            "reordered": reordered}


def write(folder: str | Path, variants: dict | None = None, n: int = 3000, seed: int = 0) -> dict[str, Path]:
    """Write each variant (default: all, and ``combined``: all four at once) as ``<folder>/<name>.parquet``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    raw = base(n, seed)
    out = {}
    for name, make in (variants or VARIANTS).items():
        out[name] = folder / f"{name}.parquet"
        make(raw).write_parquet(out[name])
    if variants is None:
        combined = reordered(no_labels(no_citation_style(new_models(raw))))
        out["combined"] = folder / "combined.parquet"
        combined.write_parquet(out["combined"])
    return out


if __name__ == "__main__":
    import sys

    for name, path in write(sys.argv[1] if len(sys.argv) > 1 else "/tmp/releases").items():
        print(name, path)
