"""The nugget chapter's steps that need a model: the LLM judge (NG-F6), the language rubric (NG-T3), query
classification (NG-Q) through the LLM layer, nugget factuality by NLI (NG-NLI) and the nugget embeddings of
NG-T2's cosine.

Each step function returns the :class:`~analysis_lib.nuggets.numbers.Number` rows to record (*not run* rows with
the reason when the step cannot run) and what its figure or table needs. The rules:

- **What may be sent.** Response texts go to an LLM only from real records that carry them (``answer_text``): the
  simulator's texts are pseudo-words built from the nuggets (:func:`response_pairs`). Queries are classified on
  every record set that carries them, simulated ones on a sample (:data:`SIMULATED_QUERY_BATTLES`, the number the
  build's LLM plan counts).
- **Why a step did not run** is the LLM client's own reason (:func:`step_reason`): items *not run* carry the
  client's words (no endpoint and no cache, items still pending in a Batch API batch, the request budget, the run
  deadline), failures their error kinds with counts.
- **Samples.** NG-T3 scores a random 1,000 of the decided battles, as the paper ("we randomly sampled 1,000
  battles with a clear winner"); NG-Q and NG-NLI draw with :mod:`analysis_lib.nuggets.sampling`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import polars as pl

from analysis_lib.extras import require
from analysis_lib.llm import LLMClient
from analysis_lib.nuggets import diversity, llm_analyses, nli
from analysis_lib.nuggets.agreement import NuggetConfusion, confusion
from analysis_lib.nuggets.numbers import Number, not_run
from analysis_lib.nuggets.records import NuggetRecords
from analysis_lib.nuggets.sampling import sample_note, sample_rows, subset_records
from analysis_lib.search_arena import encoder, topics
from analysis_lib.search_arena.embedding_cache import EmbeddingCache

F6_QUANTITIES = ("LLM judge vs human: weighted kappa", "LLM judge agreements model_a / model_b",
                 "LLM judge tie share (%)", "LLM judge inversions")
T3_QUANTITIES = ("Kendall tau, fluency / grammar / readability vs preference",
                 "Spearman rho, fluency / grammar / readability vs preference")
NLI_QUANTITY = "nuggets entailed by their source (%)"
RUBRIC_BATTLES = 1000
#: queries classified on simulated records when the chapter's ``query_class_battles`` is None
SIMULATED_QUERY_BATTLES = 200
LLM_CACHE = "llm-cache"
SIMULATED_TEXTS = "the simulated response texts are pseudo-words built from the nuggets, not for an LLM"
NO_TEXTS = "the nugget records carry no response texts (answer_text)"
NO_QUERIES = "the nugget records carry no query texts (query)"


def llm_note(client: LLMClient) -> str:
    """The chapter's note on its LLM steps, as a MyST admonition: where the calls go, or why they cannot."""
    if client.available:
        text = (f"LLM calls go to the configured endpoint (default model `{client.model}`) and are cached, so a "
                "rebuild repeats none.")
    else:
        text = ("This build has no LLM endpoint: the LLM steps of this chapter (NG-F6, NG-T3, NG-Q) show replies "
                "cached by an earlier build where there are any, else *not run*. Set `OPENAI_BASE_URL` and "
                "`OPENAI_API_KEY` to run them.")
    return f":::{{admonition}} LLM steps\n:class: note\n{text}\n:::"


def response_pairs(records: NuggetRecords, kind: str) -> tuple[pl.DataFrame | None, str]:
    """The battles whose two responses may go to an LLM (``qid``, ``query``, ``winner``, ``answer_a``,
    ``answer_b``) and ``""``; or None and the reason there are none (module docstring)."""
    has_text = records.sides["answer_text"].null_count() < records.sides.height
    if not has_text:
        return None, NO_TEXTS
    if kind == "simulated":
        return None, SIMULATED_TEXTS
    pairs = records.sides.pivot(on="side", index=["qid", "query", "winner"], values="answer_text")
    return pairs.rename({"a": "answer_a", "b": "answer_b"}), ""


def step_reason(*outs: pl.DataFrame) -> str:
    """Why an LLM step has no usable reply, from its result frames (``status``, ``error`` of
    :meth:`LLMClient.run`): the client's reasons for the items *not run* (with their counts when they differ),
    else the kinds of failure with their counts."""
    status = pl.concat([o.select("status", pl.col("error").cast(pl.String)) for o in outs])
    if status.height == 0:
        return "no items to send"
    not_run_items = status.filter(pl.col("status") == "not run")
    if not_run_items.height:
        reasons = (not_run_items.select(pl.col("error").fill_null("no reason given").str.strip_prefix("not run: "))
                   .to_series().value_counts(sort=True))
        if reasons.height == 1:
            return str(reasons["error"][0])
        return "; ".join(f"{n:,} items: {r}" for r, n in reasons.iter_rows())
    failed = status.filter(pl.col("status") != "ok")
    kinds = failed["error"].fill_null("unknown error").map_elements(lambda e: re.sub(r":.*$", "", e),
                                                                    return_dtype=pl.String)
    counts = "; ".join(f"{r} ×{n:,}" for r, n in kinds.value_counts(sort=True).head(3).iter_rows())
    return f"no usable LLM reply: {failed.height:,} of {status.height:,} items failed ({counts})"


def judge(pairs: pl.DataFrame | None, why: str, client: LLMClient, seed: int
          ) -> tuple[list[Number], NuggetConfusion | None]:
    """NG-F6: the Appendix D judge on ``pairs`` (:func:`response_pairs`; None: not run, because ``why``) and its
    confusion with the human vote."""
    if pairs is None:
        return [not_run(q, why) for q in F6_QUANTITIES], None
    verdicts = llm_analyses.run_judge(pairs, client, seed=seed).join(pairs.select("qid", "winner"), on="qid")
    ok = verdicts.filter(pl.col("status") == "ok")
    if ok.height == 0:
        return [not_run(q, step_reason(verdicts)) for q in F6_QUANTITIES], None
    jm = replace(confusion(ok["winner"].to_numpy(), ok["judge"].to_numpy()), preference="LLM judge")
    return [
        Number(F6_QUANTITIES[0], jm.kappa(), data=LLM_CACHE,
               note=f"{ok.height:,} of {verdicts.height:,} battles judged"),
        Number(F6_QUANTITIES[1], f"{jm.agreements_a:,} / {jm.agreements_b:,}", data=LLM_CACHE),
        Number(F6_QUANTITIES[2], 100 * (ok["judge"] == "tie").to_numpy().mean(), data=LLM_CACHE),
        Number(F6_QUANTITIES[3], jm.inversions, data=LLM_CACHE),
    ], jm


def rubric(pairs: pl.DataFrame | None, why: str, client: LLMClient, seed: int,
           n_battles: int = RUBRIC_BATTLES) -> tuple[list[Number], pl.DataFrame | None]:
    """NG-T3: the Appendix E rubric on both responses of a random ``n_battles`` decided battles, and the
    Kendall τ / Spearman ρ table (:func:`nuggets.llm_analyses.rubric_correlations`)."""
    if pairs is None:
        return [not_run(q, why) for q in T3_QUANTITIES], None
    decided = sample_rows(pairs.filter(pl.col("winner").is_in(["model_a", "model_b"])).sort("qid"), n_battles, seed)
    task = llm_analyses.rubric_task(client.paper_model(llm_analyses.RUBRIC_MODEL))
    ra = client.run(task, list(zip(decided["query"], decided["answer_a"], strict=True)))
    rb = client.run(task, list(zip(decided["query"], decided["answer_b"], strict=True)))
    if not ((ra["status"] == "ok").any() and (rb["status"] == "ok").any()):
        return [not_run(q, step_reason(ra, rb)) for q in T3_QUANTITIES], None
    corr = llm_analyses.rubric_correlations(ra, rb, decided["winner"].to_list())
    note = sample_note(decided.height, pairs.filter(pl.col("winner").is_in(["model_a", "model_b"])).height,
                       "decided battles")
    return [Number(q, " / ".join(f"{x:.3f}" for x in corr[col]), data=LLM_CACHE, note=note)
            for q, col in zip(T3_QUANTITIES, ("kendall_tau", "spearman_rho"), strict=True)], corr


@dataclass(frozen=True)
class QueryClasses:
    """NG-Q's outcome: the rows to record, the ratings histogram (None when nothing was rated) and the number of
    battles rated."""

    numbers: list[Number]
    histogram: pl.DataFrame | None
    rated: int


def query_classes(records: NuggetRecords, client: LLMClient, *, limit: int | None, seed: int,
                  kind: str) -> QueryClasses:
    """NG-Q: classify the queries of the records' battles (``limit`` of them at random; None: all on real data,
    :data:`SIMULATED_QUERY_BATTLES` on simulated queries) and count battles per class. ``kind``: ``simulated``
    when the queries are simulated, else the LLM cache's kind is recorded."""
    every = llm_analyses.query_battles(records.sides)
    limit = limit if limit is not None else (SIMULATED_QUERY_BATTLES if kind == "simulated" else None)
    battles = llm_analyses.query_battles(records.sides, limit, seed=seed)
    if battles.height == 0:
        return QueryClasses([not_run(f"{c}: battles in the class", NO_QUERIES) for c in llm_analyses.ATTRIBUTES],
                            None, 0)
    classified = llm_analyses.run_query_classes(battles, client)
    ok = classified.filter(pl.col("status") == "ok")
    if ok.height == 0:
        reason = step_reason(classified)
        return QueryClasses([not_run(f"{c}: battles in the class", reason) for c in llm_analyses.ATTRIBUTES], None, 0)
    unclassified = int((ok["classes"].list.len() == 0).sum())
    drawn = (f" (a random {classified.height:,} of {every.height:,})" if classified.height < every.height else "")
    note = f"{ok.height:,} of {classified.height:,} battles rated{drawn}; {unclassified:,} with no rating of 7 or more"
    if kind == "simulated":  # an llm row names its model beside the number; a simulated one says it here
        note += f"; LLM ratings ({client.paper_model(llm_analyses.QUERY_CLASS_MODEL)})"
    numbers = [Number(f"{c}: battles in the class", n, data=kind, note=note)
               for c, n in llm_analyses.class_counts(classified).iter_rows()]
    return QueryClasses(numbers, llm_analyses.rating_histogram(classified), ok.height)


def nli_factuality(records: NuggetRecords, kind: str, n_battles: int | None, seed: int) -> Number:
    """NG-NLI: the share of nuggets entailed by one of their sources on a random ``n_battles`` battles with
    chunks, when the records are real (simulated chunks are pseudo-words: the model is not even loaded), carry
    chunks and the NLI model loads."""
    if kind == "simulated":
        return not_run(NLI_QUANTITY, "the simulated chunks and nuggets are pseudo-words; they are not sent to the "
                                     "NLI model")
    if records.sides["chunks"].null_count() == records.sides.height:
        return not_run(NLI_QUANTITY, "the nugget records carry no retrieved chunks (field chunks) to test the "
                                     "nuggets against")
    try:
        model = nli.load_nli()
    except nli.NLIUnavailable as err:
        return not_run(NLI_QUANTITY, str(err))
    share, checked = nli.records_entailed_share(records, model, n_battles=n_battles, seed=seed)
    battles = records.battle_texts(both_responses=False).height
    return Number(NLI_QUANTITY, share, data=kind,
                  note=f"{checked:,} nuggets of {min(n_battles or battles, battles):,} battles")



#: torch threads of the background NG-T2 encoder: one, beside the chapter's own thread on a two-core machine
COSINE_THREADS = 1


def _all_cached(texts: list[str], cache_dir: str | Path | None, precision: encoder.Precision = "auto") -> bool:
    """Whether every text's offline embedding is in the cache :func:`topics.embed_texts` reads (then no encoder
    runs, and torch need not be loaded)."""
    cache = EmbeddingCache(cache_dir or topics.default_cache_dir(), encoder.model_key(precision))
    return all(row is not None for row in cache.lookup([topics.text_hash(t) for t in texts]))


@contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """torch's intra-op threads set to ``n`` for the duration (None: unchanged). On a two-core machine that also
    runs the chapter's own thread (and, on a shared one, other jobs), two encoder threads fight for the cores:
    one thread embedded NG-T2's nuggets in a third of the wall time and CPU time of two, to the same bits
    (``benchmarks/bench_nuggets.py``)."""
    if n is None:
        yield
        return
    torch = require("torch", "topics", purpose="the offline encoder")
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def nugget_cosine(records: NuggetRecords, battle_ids: np.ndarray, *, cache_dir: str | Path | None = None,
                  threads: int | None = None, precision: encoder.Precision = "auto") -> pl.DataFrame:
    """NG-T2's cosine on the battles ``battle_ids``: their nuggets (side a's list, in record order) embedded by the
    offline all-MiniLM-L6-v2 encoder at ``precision`` (:func:`analysis_lib.search_arena.topics.embed_texts`, cached
    per text, with ``threads`` torch threads when it has to encode) and
    :func:`analysis_lib.nuggets.diversity.battle_diversity` per battle."""
    sub = subset_records(records, battle_ids).nuggets
    texts = sub.filter(pl.col("side") == "a")["text"].to_list()
    with torch_threads(None if _all_cached(texts, cache_dir, precision) else threads):
        emb = topics.embed_texts(texts, "offline", cache_dir=cache_dir, precision=precision)
    return diversity.battle_diversity(sub, emb)


def start_nugget_cosine(records: NuggetRecords, battle_ids: np.ndarray, *, cache_dir: str | Path | None = None,
                        threads: int | None = COSINE_THREADS,
                        precision: encoder.Precision = "auto") -> Future[pl.DataFrame]:
    """:func:`nugget_cosine` started in a background thread (with ``threads`` torch threads), so that loading the
    encoder and embedding the nuggets (matrix products that run outside the GIL) overlap the chapter's sections
    that come before NG-T2; ``.result()`` returns its frame, or raises its error."""
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ng-t2-cosine")
    try:
        return pool.submit(nugget_cosine, records, battle_ids, cache_dir=cache_dir, threads=threads,
                           precision=precision)
    finally:
        pool.shutdown(wait=False)
