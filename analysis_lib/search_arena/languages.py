"""Prompt languages (Search Arena §2.1, Figure 2 left, Figure B.5).

The release labels each conversation with a list of language names (``languages``; the tidy frame's
``language`` is its first element, the prompt language). :func:`language_shares` gives the top-k shares and
:func:`multilingual_share` the share of conversations with more than one language; both are fractions 0–1 of
all conversations in the frame (unlabelled ones included in the base). For prompts without a
label, :func:`detect_languages` runs the offline py3langid classifier and maps ISO 639-1 codes to English
language names with pycountry ("Chinese", "Russian", ...), the naming the release uses.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import polars as pl
import py3langid
import pycountry


def _first_language(frame: pl.DataFrame) -> pl.Series:
    if "language" in frame.columns:
        return frame["language"]
    return frame["languages"].list.first().alias("language")


def language_shares(frame: pl.DataFrame, top_k: int | None = 15) -> pl.DataFrame:
    """Share of conversations per prompt language: columns ``language``, ``count``, ``share``.

    ``share`` is a fraction (0–1; notebooks format it as %) whose base is **every conversation in** ``frame``,
    labelled or not: conversations without a language (null, or an empty ``languages`` list) are not listed but
    stay in the denominator, so the listed shares add up to the labelled fraction, not to 1. (This differs from
    :func:`analysis_lib.search_arena.descriptive.shares`, whose base leaves nulls out; on the release, where every
    conversation is labelled, the two agree.) Sorted by count; ``top_k`` rows kept (``None`` keeps all).
    """
    lang = _first_language(frame).alias("language")
    counts = lang.drop_nulls().value_counts(sort=True, name="count")
    counts = counts.with_columns((pl.col("count") / len(lang)).alias("share"))
    return counts.head(top_k) if top_k else counts


def n_languages(frame: pl.DataFrame, min_count: int = 1) -> int:
    """Number of distinct prompt languages with at least ``min_count`` conversations."""
    counts = _first_language(frame).drop_nulls().value_counts(name="count")
    return int((counts["count"] >= min_count).sum())


def multilingual_share(frame: pl.DataFrame) -> float:
    """Share (0–1) of conversations whose ``languages`` list has more than one distinct language.

    Base: every conversation in ``frame``; one without a list (null) or with an empty list counts as not
    multilingual.
    """
    n = frame["languages"].list.unique().list.len().fill_null(0)
    # polars types Series.mean() as any Python literal; a Boolean series gives a float (or None)
    return float((n > 1).mean())  # type: ignore[arg-type]


@lru_cache(maxsize=None)
def _iso_name(code: str) -> str:
    lang = pycountry.languages.get(alpha_2=code) or pycountry.languages.get(alpha_3=code)
    if lang is None:
        return code
    name = getattr(lang, "common_name", None) or lang.name
    return {"Modern Greek (1453-)": "Greek"}.get(name, name.split(" (")[0])


def language_name(code: str) -> str:
    """English name of an ISO 639-1 (or 639-3) code, e.g. ``"zh" -> "Chinese"``; the code when unknown."""
    return _iso_name(code.lower())


@lru_cache(maxsize=None)
def language_code(name: str) -> str | None:
    """ISO 639-1 code of a language name as the releases write it (the inverse of :func:`language_name`, e.g.
    ``"Chinese" -> "zh"``, ``"Greek" -> "el"``); None when pycountry knows no two-letter code for it."""
    lang = pycountry.languages.get(name={"Greek": "Modern Greek (1453-)"}.get(name, name))
    return getattr(lang, "alpha_2", None)


#: The offline detector :func:`detect_languages` runs, as pages name it.
DETECTOR = "py3langid"


def detect_languages(texts: Sequence[str]) -> list[str]:
    """Offline language identification (py3langid), as English language names."""
    return [language_name(py3langid.classify(t or "")[0]) for t in texts]
