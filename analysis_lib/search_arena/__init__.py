"""Search Arena (Miroyan et al., seed 000): from the raw release to the paper's analyses, on any release.

Data
    :func:`load_battles` / :func:`load_battles_report` (the tidy battle frame and what the load kept), :func:`read_raw`
    and :func:`validate_release` (a raw release, ``hf[:REF]`` the pinned one on the hub), :func:`data_kind` and
    :data:`ANCHOR` (the model table: :mod:`~analysis_lib.search_arena.models`)
Describing the release (§2, App. A–B)
    :func:`dataset_comparison`, :func:`shares`, :func:`users_by_country`, :func:`turn_distribution`,
    :func:`trimmed`, :func:`mean_by`, :func:`factual_vs_rest`, :func:`n_languages`, :func:`multilingual_share`,
    :func:`detect_languages`, :func:`daily_traffic`, :func:`traffic_summary`, :func:`model_configurations`
Prompts through the LLM layer and topics (App. B–C)
    :func:`annotate_sample` (intent labels; their κ: :mod:`~analysis_lib.search_arena.intents`), :func:`fit_topics`,
    :func:`topic_summary` (BERTopic; ``[topics]`` extra), :func:`prompt_comparisons`, :func:`response_comparisons`
    (describing differences: :mod:`~analysis_lib.search_arena.describe`)
Preferences (§3, App. D–E)
    the module :mod:`~analysis_lib.search_arena.bt` (``bt.prepare_battles``, ``bt.leaderboard``,
    ``bt.style_control``: the paper's defaults over :mod:`analysis_lib.ranking`)
Cross-arena (§3.3, App. F)
    :func:`search_arena_cross_battles`, :func:`vote_table`, :func:`intent_tests`, :func:`compare_tie_shares` (the
    Text Arena reader: :mod:`~analysis_lib.search_arena.cross_arena.text_arena`)
Simulators and the estimators against them
    :func:`simulate_release`, :func:`simulate_attribution`, :func:`simulate_text_arena`, :func:`simulate_battles`,
    :func:`error_decomposition`, :func:`seed_study`, :func:`coverage_study`

Each name loads its module on first use (PEP 562), so ``import analysis_lib.search_arena`` imports none of them and
the core install needs no extra; the modules themselves (``from analysis_lib.search_arena import bt, loader``) are
the same functions with their helpers.
"""

from __future__ import annotations

import importlib
from typing import Any

#: Public name -> the submodule that defines it.
_HOME = {
    **dict.fromkeys(("load_battles", "load_battles_report", "LoadReport", "data_kind"), "loader"),
    **dict.fromkeys(("read_raw", "validate_release"), "release"),
    "ANCHOR": "models",
    **dict.fromkeys(("dataset_comparison", "shares", "users_by_country", "turn_distribution", "trimmed", "mean_by",
                     "factual_vs_rest"), "descriptive"),
    **dict.fromkeys(("n_languages", "multilingual_share", "detect_languages"), "languages"),
    **dict.fromkeys(("daily_traffic", "traffic_summary", "model_configurations"), "platform"),
    "annotate_sample": "intents",
    **dict.fromkeys(("fit_topics", "topic_summary"), "topics"),
    **dict.fromkeys(("prompt_comparisons", "response_comparisons"), "describe"),
    **dict.fromkeys(("search_arena_cross_battles", "vote_table", "intent_tests",
                     "compare_tie_shares"), "cross_arena"),
    **dict.fromkeys(("simulate_release", "simulate_attribution", "simulate_text_arena"), "simulate"),
    "simulate_battles": "simulate.battles",
    **dict.fromkeys(("error_decomposition", "seed_study", "coverage_study"), "methods_validation"),
}

__all__ = [
    "ANCHOR", "LoadReport", "annotate_sample", "compare_tie_shares", "coverage_study", "daily_traffic", "data_kind",
    "dataset_comparison", "detect_languages", "error_decomposition", "factual_vs_rest", "fit_topics", "intent_tests",
    "load_battles", "load_battles_report", "mean_by", "model_configurations", "multilingual_share", "n_languages",
    "prompt_comparisons", "read_raw", "response_comparisons", "search_arena_cross_battles", "seed_study", "shares",
    "simulate_attribution", "simulate_battles", "simulate_release", "simulate_text_arena", "topic_summary",
    "traffic_summary", "trimmed", "turn_distribution", "users_by_country", "validate_release", "vote_table",
]


def __getattr__(name: str) -> Any:
    if name in _HOME:
        return getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
