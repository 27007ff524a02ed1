"""The book's LLM steps: which chapter sends which requests, with this build's parameters, and their estimate.

Each entry names a chapter, the analyses, and a function that builds the chapter's :class:`~analysis_lib.llm.Step`
list from the build's inputs (data source, seed, cache, and each chapter's parameters: its declared defaults with
this build's ``--set`` values and user inputs over them, :attr:`Inputs.parameters`) with the library builders the
chapters use, so the estimate counts what the chapters will send:

- ``02_prompts`` (the Search Arena package, :mod:`analysis_lib.search_arena`): SA-B5 (:func:`intents.sample_step`,
  ``intent_sample`` re-annotated conversations), SA-B4 (:func:`topics.label_step`, a bound: one label per topic of
  ``topic_prompts`` prompts, and the embeddings of those prompts when ``topic_embedding`` resolves to an endpoint
  model: one request per batch of uncached texts, :func:`embedding_estimate`), SA-C1 and SA-C2
  (:func:`describe.prompt_steps`, :func:`describe.response_steps`, with ``propose_model`` ... when set);
- ``07_nuggets``: NG-Q (:func:`analysis_lib.nuggets.llm_analyses.query_class_step` on ``query_class_battles``
  battles of the chapter's records, the simulator's or the user's, as :func:`bookbuild.papers.nuggets.query_limit`
  counts them);
  NG-F6 and NG-T3 need response texts, which simulated records do not send;
- ``08_dr_arena`` (DR-X) sends requests only with agent models (``dr_agents``: the bound of
  :func:`analysis_lib.dr_arena.examiner.tournament_steps`), ``09_answer_engines`` (AE-F8b) only with answer records
  (listed as not part of a default build).

:func:`estimate_book` estimates every step on a client's cache, model, mode and prices without sending anything;
:func:`print_estimate` is what the runner prints before the first notebook when an endpoint is configured, for the
chapters that will rerun (none: "nothing to send"; ``--only 03_preferences`` estimates nothing and loads nothing),
and ``python -m bookbuild.llm_plan`` prints the same for the whole book.
"""

from __future__ import annotations

import argparse
import ast
import inspect
import math
import sys
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from analysis_lib import llm, paths
from analysis_lib.dr_arena import examiner, framework_prompts
from analysis_lib.nuggets import llm_analyses, loading
from analysis_lib.search_arena import describe, intents, loader, prompt_sets, topics
from analysis_lib.search_arena.embedding_cache import open_cache, text_hash
from bookbuild.papers import dr_arena as dr_arena_book
from bookbuild.papers.nuggets import model_numbers as nuggets_book

#: the chapters' defaults (their ``parameters`` cells), used when a chapter's parameters are not given
INTENT_SAMPLE = 150
MIN_CLUSTER_SIZE = 20
QUERY_CLASS_BATTLES_SIMULATED = nuggets_book.SIMULATED_QUERY_BATTLES


@dataclass(frozen=True)
class Inputs:
    """The build's data source, seed and cache, and ``parameters``: chapter stem -> the values its parameters
    cell will hold (declared defaults, :func:`declared_defaults`, with the injected values over them)."""

    data_source: str = "sample"
    seed: int = 0
    cache_dir: Path | None = None
    parameters: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def param(self, chapter: str, name: str, default: Any) -> Any:
        """``name`` as chapter ``chapter`` will have it (``default`` when the build says nothing about it)."""
        return self.parameters.get(chapter, {}).get(name, default)


#: What a builder returns: steps to estimate, or estimates made directly (embeddings are not chat steps).
Built = list[llm.Step | llm.StepEstimate]


@dataclass(frozen=True)
class Entry:
    chapter: str
    analyses: str
    build: Callable[[llm.LLMClient, Inputs], Built] | None
    not_default: str = ""
    #: for an entry outside a default build: its steps when this build gives what it needs, else None
    given: Callable[[llm.LLMClient, Inputs], Built | None] | None = None


def declared_defaults(inspected: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """A notebook's declared defaults (papermill's inspection: ``{name: {"default": source text}}``) as values;
    one that is not a Python literal is left out."""
    out: dict[str, Any] = {}
    for name, spec in inspected.items():
        try:
            out[name] = ast.literal_eval(str(spec.get("default")))
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
    return out


def _intents(client: llm.LLMClient, inp: Inputs) -> Built:
    battles = loader.load_battles(inp.data_source, seed=inp.seed, cache_dir=inp.cache_dir)
    return [intents.sample_step(battles, int(inp.param("02_prompts", "intent_sample", INTENT_SAMPLE)), seed=inp.seed)]


def _topic_prompts(inp: Inputs) -> list[str]:
    return list(prompt_sets.search_arena_prompts("all", n=inp.param("02_prompts", "topic_prompts", None),
                                                 seed=inp.seed))


def _topics(client: llm.LLMClient, inp: Inputs) -> Built:
    n_prompts = len(_topic_prompts(inp))
    return [topics.label_step(n_prompts, int(inp.param("02_prompts", "min_cluster_size", MIN_CLUSTER_SIZE)),
                              model=client.paper_model(topics.PAPER_LABEL_MODEL))]


def embedding_estimate(client: llm.LLMClient, texts: list[str], model: str, cache_dir: Path | None,
                       analysis: str = "SA-B4") -> llm.StepEstimate:
    """The embeddings request of ``texts`` on the endpoint: the texts not in the embedding cache, sent in batches
    of the client's default size (:meth:`~analysis_lib.llm.LLMClient.embed`), one request per batch."""
    cache = open_cache(cache_dir or topics.default_cache_dir(), model)
    distinct = list(dict.fromkeys(text_hash(t) for t in texts))
    todo = sum(r is None for r in cache.lookup(distinct))
    batch = inspect.signature(client.embed).parameters["batch_size"].default
    requests = math.ceil(todo / batch) if todo else 0
    return llm.StepEstimate(analysis, "embeddings", model, "live", len(distinct), len(distinct) - todo, requests,
                            None, None, "not counted", note=f"{todo:,} uncached texts in batches of {batch}")


def _embeddings(client: llm.LLMClient, inp: Inputs) -> Built:
    embedding = topics.resolve_embedding(str(inp.param("02_prompts", "topic_embedding", "auto")), client)
    if embedding == "offline":
        return []
    cache = inp.param("02_prompts", "cache_dir", None) or inp.cache_dir
    return [embedding_estimate(client, _topic_prompts(inp), embedding, Path(cache) / "embeddings" if cache else None)]


def _models(inp: Inputs) -> dict[str, str]:
    return {k: v for k in ("propose", "reduce", "rank") if (v := inp.param("02_prompts", f"{k}_model", None))}


def _describe_prompts(client: llm.LLMClient, inp: Inputs) -> Built:
    return list(describe.prompt_steps(seed=inp.seed, models=describe.resolve_models(client, _models(inp))))


def _describe_responses(client: llm.LLMClient, inp: Inputs) -> Built:
    return list(describe.response_steps(seed=inp.seed, models=describe.resolve_models(client, _models(inp))))


def _nuggets(client: llm.LLMClient, inp: Inputs) -> Built:
    """NG-Q as chapter 07 draws it (:func:`bookbuild.papers.nuggets.query_limit`): ``query_class_battles``
    battles (None: all on real records, :data:`QUERY_CLASS_BATTLES_SIMULATED` on simulated queries)."""
    chapter = loading.load_inputs(inp.data_source, inp.param("07_nuggets", "nugget_records", "") or None,
                                  seed=inp.seed, cache_dir=inp.cache_dir)
    limit = inp.param("07_nuggets", "query_class_battles", None)
    if limit is None and chapter.queries_kind == "simulated":
        limit = QUERY_CLASS_BATTLES_SIMULATED
    q = llm_analyses.query_battles(chapter.records.sides, limit, seed=inp.seed)
    return [llm_analyses.query_class_step(q, model=client.paper_model(llm_analyses.QUERY_CLASS_MODEL))]


def _dr_x(client: llm.LLMClient, inp: Inputs) -> Built | None:
    """DR-X when ``dr_agents`` names two or more agents: the tournament's bound with this build's rounds."""
    agents = dr_arena_book.agent_names(str(inp.param("08_dr_arena", "dr_agents", "")))
    if len(agents) < 2:
        return None
    prompts, why = framework_prompts.try_load(cache_dir=inp.cache_dir)
    if prompts is None:
        raise RuntimeError(why or "the framework's prompts are not available")
    return list(examiner.tournament_steps(
        prompts, agents, examiner_model=inp.param("08_dr_arena", "dr_examiner_model", "") or None,
        n_rounds=int(inp.param("08_dr_arena", "n_swiss_rounds", 4)),
        trees_per_match=int(inp.param("08_dr_arena", "dr_trees_per_match", 1))))


PLAN: tuple[Entry, ...] = (
    Entry("02_prompts", "SA-B5", _intents),
    Entry("02_prompts", "SA-B4", _topics),
    Entry("02_prompts", "SA-B4 embeddings", _embeddings),
    Entry("02_prompts", "SA-C1", _describe_prompts),
    Entry("02_prompts", "SA-C2", _describe_responses),
    Entry("07_nuggets", "NG-Q", _nuggets),
    Entry("07_nuggets", "NG-F6, NG-T3, NG-F5/NG-N, NG-F7", None,
          "needs nugget records with response texts (NUGGETS=): llm_analyses.judge_step, rubric_steps, "
          "nuggets.pipeline.pipeline_steps"),
    Entry("08_dr_arena", "DR-X", None, "needs agent models (dr_agents): dr_arena.examiner.tournament_steps",
          given=_dr_x),
    Entry("09_answer_engines", "AE-F8b", None,
          "needs answer records to judge (ANSWERS=): answer_engine.pipeline.judge_steps"),
)


def book_steps(client: llm.LLMClient, inputs: Inputs | None = None,
               chapters: Collection[str] | None = None) -> list[tuple[str, llm.Step | llm.StepEstimate | str]]:
    """``(chapter, step)`` for every LLM step of a default build (``chapters``: of those chapters only; None: all);
    a step whose inputs cannot be built here is ``(chapter, "why")`` instead (an unavailable input names itself,
    e.g. a file not in the data mirror)."""
    inputs = inputs or Inputs()
    out: list[tuple[str, llm.Step | llm.StepEstimate | str]] = []
    for entry in PLAN:
        if chapters is not None and entry.chapter not in chapters:
            continue
        try:
            built = entry.build(client, inputs) if entry.build is not None else (
                entry.given(client, inputs) if entry.given is not None else None)
            if built is None:
                out.append((entry.chapter, f"{entry.analyses}: not in a default build ({entry.not_default})"))
                continue
            out.extend((entry.chapter, s) for s in built)
        except (OSError, ValueError, RuntimeError, ImportError) as exc:
            out.append((entry.chapter, f"{entry.analyses}: inputs not available ({type(exc).__name__}: "
                                       f"{llm.clip_text(exc, 160, collapse=True)})"))
    return out


def main_estimate(argv: Sequence[str] | None = None) -> int:
    """``python -m bookbuild.llm_plan [--data D] [--seed S] [--cache-dir C]``: the estimate of a whole build's LLM
    steps (requests, prompt tokens, dollars per step), sending nothing; cached requests are not counted as sent."""
    p = argparse.ArgumentParser(prog="python -m bookbuild.llm_plan", description=main_estimate.__doc__)
    p.add_argument("--data", default="sample", help="data_source of the build (default: sample)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--cache-dir", default=None, help="the build's cache folder (default: <repo>/.cache)")
    a = p.parse_args(argv)
    root = paths.repo_root()
    cache = Path(a.cache_dir) if a.cache_dir else (root / ".cache" if root is not None else paths.cache_dir())
    print_estimate(cache, Inputs(a.data, a.seed, cache), always=True)
    return 0


def estimate_book(client: llm.LLMClient, inputs: Inputs | None = None,
                  chapters: Collection[str] | None = None) -> list[tuple[str, Any]]:
    """``(chapter, StepEstimate or reason)`` for every step (of ``chapters`` only, if given); sends nothing."""
    return [(ch, s if isinstance(s, str | llm.StepEstimate) else llm.estimate_steps([s], client)[0])
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
    counted = [r for _, r in rows if not isinstance(r, str)]
    lines.append("  " + llm.format_estimates(counted).splitlines()[-1])
    if not any(r.requests for r in counted):
        lines.append("  nothing to send: every request of these chapters is cached")
    return "\n".join(lines)


def print_estimate(cache_dir: Path | None = None, inputs: Inputs | None = None, out: TextIO | None = None, *,
                   always: bool = False, chapters: Collection[str] | None = None) -> None:
    """The runner's hook: the estimate of the build when an endpoint is configured, else one line (``always``:
    the estimate all the same, every uncached request counted as if an endpoint were set; ``chapters``: the
    chapters the build reruns, None: the whole book; none: nothing is to be sent)."""
    out = sys.stdout if out is None else out
    if not always and (not llm.identity()["endpoint"] or llm.identity()["offline"]):
        print("LLM: no endpoint: LLM steps use the cache or are not run", file=out, flush=True)
        return
    if chapters is not None and not chapters:
        print("LLM: nothing to send: no chapter reruns in this build", file=out, flush=True)
        return
    if chapters is not None and not {e.chapter for e in PLAN} & set(chapters):
        print(f"LLM: none of this build's chapters ({', '.join(chapters) or 'none'}) sends LLM requests",
              file=out, flush=True)
        return
    client = llm.LLMClient(cache_dir=Path(cache_dir) / "llm" if cache_dir else paths.cache_dir("llm"),
                           progress=False)
    print(format_book_estimate(client, estimate_book(client, inputs, chapters)), file=out, flush=True)


if __name__ == "__main__":
    sys.exit(main_estimate())
