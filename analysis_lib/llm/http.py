"""The HTTP side of the LLM layer: an ``openai.OpenAI`` client that cannot leak the key, with deadlines and a
reply-size cap.

:func:`make_openai_client` builds the ``openai`` client every request goes through (chat completions, and the
Files and Batches calls of :mod:`analysis_lib.llm.batch`). ``openai`` brings typed errors and a custom
``base_url``; this module adds what it does not give, through ``openai``'s public interface only (a custom
``http_client`` and per-call ``extra_headers``; no private method is called or overridden):

- **Retries** (:func:`with_retries`, :class:`RetryPolicy`): the ``openai`` client is built with
  ``max_retries=0`` and every call is wrapped in one small loop that retries what ``openai`` would retry
  (HTTP 408/409/429/5xx, honouring ``x-should-retry``; timeouts; dropped connections) with exponential backoff
  and jitter, waits at least the server's ``Retry-After`` (seconds, HTTP date or ``retry-after-ms``) up to
  ``backoff_max``, and never sleeps past the thread's deadline, which ``openai``'s own retries cannot know of;

- **No redirect carries the key.** The ``httpx2`` client underneath never follows redirects, and its transport
  refuses to send any request whose origin (scheme, host, port) differs from the endpoint's. The key is never
  stored on any object: it is read from ``$OPENAI_API_KEY`` for each request and passed as that request's
  ``Authorization`` header (see :func:`auth_headers`).
- **Deadlines.** ``httpx`` timeouts are per network operation, so a server that drips one byte a second never
  times out. :func:`limits` sets a wall-clock deadline for everything done in a block on the current thread
  (all attempts, all backoff sleeps); the transport shortens each operation's timeout to the time left and
  checks the clock between body chunks, raising :class:`DeadlineExceeded` (not retried) when it has passed.
- **A reply-size cap.** The same block sets the largest body read (``max_bytes``): a declared
  ``Content-Length`` above it is refused before reading, and a body that streams past it is cut off there,
  raising :class:`ReplyTooLarge` (not retried), so an endless reply costs at most ``max_bytes`` of memory.
- **Counting attempts.** Every request that reaches the transport is counted per thread (:func:`attempts`), so
  every retry shows up in the project's statistics.
- **A warning** for an endpoint that is neither TLS (``https``) nor loopback: the key would travel in clear.
- **Redacted errors.** :func:`describe_error` turns any failure into its kind only (status and standard phrase,
  exception class), never the server's message, which may quote the request.

``openai`` (the ``[llm]`` extra) and its ``httpx2`` are imported on first use (:func:`sdk`), so this module, and
with it ``import analysis_lib.llm``, works without them.
"""

from __future__ import annotations

import email.utils
import functools
import http
import json
import logging
import math
import random
import re
import threading
import time
import urllib.parse
import urllib.request
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from analysis_lib.extras import require

log = logging.getLogger(__name__)

_LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "::1"}
_IDENTIFIER = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,39}$")
_state = threading.local()


class DeadlineExceeded(Exception):
    """The wall-clock deadline of a request (all attempts included) or of a run passed."""


class CrossOriginRequest(Exception):
    """A request (e.g. a followed redirect) to an origin other than the configured endpoint's: refused."""


class ReplyTooLarge(Exception):
    """A reply body larger than the cap of the current :func:`limits` block: cut off, never read whole."""


class UnreadableBody(Exception):
    """HTTP 200 whose body is not JSON (cut or garbled): worth asking again, after a backoff."""


# ------------------------------------------------------------------------------------------ origins


def origin(url: Any) -> tuple[str, str, int | None]:
    """``(scheme, host, port)`` with the default port filled in: two URLs may share a key only when equal."""
    parts = urllib.parse.urlsplit(str(url))
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    port = port or {"http": 80, "https": 443}.get(scheme)
    return scheme, (parts.hostname or "").lower(), port


def is_loopback(url: str) -> bool:
    return origin(url)[1] in _LOOPBACK_HOSTS


def check_endpoint(url: str) -> None:
    """Warn when ``url`` is plain ``http`` to a host other than loopback: the key would cross the network in clear."""
    scheme, host, _ = origin(url)
    if scheme != "https" and host not in _LOOPBACK_HOSTS:
        msg = (f"LLM endpoint {scheme}://{host} is not TLS (https) and not loopback: the API key and the prompts "
               "travel unencrypted")
        warnings.warn(msg, stacklevel=3)
        log.warning(msg)


# ---------------------------------------------------------------------------------- deadlines, caps


@contextmanager
def limits(seconds: float | None, *, until: float | None = None, max_bytes: int | None = None) -> Iterator[None]:
    """Everything sent from this thread inside the block must finish within ``seconds`` (and by the monotonic
    time ``until``, when given): the earlier of the two wins; ``None`` for neither means no deadline. No reply
    body may exceed ``max_bytes`` (``None``: no cap). Also resets the thread's attempt counter."""
    ends = [t for t in (None if seconds is None else time.monotonic() + seconds, until) if t is not None]
    previous = getattr(_state, "deadline", None), getattr(_state, "max_bytes", None)
    _state.deadline = min(ends) if ends else None
    _state.max_bytes = max_bytes
    _state.attempts = 0
    try:
        yield
    finally:
        _state.deadline, _state.max_bytes = previous


#: the former name of :func:`limits` (deadline only)
deadline = limits


def remaining() -> float | None:
    """Seconds left before this thread's deadline (``None``: no deadline)."""
    end = getattr(_state, "deadline", None)
    return None if end is None else end - time.monotonic()


def attempts() -> int:
    """Requests this thread sent since its :func:`limits` block began (first tries and retries)."""
    return int(getattr(_state, "attempts", 0))


def backoff_delay(n: int, base: float, cap: float) -> float:
    """Seconds to wait before retry ``n`` (0-based): ``min(cap, base * 2**n)`` times a jitter in [0.5, 1), and
    never past the thread's deadline."""
    delay = min(cap, base * 2.0 ** min(n, 60)) * (0.5 + random.random() / 2)
    left = remaining()
    return delay if left is None else max(0.0, min(delay, left))


@functools.cache
def sdk() -> SimpleNamespace:
    """``openai`` and ``httpx2`` with the classes this module builds on them (imported on first use)."""
    openai: Any = require("openai", "llm", purpose="requests to an LLM endpoint")
    httpx2: Any = require("httpx2", "llm", purpose="requests to an LLM endpoint")

    # the layer's errors, as openai errors too: openai propagates those unretried and unwrapped
    errors = {cls: type(cls.__name__, (cls, openai.OpenAIError), {"__module__": __name__})
              for cls in (DeadlineExceeded, CrossOriginRequest, ReplyTooLarge)}

    class GuardedStream(httpx2.SyncByteStream):
        """A body read chunk by chunk: the deadline is checked between chunks and the bytes are counted."""

        def __init__(self, inner: Any, end: float | None, max_bytes: int | None):
            self.inner, self.end, self.max_bytes, self.read = inner, end, max_bytes, 0

        def __iter__(self) -> Iterator[bytes]:
            for chunk in self.inner:
                if self.end is not None and time.monotonic() > self.end:
                    raise errors[DeadlineExceeded]("deadline passed while reading the reply")
                self.read += len(chunk)
                if self.max_bytes is not None and self.read > self.max_bytes:
                    raise errors[ReplyTooLarge](f"reply larger than the {self.max_bytes:,}-byte cap")
                yield chunk

        def close(self) -> None:
            self.inner.close()

    class GuardedTransport(httpx2.BaseTransport):
        """Sends only to ``endpoint``'s origin, counts attempts, enforces the thread's deadline and size cap."""

        def __init__(self, endpoint: str, inner: Any):
            self.origin = origin(endpoint)
            self.inner = inner

        def handle_request(self, request: Any) -> Any:
            if origin(request.url) != self.origin:
                raise errors[CrossOriginRequest]("refused a request to another origin than the configured endpoint")
            _state.attempts = attempts() + 1
            left = remaining()
            if left is not None:
                if left <= 0:
                    raise errors[DeadlineExceeded]("deadline passed before the request was sent")
                timeouts = dict(request.extensions.get("timeout") or {})
                request.extensions["timeout"] = {
                    k: left if timeouts.get(k) is None else min(float(timeouts[k]), left)
                    for k in ("connect", "read", "write", "pool")
                }
            response = self.inner.handle_request(request)
            cap = getattr(_state, "max_bytes", None)
            declared = response.headers.get("content-length", "")
            if cap is not None and declared.isdigit() and int(declared) > cap:
                response.close()
                raise errors[ReplyTooLarge](f"reply declares {int(declared):,} bytes, over the {cap:,}-byte cap")
            response.stream = GuardedStream(response.stream, getattr(_state, "deadline", None), cap)
            return response

        def close(self) -> None:
            self.inner.close()

    return SimpleNamespace(openai=openai, httpx2=httpx2, errors=errors, GuardedTransport=GuardedTransport)


def _proxy_for(url: str) -> str | None:
    """The environment's proxy for ``url`` (``HTTPS_PROXY`` ..., honouring ``NO_PROXY``); none for loopback."""
    if is_loopback(url):
        return None
    host = urllib.parse.urlsplit(url).hostname or ""
    if urllib.request.proxy_bypass(host):
        return None
    return urllib.request.getproxies().get(urllib.parse.urlsplit(url).scheme)


def make_openai_client(base_url: str, *, timeout: float) -> Any:
    """An ``openai.OpenAI`` for ``base_url``: no redirects, same-origin only, deadline- and size-aware (module doc).

    ``timeout`` bounds each network operation of one attempt. The client itself never retries
    (``max_retries=0``): every call goes through :func:`with_retries`, which retries within the thread's deadline.
    No key is given to it: pass :func:`auth_headers` with each request."""
    check_endpoint(base_url)
    s = sdk()
    inner = s.httpx2.HTTPTransport(proxy=_proxy_for(base_url))
    http_client = s.httpx2.Client(transport=s.GuardedTransport(base_url, inner), follow_redirects=False,
                                  trust_env=False, timeout=s.httpx2.Timeout(timeout))
    return s.openai.OpenAI(base_url=base_url, api_key=lambda: "", max_retries=0,
                           timeout=s.httpx2.Timeout(timeout), http_client=http_client)


# ------------------------------------------------------------------------------------------- retries

#: HTTP statuses worth asking again (as ``openai`` retries them): request timeout, conflict, rate limit
RETRY_STATUSES = frozenset({408, 409, 429})


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to wait before asking again: at most ``max_retries`` retries, the ``n``-th
    (0-based) after ``min(backoff_max, backoff_base * 2**n)`` seconds times a jitter in [0.5, 1) or after the
    server's ``Retry-After`` when that is longer, never more than ``backoff_max``, never past the thread's
    deadline (:func:`limits`)."""

    max_retries: int = 6
    backoff_base: float = 1.0
    backoff_max: float = 30.0


def retryable(err: BaseException) -> bool:
    """Whether a failed call is worth asking again: HTTP 408/409/429 and 5xx (unless the server's
    ``x-should-retry`` header says otherwise), timeouts and dropped connections. The layer's own refusals
    (deadline, other origin, reply over the cap) and other statuses (400, 401, 404) are not."""
    if isinstance(err, DeadlineExceeded | CrossOriginRequest | ReplyTooLarge):
        return False
    openai = sdk().openai
    if isinstance(err, openai.APIStatusError):
        told = str(err.response.headers.get("x-should-retry", "")).lower()
        if told in ("true", "false"):
            return told == "true"
        return err.status_code in RETRY_STATUSES or err.status_code >= 500
    return isinstance(err, openai.APIConnectionError)  # APITimeoutError included


def retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds a server asks to wait: ``retry-after-ms``, else ``Retry-After`` as seconds or as an HTTP date;
    ``None`` when absent or unreadable."""
    if not headers:
        return None
    raw_ms = headers.get("retry-after-ms")
    try:
        if raw_ms is not None:
            return float(raw_ms) / 1000
    except ValueError:
        pass
    raw = headers.get("retry-after")
    if raw is None:
        return None
    try:
        value = float(raw)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(raw)
        except (TypeError, ValueError):
            return None
        return when.timestamp() - time.time()
    return value if math.isfinite(value) else None


def retry_delay(n: int, policy: RetryPolicy, headers: Mapping[str, str] | None = None) -> float:
    """Seconds before retry ``n`` under ``policy`` (see :class:`RetryPolicy`)."""
    delay = backoff_delay(n, policy.backoff_base, policy.backoff_max)
    asked = retry_after(headers)
    if asked is not None and asked > 0:
        delay = min(policy.backoff_max, max(delay, asked))
    left = remaining()
    return delay if left is None else max(0.0, min(delay, left))


def with_retries(policy: RetryPolicy, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)``, asked again after :func:`retry_delay` while the failure is :func:`retryable`, at
    most ``policy.max_retries`` times. The last failure is raised as it came."""
    for n in range(policy.max_retries + 1):
        try:
            return fn(*args, **kwargs)
        except Exception as err:
            if n == policy.max_retries or not retryable(err):
                raise
            headers = err.response.headers if isinstance(err, sdk().openai.APIStatusError) else None
            delay = retry_delay(n, policy, headers)
            log.info("retrying in %.2f s (retry %d of %d): %s", delay, n + 1, policy.max_retries,
                     describe_error(err))
            time.sleep(delay)
    raise AssertionError("unreachable")  # the loop returns or raises


def auth_headers(key: str | None) -> dict[str, Any]:
    """The ``Authorization`` header for one request: the bearer key, or explicitly none."""
    return {"Authorization": f"Bearer {key}" if key else sdk().openai.omit}


def post_json(client: Any, path: str, payload: Mapping[str, Any], key: str | None,
              policy: RetryPolicy | None = None) -> Any:
    """POST ``payload`` to ``<base_url>/<path>`` and decode the JSON reply (``UnreadableBody`` when it is not),
    with the retries of ``policy`` (none when ``None``).

    Raises ``openai`` errors (status, timeout, connection), :class:`DeadlineExceeded`, :class:`CrossOriginRequest`,
    :class:`ReplyTooLarge`.
    """
    response = with_retries(policy or RetryPolicy(max_retries=0), client.post, f"/{path.lstrip('/')}",
                            cast_to=sdk().httpx2.Response, body=dict(payload), options={"headers": auth_headers(key)})
    try:
        return json.loads(response.content)
    except (ValueError, UnicodeDecodeError) as err:
        raise UnreadableBody(f"unreadable response body ({type(err).__name__})") from None


# -------------------------------------------------------------------------------------------- errors


def http_reason(status: int, body: bytes, secret: str | None = None) -> str:
    """``HTTP <status> <standard phrase>`` plus the API's error ``code`` / ``type`` when it is a bare identifier
    (``context_length_exceeded``) other than ``secret``; the server's message is never included (it may quote
    the request)."""
    try:
        phrase = http.HTTPStatus(status).phrase
    except ValueError:
        phrase = ""
    out = f"HTTP {status}" + (f" {phrase}" if phrase else "")
    try:
        err = json.loads(body).get("error")
    except (ValueError, AttributeError, UnicodeDecodeError, TypeError):
        err = None
    if isinstance(err, dict):
        code = error_code(err, secret)
        if code:
            out += f" ({code})"
    if 300 <= status < 400:
        out += " (redirect not followed)"
    return out


def error_code(err: Mapping[str, Any], secret: str | None = None) -> str | None:
    """The ``code`` (else ``type``) of an API error object when it is a bare identifier other than ``secret``."""
    return next((str(err[k]) for k in ("code", "type")
                 if isinstance(err.get(k), str | int) and _IDENTIFIER.match(str(err[k]))
                 and not (secret and secret in str(err[k]))), None)


def describe_error(err: BaseException, secret: str | None = None) -> str:
    """A failure as its kind only (see module doc)."""
    if isinstance(err, DeadlineExceeded):
        return "deadline exceeded"
    if isinstance(err, CrossOriginRequest):
        return "refused a request to another origin"
    if isinstance(err, ReplyTooLarge | UnreadableBody):
        return str(err)
    openai = sdk().openai
    if isinstance(err, openai.APIStatusError):
        try:
            body = err.response.content[:4096]
        except Exception:  # noqa: BLE001 - a body that cannot be read adds nothing
            body = b""
        return http_reason(err.status_code, body, secret)
    if isinstance(err, openai.APITimeoutError):
        return "timeout"
    if isinstance(err, openai.APIConnectionError):
        cause = err.__cause__ or err
        return f"connection error ({type(cause).__name__})"
    return type(err).__name__


class _QuietOpenAILogs(logging.Filter):
    """``openai`` logs request options (prompts included) at DEBUG: benchmark items must never reach a log."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno > logging.DEBUG


for _name in ("openai", "openai._base_client", "openai._legacy_response", "openai._response", "httpx2", "httpcore2"):
    logging.getLogger(_name).addFilter(_QuietOpenAILogs())
