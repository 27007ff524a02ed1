"""Optional dependencies: imported on first use, with an error that names the extra that installs them.

``pip install analysis_lib`` installs the core (ranking, statistics, loaders, the four papers' non-LLM analyses).
The rest comes in extras (``pyproject.toml``): ``[llm]`` (the ``openai`` client), ``[topics]`` (torch,
sentence-transformers, BERTopic), ``[nuggets]`` (nuggetizer, ROUGE, sentence splitting), ``[scrape]``,
``[hf]`` (the Hugging Face hub), ``[book]`` (papermill, Jupyter Book) and ``[all]``. A module that needs one
imports it through :func:`require`, inside the function that needs it, so importing the module itself never
fails for want of an extra.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType


class MissingExtra(ImportError):
    """An optional dependency is not installed; the message says which extra installs it."""


def require(module: str, extra: str, *, purpose: str = "") -> ModuleType:
    """Import ``module`` (a dotted name), or raise :class:`MissingExtra` naming ``analysis_lib[extra]``.

    Only the absence of ``module`` (or of its top-level package) becomes :class:`MissingExtra`; an installed
    package that fails while importing raises its own error unchanged.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        missing = exc.name or ""
        if missing and module != missing and not module.startswith(f"{missing}."):
            raise
        why = f" for {purpose}" if purpose else ""
        raise MissingExtra(
            f"the optional package {module.split('.')[0]!r} is needed{why} but not installed: "
            f"pip install 'analysis_lib[{extra}]'"
        ) from exc


#: Threads torch may use in this process (a positive integer); unset: torch's default (one per core). The book
#: runner sets it for its kernels when several chapters run at once, so that two kernels do not each spread over
#: every core. The offline encoder's vectors do not depend on it (``tests/test_topics.py`` checks 1 against 2).
TORCH_THREADS_ENV = "ANALYSIS_TORCH_THREADS"


def limit_torch_threads(torch: ModuleType) -> None:
    """Apply ``$ANALYSIS_TORCH_THREADS`` (:data:`TORCH_THREADS_ENV`) to ``torch``'s intra-op threads, if set."""
    raw = os.environ.get(TORCH_THREADS_ENV, "").strip()
    if not raw:
        return
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"${TORCH_THREADS_ENV} must be a positive integer, got {raw!r}")
    torch.set_num_threads(int(raw))
