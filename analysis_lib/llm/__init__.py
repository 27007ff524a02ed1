"""One small client for every LLM-backed analysis: structured tasks, a resumable cache, live or batch requests.

The analyses that need a language model (intent labels, topic names, describing differences, the nugget,
DR-Arena and answer-engine steps) declare a :class:`Task` — how to turn an input item into chat messages, how to
read the reply, and the JSON schema the reply must satisfy — and run it over many inputs with
:meth:`LLMClient.run`, which returns a polars frame with the parsed fields plus ``status`` (``ok`` / ``failed`` /
``not run``), ``error`` and ``cached``. A :class:`Step` is one analysis's task and items, built by a function next
to the task, so the run and the estimate (:mod:`analysis_lib.llm.estimate`) see the same requests.

The package, one job per module:

- :mod:`~analysis_lib.llm.settings`: environment variables, defaults, :func:`identity`, :func:`safe_url`;
- :mod:`~analysis_lib.llm.tasks`: prompt templates, :class:`Task`, :class:`Step`, :func:`parse_json`;
- :mod:`~analysis_lib.llm.records`: the cache (:class:`ResultCache`), :class:`RunStats`, the result frame;
- :mod:`~analysis_lib.llm.replies`: reading, validating and recording one reply (live and batch alike);
- :mod:`~analysis_lib.llm.http`: the guarded ``openai`` client (same origin, no redirects, deadlines, size cap);
- :mod:`~analysis_lib.llm.client`: :class:`LLMClient` (cache lookup, estimate, budget, live requests);
- :mod:`~analysis_lib.llm.batch`: the Batch API path; :mod:`~analysis_lib.llm.estimate`: counts and costs;
- :mod:`~analysis_lib.llm.local`: vLLM, Ollama and llama.cpp, and JSON mode.

Configuration comes from the environment only, never from notebook parameters:

- ``OPENAI_BASE_URL``: an OpenAI-compatible endpoint (``.../v1``). When unset and ``OPENAI_API_KEY`` is set,
  the OpenAI API is used; when both are unset there is no endpoint.
- ``OPENAI_API_KEY``: sent as a bearer token and nowhere else: it is read at request time, never stored on the
  client, printed, logged, or written to the cache or a batch file.
- ``ANALYSIS_LLM_MODEL``: default model (``gpt-4.1``, the paper's, when unset).
- ``ANALYSIS_LLM_MODE``: ``live`` (default) or ``batch`` (the Batch API: half the price, a 24-hour window).
- ``ANALYSIS_LLM_MAX_REQUESTS``: the request budget of one client (one notebook of a build): live requests,
  re-asks and batch lines together. Items it does not cover are "not run" with that reason; nothing is sent
  past it.
- ``ANALYSIS_LLM_BATCH_POLL`` / ``ANALYSIS_LLM_BATCH_WAIT``: seconds between polls of a batch (30) and how long
  one run waits for its batches (24 h; ``0``: submit or look once and return, pending items "not run").
- ``ANALYSIS_LLM_MAX_REPLY_BYTES``: the largest reply body read (8 MiB); a larger one fails that item.
- ``ANALYSIS_LLM_JSON_MODE``: ``schema`` (default), ``object`` or ``off`` (:mod:`~analysis_lib.llm.local`).
- ``ANALYSIS_LLM_OFFLINE=1``: cache-only mode (also ``offline=True``): cached results are returned, nothing is
  requested, anything uncached is "not run".
- ``ANALYSIS_LLM_CACHE``: cache directory (default ``<repo>/.cache/llm``).
- ``ANALYSIS_LLM_REQUEST_DEADLINE``: wall-clock seconds for one request, retries and backoff included (default
  300; ``0`` = none); ``ANALYSIS_LLM_RUN_DEADLINE``: the same for one :meth:`LLMClient.run` (default none).
- ``ANALYSIS_LLM_RETRY_FAILED=1``: request again the items whose cached reply stayed malformed (also
  ``retry_failed=True``).

Behaviour:

- **Cache.** One JSON file per request under ``cache_dir``, named by the sha256 of the canonical JSON of
  ``{model, messages, params, endpoint}`` (params include the response format; the endpoint is its
  :func:`safe_url`, never a secret, so answers from one endpoint are never served as another's; a client
  with no endpoint at all, cache only, reads the latest answer any endpoint gave). A result is written as soon
  as it arrives, so a rerun with the same inputs makes no request and an interrupted run resumes where it
  stopped. Live and batch replies are the same records, read by the same code. Valid replies are cached, and
  so are replies that stayed malformed after all parse retries (a property of the model's answer, reported as
  failed and never as an answer: rerun with ``retry_failed=True`` to try again); transport failures (HTTP
  429/5xx, connection errors, deadlines, oversized replies) are not cached, so the next run retries them.
- **Before sending**, a run reports the requests it will send, their prompt tokens and cost
  (``client.last_estimate``, logged), then takes them from the budget.
- **HTTP** goes through the ``openai`` package (the ``[llm]`` extra, imported on first use): no redirect is
  followed and no request leaves the endpoint's origin, so the key cannot be carried elsewhere; a plain-``http``
  endpoint that is not loopback is warned about.
- **Retries.** HTTP 408/409/429, 5xx, timeouts and dropped connections are retried by the layer's own small
  loop around ``openai``'s public calls (:func:`analysis_lib.llm.http.with_retries`; no private ``openai`` method
  is called or overridden) with exponential backoff (``backoff_base * 2**attempt``, capped at ``backoff_max``,
  with jitter; a ``Retry-After`` header is honoured up to the cap, never past the request's deadline), at most
  ``max_retries`` times; an unreadable 200 body is asked again within
  the same budget, after the same backoff. Other HTTP errors (400, 401, 404) fail at once, and so does a reply
  over the size cap.
- **Deadlines.** ``timeout`` bounds each network operation; ``request_deadline`` the whole request (a server
  that drips a byte a second, or streams without end, is cut off); ``run_deadline`` a whole run.
- **Structured outputs.** A reply is parsed by the task's ``parse`` (JSON by default) and validated against the
  task's schema with ``jsonschema``; a malformed or invalid reply is requested again up to
  ``max_parse_retries`` times, then recorded as a failure with its reason.
- **Redacted errors.** A failure is recorded as its kind only: the HTTP status with its standard reason phrase
  (and the API's error code when it is a bare identifier), the exception class of a connection error, or what
  was wrong with a reply (not JSON, which schema rule failed). The text of a request, of an error body or of a
  reply is never put in an error message, a log line or a result: inputs may be benchmark items that must not be
  printed (BrowseComp), and servers and models quote their input back.
- **Accounting.** :class:`RunStats` per run (``client.last_stats``): requests, retries, cache hits, failures by
  reason, prompt and completion tokens, batch lines and pending items, and the cost from the price table.
"""

from __future__ import annotations

from analysis_lib.llm import client, estimate, records, settings, tasks
from analysis_lib.llm.client import LLMClient, LLMRequestError, over_budget_reason
from analysis_lib.llm.estimate import StepEstimate, estimate_steps, format_estimates
from analysis_lib.llm.records import NOT_RUN, RunStats, default_cache_dir, request_key
from analysis_lib.llm.replies import ReplyError
from analysis_lib.llm.settings import clip_text, identity, safe_url
from analysis_lib.llm.tasks import Step, Task, fill, load_prompt, parse_json

#: The layer's face: the client and its errors, tasks and steps, the estimate, the cache key and the endpoint's
#: identity. The environment variables' names are :mod:`~analysis_lib.llm.settings`' (``settings.BASE_URL_ENV``),
#: the cache's internals :mod:`~analysis_lib.llm.records`'.
__all__ = [
    "NOT_RUN", "LLMClient", "LLMRequestError", "ReplyError", "RunStats", "Step", "StepEstimate", "Task",
    "clip_text", "client", "default_cache_dir", "estimate", "estimate_steps", "fill", "format_estimates",
    "identity", "load_prompt", "over_budget_reason", "parse_json", "records", "request_key", "safe_url",
    "settings", "tasks",
]
