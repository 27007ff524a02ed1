"""Sentences and chunks of text for the nugget paper: the corpus step (NG-C) chunks scraped pages, NG-F8 aligns
response sentences with chunk sentences.

The paper (NG §3) splits pages into chunks of **10 sentences with an overlap of 2** with spaCy's
``xx_sent_ud_sm``; that model is not installable offline, so sentences come from ``pysbd`` (rule-based,
multilingual: a language code per text; the ``[nuggets]`` extra). Chunks with window ``w`` and overlap ``o`` start
at sentences 0, w − o, 2(w − o), … and the last chunk is kept even when shorter; a text with no more than ``w``
sentences is one chunk.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from analysis_lib.extras import require

CHUNK_SENTENCES = 10
CHUNK_OVERLAP = 2
#: compiled patterns the ``re`` module keeps while pysbd segments (its rules use about 2,500 distinct patterns)
REGEX_CACHE_SIZE = 8192


@contextmanager
def regex_cache(size: int = REGEX_CACHE_SIZE) -> Iterator[None]:
    """Let the ``re`` module keep ``size`` compiled patterns for the duration (restored afterwards).

    pysbd applies its rules with ``re.sub`` / ``re.search`` on pattern *strings*, about 2,500 distinct ones per
    language; CPython (3.11) keeps 512 compiled patterns and drops the oldest, and importing ``numpy.f2py`` (which
    scipy does) lowers the limit to 50, so every call recompiled its patterns and segmentation spent nine tenths
    of its time in the regex compiler. With room for all of them the sentences are the same (the same patterns,
    compiled once) and segmentation is several times faster (``benchmarks/bench_nuggets.py``). The limit is
    CPython's ``re._MAXCACHE``; on an interpreter without it this does nothing."""
    previous = getattr(re, "_MAXCACHE", None)
    if previous is None or previous >= size:
        yield
        return
    re._MAXCACHE = size  # type: ignore[attr-defined]
    try:
        yield
    finally:
        re._MAXCACHE = previous  # type: ignore[attr-defined]


def split_sentences(text: str, language: str = "en") -> list[str]:
    """Sentences of ``text`` by pysbd's rules for ``language`` (an ISO 639-1 code pysbd knows; else English)."""
    pysbd = require("pysbd", "nuggets", purpose="sentence splitting")
    try:
        seg = pysbd.Segmenter(language=language, clean=False)
    except ValueError:
        seg = pysbd.Segmenter(language="en", clean=False)
    with regex_cache():
        return [s.strip() for s in seg.segment(text) if s.strip()]


def chunk_sentences(sentences: Sequence[str], size: int = CHUNK_SENTENCES, overlap: int = CHUNK_OVERLAP) -> list[str]:
    """Overlapping chunks of ``size`` sentences sharing ``overlap`` sentences with the previous chunk."""
    if not 0 <= overlap < size:
        raise ValueError(f"need 0 <= overlap < size, got overlap={overlap}, size={size}")
    if not sentences:
        return []
    step = size - overlap
    starts = range(0, max(1, len(sentences) - overlap), step)
    return [" ".join(sentences[s:s + size]) for s in starts]
