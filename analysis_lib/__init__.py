"""analysis_lib: the library behind the search-augmented-LLM evaluation compendium.

One package per paper, a small shared core; pure functions over polars frames and numpy arrays. The module map,
one line per module, is in ``book/library.md`` (a test keeps it complete):

- the shared core: :mod:`~analysis_lib.ranking` (paper-agnostic Bradley–Terry and contextual BT),
  :mod:`~analysis_lib.stats`, :mod:`~analysis_lib.llm` (the LLM layer), :mod:`~analysis_lib.plotting`,
  :mod:`~analysis_lib.fetch`, :mod:`~analysis_lib.paths`, :mod:`~analysis_lib.reading` (the one safe reader of
  user files), :mod:`~analysis_lib.sources`, :mod:`~analysis_lib.scrape` and
  :mod:`~analysis_lib.extras` (optional dependencies);
- the papers: :mod:`~analysis_lib.search_arena` (SA), :mod:`~analysis_lib.nuggets` (NG),
  :mod:`~analysis_lib.dr_arena` (DR), :mod:`~analysis_lib.answer_engine` (AE), each with its loaders, analyses,
  figures and simulators.

``import analysis_lib`` imports none of them: a submodule loads on first use (``analysis_lib.ranking``,
PEP 562), so the core install (``pip install analysis_lib``) works without the optional extras. The library
computes on whatever data it is given and knows nothing of the papers' values or of any book built on it.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

__version__ = "0.1.0"

#: The package's submodules and subpackages, read from its folder (loaded on first attribute access).
SUBMODULES: frozenset[str] = frozenset(m.name for m in pkgutil.iter_modules(__path__))


def __getattr__(name: str) -> ModuleType:
    if name in SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *SUBMODULES})
