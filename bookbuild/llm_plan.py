"""The book's LLM steps: which chapter sends which requests, with this build's parameters, and their estimate.

Each entry names a chapter, the analyses, and a function that builds the chapter's :class:`~analysis_lib.llm.Step`
list from the build's inputs (data source, seed, cache, and each chapter's parameters: its declared defaults with
this build's ``--set`` values and user inputs over them, :attr:`Inputs.parameters`) with the library builders the
chapters use, so the estimate counts what the chapters will send:

- ``02_prompts`` (the Search Arena package, :mod:`analysis_lib.search_arena`): SA-B5 (:func:`intents.sample_step`,
  ``intent_sample`` re-annotated conversations), SA-B4 (:func:`topics.label_step`, a bound: one label per topic of
  ``topic_prompts`` prompts; and when ``topic_embedding`` resolves to an endpoint model, the embeddings of the
  prompts that endpoint's cache lacks, counted as the client sizes its requests, :func:`embedding_estimate`, and
  with ``topic_representation = "keybert"`` a bound on those of the topics' keyword candidates,
  :func:`keyword_bound`), SA-C1 and SA-C2 (:func:`describe.prompt_steps`, :func:`describe.response_steps`, with
  ``propose_model`` ... when set);
- ``07_nuggets``: NG-Q (:func:`analysis_lib.nuggets.llm_analyses.query_class_step` on ``query_class_battles``
  battles of the chapter's records, the simulator's or the user's, as :func:`bookbuild.papers.nuggets.query_limit`
  counts them);
  NG-F6 and NG-T3 need response texts, which simulated records do not send;
- ``08_dr_arena`` (DR-X) sends requests only with agent models (``dr_agents``: the bound of
  :func:`analysis_lib.dr_arena.examiner.tournament_steps`), ``09_answer_engines`` (AE-F8b) only with answer records
  (listed as not part of a default build).

:func:`estimate_book` estimates every step on a client's cache, model, mode and prices without sending anything
(a step whose inputs cannot be built here says why: the chapter cannot run it either);
:func:`print_estimate` is what the runner prints before the first notebook when an endpoint is configured, for the
chapters that will rerun (none: "nothing to send"; ``--only 03_preferences`` estimates nothing and loads nothing),
ending with what the build sends at most (:func:`to_send`: chat requests within each chapter's request budget, and
the embeddings requests), and ``python -m bookbuild.llm_plan`` prints the same for the whole book.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from analysis_lib import llm, paths
from analysis_lib.dr_arena import examiner, framework_prompts
from analysis_lib.llm import estimate
from analysis_lib.nuggets import llm_analyses
from analysis_lib.nuggets import loader as ng_loader
from analysis_lib.search_arena import describe, intents, loader, prompt_sets, topics
from analysis_lib.search_arena.embedding_cache import text_hash
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


#: What the estimate says of a step whose inputs cannot be built here (the chapter cannot run it either).
CANNOT_RUN = "cannot run here"
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
    """The embeddings requests of ``texts`` on the endpoint: the distinct texts not in that endpoint's embedding
    cache (:func:`topics.embedding_cache`), counted as the client sends them
    (:func:`analysis_lib.llm.estimate.estimate_embeddings`: within the reply cap, from the vector size an earlier
    reply of the endpoint measured, else an assumed one)."""
    cache = topics.embedding_cache(model, client, cache_dir)
    distinct = {text_hash(t): t for t in texts}
    todo = [t[: topics.MAX_EMBED_CHARS] for h, t in distinct.items() if cache.lookup([h])[0] is None]
    return estimate.estimate_embeddings(analysis, model, todo, len(distinct), client.prices,
                                        vector_bytes=cache.vector_bytes, max_reply_bytes=client.max_reply_bytes)


def keyword_bound(client: llm.LLMClient, n_prompts: int, min_cluster_size: int, model: str,
                  cache_dir: Path | None, analysis: str = "SA-B4") -> llm.StepEstimate:
    """The embeddings of the topics' keyword candidates (``representation="keybert"``), a bound: they are known
    only once the topics are fitted. At most ``n_prompts // min_cluster_size`` topics and the unclustered one, each
    with :data:`topics.KEYWORD_CANDIDATES` candidate words (fewer where they repeat or are cached), in requests
    sized as the prompts' are (:func:`analysis_lib.llm.estimate.embed_requests`)."""
    cache = topics.embedding_cache(model, client, cache_dir)
    texts = (n_prompts // max(1, min_cluster_size) + 1) * topics.KEYWORD_CANDIDATES
    size = cache.vector_bytes or estimate.EMBEDDING_DIMENSIONS.get(model, estimate.ASSUMED_DIMENSIONS) * \
        estimate.ASSUMED_VALUE_BYTES
    requests = estimate.embed_requests(texts, size, max_reply_bytes=client.max_reply_bytes,
                                       measured=cache.vector_bytes is not None)
    return llm.StepEstimate(analysis, "embeddings of topic keywords", model, "live", 0, 0, requests, None, None, "",
                            note=f"at most {texts:,} keyword texts: {topics.KEYWORD_CANDIDATES} candidate words for "
                                 f"each of at most {texts // topics.KEYWORD_CANDIDATES:,} topics", bound=True)


def _embeddings(client: llm.LLMClient, inp: Inputs) -> Built:
    embedding = topics.resolve_embedding(str(inp.param("02_prompts", "topic_embedding", "auto")), client)
    if embedding == "offline":
        return []
    cache = inp.param("02_prompts", "cache_dir", None) or inp.cache_dir
    folder = Path(cache) / "embeddings" if cache else None
    prompts = _topic_prompts(inp)
    out: Built = [embedding_estimate(client, prompts, embedding, folder)]
    if inp.param("02_prompts", "topic_representation", "keybert") == "keybert":
        out.append(keyword_bound(client, len(prompts), int(inp.param("02_prompts", "min_cluster_size",
                                                                       MIN_CLUSTER_SIZE)), embedding, folder))
    return out


def _models(inp: Inputs) -> dict[str, str]:
    return {k: v for k in ("propose", "reduce", "rank") if (v := inp.param("02_prompts", f"{k}_model", None))}


def _describe_prompts(client: llm.LLMClient, inp: Inputs) -> Built:
    return list(describe.prompt_steps(seed=inp.seed, models=describe.resolve_models(client, _models(inp))))


def _describe_responses(client: llm.LLMClient, inp: Inputs) -> Built:
    return list(describe.response_steps(seed=inp.seed, models=describe.resolve_models(client, _models(inp))))


def _nuggets(client: llm.LLMClient, inp: Inputs) -> Built:
    """NG-Q as chapter 07 draws it (:func:`bookbuild.papers.nuggets.query_limit`): ``query_class_battles``
    battles (None: all on real records, :data:`QUERY_CLASS_BATTLES_SIMULATED` on simulated queries)."""
    chapter = ng_loader.load_inputs(inp.data_source, inp.param("07_nuggets", "nugget_records", "") or None,
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
            out.append((entry.chapter, f"{entry.analyses}: {CANNOT_RUN}: its inputs are not available "
                                       f"({type(exc).__name__}: {llm.clip_text(exc, 160, collapse=True)})"))
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


def _embeddings_row(row: llm.StepEstimate) -> bool:
    return row.task.startswith("embeddings")


def format_book_estimate(client: llm.LLMClient, rows: list[tuple[str, Any]]) -> str:
    """The estimate as the runner prints it: one line per step (or why a step cannot be estimated here), the total,
    and what the build will send at most (:func:`to_send`)."""
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
    unknown = [r.split(":", 1)[0] for _, r in rows if isinstance(r, str) and CANNOT_RUN in r]
    total, chat, embeddings = to_send(rows, client.max_requests)
    if total:
        capped = f", capped at the budget of {client.max_requests:,} per chapter" if client.max_requests is not None \
            else ""
        lines.append(f"  to send: at most {total:,} requests ({chat:,} chat{capped}"
                     + (f"; {embeddings:,} embeddings, which the budget does not cover" if embeddings else "") + ")")
    else:
        lines.append("  nothing to send: every request counted is cached" if unknown else
                     "  nothing to send: every request of these chapters is cached")
    if unknown:
        lines.append(f"  not counted: {', '.join(unknown)} (cannot run here, said above)")
    return "\n".join(lines)


def to_send(rows: list[tuple[str, Any]], budget: int | None) -> tuple[int, int, int]:
    """``(total, chat, embeddings)``: the requests a build sends at most, per chapter its chat requests (counted
    and bounded) within the request budget of each chapter's client (``budget``; None: no limit), and its
    embeddings requests, which the budget does not cover. Re-asks and retries are not counted; a budget counts
    re-asks, so a chapter whose requests exceed it sends exactly the budget."""
    chat: dict[str, int] = {}
    embeddings = 0
    for ch, row in rows:
        if isinstance(row, str):
            continue
        if _embeddings_row(row):
            embeddings += row.requests
        else:
            chat[ch] = chat.get(ch, 0) + row.requests
    sent = sum(n if budget is None else min(n, budget) for n in chat.values())
    return sent + embeddings, sent, embeddings


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
        print("LLM: nothing to send: no chapter reruns in this build (an endpoint that now serves embeddings or "
              "another model is not part of the rebuild key: --force reruns the chapters)", file=out, flush=True)
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
