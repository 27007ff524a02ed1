"""One BLAS thread for the solvers' small dense products, without rescanning the process's libraries each time.

The ``m × m`` Newton systems, the skinny ``battles × features`` products and the sandwich products are small:
a multi-threaded BLAS mostly waits on its own threads there, so the solvers hold it to one thread
(:func:`one_blas_thread`). ``threadpoolctl.threadpool_limits`` finds the loaded BLAS libraries on every call
(reading the process's memory map, about 1 ms, more on a loaded machine: a sixth of a 1,500-battle leaderboard
with bootstrap and sandwich intervals); a ``ThreadpoolController`` made once, at the first fit (numpy and its
BLAS, the one the solvers use, are loaded by then), limits the same libraries in microseconds.
"""

from __future__ import annotations

import functools
from contextlib import AbstractContextManager
from typing import Any

from threadpoolctl import ThreadpoolController


@functools.cache
def _controller() -> ThreadpoolController:
    return ThreadpoolController()


def one_blas_thread() -> AbstractContextManager[Any]:
    """A context in which the BLAS libraries loaded at the first call run on one thread (restored on exit)."""
    return _controller().limit(limits=1)
