"""Battles for the nugget papers: the single-turn battles of a release and NG-A1's counts and shares.

The nugget papers use the 5,103 single-turn battles (``turn == 1``) of the Search Arena v1-7k release
(``lmarena-ai/search-arena-v1-7k``, ``data/search-arena-v1-preference-7k.parquet``: the 24k release's columns plus
precomputed ``cites_*`` / ``num_cites_*``). ``analysis_lib.data.load_battles`` reads it like the 24k release
(it reads only the 24k columns and recomputes the citation features), so this module takes its tidy frame.
"""

from __future__ import annotations

import polars as pl

WINNERS = ("model_a", "model_b", "tie", "tie (bothbad)")


def single_turn(battles: pl.DataFrame) -> tuple[pl.DataFrame, dict[str, int]]:
    """Battles with ``turn == 1`` and a vote; returns them and the counts left out, by reason."""
    for col in ("turn", "winner"):
        if col not in battles.columns:
            raise ValueError(f"battles lack column {col!r} (expected the frame of analysis_lib.data.load_battles)")
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
