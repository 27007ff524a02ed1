"""analysis_lib.memory: freed memory goes back to the operating system; nothing referenced is touched."""

from __future__ import annotations

import subprocess
import sys

import numpy as np

from analysis_lib.memory import release_freed_memory

PROBE = """
import psutil
from analysis_lib.memory import release_freed_memory
texts = [("word %d " % i) * 40 for i in range(300_000)]  # ~100 MB of small strings, as a release's messages
kept = texts[::1000]
del texts
before = psutil.Process().memory_info().rss
release_freed_memory()
print(before - psutil.Process().memory_info().rss, len(kept))
"""


def test_freed_pages_go_back_to_the_system():
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True).stdout.split()
    freed, kept = int(out[0]), int(out[1])
    assert kept == 300
    assert freed > 50 * 2**20  # most of the dropped strings' pages (glibc keeps them without malloc_trim)


def test_live_objects_are_untouched():
    a = np.arange(1_000_000, dtype=np.float64)
    frame_like = {"x": a.copy(), "y": [str(i) for i in range(1000)]}
    release_freed_memory()
    assert np.array_equal(frame_like["x"], a) and frame_like["y"][-1] == "999"
