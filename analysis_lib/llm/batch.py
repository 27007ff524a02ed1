"""The Batch API path of :meth:`LLMClient.run <analysis_lib.llm.client.LLMClient.run>` (``ANALYSIS_LLM_MODE=batch``).

The items a run still needs (not answered by the cache) are written as Batch API request files, one JSON line
per request: ``{"custom_id": <cache key>, "method": "POST", "url": "/v1/chat/completions", "body": {model,
messages, params}}``, at most :data:`MAX_LINES` lines and :data:`MAX_FILE_BYTES` bytes per file (OpenAI's limits:
50,000 requests and 200 MB). Each file is uploaded with ``files.create(purpose="batch")`` and submitted with
``batches.create(endpoint="/v1/chat/completions", completion_window="24h")``; the run polls ``batches.retrieve``
every ``batch_poll`` seconds until every batch has ended (``completed``, ``failed``, ``expired``, ``cancelled``) or
``batch_wait`` seconds have passed, then downloads the output and error files (``files.content``, streamed to
disk under the size cap) and settles each item:

- a line with HTTP 200 goes through :func:`~analysis_lib.llm.replies.read_completion` and into the cache exactly
  as a live reply; a reply that does not validate is re-asked live, as a live run would re-ask it;
- **failed and expired requests are retried live**, in the same run and under the same request budget: a
  request whose line came back with an error (HTTP 4xx/5xx in the output, or an entry of the error file, such
  as ``batch_expired`` for what the 24-hour window did not reach) is sent once more as a live request, with the
  live path's retries. A new batch would wait up to another 24 hours for the few requests a batch leaves out;
- a whole batch that ``failed`` (its input file was refused) or was ``cancelled`` retries nothing: its items are
  failed with that reason and stay uncached, so the next run submits them in a new batch.

**Resuming.** Each submitted batch is recorded under the cache (``<cache>/batches/<local id>.json``: endpoint,
task, model, custom ids, input file id, batch id, status), written before the upload, after it and after
``batches.create``. A run first picks up the open batches of its endpoint, task and model and polls them instead
of submitting their requests again, so a build killed mid-poll pays once. A record that has an input file but
no batch id (killed between ``batches.create`` and the write) is matched to its batch through ``batches.list``
by the input file id before anything is resubmitted. Items still in a batch when the run stops waiting are
"not run" with the count in the reason (:meth:`LLMClient.not_run_reason`). The key never reaches a record, a
request file or a log: it is the ``Authorization`` header of each call, as in the live path, and the Files and
Batches calls go through the same guarded transport (same origin, no redirects, deadlines, size cap).
"""

from __future__ import annotations

import json
import logging
import os
import time
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol

from analysis_lib.llm import estimate, http, replies
from analysis_lib.llm import settings as cfg
from analysis_lib.llm.records import NOT_RUN, Prepared, ResultCache, RunStats, over_budget_reason, request_key
from analysis_lib.llm.tasks import Task

log = logging.getLogger(__name__)

ENDPOINT = "/v1/chat/completions"
COMPLETION_WINDOW = "24h"
MAX_LINES = 50_000
MAX_FILE_BYTES = 200_000_000
ENDED = ("completed", "failed", "expired", "cancelled")
BATCH_DIR = "batches"

Settle = Callable[[int, dict[str, Any]], None]


class BatchCallError(Exception):
    """A Files or Batches call that failed for good; the message is the failure's kind only."""


class BatchClient(Protocol):
    """What this module uses of :class:`analysis_lib.llm.client.LLMClient` (named here, not imported: the
    client imports this module, and this module imports nothing of the client)."""

    api: Any
    cache: ResultCache
    retry_policy: http.RetryPolicy
    request_deadline: float | None
    max_reply_bytes: int | None
    max_parse_retries: int
    max_concurrency: int
    max_requests: int | None
    batch_poll: float
    batch_wait: float
    pending: int
    last_stats: RunStats
    prices: estimate.PriceTable

    @property
    def endpoint_id(self) -> str: ...

    def take_budget(self, n: int) -> int: ...

    def not_run_reason(self) -> str: ...

    def ask(self, task: Task, p: Prepared, model: str, until: float | None = None, *, first_attempt: int = 0,
            error: str = "", content: str | None = None) -> dict[str, Any]: ...


# -------------------------------------------------------------------------------------------- the ledger


def ledger_dir(client: BatchClient) -> Path:
    return client.cache.dir / BATCH_DIR


def _write(path: Path, record: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(record, indent=1), encoding="utf-8")
    tmp.replace(path)


def open_batches(client: BatchClient, task: str, model: str) -> list[dict[str, Any]]:
    """Recorded batches of this endpoint, task and model that have not been collected."""
    out = []
    for path in sorted(ledger_dir(client).glob("*.json")):
        try:
            rec = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            log.warning("unreadable batch record %s ignored", path.name)
            continue
        if (rec.get("endpoint"), rec.get("task"), rec.get("model")) == (client.endpoint_id, task, model) \
                and not rec.get("collected"):
            out.append(rec)
    return out


def _record_path(client: BatchClient, rec: dict[str, Any]) -> Path:
    return ledger_dir(client) / f"{rec['local_id']}.json"


# ------------------------------------------------------------------------------------------ API calls


def _call(client: BatchClient, fn: Callable[..., Any], *args: Any, seconds: float | None = None,
          max_bytes: int | None = None, **kwargs: Any) -> Any:
    """One Files/Batches call under the layer's deadline and size cap and with the client's retries
    (:func:`analysis_lib.llm.http.with_retries`), the key as this call's header."""
    key = os.environ.get(cfg.API_KEY_ENV)
    openai = http.sdk().openai
    with http.limits(client.request_deadline if seconds is None else seconds,
                     max_bytes=client.max_reply_bytes if max_bytes is None else max_bytes):
        try:
            return http.with_retries(client.retry_policy, fn, *args, extra_headers=http.auth_headers(key), **kwargs)
        except (openai.OpenAIError, http.DeadlineExceeded, http.CrossOriginRequest, http.ReplyTooLarge) as err:
            raise BatchCallError(http.describe_error(err, key)) from None


def _download(client: BatchClient, file_id: str, target: Path) -> None:
    """A batch result file streamed to ``target`` (never held whole in memory), under the file size cap."""
    api = client.api
    assert api is not None
    tmp = target.with_suffix(".part")
    key = os.environ.get(cfg.API_KEY_ENV)
    openai = http.sdk().openai

    def fetch() -> None:
        with api.files.with_streaming_response.content(file_id, extra_headers=http.auth_headers(key)) as resp, \
                open(tmp, "wb") as fh:
            for chunk in resp.iter_bytes():
                fh.write(chunk)

    with http.limits(cfg.FILE_TRANSFER_DEADLINE, max_bytes=cfg.DEFAULT_MAX_FILE_BYTES):
        try:
            http.with_retries(client.retry_policy, fetch)
        except (openai.OpenAIError, http.DeadlineExceeded, http.CrossOriginRequest, http.ReplyTooLarge) as err:
            tmp.unlink(missing_ok=True)
            raise BatchCallError(http.describe_error(err, key)) from None
    tmp.replace(target)


# ------------------------------------------------------------------------------------------- submitting


def request_line(p: Prepared, model: str) -> bytes:
    body = {"model": model, "messages": p.messages, **p.params}
    return (json.dumps({"custom_id": p.key, "method": "POST", "url": ENDPOINT, "body": body},
                       ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def chunk_lines(lines: Sequence[bytes], max_lines: int | None = None, max_bytes: int | None = None) -> list[list[int]]:
    """Indices of ``lines`` split into files of at most ``max_lines`` lines and ``max_bytes`` bytes (default: the
    API's limits, :data:`MAX_LINES` and :data:`MAX_FILE_BYTES`), in order."""
    max_lines = MAX_LINES if max_lines is None else max_lines
    max_bytes = MAX_FILE_BYTES if max_bytes is None else max_bytes
    chunks: list[list[int]] = []
    size = 0
    for i, line in enumerate(lines):
        if len(line) > max_bytes:
            raise ValueError(f"request line {i} alone is {len(line):,} bytes, over the {max_bytes:,}-byte file limit")
        if not chunks or len(chunks[-1]) >= max_lines or size + len(line) > max_bytes:
            chunks.append([])
            size = 0
        chunks[-1].append(i)
        size += len(line)
    return chunks


def submit(client: BatchClient, task: Task, model: str, todo: Sequence[Prepared]) -> list[dict[str, Any]]:
    """Write, upload and submit the request files for ``todo``; returns their ledger records."""
    api = client.api
    assert api is not None
    lines = [request_line(p, model) for p in todo]
    records = []
    for chunk in chunk_lines(lines):
        local_id = f"{task.name}-{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:8]}"
        rec: dict[str, Any] = {"local_id": local_id, "endpoint": client.endpoint_id, "task": task.name,
                               "model": model, "custom_ids": [todo[i].key for i in chunk], "status": "writing",
                               "input_file_id": None, "batch_id": None, "created": time.time()}
        input_path = ledger_dir(client) / f"{local_id}.input.jsonl"
        input_path.parent.mkdir(parents=True, exist_ok=True)
        with open(input_path, "wb") as fh:
            fh.writelines(lines[i] for i in chunk)
        _write(_record_path(client, rec), rec)
        def upload(path: Path = input_path, **kw: Any) -> Any:  # opened afresh for each attempt
            with open(path, "rb") as fh:
                return api.files.create(file=(path.name, fh, "application/jsonl"), purpose="batch", **kw)

        uploaded = _call(client, upload, seconds=cfg.FILE_TRANSFER_DEADLINE)
        rec.update(input_file_id=uploaded.id, status="uploaded")
        _write(_record_path(client, rec), rec)
        created = _call(client, api.batches.create, input_file_id=uploaded.id, endpoint=ENDPOINT,
                        completion_window=COMPLETION_WINDOW, metadata={"analysis_lib_local_id": local_id})
        rec.update(batch_id=created.id, status=created.status)
        _write(_record_path(client, rec), rec)
        log.info("submitted batch %s: %d requests of %s", created.id, len(chunk), task.name)
        records.append(rec)
    return records


def recover(client: BatchClient, rec: dict[str, Any]) -> None:
    """A record without a batch id: find its batch by input file id (``batches.list``), or mark it unsent."""
    api = client.api
    assert api is not None
    if rec.get("input_file_id"):
        for b in _call(client, api.batches.list, limit=100):
            if b.input_file_id == rec["input_file_id"]:
                rec.update(batch_id=b.id, status=b.status)
                _write(_record_path(client, rec), rec)
                return
    rec.update(status="never submitted", collected=True)
    _write(_record_path(client, rec), rec)


# -------------------------------------------------------------------------------------------- collecting


def _lines(path: Path) -> list[dict[str, Any]]:
    out = []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            if line.strip():
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError:
                    log.warning("batch result %s line %d is not JSON: skipped", path.name, n)
    return out


def _line_error(line: dict[str, Any]) -> str:
    """What went wrong with one result line, by kind only (status, error code)."""
    resp = line.get("response") or {}
    err = line.get("error") or (resp.get("body") or {}).get("error") or {}
    code = http.error_code(err, os.environ.get(cfg.API_KEY_ENV)) if isinstance(err, dict) else None
    status = resp.get("status_code")
    head = f"HTTP {status}" if status else "no response"
    return f"batch request failed: {head}" + (f" ({code})" if code else "")


def _input_requests(client: BatchClient, rec: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """custom_id -> request body, from the batch's own input file (for items of another run)."""
    path = ledger_dir(client) / f"{rec['local_id']}.input.jsonl"
    return {ln["custom_id"]: ln["body"] for ln in _lines(path)} if path.exists() else {}


def collect(client: BatchClient, task: Task, model: str, rec: dict[str, Any], batch: Any,
            by_key: dict[str, Prepared]) -> tuple[dict[str, dict[str, Any]], list[tuple[Prepared, int, str, Any]]]:
    """Settle the requests of an ended batch. Returns the outcomes by custom id and the requests to send live
    (prepared item, first attempt, last error, last content)."""
    outcomes: dict[str, dict[str, Any]] = {}
    live: list[tuple[Any, int, str, Any]] = []
    results: dict[str, dict[str, Any]] = {}
    for kind in ("output_file_id", "error_file_id"):
        file_id = getattr(batch, kind, None)
        if file_id:
            target = ledger_dir(client) / f"{rec['local_id']}.{kind.split('_')[0]}.jsonl"
            _download(client, file_id, target)
            results.update({str(ln.get("custom_id")): ln for ln in _lines(target)})
    others = None
    for cid in rec["custom_ids"]:
        p = by_key.get(cid)
        if p is None:  # a request of another run of the same task: cache its answer all the same
            others = _input_requests(client, rec) if others is None else others
            p = _prepared_from(cid, others.get(cid))
            if p is None:
                continue
        line = results.get(cid)
        resp = (line or {}).get("response") or {}
        if line is not None and resp.get("status_code") == 200:
            body = resp.get("body")
            usage = body.get("usage") if isinstance(body, dict) else None
            client.last_stats.add_usage(usage, client.prices.batch(model))
            reply = replies.read_completion(task, body)
            if reply.ok:
                client.cache.put(cid, replies.ok_record(cid, task, model, p.messages, p.params, reply.content or "",
                                                        usage, batch.id), alias=p.any_key)
                client.last_stats.json_extracted += reply.extracted
                outcomes[cid] = {"status": "ok", "value": reply.value, "error": None, "cached": False}
            elif client.max_parse_retries > 0:
                live.append((p, 1, reply.error, reply.content))
            else:
                client.cache.put(cid, replies.failed_record(cid, task, model, p.messages, p.params, reply.content,
                                                            reply.error, batch.id), alias=p.any_key)
                outcomes[cid] = {"status": "failed", "value": None, "error": reply.error, "cached": False}
        elif batch.status in ("failed", "cancelled"):
            code = _batch_error_code(batch)
            outcomes[cid] = {"status": "failed", "value": None, "cached": False,
                             "error": f"batch {batch.status}{f' ({code})' if code else ''}: rerun to submit again"}
        else:  # an error line, or no line at all (expired)
            error = _line_error(line) if line is not None else "batch request failed: no result (batch_expired)"
            live.append((p, 0, error, None))
    rec.update(status=batch.status, collected=True, collected_at=time.time(),
               counts={"ok": sum(o["status"] == "ok" for o in outcomes.values()), "retried_live": len(live)})
    _write(_record_path(client, rec), rec)
    return outcomes, live


def _batch_error_code(batch: Any) -> str | None:
    data = getattr(getattr(batch, "errors", None), "data", None) or []
    codes = [http.error_code({"code": getattr(e, "code", None)}) for e in data]
    return next((c for c in codes if c), None)


def _prepared_from(cid: str, body: dict[str, Any] | None) -> Any:
    if not isinstance(body, dict):
        return None
    params = {k: v for k, v in body.items() if k not in ("model", "messages")}
    return Prepared(-1, body.get("messages", []), params, cid,
                       request_key(body.get("model", ""), body.get("messages", []), params), None)


# ------------------------------------------------------------------------------------------------- run


def run_batch(client: BatchClient, task: Task, model: str, todo: Sequence[Prepared], settle: Settle,
              until: float | None) -> None:
    """Send ``todo`` through the Batch API and settle every item (module doc)."""
    by_key: dict[str, list[Prepared]] = {}
    for p in todo:
        by_key.setdefault(p.key, []).append(p)
    first = {k: ps[0] for k, ps in by_key.items()}
    records = open_batches(client, task.name, model)

    def settle_key(key: str, outcome: dict[str, Any]) -> None:
        for p in by_key.pop(key, []):
            settle(p.index, outcome)

    try:
        for rec in [r for r in records if not r.get("batch_id")]:
            recover(client, rec)
        records = [r for r in records if r.get("batch_id")]
        in_flight = {cid for r in records for cid in r["custom_ids"]}
        new = [p for k, p in first.items() if k not in in_flight]
        granted = client.take_budget(len(new))
        for p in new[granted:]:
            settle_key(p.key, {"status": NOT_RUN, "value": None, "cached": False,
                               "error": _over_budget(client)})
        if granted:
            records += submit(client, task, model, new[:granted])
            client.last_stats.batch_submitted += granted
            client.last_stats.requests += granted
    except BatchCallError as err:
        reason = f"batch submission failed: {err}" + (
            "; this endpoint offers no Batch API: set ANALYSIS_LLM_MODE=live" if "HTTP 404" in str(err) else "")
        for key in list(by_key):
            if key not in {cid for r in records if r.get("batch_id") for cid in r["custom_ids"]}:
                settle_key(key, {"status": "failed", "value": None, "error": reason, "cached": False})
    _poll_and_collect(client, task, model, records, first, settle_key, until)
    pending = sum(len(ps) for ps in by_key.values())
    client.pending = pending
    client.last_stats.batch_pending = pending
    if pending:
        reason = client.not_run_reason()
        for key in list(by_key):
            settle_key(key, {"status": NOT_RUN, "value": None, "error": reason, "cached": False})


def _over_budget(client: BatchClient) -> str:
    return over_budget_reason(client.max_requests)


def _poll_and_collect(client: BatchClient, task: Task, model: str, records: list[dict[str, Any]],
                      first: dict[str, Prepared], settle_key: Callable[[str, dict[str, Any]], None],
                      until: float | None) -> None:
    api = client.api
    assert api is not None
    stop = time.monotonic() + client.batch_wait
    if until is not None:
        stop = min(stop, until)
    open_recs = list(records)
    while open_recs:
        for rec in list(open_recs):
            try:
                batch = _call(client, api.batches.retrieve, rec["batch_id"])
            except BatchCallError as err:
                log.warning("polling batch %s failed (%s); trying again later", rec["batch_id"], err)
                continue
            if batch.status != rec.get("status"):
                rec["status"] = batch.status
                _write(_record_path(client, rec), rec)
            if batch.status not in ENDED:
                continue
            try:
                outcomes, live = collect(client, task, model, rec, batch, first)
            except BatchCallError as err:
                log.warning("downloading the results of batch %s failed (%s); trying again later", batch.id, err)
                continue
            open_recs.remove(rec)
            for key, outcome in outcomes.items():
                settle_key(key, outcome)
            _retry_live(client, task, model, live, settle_key, until)
        if not open_recs or time.monotonic() >= stop:
            break
        time.sleep(max(0.0, min(client.batch_poll, stop - time.monotonic())))


def _retry_live(client: BatchClient, task: Task, model: str, live: list[tuple[Any, int, str, Any]],
                settle_key: Callable[[str, dict[str, Any]], None], until: float | None) -> None:
    """Failed and expired batch requests (and replies to re-ask) sent live, ``max_concurrency`` at a time."""
    if not live:
        return
    with ThreadPoolExecutor(max_workers=client.max_concurrency) as pool:
        futures = [(p.key, pool.submit(client.ask, task, p, model, until, first_attempt=a, error=e, content=c))
                   for p, a, e, c in live]
        for key, fut in futures:
            settle_key(key, fut.result())
