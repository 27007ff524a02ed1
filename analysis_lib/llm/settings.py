"""The LLM layer's settings: environment variable names, their defaults and readers, and display helpers.

Configuration comes from the environment only, never from notebook parameters (the module doc of
:mod:`analysis_lib.llm` lists every variable). :func:`identity` says what LLM results depend on besides their
inputs (a build keys its LLM steps on it); :func:`safe_url` makes an endpoint printable.
"""

from __future__ import annotations

import os
import urllib.parse
from typing import Any

BASE_URL_ENV = "OPENAI_BASE_URL"
API_KEY_ENV = "OPENAI_API_KEY"
MODEL_ENV = "ANALYSIS_LLM_MODEL"
OFFLINE_ENV = "ANALYSIS_LLM_OFFLINE"
REQUEST_DEADLINE_ENV = "ANALYSIS_LLM_REQUEST_DEADLINE"
RUN_DEADLINE_ENV = "ANALYSIS_LLM_RUN_DEADLINE"
RETRY_FAILED_ENV = "ANALYSIS_LLM_RETRY_FAILED"
#: ``live`` (default: one chat request per item) or ``batch`` (the Batch API, :mod:`analysis_lib.llm.batch`)
MODE_ENV = "ANALYSIS_LLM_MODE"
#: the most chat requests one client may send (live requests and batch lines together); unset: no limit
MAX_REQUESTS_ENV = "ANALYSIS_LLM_MAX_REQUESTS"
#: the largest reply body read, in bytes (:data:`DEFAULT_MAX_REPLY_BYTES` unless set)
MAX_REPLY_BYTES_ENV = "ANALYSIS_LLM_MAX_REPLY_BYTES"
#: ``schema`` (default), ``object`` or ``off``: the ``response_format`` sent with a JSON task
JSON_MODE_ENV = "ANALYSIS_LLM_JSON_MODE"
#: seconds between two polls of a submitted batch, and how long one run waits for its batches
BATCH_POLL_ENV = "ANALYSIS_LLM_BATCH_POLL"
BATCH_WAIT_ENV = "ANALYSIS_LLM_BATCH_WAIT"
#: the cache folder (default ``<repo>/.cache/llm``)
CACHE_ENV = "ANALYSIS_LLM_CACHE"
#: Every variable the layer reads (a test or a script clears them all for a clean client).
ENV_VARS = (BASE_URL_ENV, API_KEY_ENV, MODEL_ENV, OFFLINE_ENV, REQUEST_DEADLINE_ENV, RUN_DEADLINE_ENV,
            RETRY_FAILED_ENV, MODE_ENV, MAX_REQUESTS_ENV, MAX_REPLY_BYTES_ENV, JSON_MODE_ENV, BATCH_POLL_ENV,
            BATCH_WAIT_ENV, CACHE_ENV)

#: seconds one request may take, retries and backoff included, unless set
DEFAULT_REQUEST_DEADLINE = 300.0
#: 8 MiB: a chat completion of 4,096 tokens is well under 100 kB, so only a broken or hostile server reaches it
DEFAULT_MAX_REPLY_BYTES = 8 * 1024 * 1024
#: 2 GiB: the largest batch output or error file downloaded (written to disk as it arrives, never held in memory)
DEFAULT_MAX_FILE_BYTES = 2 * 1024 * 1024 * 1024
#: a file upload or download (up to 200 MB) gets this many seconds, retries included
FILE_TRANSFER_DEADLINE = 1800.0
DEFAULT_BATCH_POLL = 30.0
#: the Batch API's completion window: a run waits at most this long for its batches unless told otherwise
DEFAULT_BATCH_WAIT = 24 * 3600.0
OPENAI_API_URL = "https://api.openai.com/v1"
DEFAULT_MODEL = "gpt-4.1"
MODES = ("live", "batch")
JSON_MODES = ("schema", "object", "off")


def env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in {"1", "true", "yes", "on"}


def env_seconds(name: str, default: float | None) -> float | None:
    """A positive number of seconds from ``$name`` (``0``/``none``: no limit); ``default`` when unset."""
    raw = os.environ.get(name, "").strip().lower()
    if not raw:
        return default
    if raw in {"0", "none", "inf"}:
        return None
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"${name} must be a number of seconds, got {raw!r}") from None
    if value <= 0:
        return None
    return value


def env_float(name: str, default: float) -> float:
    """A non-negative number from ``$name`` (``0`` means zero here, not "no limit"); ``default`` when unset."""
    raw = os.environ.get(name, "").strip().lower()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"${name} must be a number of seconds, got {raw!r}") from None
    if value < 0 or value != value:
        raise ValueError(f"${name} must be 0 or more seconds, got {raw!r}")
    return value


def env_count(name: str, default: int | None) -> int | None:
    """A non-negative integer from ``$name`` (``none``: no limit); ``default`` when unset."""
    raw = os.environ.get(name, "").strip().lower().replace("_", "").replace(",", "")
    if not raw:
        return default
    if raw in {"none", "inf"}:
        return None
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"${name} must be a whole number, got {raw!r}") from None
    if value < 0:
        raise ValueError(f"${name} must be 0 or more, got {value}")
    return value


def env_choice(name: str, choices: tuple[str, ...], default: str) -> str:
    raw = os.environ.get(name, "").strip().lower() or default
    if raw not in choices:
        raise ValueError(f"${name} must be one of {', '.join(choices)}, got {raw!r}")
    return raw


def identity() -> dict[str, Any]:
    """What LLM results depend on besides their inputs, from the environment: the endpoint
    (:func:`safe_url`, never a secret), the model and offline mode. A build keys its LLM steps on it.
    The mode (live or batch) is not part of it: both fill the same cache with the same answers."""
    client_url = os.environ.get(BASE_URL_ENV) or (OPENAI_API_URL if os.environ.get(API_KEY_ENV) else None)
    return {"endpoint": safe_url(client_url), "model": os.environ.get(MODEL_ENV) or DEFAULT_MODEL,
            "offline": env_flag(OFFLINE_ENV)}


def clip_text(text: Any, n: int, *, collapse: bool = False) -> str:
    """``text`` cut to at most ``n`` characters, ending in "…" when cut. Surrounding whitespace is stripped;
    with ``collapse`` every run of whitespace (newlines included) becomes one space."""
    s = " ".join(str(text).split()) if collapse else str(text).strip()
    return s if len(s) <= n else s[: n - 1] + "…"


def safe_url(url: str | None) -> str:
    """``scheme://host[:port]/path`` of ``url``: user name, password, query and fragment dropped (a key can be
    embedded in any of them), so the result can be printed."""
    if not url:
        return ""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    return f"{parts.scheme}://{host}{f':{port}' if port else ''}{parts.path}".rstrip("/")
