"""The embedding path's speed without a changed number (issue 23, chapter 02): the shipped encoder loads once
per process, the on-disk cache stays open and is read again only when another process wrote to it."""

from __future__ import annotations

import numpy as np

from analysis_lib.search_arena import topics


def test_the_encoder_loads_once_and_repeated_calls_embed_only_what_is_new(tmp_path):
    topics._offline_encoder.cache_clear()
    first = topics.embed_texts(["what is the capital of France", "best laptop 2025"], cache_dir=tmp_path)
    for i in range(5):  # BERTopic's keyword steps: a few new strings per topic
        topics.embed_texts([f"topic {i} keywords", "best laptop 2025"], cache_dir=tmp_path)
    info = topics._offline_encoder.cache_info()
    assert info.misses == 1 and info.hits >= 5
    again = topics.embed_texts(["best laptop 2025", "what is the capital of France"], cache_dir=tmp_path)
    np.testing.assert_array_equal(again, first[::-1])  # cached rows, bit for bit
    fresh = topics._offline_encoder().encode(["best laptop 2025"], normalize_embeddings=True)
    np.testing.assert_allclose(first[1], fresh[0], atol=1e-5)  # the same model's vector


def test_the_open_cache_sees_what_another_process_added(tmp_path):
    model = "some-model"
    held = topics.open_cache(tmp_path, model)
    assert topics.open_cache(tmp_path, model) is held  # kept open
    other = topics.EmbeddingCache(tmp_path, model)  # another process's view of the same files
    other.add(["h1"], np.ones((1, 4), dtype=np.float32))
    seen = topics.open_cache(tmp_path, model)
    assert seen is not held and seen.lookup(["h1"]) == [0]
    seen.add(["h2"], np.zeros((1, 4), dtype=np.float32))
    assert topics.open_cache(tmp_path, model) is seen  # its own write does not force a reread
