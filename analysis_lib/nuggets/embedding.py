"""NG-T2's nugget embeddings: the offline all-MiniLM-L6-v2 encoder on the nuggets of a sample of battles, and
their mean pairwise cosine per battle (:func:`nugget_cosine`), optionally in a background thread
(:func:`start_nugget_cosine`) so the encoder's matrix products overlap other work.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import polars as pl

from analysis_lib.extras import require
from analysis_lib.nuggets import diversity
from analysis_lib.nuggets.records import NuggetRecords
from analysis_lib.nuggets.sampling import subset_records
from analysis_lib.search_arena import encoder, topics
from analysis_lib.search_arena.embedding_cache import EmbeddingCache

#: torch threads of the background encoder: one, beside the caller's own thread on a two-core machine
COSINE_THREADS = 1


def _all_cached(texts: list[str], cache_dir: str | Path | None, precision: encoder.Precision = "auto") -> bool:
    """Whether every text's offline embedding is in the cache :func:`topics.embed_texts` reads (then no encoder
    runs, and torch need not be loaded)."""
    cache = EmbeddingCache(cache_dir or topics.default_cache_dir(), encoder.model_key(precision))
    return all(row is not None for row in cache.lookup([topics.text_hash(t) for t in texts]))


@contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """torch's intra-op threads set to ``n`` for the duration (None: unchanged). On a two-core machine that also
    runs the caller's own thread (and, on a shared one, other jobs), two encoder threads fight for the cores:
    one thread embedded NG-T2's nuggets in a third of the wall time and CPU time of two, to the same bits
    (``benchmarks/bench_nuggets.py``)."""
    if n is None:
        yield
        return
    torch = require("torch", "topics", purpose="the offline encoder")
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def nugget_cosine(records: NuggetRecords, battle_ids: np.ndarray, *, cache_dir: str | Path | None = None,
                  threads: int | None = None, precision: encoder.Precision = "auto") -> pl.DataFrame:
    """NG-T2's cosine on the battles ``battle_ids``: their nuggets (side a's list, in record order) embedded by the
    offline all-MiniLM-L6-v2 encoder at ``precision`` (:func:`analysis_lib.search_arena.topics.embed_texts`, cached
    per text, with ``threads`` torch threads when it has to encode) and
    :func:`analysis_lib.nuggets.diversity.battle_diversity` per battle."""
    sub = subset_records(records, battle_ids).nuggets
    texts = sub.filter(pl.col("side") == "a")["text"].to_list()
    with torch_threads(None if _all_cached(texts, cache_dir, precision) else threads):
        emb = topics.embed_texts(texts, "offline", cache_dir=cache_dir, precision=precision)
    return diversity.battle_diversity(sub, emb)


def start_nugget_cosine(records: NuggetRecords, battle_ids: np.ndarray, *, cache_dir: str | Path | None = None,
                        threads: int | None = COSINE_THREADS,
                        precision: encoder.Precision = "auto") -> Future[pl.DataFrame]:
    """:func:`nugget_cosine` started in a background thread (with ``threads`` torch threads), so that loading the
    encoder and embedding the nuggets (matrix products that run outside the GIL) overlap the caller's other
    work; ``.result()`` returns its frame, or raises its error."""
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ng-t2-cosine")
    try:
        return pool.submit(nugget_cosine, records, battle_ids, cache_dir=cache_dir, threads=threads,
                           precision=precision)
    finally:
        pool.shutdown(wait=False)
