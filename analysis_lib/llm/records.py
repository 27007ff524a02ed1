"""What an LLM run keeps: the on-disk result cache, the run statistics and the result frame.

Part of the LLM layer (:mod:`analysis_lib.llm` re-exports the public names): :func:`request_key` names a cached
request by :func:`analysis_lib.cache_keys.digest` (sha256 of the canonical JSON) of ``{model, messages, params,
endpoint}``; :class:`ResultCache` stores one JSON file per key, written atomically; :class:`RunStats` counts one
run (items, cache hits, requests, retries, time-outs, tokens, cost); :func:`result_frame` turns per-item outcomes
into the polars frame :meth:`analysis_lib.llm.LLMClient.run` returns.
"""

from __future__ import annotations

import json
import logging
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from analysis_lib import paths
from analysis_lib.cache_keys import canonical_json as canonical_json  # analysis_lib.llm exports it
from analysis_lib.cache_keys import digest
from analysis_lib.llm.settings import CACHE_ENV, MAX_REQUESTS_ENV

log = logging.getLogger(__name__)

NOT_RUN = "not run"
#: Reasons of items a rebuild can finish start (after "not run: ") with "request budget", "run deadline" or
#: "endpoint", so that a book runner can tell unfinished work from work that cannot run (no endpoint).
OVER_BUDGET = "not run: request budget"
RUN_DEADLINE_PASSED = "not run: run deadline passed before this item was sent"


def over_budget_reason(limit: int | None) -> str:
    """The not-run reason of an item the request budget (``$ANALYSIS_LLM_MAX_REQUESTS``) left unsent."""
    shown = "none" if limit is None else f"{limit:,}"
    return f"{OVER_BUDGET} (${MAX_REQUESTS_ENV}={shown}) reached before this item was sent"


# ----------------------------------------------------------------------------------------------- stats


@dataclass
class RunStats:
    """Accounting for one :meth:`LLMClient.run` (or the sum of several)."""

    task: str = ""
    model: str = ""
    items: int = 0
    ok: int = 0
    failed: int = 0
    not_run: int = 0
    cache_hits: int = 0
    #: items whose request hit its deadline or timed out, plus items not started before the run's deadline
    timed_out: int = 0
    requests: int = 0
    retries: int = 0
    parse_retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    failure_reasons: Counter = field(default_factory=Counter)
    #: ok replies whose JSON had to be found inside other text (a local server without JSON mode)
    json_extracted: int = 0
    #: requests resent without ``response_format`` because the server refused it (:mod:`analysis_lib.llm.local`)
    json_mode_fallbacks: int = 0
    #: requests written into Batch API input files by this run, and items still waiting in a batch at its end
    batch_submitted: int = 0
    batch_pending: int = 0
    #: items left "not run" because ``$ANALYSIS_LLM_MAX_REQUESTS`` was reached
    over_budget: int = 0

    def add_usage(self, usage: Mapping[str, Any] | None, price: tuple[float, float] | None) -> None:
        usage = usage or {}
        p = int(usage.get("prompt_tokens") or 0)
        c = int(usage.get("completion_tokens") or 0)
        self.prompt_tokens += p
        self.completion_tokens += c
        if price is not None:
            self.cost_usd = (self.cost_usd or 0.0) + (p * price[0] + c * price[1]) / 1e6

    def merge(self, other: RunStats) -> RunStats:
        def pick(a: str, b: str, many: str) -> str:
            return a or b if not (a and b and a != b) else many

        out = RunStats(task=pick(self.task, other.task, "all tasks"),
                       model=pick(self.model, other.model, "several models"))
        for name in _COUNTS:
            setattr(out, name, getattr(self, name) + getattr(other, name))
        costs = [c for c in (self.cost_usd, other.cost_usd) if c is not None]
        out.cost_usd = sum(costs) if costs else None
        out.failure_reasons = self.failure_reasons + other.failure_reasons
        return out

    def as_dict(self) -> dict[str, Any]:
        d = {k: getattr(self, k) for k in ("task", "model", *_COUNTS, "cost_usd")}
        d["failure_reasons"] = dict(self.failure_reasons)
        return d

    def summary(self) -> str:
        cost = f", cost ${self.cost_usd:.4f}" if self.cost_usd is not None else ""
        reasons = "; ".join(f"{r} ×{n}" for r, n in self.failure_reasons.most_common(5))
        return (
            f"{self.task} [{self.model}]: {self.items} items — {self.ok} ok, {self.failed} failed, "
            f"{self.not_run} not run ({self.timed_out} timed out); {self.cache_hits} from cache, "
            f"{self.requests} requests "
            f"({self.retries} retried, {self.parse_retries} re-asked for a valid reply); tokens "
            f"{self.prompt_tokens:,} in / {self.completion_tokens:,} out{cost}"
            + (f"; {self.batch_submitted:,} sent in batches" if self.batch_submitted else "")
            + (f", {self.batch_pending:,} still pending in a batch" if self.batch_pending else "")
            + (f"; {self.over_budget:,} over the request budget" if self.over_budget else "")
            + (f"; {self.json_extracted:,} replies with JSON found inside text" if self.json_extracted else "")
            + (f". Failures: {reasons}" if reasons else "")
        )


_COUNTS = ("items", "ok", "failed", "not_run", "cache_hits", "timed_out", "requests", "retries", "parse_retries",
           "prompt_tokens", "completion_tokens", "json_extracted", "json_mode_fallbacks", "batch_submitted",
           "batch_pending", "over_budget")


# ----------------------------------------------------------------------------------------------- cache


def request_key(model: str, messages: Sequence[Mapping[str, Any]], params: Mapping[str, Any],
                endpoint: str = "") -> str:
    """:func:`analysis_lib.cache_keys.digest` (sha256 of the canonical JSON) of model, messages, request
    parameters and the endpoint's identity (:func:`safe_url`: no credentials), so one endpoint's answers are never
    served as another's."""
    record: dict[str, Any] = {"model": model, "messages": list(messages), "params": dict(params)}
    if endpoint:
        record["endpoint"] = endpoint
    return digest(record)


def default_cache_dir() -> Path:
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env)
    return paths.cache_dir("llm")


def _read_record(path: Path) -> dict[str, Any] | None:
    """A cached record, or None when there is none; an unreadable file is logged and treated as absent."""
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        log.warning("unreadable cache file %s ignored", path)
        return None


class ResultCache:
    """One JSON file per request key, written atomically (``<dir>/<key[:2]>/<key>.json``).

    ``put(..., alias=k)`` also writes the record under ``<dir>/any/<k[:2]>/<k>.json``, where ``k`` is the
    endpoint-free key of the request: a client with no endpoint (cache only) reads that copy (:meth:`get_any`),
    the latest answer any endpoint gave. A client with an endpoint reads only its own endpoint's results."""

    def __init__(self, directory: str | Path):
        self.dir = Path(directory)

    def path(self, key: str) -> Path:
        return self.dir / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        return _read_record(self.path(key))

    def put(self, key: str, record: Mapping[str, Any], alias: str | None = None) -> None:
        text = json.dumps(record, ensure_ascii=False, indent=1)
        for path in [self.path(key)] + ([self.alias_path(alias)] if alias else []):
            # per process and thread: the notebooks of a build (processes) and a step's workers (threads) share it
            paths.atomic_write(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))

    def alias_path(self, alias: str) -> Path:
        return self.dir / "any" / alias[:2] / f"{alias}.json"

    def get_any(self, alias: str) -> dict[str, Any] | None:
        """The record stored under an endpoint-free key (see the class doc)."""
        return _read_record(self.alias_path(alias))

    def __len__(self) -> int:
        """Cached requests (each counted once: the endpoint-free copies and the batch records are not)."""
        return sum(1 for _ in self.dir.glob("[0-9a-f][0-9a-f]/*.json")) if self.dir.exists() else 0


class Prepared:
    """One item ready to send: its messages, parameters and cache keys, and its cached outcome if any."""

    __slots__ = ("index", "messages", "params", "key", "any_key", "cached")

    def __init__(self, index: int, messages: list, params: dict, key: str, any_key: str,
                 cached: dict[str, Any] | None):
        self.index, self.messages, self.params, self.key, self.any_key = index, messages, params, key, any_key
        self.cached = cached



_SCHEMA_DTYPES = {"string": pl.String, "integer": pl.Int64, "number": pl.Float64, "boolean": pl.Boolean}


def _dtype(prop: Mapping[str, Any]) -> Any:
    kind = prop.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind == "array":
        inner = prop.get("items", {})
        return pl.List(_dtype(inner)) if inner.get("type") in _SCHEMA_DTYPES else pl.Object
    if kind in _SCHEMA_DTYPES:
        return _SCHEMA_DTYPES[kind]
    if "enum" in prop:
        return pl.String
    return pl.Object


def result_frame(schema: Mapping[str, Any], outcomes: Sequence[Mapping[str, Any] | None]) -> pl.DataFrame:
    """One row per outcome: ``item``, the schema's top-level properties (null unless ok), ``status``, ``error``,
    ``cached``; a non-object schema gives one ``value`` column."""
    props: Mapping[str, Any] = schema.get("properties", {}) if schema.get("type") == "object" else {}
    columns: dict[str, list[Any]] = {"item": list(range(len(outcomes)))}
    dtypes: dict[str, Any] = {"item": pl.Int64}
    for name, prop in props.items():
        columns[name] = [o["value"].get(name) if o and o["status"] == "ok" else None for o in outcomes]
        dtypes[name] = _dtype(prop)
    if not props:  # a non-object schema: the whole parsed value in one column
        columns["value"] = [o["value"] if o and o["status"] == "ok" else None for o in outcomes]
        dtypes["value"] = pl.Object
    columns["status"] = [o["status"] if o else NOT_RUN for o in outcomes]
    columns["error"] = [o["error"] if o else "not run: interrupted" for o in outcomes]
    columns["cached"] = [bool(o and o["cached"]) for o in outcomes]
    dtypes.update({"status": pl.String, "error": pl.String, "cached": pl.Boolean})
    return pl.DataFrame(columns, schema=dtypes)
