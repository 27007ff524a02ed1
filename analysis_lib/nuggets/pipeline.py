"""The AutoNuggetizer pipeline (NG §3) through the project's LLM layer, with castorini nuggetizer's own prompts.

Steps, for every battle (a query, its two responses, and the text of the cited sources):

1. **Creation** — nuggetizer's iterative prompt: the documents are read in windows of ``window`` (10), each call
   updating the nugget list (at most 30); with ``variant="responses_only"`` (NG-F5) the two responses are the
   documents instead of the sources.
2. **Importance** — nuggetizer's scoring prompt labels the nuggets ``vital`` / ``okay`` in windows of 10.
3. **Cap** — at most 30 nuggets, dropping ``okay`` nuggets first (:func:`~analysis_lib.nuggets.scores.cap_nuggets`;
   nuggetizer instead re-sorts vital first and truncates: the same set, ours keeps the list order).
4. **Assignment** — nuggetizer's 3-grade assignment prompt labels each nugget ``support`` /
   ``partial_support`` / ``not_support`` against each response, in windows of 10.

Every call goes through :class:`analysis_lib.llm.LLMClient` (on-disk cache, so a rerun is free and an
interrupted run resumes; retries; progress bars; failures recorded). All battles advance one step at a time, so
each step is one parallel ``client.run``. A battle with any failed call gets ``"failed"`` labels, exactly as
nuggetizer writes them, and is then excluded and counted by :func:`records_from_dicts`.

Why nuggetizer's ``Nuggetizer`` class is not called directly (nuggetizer 0.0.5, checked offline here):

- ``LLMHandler`` builds ``OpenAI(api_key=...)`` without a ``base_url`` argument (its ``api_base`` is used only for
  Azure), so a custom endpoint works only through the ``OPENAI_BASE_URL`` environment variable, and it needs a
  key even for a local server (``OpenAI()`` raises without one);
- after every successful completion ``LLMHandler.run`` calls ``tiktoken.get_encoding("cl100k_base")`` to count
  tokens; tiktoken downloads that encoding from ``openaipublic.blob.core.windows.net`` on first use, which fails
  without internet, and the exception is caught by ``run``'s bare ``except`` and retried in a ``while True`` loop
  with no limit: offline, ``Nuggetizer.create`` never returns (unless ``TIKTOKEN_CACHE_DIR`` already holds the
  encoding);
- it has no cache, no concurrency and up to 500 retries per call.

So this module uses nuggetizer's prompts through public functions only
(:func:`~analysis_lib.nuggets.nuggetizer_prompts.prompt_functions`: ``nuggetizer.prompts`` where the installed
nuggetizer exports it, else the same prompts of the pinned 0.0.5, verbatim), its types and its record layout, and
sends the calls itself.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from analysis_lib.extras import require
from analysis_lib.llm import LLMClient, Step, Task
from analysis_lib.nuggets.nuggetizer_prompts import PromptFunctions, prompt_functions
from analysis_lib.nuggets.records import FAILED, NuggetRecords, records_from_dicts
from analysis_lib.nuggets.scores import MAX_NUGGETS, Importance, Nugget, cap_nuggets

WINDOW = 10
PAPER_MODEL = "gpt-4.1"
LIST_SCHEMA: dict[str, Any] = {"type": "array", "items": {"type": "string"}}
VARIANTS = ("with_sources", "responses_only")


@dataclass(frozen=True)
class BattleInput:
    """One battle for the pipeline: ``sources`` are the texts of its cited pages (scraped, NG-C)."""

    qid: str
    query: str
    winner: str
    answer_a: str
    answer_b: str
    sources: Sequence[str] = ()
    model_a: str | None = None
    model_b: str | None = None
    language: str | None = None
    query_categories: Sequence[str] | None = None


PURPOSE = "nuggetizer's AutoNuggetizer prompts"


def _prompts() -> PromptFunctions:
    """nuggetizer's prompt builders (public functions), after checking nuggetizer is installed."""
    require("nuggetizer.core.types", "nuggets", purpose=PURPOSE)
    return prompt_functions()


def parse_list(content: str) -> list[str]:
    """A Python-literal list of strings, as nuggetizer parses it (code fences removed, ``ast.literal_eval``)."""
    text = content.replace("```python", "").replace("```", "").strip()
    value = ast.literal_eval(text)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError("reply is not a list of strings")
    return value


def _task(name: str, model: str | None) -> Task:
    return Task(name=name, schema=LIST_SCHEMA, build=lambda messages: messages, parse=parse_list,
                params={"temperature": 0, "max_completion_tokens": 2048}, json_mode=False, model=model)


@dataclass
class PipelineResult:
    """The records and the pipeline's accounting: LLM calls by step and status."""

    records: NuggetRecords
    calls: dict[str, dict[str, int]] = field(default_factory=dict)


def _run(
    client: LLMClient, task: Task, prompts: list[list[dict[str, str]]], calls: dict[str, dict[str, int]]
) -> list[list[str] | None]:
    if not prompts:
        return []
    frame = client.run(task, prompts, desc=task.name)
    counts = dict(frame["status"].value_counts().iter_rows())
    calls[task.name] = {k: calls.get(task.name, {}).get(k, 0) + v for k, v in counts.items()}
    return [v if s == "ok" else None for v, s in zip(frame["value"].to_list(), frame["status"].to_list(), strict=True)]


def pipeline_steps(battles: Sequence[BattleInput], *, variant: str = "with_sources", model: str = PAPER_MODEL,
                   window: int = WINDOW, analysis: str = "NG-F5") -> list[Step]:
    """The requests :func:`run_pipeline` sends: the first creation round exactly; the later creation rounds, the
    importance and the assignment steps bounded (their items are earlier replies): a battle with ``d`` documents
    has ``ceil(d / window)`` creation rounds, at most ``MAX_NUGGETS / window`` importance windows and twice as
    many assignment windows (both sides)."""
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    nz = _prompts()
    nzt = require("nuggetizer.core.types", "nuggets", purpose=PURPOSE)
    docs = {b.qid: [s for s in ((b.answer_a, b.answer_b) if variant == "responses_only" else b.sources)
                    if s and s.strip()] for b in battles}
    first = [nz.create_nugget_prompt(nzt.Request(nzt.Query(b.qid, b.query),
                                                 [nzt.Document(str(k), s) for k, s in enumerate(docs[b.qid])]),
                                     0, window, [], creator_max_nuggets=MAX_NUGGETS)
             for b in battles if docs[b.qid]]
    rounds = sum(-(-len(d) // window) for d in docs.values())
    windows = -(-MAX_NUGGETS // window) * sum(1 for d in docs.values() if d)
    later = "bound: items come from earlier replies"
    return [Step(analysis, _task(f"ng_create_{variant}", model), first, model, note="creation, first window"),
            Step(analysis, _task(f"ng_create_{variant}", model), (), model, at_most=rounds - len(first),
                 note=f"creation, later windows; {later}"),
            Step(analysis, _task("ng_importance", model), (), model, at_most=windows, note=f"importance; {later}"),
            Step(analysis, _task("ng_assign", model), (), model, at_most=2 * windows, note=f"assignment; {later}")]


def run_pipeline(battles: Sequence[BattleInput], client: LLMClient, *, variant: str = "with_sources",
                 model: str | None = None, window: int = WINDOW) -> PipelineResult:
    """Nugget records for ``battles`` (steps in the module docstring). ``model`` defaults to
    ``client.paper_model("gpt-4.1")``. Battles whose documents are all empty get no nuggets and are excluded."""
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    model = model or client.paper_model(PAPER_MODEL)
    nz = _prompts()
    nzt = require("nuggetizer.core.types", "nuggets", purpose=PURPOSE)
    calls: dict[str, dict[str, int]] = {}
    docs = {b.qid: [s for s in ((b.answer_a, b.answer_b) if variant == "responses_only" else b.sources)
                    if s and s.strip()]
            for b in battles}
    requests = {b.qid: nzt.Request(nzt.Query(b.qid, b.query),
                                   [nzt.Document(str(k), s) for k, s in enumerate(docs[b.qid])])
                for b in battles}
    current: dict[str, list[str]] = {b.qid: [] for b in battles}
    failed: set[str] = set()
    # 1. creation: one window of documents per round, all battles in parallel
    n_rounds = max((len(d) + window - 1) // window for d in docs.values()) if docs else 0
    create = _task(f"ng_create_{variant}", model)
    for r in range(n_rounds):
        todo = [b.qid for b in battles if b.qid not in failed and r * window < len(docs[b.qid])]
        prompts = [nz.create_nugget_prompt(requests[q], r * window, (r + 1) * window, current[q],
                                           creator_max_nuggets=MAX_NUGGETS) for q in todo]
        for q, out in zip(todo, _run(client, create, prompts, calls), strict=True):
            if out is None:
                failed.add(q)
            else:
                current[q] = out[:MAX_NUGGETS]
    # 2. importance, in windows of nuggets
    score = _task("ng_importance", model)
    jobs = [(b.qid, k) for b in battles if b.qid not in failed for k in range(0, len(current[b.qid]), window)]
    prompts = [nz.create_score_prompt(requests[q].query.text, [nzt.Nugget(t) for t in current[q][k:k + window]])
               for q, k in jobs]
    importance: dict[str, list[str]] = {q: [FAILED] * len(current[q]) for q in current}
    for (q, k), out in zip(jobs, _run(client, score, prompts, calls), strict=True):
        n = len(current[q][k:k + window])
        labels = [x.lower() for x in out] if out is not None and len(out) == n else None
        if labels is None or any(x not in ("vital", "okay") for x in labels):
            failed.add(q)
            continue
        importance[q][k:k + n] = labels
    # 3. cap: at most 30, okay dropped first
    nuggets: dict[str, list[Nugget]] = {}
    for q, texts in current.items():
        if q in failed:
            # placeholder importance (labelled "failed" in the record); one empty nugget if creation failed outright
            nuggets[q] = [Nugget(t, Importance.OKAY) for t in texts] or [Nugget("", Importance.OKAY)]
        else:
            nuggets[q] = cap_nuggets([Nugget(t, Importance(i)) for t, i in zip(texts, importance[q], strict=True)])
    # 4. assignment against each response
    assign = _task("ng_assign", model)
    answers = {(b.qid, "a"): b.answer_a for b in battles} | {(b.qid, "b"): b.answer_b for b in battles}
    jobs2 = [(q, s, k) for q in nuggets if q not in failed for s in "ab" for k in range(0, len(nuggets[q]), window)]
    prompts = [nz.create_assign_prompt(requests[q].query.text, answers[(q, s)],
                                        [nzt.ScoredNugget(n.text, n.importance.value)
                                         for n in nuggets[q][k:k + window]])
               for q, s, k in jobs2]
    assigned: dict[tuple[str, str], list[str]] = {(q, s): [FAILED] * len(nuggets[q]) for q in nuggets for s in "ab"}
    for (q, s, k), out in zip(jobs2, _run(client, assign, prompts, calls), strict=True):
        n = len(nuggets[q][k:k + window])
        labels = [x.lower() for x in out] if out is not None and len(out) == n else None
        if labels is None or any(x not in ("support", "partial_support", "not_support") for x in labels):
            failed.add(q)
            continue
        assigned[(q, s)][k:k + n] = labels
    objs = []
    for b in battles:
        for s in "ab":
            objs.append({
                "qid": b.qid, "side": s, "winner": b.winner, "query": b.query,
                "model": b.model_a if s == "a" else b.model_b, "language": b.language,
                "query_categories": list(b.query_categories) if b.query_categories is not None else None,
                "answer_text": answers[(b.qid, s)],
                "chunks": list(docs[b.qid]) if variant == "with_sources" else None,
                "nuggets": [{"text": n.text, "importance": FAILED if b.qid in failed else n.importance.value,
                             "assignment": FAILED if b.qid in failed else a}
                            for n, a in zip(nuggets[b.qid], assigned[(b.qid, s)], strict=True)],
            })
    records = records_from_dicts(objs, f"AutoNuggetizer pipeline ({variant}, {model})")
    return PipelineResult(records, calls)
