"""One BLAS thread for the solvers' small dense products, without rescanning the process's libraries each time.

The ``m × m`` Newton systems, the skinny ``battles × features`` products and the sandwich products are small:
a multi-threaded BLAS mostly waits on its own threads there, so the solvers hold it to one thread
(:func:`one_blas_thread`). ``threadpoolctl.threadpool_limits`` finds the loaded BLAS libraries on every call
(reading the process's memory map, about 1 ms, more on a loaded machine: a sixth of a 1,500-battle leaderboard
with bootstrap and sandwich intervals); a ``ThreadpoolController`` made once, at the first fit (numpy and its
BLAS, the one the solvers use, are loaded by then), limits the same libraries in microseconds.

:data:`THREADS`: the worker threads of the arena-scale passes (bootstrap rounds, the full-data fit, the sandwich
and the style features split over the battles): two, or one on a machine (or CPU affinity) with one core.
"""

from __future__ import annotations

import functools
import os
from contextlib import AbstractContextManager
from typing import Any

from threadpoolctl import ThreadpoolController


def _cores() -> int:
    """Cores this process may run on (its CPU affinity where the platform has one)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


#: Worker threads of the arena-scale passes (module docstring).
THREADS = min(2, _cores())


@functools.cache
def _controller() -> ThreadpoolController:
    return ThreadpoolController()


def one_blas_thread() -> AbstractContextManager[Any]:
    """A context in which the BLAS libraries loaded at the first call run on one thread (restored on exit)."""
    return _controller().limit(limits=1)
