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
    """An optional dependency cannot be imported; the message says which extra installs it and quotes the import
    error (``name``: the module that was missing, when Python says)."""


def _quote(exc: BaseException) -> str:
    text = " ".join(str(exc).split()).rstrip(".")
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def require(module: str, extra: str, *, purpose: str = "") -> ModuleType:
    """Import ``module`` (a dotted name), or raise :class:`MissingExtra` naming ``analysis_lib[extra]``.

    Either ``module`` itself (or its top-level package) is not installed, or it is installed but fails while
    importing because something it needs is missing or broken (e.g. trafilatura without ``lxml_html_clean``:
    lxml raises a bare ``ImportError``). Both raise :class:`MissingExtra`, which names the extra and quotes the
    real import error, so the two cases are told apart; the original error is chained (``__cause__``).
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        missing = exc.name or ""
        why = f" for {purpose}" if purpose else ""
        top = module.split(".")[0]
        if missing and (module == missing or module.startswith(f"{missing}.")):
            message = (f"the optional package {top!r} is needed{why} but not installed ({_quote(exc)}): "
                       f"pip install 'analysis_lib[{extra}]'")
        else:
            message = (f"the optional package {top!r} is needed{why}; it is installed but cannot be imported: "
                       f"{_quote(exc)}. pip install 'analysis_lib[{extra}]' installs what it needs")
        raise MissingExtra(message, name=exc.name or None) from exc


#: Threads torch may use in this process (a positive integer); unset: torch's default (one per core). The book
#: runner sets it for its kernels when several notebooks run at once, so that two kernels do not each spread over
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
