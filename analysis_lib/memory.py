"""Handing freed memory back to the operating system after a release is read.

A release (real or simulated) holds every message text while it is read, hundreds of MB for Search Arena's 24k
conversations; the battle frame derived from it is a few MB. Once the raw table is dropped, CPython's allocator
(glibc ``malloc``) and Arrow's memory pool keep the freed pages, so the process stays at its peak and whatever it
loads next (an encoder, a model) stacks on top. :func:`release_freed_memory` collects garbage, asks Arrow's
default pool to release what it no longer uses and, on glibc, calls ``malloc_trim(0)``. It frees nothing that is
still referenced and changes no result; it lowers what a process holds after the read, so that processes run side
by side (``make book JOBS=2``) stay within their planned memory.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
from collections.abc import Callable
from functools import cache

import pyarrow as pa


@cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or None on another C library."""
    name = ctypes.util.find_library("c")
    try:
        return getattr(ctypes.CDLL(name), "malloc_trim", None) if name else None
    except OSError:
        return None


def release_freed_memory() -> None:
    """Return freed heap pages to the operating system (garbage collection, Arrow's pool, glibc's malloc_trim)."""
    gc.collect()
    pa.default_memory_pool().release_unused()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
