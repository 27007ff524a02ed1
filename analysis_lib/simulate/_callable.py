"""Make a simulator module callable as its simulator, so ``simulate.<name>`` is the module and
``simulate.<name>(n, seed)`` (the chapters' call) still runs it."""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from typing import Any


def make_callable(module_name: str, simulator: Callable[..., Any]) -> None:
    """Turn ``sys.modules[module_name]`` into a module whose call is ``simulator(*args, **kwargs)``."""

    class _CallableModule(types.ModuleType):
        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            return simulator(*args, **kwargs)

    _CallableModule.__name__ = f"CallableModule[{module_name}]"
    sys.modules[module_name].__class__ = _CallableModule
