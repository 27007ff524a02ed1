"""The embedding path's speed without a changed number (issue 23, chapter 02): the shipped encoder loads once
per process, the on-disk cache stays open and is read again only when another process wrote to it; processes
writing the same cache at once (chapters 02 and 07 of one build) lose no rows and never pair one writer's vectors
with another's index."""

from __future__ import annotations

import subprocess
import sys

import numpy as np

from analysis_lib.search_arena import encoder, topics
from analysis_lib.search_arena.embedding_cache import EmbeddingCache


def test_the_encoder_loads_once_and_repeated_calls_embed_only_what_is_new(tmp_path):
    encoder.offline_encoder.cache_clear()
    first = topics.embed_texts(["what is the capital of France", "best laptop 2025"], cache_dir=tmp_path)
    for i in range(5):  # BERTopic's keyword steps: a few new strings per topic
        topics.embed_texts([f"topic {i} keywords", "best laptop 2025"], cache_dir=tmp_path)
    info = encoder.offline_encoder.cache_info()
    assert info.misses == 1 and info.hits >= 5
    again = topics.embed_texts(["best laptop 2025", "what is the capital of France"], cache_dir=tmp_path)
    np.testing.assert_array_equal(again, first[::-1])  # cached rows, bit for bit
    fresh = encoder.encode(["best laptop 2025"])
    np.testing.assert_allclose(first[1], fresh[0], atol=1e-5)  # the same model's vector


def test_the_open_cache_sees_what_another_process_added(tmp_path):
    model = "some-model"
    held = topics.open_cache(tmp_path, model)
    assert topics.open_cache(tmp_path, model) is held  # kept open
    other = EmbeddingCache(tmp_path, model)  # another process's view of the same files
    other.add(["h1"], np.ones((1, 4), dtype=np.float32))
    seen = topics.open_cache(tmp_path, model)
    assert seen is not held and seen.lookup(["h1"]) == [0]
    seen.add(["h2"], np.zeros((1, 4), dtype=np.float32))
    assert topics.open_cache(tmp_path, model) is seen  # its own write does not force a reread


def test_two_writers_opened_together_keep_each_others_rows(tmp_path):
    a, b = EmbeddingCache(tmp_path, "m"), EmbeddingCache(tmp_path, "m")  # both read the (empty) files first
    a.add(["h1", "h2"], np.array([[1, 0], [0, 1]], dtype=np.float32))
    b.add(["h3", "h1"], np.array([[1, 1], [9, 9]], dtype=np.float32))  # h1 is a's already: not added twice
    on_disk = EmbeddingCache(tmp_path, "m")
    assert sorted(on_disk.keys) == ["h1", "h2", "h3"] and on_disk.vectors is not None
    rows = {h: on_disk.vectors[i].tolist() for h, i in on_disk.keys.items()}
    assert rows == {"h1": [1, 0], "h2": [0, 1], "h3": [1, 1]}
    a.add(["h4"], np.array([[2, 2]], dtype=np.float32))  # a, behind b's write, takes b's rows first
    assert sorted(EmbeddingCache(tmp_path, "m").keys) == ["h1", "h2", "h3", "h4"]
    assert not [p.name for p in (tmp_path / "m").iterdir() if p.name.endswith(".part")]


WRITER = """
import sys, time
from pathlib import Path
import numpy as np
from analysis_lib.search_arena.embedding_cache import EmbeddingCache
folder, tag = Path(sys.argv[1]), sys.argv[2]
cache = EmbeddingCache(folder, "m")
(folder / f"ready-{tag}").touch()
while not (folder / "go").exists():  # both writers start together
    time.sleep(0.01)
for i in range(25):  # one row at a time, as fast as it goes, beside the other writer
    cache.add([f"{tag}{i}"], np.full((1, 3), i, dtype=np.float32))
"""


def test_processes_writing_at_once_lose_no_rows(tmp_path):
    import time

    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), tag]) for tag in "ab"]
    deadline = time.monotonic() + 60
    while not all((tmp_path / f"ready-{t}").exists() for t in "ab") and time.monotonic() < deadline:
        time.sleep(0.01)
    (tmp_path / "go").touch()
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    cache = EmbeddingCache(tmp_path, "m")
    assert sorted(cache.keys) == sorted(f"{t}{i}" for t in "ab" for i in range(25)) and cache.vectors is not None
    assert all(cache.vectors[row].tolist() == [float(h[1:])] * 3 for h, row in cache.keys.items())
