"""Optional web-scraping step: fetch pages, keep their main text (trafilatura), politely and resumably.

Used to fill the ``S{i}_content`` fields of answer records (answer-engine analyses) and the documents of
nugget evaluation. Nothing in the offline build calls it: it needs the network and is run by hand.

- **Politeness.** A clear User-Agent (:data:`USER_AGENT`); robots.txt is honoured per host
  (``urllib.robotparser``; a missing robots.txt allows everything, 401/403 forbid everything, as the parser's
  own convention); at most one request per host every ``rate_limit_s`` seconds (robots.txt fetches included).
- **Outcome per URL** (``status``): ``ok`` (main text extracted), ``robots_disallowed``, ``http_error`` (status
  in ``http_status``), ``timeout``, ``empty`` (an HTML page with no extractable main text), ``not_html``
  (another content type) or ``error`` (anything else, its exception class and message in ``error``).
- **Cache.** One JSON file per URL under ``cache_dir`` (named by the sha256 of the URL), written as soon as the
  URL is done, so an interrupted run resumes. Transient outcomes (``timeout``, ``error``, HTTP 429 and 5xx) are
  not cached and are tried again on the next run.
"""

from __future__ import annotations

import hashlib
import json
import re
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
import urllib.robotparser
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import polars as pl
from tqdm import tqdm

from analysis_lib.extras import require

USER_AGENT = "analysis-lib-compendium/0.1 (research reproduction of answer-engine evaluations; polite scraper)"
STATUSES = ("ok", "robots_disallowed", "http_error", "timeout", "empty", "not_html", "error")
MAX_BYTES = 5_000_000
SCHEMA = {"url": pl.String, "status": pl.String, "http_status": pl.Int64, "text": pl.String, "n_bytes": pl.Int64,
          "error": pl.String}
_LOOPBACK = re.compile(r"^(127\.\d+\.\d+\.\d+|localhost|::1)$")


def extract_text(html: str, url: str | None = None) -> str:
    """The main text of an HTML page (boilerplate such as navigation, footers and comments removed) with
    trafilatura; ``""`` when nothing is extracted."""
    if not html or not html.strip():
        return ""
    trafilatura = require("trafilatura", "scrape", purpose="main-text extraction")
    text = trafilatura.extract(html, url=url, include_comments=False, include_tables=True, favor_recall=True)
    return (text or "").strip()


class HostThrottle:
    """At most one request per host every ``interval`` seconds (``clock`` / ``sleep`` injectable for tests)."""

    def __init__(self, interval: float, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep):
        self.interval = float(interval)
        self.clock, self.sleep = clock, sleep
        self.last: dict[str, float] = {}

    def wait(self, host: str) -> None:
        now = self.clock()
        due = self.last.get(host, -float("inf")) + self.interval
        if due > now:
            self.sleep(due - now)
            now = due
        self.last[host] = now


def _opener(host: str) -> urllib.request.OpenerDirector:
    # loopback hosts bypass any proxy configured in the environment
    if _LOOPBACK.match(host):
        return urllib.request.build_opener(urllib.request.ProxyHandler({}))
    return urllib.request.build_opener()


def _is_timeout(err: BaseException) -> bool:
    reason = getattr(err, "reason", err)
    return isinstance(reason, (socket.timeout, TimeoutError)) or "timed out" in str(reason)


class _Scraper:
    def __init__(self, cache_dir: Path, rate_limit_s: float, timeout_s: float, respect_robots: bool):
        self.cache_dir = cache_dir
        self.timeout = timeout_s
        self.respect_robots = respect_robots
        self.throttle = HostThrottle(rate_limit_s)
        self.robots: dict[str, urllib.robotparser.RobotFileParser | str] = {}

    def cache_path(self, url: str) -> Path:
        return self.cache_dir / f"{hashlib.sha256(url.encode('utf-8')).hexdigest()}.json"

    def _get(self, url: str, host: str) -> tuple[int, str, bytes]:
        self.throttle.wait(host)
        req = urllib.request.Request(url, headers={"User-Agent": USER_AGENT,
                                                   "Accept": "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5"})
        with _opener(host).open(req, timeout=self.timeout) as resp:
            return resp.status, resp.headers.get("Content-Type", ""), resp.read(MAX_BYTES + 1)

    def _robots(self, scheme: str, host: str) -> urllib.robotparser.RobotFileParser | str:
        """The host's parsed robots.txt, or an error string when it could not be read (the URL is then not
        fetched: an unreachable host or a 5xx robots.txt is treated as a transient failure)."""
        key = f"{scheme}://{host}"
        if key not in self.robots:
            parser = urllib.robotparser.RobotFileParser(f"{key}/robots.txt")
            try:
                _, _, body = self._get(f"{key}/robots.txt", host)
                parser.parse(body.decode("utf-8", errors="replace").splitlines())
            except urllib.error.HTTPError as err:
                if err.code in (401, 403):
                    parser.disallow_all = True  # type: ignore[attr-defined]  # set by RobotFileParser.__init__
                elif 400 <= err.code < 500:
                    parser.allow_all = True  # type: ignore[attr-defined]
                else:
                    self.robots[key] = f"robots.txt: HTTP {err.code}"
                    return self.robots[key]
            except (urllib.error.URLError, OSError) as err:
                self.robots[key] = f"robots.txt unreachable: {type(err).__name__}"
                return self.robots[key]
            self.robots[key] = parser
        return self.robots[key]

    def fetch(self, url: str) -> dict[str, Any]:
        out: dict[str, Any] = {"url": url, "status": "error", "http_status": None, "text": None, "n_bytes": None,
                               "error": None}
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            return {**out, "error": "not an http(s) URL"}
        host = parts.netloc
        if self.respect_robots:
            robots = self._robots(parts.scheme, host)
            if isinstance(robots, str):
                return {**out, "error": robots}
            if not robots.can_fetch(USER_AGENT, url):
                return {**out, "status": "robots_disallowed"}
        try:
            code, ctype, body = self._get(url, host)
        except urllib.error.HTTPError as err:
            return {**out, "status": "http_error", "http_status": err.code, "error": f"HTTP {err.code}"}
        except (urllib.error.URLError, OSError) as err:
            if _is_timeout(err):
                return {**out, "status": "timeout", "error": f"no answer within {self.timeout:g} s"}
            return {**out, "error": f"{type(err).__name__}: {getattr(err, 'reason', err)}"}
        out.update(http_status=code, n_bytes=len(body))
        if "html" not in ctype.lower():
            return {**out, "status": "not_html", "error": f"content type {ctype or 'missing'}"}
        charset = re.search(r"charset=([\w-]+)", ctype)
        try:
            html = body[:MAX_BYTES].decode(charset.group(1) if charset else "utf-8", errors="replace")
        except LookupError:
            html = body[:MAX_BYTES].decode("utf-8", errors="replace")
        text = extract_text(html, url)
        return {**out, "status": "ok" if text else "empty", "text": text or None}

    @staticmethod
    def transient(row: dict[str, Any]) -> bool:
        return row["status"] in ("timeout", "error") or (
            row["status"] == "http_error" and (row["http_status"] == 429 or (row["http_status"] or 0) >= 500))


def scrape_urls(urls: Iterable[str], cache_dir: str | Path, *, rate_limit_s: float = 1.0, timeout_s: float = 20.0,
                respect_robots: bool = True, progress: bool = True) -> pl.DataFrame:
    """Fetch each URL's main text; one row per input URL, in input order (a repeated URL is fetched once).

    Columns ``url, status, http_status, text, n_bytes, error`` (see the module docstring for the statuses).
    Results are read from and written to ``cache_dir`` one URL at a time, so a rerun only fetches what is missing
    or failed transiently.
    """
    urls = [str(u).strip() for u in urls]
    cache_dir = Path(cache_dir)
    cache_dir.mkdir(parents=True, exist_ok=True)
    scraper = _Scraper(cache_dir, rate_limit_s, timeout_s, respect_robots)
    results: dict[str, dict[str, Any]] = {}
    todo = []
    for url in dict.fromkeys(urls):
        path = scraper.cache_path(url)
        if path.exists():
            try:
                results[url] = json.loads(path.read_text(encoding="utf-8"))
                continue
            except (OSError, json.JSONDecodeError):
                pass  # unreadable cache entry: fetch again
        todo.append(url)
    for url in tqdm(todo, desc="scraping", disable=not progress or not todo, leave=False):
        row = scraper.fetch(url)
        results[url] = row
        if not scraper.transient(row):
            tmp = scraper.cache_path(url).with_suffix(".tmp")
            tmp.write_text(json.dumps(row, ensure_ascii=False), encoding="utf-8")
            tmp.replace(scraper.cache_path(url))
    return pl.DataFrame([results[u] for u in urls], schema=SCHEMA)
