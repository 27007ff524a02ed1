"""The book's LLM steps: which chapter sends which requests, on the inputs of a default build, and their estimate.

Each entry names a chapter, the analyses, and a function that builds the chapter's :class:`~analysis_lib.llm.Step`
list from the build's inputs (data source, seed, cache) with the library builders the chapters use, so the
estimate counts what the chapters will send:

- ``02_prompts`` (the Search Arena package, :mod:`analysis_lib.search_arena`): SA-B5 (:func:`intents.sample_step`,
  the 150 re-annotated conversations), SA-B4 (:func:`topics.label_step`, a bound: one label per topic), SA-C1 and
  SA-C2 (:func:`describe.prompt_steps`, :func:`describe.response_steps`);
- ``07_nuggets``: NG-Q (:func:`analysis_lib.nuggets.llm_analyses.query_class_step` on the 200 sampled battles of the
  simulated records); NG-F6 and NG-T3 need response texts, which simulated records do not send;
- ``08_dr_arena`` (DR-X) and ``09_answer_engines`` (AE-F8b) send requests only with user inputs (agent models,
  answer records): listed as not part of a default build.

:func:`estimate_book` estimates every step on a client's cache, model, mode and prices without sending anything;
:func:`print_estimate` is what the runner prints before the first notebook when an endpoint is configured (for the
chapters that build runs: ``--only 03_preferences`` estimates nothing and loads nothing), and
``python -m analysis_lib.llm estimate`` prints the same for the whole book.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from analysis_lib import llm, paths
from analysis_lib.nuggets import battles as ng_battles
from analysis_lib.nuggets import llm_analyses
from analysis_lib.nuggets.simulate import simulate_nuggets
from analysis_lib.search_arena import describe, intents, loader, prompt_sets, topics

#: the chapters' defaults (their ``parameters`` cells)
INTENT_SAMPLE = 150
MIN_CLUSTER_SIZE = 20
QUERY_CLASS_BATTLES_SIMULATED = 200


@dataclass(frozen=True)
class Inputs:
    data_source: str = "sample"
    seed: int = 0
    cache_dir: Path | None = None


@dataclass(frozen=True)
class Entry:
    chapter: str
    analyses: str
    build: Callable[[llm.LLMClient, Inputs], list[llm.Step]] | None
    not_default: str = ""


def _intents(client: llm.LLMClient, inp: Inputs) -> list[llm.Step]:
    battles = loader.load_battles(inp.data_source, seed=inp.seed, cache_dir=inp.cache_dir)
    return [intents.sample_step(battles, INTENT_SAMPLE, seed=inp.seed)]


def _topics(client: llm.LLMClient, inp: Inputs) -> list[llm.Step]:
    n_prompts = len(prompt_sets.search_arena_prompts("all"))
    return [topics.label_step(n_prompts, MIN_CLUSTER_SIZE, model=client.paper_model(topics.PAPER_LABEL_MODEL))]


def _describe_prompts(client: llm.LLMClient, inp: Inputs) -> list[llm.Step]:
    return describe.prompt_steps(seed=inp.seed, models=describe.resolve_models(client))


def _describe_responses(client: llm.LLMClient, inp: Inputs) -> list[llm.Step]:
    return describe.response_steps(seed=inp.seed, models=describe.resolve_models(client))


def _nuggets(client: llm.LLMClient, inp: Inputs) -> list[llm.Step]:
    single, _ = ng_battles.single_turn(loader.load_battles(inp.data_source, seed=inp.seed, cache_dir=inp.cache_dir))
    records = simulate_nuggets(single, seed=inp.seed).records
    q = llm_analyses.query_battles(records.sides, QUERY_CLASS_BATTLES_SIMULATED, seed=inp.seed)
    return [llm_analyses.query_class_step(q, model=client.paper_model(llm_analyses.QUERY_CLASS_MODEL))]


PLAN: tuple[Entry, ...] = (
    Entry("02_prompts", "SA-B5", _intents),
    Entry("02_prompts", "SA-B4", _topics),
    Entry("02_prompts", "SA-C1", _describe_prompts),
    Entry("02_prompts", "SA-C2", _describe_responses),
    Entry("07_nuggets", "NG-Q", _nuggets),
    Entry("07_nuggets", "NG-F6, NG-T3, NG-F5/NG-N, NG-F7", None,
          "needs nugget records with response texts (NUGGETS=): llm_analyses.judge_step, rubric_steps, "
          "nuggets.pipeline.pipeline_steps"),
    Entry("08_dr_arena", "DR-X", None, "needs agent models (dr_agents): dr_arena.examiner.tournament_steps"),
    Entry("09_answer_engines", "AE-F8b", None,
          "needs answer records to judge (ANSWERS=): answer_engine.pipeline.judge_steps"),
)


def book_steps(client: llm.LLMClient, inputs: Inputs | None = None,
               chapters: Collection[str] | None = None) -> list[tuple[str, llm.Step | str]]:
    """``(chapter, step)`` for every LLM step of a default build (``chapters``: of those chapters only; None: all);
    a step whose inputs cannot be built here is ``(chapter, "why")`` instead (an unavailable input names itself,
    e.g. a file not in the data mirror)."""
    inputs = inputs or Inputs()
    out: list[tuple[str, llm.Step | str]] = []
    for entry in PLAN:
        if chapters is not None and entry.chapter not in chapters:
            continue
        if entry.build is None:
            out.append((entry.chapter, f"{entry.analyses}: not in a default build ({entry.not_default})"))
            continue
        try:
            out.extend((entry.chapter, s) for s in entry.build(client, inputs))
        except (OSError, ValueError, RuntimeError, ImportError) as exc:
            out.append((entry.chapter, f"{entry.analyses}: inputs not available ({type(exc).__name__}: "
                                       f"{llm.clip_text(exc, 160, collapse=True)})"))
    return out


def main_estimate(data_source: str = "sample", seed: int = 0, cache_dir: str | None = None) -> None:
    """``python -m analysis_lib.llm estimate``: the estimate of a whole default build, sending nothing."""
    root = paths.repo_root()
    cache = Path(cache_dir) if cache_dir else (root / ".cache" if root is not None else paths.cache_dir())
    print_estimate(cache, Inputs(data_source, seed, cache), always=True)


def estimate_book(client: llm.LLMClient, inputs: Inputs | None = None,
                  chapters: Collection[str] | None = None) -> list[tuple[str, Any]]:
    """``(chapter, StepEstimate or reason)`` for every step (of ``chapters`` only, if given); sends nothing."""
    return [(ch, s if isinstance(s, str) else llm.estimate_steps([s], client)[0])
            for ch, s in book_steps(client, inputs, chapters)]


def format_book_estimate(client: llm.LLMClient, rows: list[tuple[str, Any]]) -> str:
    head = (f"LLM estimate before anything is sent ({client.describe()}; mode {client.mode}"
            + (f"; budget {client.max_requests:,} requests per chapter" if client.max_requests is not None else "")
            + "):")
    lines = [head]
    chapter = None
    for ch, row in rows:
        if ch != chapter:
            lines.append(f"  {ch}")
            chapter = ch
        lines.append(f"    {row if isinstance(row, str) else row.line()}")
    lines.append("  " + llm.format_estimates([r for _, r in rows if not isinstance(r, str)]).splitlines()[-1])
    return "\n".join(lines)


def print_estimate(cache_dir: Path | None = None, inputs: Inputs | None = None, out: TextIO | None = None, *,
                   always: bool = False, chapters: Collection[str] | None = None) -> None:
    """The runner's hook: the estimate of the build when an endpoint is configured, else one line (``always``:
    the estimate all the same, every uncached request counted as if an endpoint were set; ``chapters``: the
    chapters the build runs, None: the whole book)."""
    out = sys.stdout if out is None else out
    if not always and (not llm.identity()["endpoint"] or llm.identity()["offline"]):
        print("LLM: no endpoint: LLM steps use the cache or are not run", file=out, flush=True)
        return
    if chapters is not None and not {e.chapter for e in PLAN} & set(chapters):
        print(f"LLM: none of this build's chapters ({', '.join(chapters) or 'none'}) sends LLM requests",
              file=out, flush=True)
        return
    client = llm.LLMClient(cache_dir=Path(cache_dir) / "llm" if cache_dir else paths.cache_dir("llm"),
                           progress=False)
    print(format_book_estimate(client, estimate_book(client, inputs, chapters)), file=out, flush=True)
