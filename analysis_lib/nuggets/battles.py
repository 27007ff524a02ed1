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

from typing import NamedTuple

import polars as pl

from analysis_lib.search_arena.schema import WINNERS


class LeftOut(NamedTuple):
    """The battles :func:`single_turn` leaves out: multi-turn ones, and single-turn ones without a vote."""

    multi_turn: int
    no_vote: int


def single_turn(battles: pl.DataFrame) -> tuple[pl.DataFrame, LeftOut]:
    """Battles with ``turn == 1`` and a vote; returns them and the counts left out."""
    for col in ("turn", "winner"):
        if col not in battles.columns:
            raise ValueError(f"battles lack column {col!r} (expected the frame of search_arena.loader.load_battles)")
    multi = battles.filter(pl.col("turn") != 1).height
    one = battles.filter(pl.col("turn") == 1)
    no_vote = one.filter(pl.col("winner").is_null()).height
    return one.filter(pl.col("winner").is_not_null()), LeftOut(multi, no_vote)


class BattleShares(NamedTuple):
    """NG-A1 (Figure 9): the battles counted, and per vote (``winner``) and per language (``language``) the
    ``battles`` and their ``percent`` of all."""

    battles: int
    votes: pl.DataFrame
    languages: pl.DataFrame


def _percent(counts: dict[str, int], keys: tuple[str, ...], n: int, column: str) -> pl.DataFrame:
    return pl.DataFrame({column: list(keys), "battles": [counts.get(k, 0) for k in keys],
                         "percent": [100.0 * counts.get(k, 0) / max(1, n) for k in keys]},
                        schema={column: pl.String, "battles": pl.Int64, "percent": pl.Float64})


def vote_and_language_shares(
    battles: pl.DataFrame, languages: tuple[str, ...] = ("English", "Russian", "Chinese", "German", "French")
) -> BattleShares:
    """NG-A1: the battles, and the share (%) of each vote and of each of ``languages`` (the paper's five most
    frequent; a battle without a language counts in none of them)."""
    n = battles.height
    votes = dict(battles["winner"].value_counts().iter_rows())
    langs = dict(battles["language"].fill_null("unknown").value_counts().iter_rows())
    return BattleShares(n, _percent(votes, WINNERS, n, "winner"), _percent(langs, languages, n, "language"))


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


class TraceUrls(NamedTuple):
    """NG-C: the distinct cited URLs of the single-turn voted battles, the ``battles`` and those with a URL."""

    urls: list[str]
    battles: int
    with_url: int

    @property
    def n_urls(self) -> int:
        return len(self.urls)

    @property
    def without_url(self) -> int:
        return self.battles - self.with_url

    @property
    def without_url_pct(self) -> float:
        """Battles without any URL, in % of the battles (the paper: about 5%)."""
        return 100 * self.without_url / max(1, self.battles)


def single_turn_urls(raw: pl.DataFrame) -> TraceUrls:
    """NG-C: the distinct URLs of the single-turn voted battles of a raw release (both sides, every search
    result), as the authors collect them for their corpus (exact strings, no normalisation), with the battles and
    the battles with a URL."""
    voted = pl.col("winner").is_not_null() & (pl.col("winner") != "")
    one = raw.filter((pl.col("turn") == 1) & voted)
    urls = pl.concat([_trace_urls(one, side) for side in ("a", "b")])
    return TraceUrls(sorted(urls["url"].unique().to_list()), one.height, urls["row"].n_unique())
