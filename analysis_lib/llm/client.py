"""The client: :class:`LLMClient` runs a :class:`~analysis_lib.llm.tasks.Task` over many items, live or in a batch.

:meth:`LLMClient.run` first looks every item up in the cache, then reports what it will send (requests, prompt
tokens and cost, :mod:`analysis_lib.llm.estimate`), takes the requests from the request budget, and sends the rest
either live (one chat request per item, ``max_concurrency`` at a time) or through the Batch API
(:mod:`analysis_lib.llm.batch`). Every reply goes through :func:`analysis_lib.llm.replies.read_completion` and into
the same cache. The module doc of :mod:`analysis_lib.llm` describes the settings and the guarantees.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

import polars as pl

from analysis_lib import paths
from analysis_lib.llm import batch, estimate, http, local, replies
from analysis_lib.llm import settings as cfg
from analysis_lib.llm.estimate import MAX_EMBED_CHUNK, embed_chunk
from analysis_lib.llm.records import (
    NOT_RUN,
    OVER_BUDGET,
    RUN_DEADLINE_PASSED,
    Prepared,
    ResultCache,
    RunStats,
    default_cache_dir,
    over_budget_reason,
    request_key,
    result_frame,
)
from analysis_lib.llm.tasks import Task

log = logging.getLogger(__name__)

class LLMRequestError(Exception):
    """A request that failed for good (after retries, or a non-retryable HTTP status). ``status``: the HTTP
    status when there was one; ``refuses_json``: the server said it does not accept ``response_format``;
    ``too_large``: the reply was over the size cap."""

    def __init__(self, message: str, status: int | None = None, refuses_json: bool = False,
                 too_large: bool = False):
        super().__init__(message)
        self.status, self.refuses_json, self.too_large = status, refuses_json, too_large


class LLMClient:
    """An OpenAI-compatible chat-completions client with a cache, retries, validation, a budget and accounting.

    Parameters default to the environment (module doc of :mod:`analysis_lib.llm`). ``prices`` maps model names
    to USD per million (input, output) tokens (default: the table in ``resources/llm_prices.csv``, with its
    batch prices for batch requests). ``offline=True`` (or ``ANALYSIS_LLM_OFFLINE=1``) never makes a request.
    ``mode``: ``live`` or ``batch``; ``max_requests``: the request budget of this client (``None``: none).
    """

    def __init__(
        self,
        base_url: str | None = None,
        model: str | None = None,
        cache_dir: str | Path | None = None,
        max_concurrency: int = 8,
        *,
        offline: bool | None = None,
        prices: Mapping[str, tuple[float, float]] | None = None,
        max_retries: int = 6,
        max_parse_retries: int = 2,
        timeout: float = 60.0,
        backoff_base: float = 1.0,
        backoff_max: float = 30.0,
        progress: bool = True,
        request_deadline: float | None = None,
        run_deadline: float | None = None,
        retry_failed: bool | None = None,
        mode: str | None = None,
        max_requests: int | None = None,
        max_reply_bytes: int | None = None,
        json_mode: str | None = None,
        batch_poll: float | None = None,
        batch_wait: float | None = None,
    ):
        env_url = os.environ.get(cfg.BASE_URL_ENV) or None
        if base_url is None:
            base_url = env_url or (cfg.OPENAI_API_URL if os.environ.get(cfg.API_KEY_ENV) else None)
        self.base_url = base_url.rstrip("/") if base_url else None
        self.model = model or os.environ.get(cfg.MODEL_ENV) or cfg.DEFAULT_MODEL
        #: True when the model was chosen (argument or $ANALYSIS_LLM_MODEL) rather than defaulted
        self.model_chosen = bool(model or os.environ.get(cfg.MODEL_ENV))
        self.offline = bool(cfg.env_flag(cfg.OFFLINE_ENV) if offline is None else offline)
        self.cache = ResultCache(cache_dir if cache_dir is not None else default_cache_dir())
        self.max_concurrency = max(1, int(max_concurrency))
        self.prices = estimate.PriceTable.from_pairs(prices) if prices is not None else estimate.load_prices()
        self.max_retries, self.max_parse_retries = max_retries, max_parse_retries
        self.timeout, self.backoff_base, self.backoff_max = timeout, backoff_base, backoff_max
        self.progress = progress
        #: wall-clock seconds for one request, all retries and backoff included (None: no limit)
        self.request_deadline = (request_deadline if request_deadline is not None
                                 else cfg.env_seconds(cfg.REQUEST_DEADLINE_ENV, cfg.DEFAULT_REQUEST_DEADLINE))
        #: wall-clock seconds for one :meth:`run` (None: no limit); items not started in time are "not run"
        self.run_deadline = run_deadline if run_deadline is not None else cfg.env_seconds(cfg.RUN_DEADLINE_ENV, None)
        #: default of :meth:`run`'s ``retry_failed`` (``$ANALYSIS_LLM_RETRY_FAILED=1``)
        self.retry_failed = cfg.env_flag(cfg.RETRY_FAILED_ENV) if retry_failed is None else bool(retry_failed)
        self.mode = (mode or cfg.env_choice(cfg.MODE_ENV, cfg.MODES, "live")).lower()
        if self.mode not in cfg.MODES:
            raise ValueError(f"mode must be one of {', '.join(cfg.MODES)}, got {mode!r}")
        #: the most chat requests this client sends (live requests, re-asks and batch lines); None: no limit
        self.max_requests = max_requests if max_requests is not None else cfg.env_count(cfg.MAX_REQUESTS_ENV, None)
        self.requests_sent = 0
        self.max_reply_bytes = (max_reply_bytes if max_reply_bytes is not None
                                else cfg.env_count(cfg.MAX_REPLY_BYTES_ENV, cfg.DEFAULT_MAX_REPLY_BYTES))
        self.json_mode = json_mode or cfg.env_choice(cfg.JSON_MODE_ENV, cfg.JSON_MODES, "schema")
        #: seconds between two polls of a batch, and the longest a run waits for its batches (0: submit, look once)
        self.batch_poll = batch_poll if batch_poll is not None else cfg.env_float(cfg.BATCH_POLL_ENV,
                                                                                   cfg.DEFAULT_BATCH_POLL)
        self.batch_wait = batch_wait if batch_wait is not None else cfg.env_float(cfg.BATCH_WAIT_ENV,
                                                                                   cfg.DEFAULT_BATCH_WAIT)
        #: items left waiting in a submitted batch by the last run (said by :meth:`not_run_reason`)
        self.pending = 0
        self.last_stats = RunStats()
        self.total_stats = RunStats()
        self.last_estimate: estimate.StepEstimate | None = None
        #: the JSON bytes of one vector in the last embeddings reply (None before any)
        self.embed_vector_bytes: int | None = None
        self._lock = threading.Lock()
        #: retries of every call (chat, embeddings, Files and Batches): :func:`analysis_lib.llm.http.with_retries`
        self.retry_policy = http.RetryPolicy(max_retries, backoff_base, backoff_max)
        #: the guarded ``openai`` client (None without an endpoint or offline)
        self.api = (http.make_openai_client(self.base_url, timeout=timeout)
                    if self.base_url and not self.offline else None)

    @property
    def endpoint_id(self) -> str:
        """The endpoint's identity for cache keys and rebuild checks: :func:`safe_url` of the base URL (no
        credentials), ``""`` when none is configured."""
        return cfg.safe_url(self.base_url)

    def paper_model(self, paper: str) -> str:
        """The model for a step the paper ran with ``paper``: the chosen model when one was chosen (argument or
        ``$ANALYSIS_LLM_MODEL``, e.g. a local endpoint serving one model), else the paper's."""
        return self.model if self.model_chosen else paper

    # -------------------------------------------------------------------------------------- description

    @property
    def available(self) -> bool:
        """True when requests can be made (an endpoint is configured and the client is not offline)."""
        return self.base_url is not None and not self.offline

    def __repr__(self) -> str:  # never shows the key
        return (f"LLMClient(endpoint={'configured' if self.base_url else 'none'}, model={self.model!r}, "
                f"mode={self.mode!r}, offline={self.offline}, cache={str(self.cache.dir)!r})")

    def describe(self) -> str:
        """One line for a notebook: the endpoint (``scheme://host[:port]/path`` only: credentials and query
        dropped, see :func:`safe_url`), the model and the cache; never the key."""
        if self.offline:
            mode = "offline (cache only)"
        elif self.base_url:
            mode = f"endpoint {cfg.safe_url(self.base_url)}" + (" (Batch API)" if self.mode == "batch" else "")
        else:
            mode = "no endpoint configured (cache only)"
        where = paths.display_path(self.cache.dir)
        return f"LLM: {mode}; default model {self.model}; {len(self.cache):,} cached results in {where}"

    def not_run_reason(self) -> str:
        """Why an LLM step has no result: items still pending in a batch, the request budget, offline mode or
        no endpoint."""
        if self.pending:
            return (f"not run: {self.pending:,} items pending in a Batch API batch; rebuild to collect them "
                    "(the batch ids are recorded under the LLM cache)")
        if self.available and self.max_requests is not None and self.requests_sent >= self.max_requests:
            return over_budget_reason(self.max_requests)
        if self.offline:
            return "not run: offline build and no cached LLM result"
        return (f"not run: no LLM endpoint configured (set {cfg.BASE_URL_ENV} / {cfg.API_KEY_ENV}) and no cached "
                "result")

    # ------------------------------------------------------------------------------------------- budget

    def take_budget(self, n: int) -> int:
        """Reserve up to ``n`` requests from the budget; returns how many were granted."""
        with self._lock:
            left = n if self.max_requests is None else max(0, min(n, self.max_requests - self.requests_sent))
            self.requests_sent += left
            return left

    # ------------------------------------------------------------------------------------------- HTTP

    def _post(self, path: str, payload: Mapping[str, Any], until: float | None = None) -> Any:
        """POST JSON through ``openai`` (which retries 429/5xx, timeouts and dropped connections); returns the
        decoded body. A 200 whose body is not JSON is asked again after a backoff, within the same
        ``max_retries``. Everything must finish within ``request_deadline`` seconds and before the monotonic
        time ``until``, and no body may exceed ``max_reply_bytes``. Raises :class:`LLMRequestError` with the
        failure's kind only."""
        assert self.api is not None
        key = os.environ.get(cfg.API_KEY_ENV)
        openai = http.sdk().openai
        with http.limits(self.request_deadline, until=until, max_bytes=self.max_reply_bytes):
            try:
                for unreadable in range(self.max_retries + 1):
                    try:
                        return http.post_json(self.api, path, payload, key, self.retry_policy)
                    except http.UnreadableBody as err:
                        if unreadable == self.max_retries:
                            raise LLMRequestError(f"{err} after {http.attempts()} attempts") from None
                        time.sleep(http.backoff_delay(unreadable, self.backoff_base, self.backoff_max))
            except openai.OpenAIError as err:
                n = http.attempts()
                status = getattr(err, "status_code", None)
                body = b""
                if isinstance(err, openai.APIStatusError):
                    try:
                        body = err.response.content[:4096]
                    except Exception:  # noqa: BLE001 - a body that cannot be read adds nothing
                        body = b""
                raise LLMRequestError(http.describe_error(err, key) + (f" after {n} attempts" if n > 1 else ""),
                                      status=status, refuses_json=local.refuses_response_format(status, body),
                                      too_large=isinstance(err, http.ReplyTooLarge)) from None
            finally:
                with self._lock:
                    self.last_stats.requests += http.attempts()
                    self.last_stats.retries += max(0, http.attempts() - 1)
        raise AssertionError("unreachable")  # the loop returns or raises

    # -------------------------------------------------------------------------------------- one item

    def prepare(self, task: Task, item: Any, model: str, index: int, retry_failed: bool) -> Prepared:
        """The request for one item and, when the cache holds a usable record of it, its outcome."""
        messages = task.build(item)
        params = task.request_params()
        key = request_key(model, messages, params, self.endpoint_id)
        any_key = request_key(model, messages, params)  # no endpoint: what a cache-only client reads
        record = self.cache.get(key) if self.endpoint_id else self.cache.get_any(any_key)
        cached = None
        if record is not None and (record.get("status") == "ok" or not retry_failed):
            if record.get("status") == "ok":
                try:
                    cached = {"status": "ok", "value": replies.parse_content(task, record["content"]),
                              "error": None, "cached": True}
                except Exception as err:  # noqa: BLE001 - a cached reply that no longer validates
                    cached = {"status": "failed", "value": None, "cached": True,
                              "error": f"cached reply invalid: {replies.reply_problem(err)}"}
            else:
                cached = {"status": "failed", "value": None, "error": record.get("error"), "cached": True}
        return Prepared(index, messages, params, key, any_key, cached)

    def ask(self, task: Task, p: Prepared, model: str, until: float | None = None, *, first_attempt: int = 0,
            error: str = "", content: str | None = None) -> dict[str, Any]:
        """Send one prepared item live, re-asking malformed replies; the outcome {status, value, error, cached}.
        ``first_attempt`` > 0 continues the re-asks of a reply that came from a batch."""
        if until is not None and time.monotonic() >= until:
            return {"status": NOT_RUN, "value": None, "error": RUN_DEADLINE_PASSED, "cached": False}
        for attempt in range(first_attempt, self.max_parse_retries + 1):
            if not self.take_budget(1):
                if attempt == 0:
                    return {"status": NOT_RUN, "value": None, "error": over_budget_reason(self.max_requests),
                            "cached": False}
                return {"status": "failed", "value": None, "cached": False,
                        "error": f"{error}; not re-asked: the request budget was reached"}
            if attempt:
                with self._lock:
                    self.last_stats.parse_retries += 1
            try:
                data = self._send_chat(model, p, until)
            except LLMRequestError as err:
                return {"status": "failed", "value": None, "error": f"request failed: {err}", "cached": False}
            usage = data.get("usage") if isinstance(data, dict) else None
            with self._lock:
                self.last_stats.add_usage(usage, self.prices.live(model))
            reply = replies.read_completion(task, data)
            if reply.ok:
                self.cache.put(p.key, replies.ok_record(p.key, task, model, p.messages, p.params, reply.content or "",
                                                        usage, "live"), alias=p.any_key)
                with self._lock:
                    self.last_stats.json_extracted += reply.extracted
                return {"status": "ok", "value": reply.value, "error": None, "cached": False}
            error, content = reply.error, reply.content if reply.content is not None else content
        self.cache.put(p.key, replies.failed_record(p.key, task, model, p.messages, p.params, content, error, "live"),
                       alias=p.any_key)
        return {"status": "failed", "value": None, "error": error, "cached": False}

    def _send_chat(self, model: str, p: Prepared, until: float | None) -> Any:
        """One chat request; a server that refuses ``response_format`` is asked again without it, and so are all
        later requests of this client (:mod:`analysis_lib.llm.local`)."""
        payload = local.request_payload(model, p.messages, p.params, self.json_mode)
        try:
            return self._post("chat/completions", payload, until)
        except LLMRequestError as err:
            if not (err.refuses_json and "response_format" in payload):
                raise
            with self._lock:
                self.json_mode = "off"
                self.last_stats.json_mode_fallbacks += 1
            log.warning("the endpoint refused response_format: JSON mode off for this client")
            return self._post("chat/completions", local.request_payload(model, p.messages, p.params, "off"), until)

    # --------------------------------------------------------------------------------------- many items

    def run(
        self,
        task: Task,
        items: Iterable[Any],
        *,
        model: str | None = None,
        desc: str | None = None,
        retry_failed: bool | None = None,
        on_result: Callable[[int, dict[str, Any]], None] | None = None,
        deadline: float | None = None,
    ) -> pl.DataFrame:
        """Run ``task`` over ``items``; one row per item, in input order.

        Columns: ``item`` (input position), one column per top-level property of the task's schema (null unless
        ``status == "ok"``), ``status`` (``ok``, ``failed``, ``not run``), ``error`` and ``cached``. Accounting
        for the run is in ``self.last_stats`` (also logged), the estimate made before sending anything in
        ``self.last_estimate``. ``on_result(index, outcome)`` is called as each result arrives (after it is
        cached).

        A cached failure (a reply that stayed malformed) is reported as failed, never as an answer; with
        ``retry_failed`` (default: the client's, ``$ANALYSIS_LLM_RETRY_FAILED``) it is requested again.
        ``deadline`` (default: the client's ``run_deadline``) bounds the run in wall-clock seconds: items not
        started by then are "not run" (counted in ``last_stats.timed_out`` with requests that hit their own
        ``request_deadline``). In batch mode the run waits at most ``batch_wait`` seconds for its batches; what
        is still pending then is "not run" with :meth:`not_run_reason`'s count.
        """
        retry_failed = self.retry_failed if retry_failed is None else retry_failed
        deadline = self.run_deadline if deadline is None else deadline
        until = None if deadline is None else time.monotonic() + deadline
        items = list(items)
        model = model or task.model or self.model
        self.last_stats = RunStats(task=task.name, model=model, items=len(items))
        outcomes: list[dict[str, Any] | None] = [None] * len(items)
        bar = _progress(len(items), desc or task.name, self.progress)

        def settle(i: int, outcome: dict[str, Any]) -> None:
            outcomes[i] = outcome
            self._count(outcome)
            if bar is not None:
                bar.update(1)
            if on_result is not None:
                on_result(i, outcome)

        try:
            prepared = [self.prepare(task, item, model, i, retry_failed) for i, item in enumerate(items)]
            todo: list[Prepared] = []
            for p in prepared:
                if p.cached is not None:
                    settle(p.index, p.cached)
                elif not self.available:
                    settle(p.index, {"status": NOT_RUN, "value": None, "error": self.not_run_reason(),
                                     "cached": False})
                else:
                    todo.append(p)
            if todo:
                self.last_estimate = estimate.estimate_prepared(task.name, model, todo, self.prices, self.mode)
                log.info("before sending: %s", self.last_estimate.line())
                if self.mode == "batch":
                    batch.run_batch(self, task, model, todo, settle, until)
                else:
                    self._run_live(task, model, todo, settle, until)
        finally:
            if bar is not None:
                bar.close()
            self.total_stats = self.total_stats.merge(self.last_stats)
            log.info(self.last_stats.summary())
        return result_frame(task.schema, outcomes)

    def _run_live(self, task: Task, model: str, todo: Sequence[Prepared],
                  settle: Callable[[int, dict[str, Any]], None], until: float | None) -> None:
        pool = ThreadPoolExecutor(max_workers=self.max_concurrency)
        try:
            pending = {pool.submit(self.ask, task, p, model, until): p.index for p in todo}
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    settle(pending.pop(fut), fut.result())
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def _count(self, outcome: Mapping[str, Any]) -> None:
        s = self.last_stats
        if outcome["cached"]:
            s.cache_hits += 1
        if outcome["status"] == "ok":
            s.ok += 1
        elif outcome["status"] == NOT_RUN:
            s.not_run += 1
            s.timed_out += outcome["error"] == RUN_DEADLINE_PASSED
            s.over_budget += str(outcome["error"]).startswith(OVER_BUDGET)
        else:
            s.timed_out += any(t in str(outcome["error"]) for t in ("deadline exceeded", "timeout"))
            s.failed += 1
            reason = re.sub(r":.*$", "", str(outcome["error"]))
            s.failure_reasons[reason] += 1

    # -------------------------------------------------------------------------------------- embeddings

    def embed(self, texts: Sequence[str], model: str = "text-embedding-3-large", batch_size: int = MAX_EMBED_CHUNK,
              on_chunk: Callable[[int, Any], None] | None = None, *, dimensions: int | None = None,
              vector_bytes: int | None = None) -> Any:
        """Embeddings of ``texts`` from the endpoint's ``/embeddings`` as a float32 array (no cache here: see
        :mod:`analysis_lib.search_arena.topics`). ``dimensions``: the vector length asked for (OpenAI's
        ``dimensions`` parameter; None: the model's own, and nothing is sent).

        Requests are sized so that each reply fits the reply cap (``max_reply_bytes``,
        :func:`~analysis_lib.llm.estimate.embed_chunk`): the first asks for
        :data:`~analysis_lib.llm.estimate.FIRST_EMBED_CHUNK` texts (``vector_bytes``, the JSON bytes of one vector
        measured by an earlier run, skips that step); from its reply the JSON bytes per vector are measured
        (``self.embed_vector_bytes``), and later requests are sized from them. A reply refused as over the cap is
        asked again in halves; a single text whose vector alone is over the cap fails. At about 15 bytes a value,
        3,072-dimension vectors take about 46 kB of JSON each, so an 8 MiB cap gives requests of about 90 texts.
        ``on_chunk(start, vectors)`` is called as each request's vectors arrive (for caching them at once). The
        requests, retries and failures are counted as a run of the task ``embeddings`` (``last_stats``, added to
        ``total_stats``). Raises :class:`LLMRequestError` with the failure's kind."""
        import numpy as np

        if not self.available:
            raise LLMRequestError(self.not_run_reason())
        self.last_stats = stats = RunStats(task="embeddings", model=model, items=len(texts))
        out: list[Any] = []
        size = embed_chunk(vector_bytes, batch_size, self.max_reply_bytes)
        start = 0
        try:
            while start < len(texts):
                chunk = list(texts[start : start + size])
                payload: dict[str, Any] = {"model": model, "input": chunk}
                if dimensions is not None:
                    payload["dimensions"] = int(dimensions)
                try:
                    data = self._post("embeddings", payload)
                except LLMRequestError as err:
                    if err.too_large and len(chunk) > 1:
                        size = max(1, len(chunk) // 2)
                        log.info("embedding reply over the %s-byte cap: %d texts per request now",
                                 f"{self.max_reply_bytes:,}", size)
                        continue
                    stats.failed = len(texts) - start
                    stats.failure_reasons[re.sub(r":.*$", "", f"request failed: {err}")] += 1
                    raise
                with self._lock:
                    stats.add_usage({"prompt_tokens": (data.get("usage") or {}).get("prompt_tokens", 0)},
                                    self.prices.live(model))
                rows = sorted(data["data"], key=lambda d: d.get("index", 0))
                if len(rows) != len(chunk):
                    stats.failed = len(texts) - start
                    raise LLMRequestError(f"embeddings reply holds {len(rows)} vectors for {len(chunk)} texts")
                vecs = np.asarray([r["embedding"] for r in rows], dtype=np.float32)
                if on_chunk is not None:
                    on_chunk(start, vecs)
                out.append(vecs)
                start += len(chunk)
                stats.ok = start
                self.embed_vector_bytes = max(1, len(json.dumps(rows, separators=(",", ":"))) // len(rows))
                size = embed_chunk(self.embed_vector_bytes, batch_size, self.max_reply_bytes)
        finally:
            self.total_stats = self.total_stats.merge(stats)
            log.info(stats.summary())
        return np.concatenate(out) if out else np.zeros((0, 0), dtype=np.float32)


def _progress(total: int, desc: str, enabled: bool):
    if not enabled or total == 0:
        return None
    from tqdm import tqdm  # plain text bar: works in terminals and in executed notebooks alike

    return tqdm(total=total, desc=desc, leave=False)
