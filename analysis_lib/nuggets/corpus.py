"""NG-C: the retrieval corpus of the nugget paper — chunking scraped pages and dense retrieval per query.

The paper (NG §3, "Corpus generation"): the ~47K unique URLs cited in single-turn battles are downloaded, their
main text extracted, split into chunks of **10 sentences with an overlap of 2** (spaCy ``xx_sent_ud_sm``), chunks
and queries encoded with BAAI/bge-m3, and the **top 50** chunks per query retrieved by cosine similarity; about
16% of URLs yield **≤ 100 bytes** of content.

Here: scraping and extraction are ``analysis_lib.scrape.scrape_urls`` (trafilatura, robots.txt and rate limits),
called only when the network is available; this module takes its frame (``url, status, text,
n_bytes``). Sentences and chunks come from :mod:`analysis_lib.nuggets.sentences` (``pysbd``), embeddings from
:func:`analysis_lib.search_arena.topics.embed_texts` (the offline all-MiniLM-L6-v2 by default; bge-m3 is not available
offline), retrieval is exact cosine (``embeddings @ query``, unit vectors) instead of a FAISS index: the same ranking.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import polars as pl

from analysis_lib.nuggets.sentences import CHUNK_OVERLAP, CHUNK_SENTENCES, chunk_sentences, split_sentences
from analysis_lib.search_arena.topics import embed_texts

TOP_K = 50
MIN_BYTES = 100


def yield_summary(scraped: pl.DataFrame, min_bytes: int = MIN_BYTES) -> dict[str, float]:
    """URLs, URLs by scrape status, and the share (%) of URLs yielding ≤ ``min_bytes`` bytes of text (failed
    scrapes count as 0 bytes, as in the paper's "yield 100 bytes or less of content after scraping")."""
    n = scraped.height
    nbytes = scraped["n_bytes"].fill_null(0).to_numpy()
    out = {"URLs": float(n),
           f"URLs yielding <= {min_bytes} bytes (%)": 100.0 * float((nbytes <= min_bytes).sum()) / max(1, n)}
    for status, c in scraped["status"].value_counts().iter_rows():
        out[f"status {status}"] = float(c)
    return out


def build_chunks(scraped: pl.DataFrame, language: str = "en", size: int = CHUNK_SENTENCES,
                 overlap: int = CHUNK_OVERLAP) -> pl.DataFrame:
    """Chunks of every ``ok`` page with text: ``url``, ``chunk`` (index within the page), ``text``."""
    rows = []
    for url, text in (scraped.filter((pl.col("status") == "ok") & pl.col("text").is_not_null())
                      .select("url", "text").iter_rows()):
        for k, chunk in enumerate(chunk_sentences(split_sentences(text, language), size, overlap)):
            rows.append({"url": url, "chunk": k, "text": chunk})
    return pl.DataFrame(rows, schema={"url": pl.String, "chunk": pl.Int64, "text": pl.String})


def retrieve(queries: Sequence[str], chunks: pl.DataFrame, k: int = TOP_K, *, embedding: str = "offline",
             cache_dir: str | Path | None = None) -> pl.DataFrame:
    """Top-``k`` chunks per query by cosine similarity of unit embeddings: ``query`` (index), ``rank`` (0 best),
    ``url``, ``chunk``, ``score``."""
    if chunks.height == 0:
        return pl.DataFrame(schema={"query": pl.Int64, "rank": pl.Int64, "url": pl.String, "chunk": pl.Int64,
                                    "score": pl.Float64})
    c = embed_texts(chunks["text"].to_list(), embedding, cache_dir=cache_dir)
    q = embed_texts(list(queries), embedding, cache_dir=cache_dir)
    sim = q @ c.T
    k = min(k, chunks.height)
    top = np.argsort(-sim, axis=1, kind="stable")[:, :k]
    qi = np.repeat(np.arange(len(queries)), k)
    idx = top.ravel()
    return pl.DataFrame({"query": qi, "rank": np.tile(np.arange(k), len(queries)), "url": chunks["url"].to_numpy()[idx],
                         "chunk": chunks["chunk"].to_numpy()[idx], "score": sim[qi, idx].astype(float)})
