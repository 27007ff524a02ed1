"""Battles for the nugget papers: the single-turn battles of a release and NG-A1's counts and shares.

The nugget papers use the 5,103 single-turn battles (``turn == 1``) of the Search Arena v1-7k release
(``lmarena-ai/search-arena-v1-7k``, ``data/search-arena-v1-preference-7k.parquet``: the 24k release's columns plus
precomputed ``cites_*`` / ``num_cites_*``). ``analysis_lib.search_arena.loader.load_battles`` reads it like the 24k
release: it reads only the 24k columns and recomputes the citation features, converting v1-7k's per-turn search-result
records to the 24k ``[marker, url]`` pairs (:func:`analysis_lib.search_arena.release.v1_7k_traces`, flagged in the load
report); this module takes the tidy frame.

NG-C's URL count (the "~47K unique URLs associated with single-turn battles", NG §3) needs the citation traces,
which the tidy frame does not keep: :func:`single_turn_urls` reads them from the raw release
(:func:`analysis_lib.search_arena.release.read_raw`), following the authors' ``aggregate_urls``
(castorini/lmsys_nuggetize, ``src/corpus_prepration/download_urls.py``, run with ``--skip_multi_turn --skip_no_vote``).
"""

from __future__ import annotations

import polars as pl

from analysis_lib.search_arena.schema import WINNERS


def single_turn(battles: pl.DataFrame) -> tuple[pl.DataFrame, dict[str, int]]:
    """Battles with ``turn == 1`` and a vote; returns them and the counts left out, by reason."""
    for col in ("turn", "winner"):
        if col not in battles.columns:
            raise ValueError(f"battles lack column {col!r} (expected the frame of search_arena.loader.load_battles)")
    multi = battles.filter(pl.col("turn") != 1).height
    one = battles.filter(pl.col("turn") == 1)
    no_vote = one.filter(pl.col("winner").is_null()).height
    return one.filter(pl.col("winner").is_not_null()), {"multi-turn battles": multi,
                                                        "single-turn battles without a vote": no_vote}


def vote_and_language_shares(
    battles: pl.DataFrame, languages: tuple[str, ...] = ("English", "Russian", "Chinese", "German", "French")
) -> dict[str, float]:
    """NG-A1: battles, vote shares (%) and the shares (%) of ``languages`` (the paper's five most frequent)."""
    n = battles.height
    out: dict[str, float] = {"single-turn battles": float(n)}
    counts = dict(battles["winner"].value_counts().iter_rows())
    for w in WINNERS:
        out[f"vote share {w} (%)"] = 100.0 * counts.get(w, 0) / max(1, n)
    lang_counts = dict(battles["language"].fill_null("unknown").value_counts().iter_rows())
    for lang in languages:
        out[f"language share {lang} (%)"] = 100.0 * lang_counts.get(lang, 0) / max(1, n)
    return out


def _trace_urls(raw: pl.DataFrame, side: str) -> pl.DataFrame:
    """``(row, url)`` for every URL of one side's ``web_search_trace``, in either release's layout: the 24k
    release's ``[marker, url]`` pairs per turn (the URL is the pair's second item) or v1-7k's per-turn records
    whose ``search_results`` list carries a ``url`` field."""
    trace = pl.col(f"system_{side}_metadata").struct.field("web_search_trace")
    turns = raw.select(pl.int_range(pl.len(), dtype=pl.UInt32).alias("row"), trace.alias("turn")).explode("turn")
    dtype = turns.schema["turn"]
    if isinstance(dtype, pl.Struct):
        results = turns.select("row", pl.col("turn").struct.field("search_results").alias("r")).explode("r")
        urls = results.select("row", pl.col("r").struct.field("url").alias("url"))
    else:
        pairs = turns.explode("turn")
        urls = pairs.select("row", pl.col("turn").list.get(1, null_on_oob=True).alias("url"))
    return urls.filter(pl.col("url").is_not_null() & (pl.col("url") != ""))


#: The raw release's columns :func:`single_turn_urls` reads.
TRACE_COLUMNS = ("turn", "winner", "system_a_metadata", "system_b_metadata")


def single_turn_urls(raw: pl.DataFrame) -> tuple[list[str], dict[str, int]]:
    """NG-C: the distinct URLs of the single-turn voted battles of a raw release (both sides, every search
    result), as the authors collect them for their corpus (exact strings, no normalisation), and the counts
    ``single-turn battles`` and ``battles with a URL``."""
    voted = pl.col("winner").is_not_null() & (pl.col("winner") != "")
    one = raw.filter((pl.col("turn") == 1) & voted)
    urls = pl.concat([_trace_urls(one, side) for side in ("a", "b")])
    distinct = sorted(urls["url"].unique().to_list())
    return distinct, {"single-turn battles": one.height, "battles with a URL": urls["row"].n_unique()}
