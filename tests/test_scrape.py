"""The scraping step against HTML served from a loopback http.server: robots.txt, HTTP errors, timeouts,
non-HTML content, main-text extraction, the cache and the per-host throttle."""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest

from analysis_lib import scrape

ARTICLE = """<html><head><title>Why zoos exist</title></head><body>
<nav><a href="/">Home</a> | <a href="/about">About us</a> | Subscribe to our newsletter</nav>
<article><h1>Why zoos exist</h1>
<p>Modern zoos run breeding programmes for endangered species such as the Amur leopard, whose wild population
fell below fifty animals before coordinated captive breeding began in European and American institutions.</p>
<p>Zoos also fund field conservation: a share of every ticket goes to habitat protection projects, and keepers
train local rangers in veterinary care for the animals that remain in the wild.</p>
<p>Critics answer that enclosures cannot reproduce the ranges of large carnivores, and that many species kept in
zoos are not threatened at all, which weakens the conservation argument.</p>
</article>
<footer>Copyright 2024 Example Media. All rights reserved. Cookie settings.</footer>
</body></html>"""


class _Handler(BaseHTTPRequestHandler):
    requests: ClassVar[list[str]] = []

    def log_message(self, *args):  # quiet
        pass

    def _send(self, code: int, body: bytes, ctype: str = "text/html; charset=utf-8") -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        type(self).requests.append(self.path)
        ua = self.headers.get("User-Agent", "")
        if self.path == "/robots.txt":
            self._send(200, b"User-agent: *\nDisallow: /private\n", "text/plain")
        elif self.path == "/article.html":
            self._send(200, ARTICLE.encode() if ua == scrape.USER_AGENT else b"<html>wrong agent</html>")
        elif self.path == "/private/page.html":
            self._send(200, ARTICLE.encode())
        elif self.path == "/data.json":
            self._send(200, b'{"a": 1}', "application/json")
        elif self.path == "/blank.html":
            self._send(200, b"<html><head><title>t</title></head><body><script>var a = 1;</script></body></html>")
        elif self.path == "/slow.html":
            time.sleep(1.5)
            self._send(200, ARTICLE.encode())
        elif self.path == "/flaky.html":
            self._send(503, b"busy")
        else:
            self._send(404, b"<html>not found</html>")


@pytest.fixture
def site():
    _Handler.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_statuses_and_extraction(site, tmp_path):
    urls = [f"{site}/{p}" for p in ("article.html", "private/page.html", "missing.html", "data.json", "blank.html",
                                    "slow.html", "article.html")]
    df = scrape.scrape_urls(urls, tmp_path, rate_limit_s=0.0, timeout_s=0.5, progress=False)
    assert df.columns == ["url", "status", "http_status", "text", "n_bytes", "error"]
    assert df["status"].to_list() == ["ok", "robots_disallowed", "http_error", "not_html", "empty", "timeout", "ok"]
    assert df["http_status"][2] == 404
    text = df["text"][0]
    assert "Amur leopard" in text and "Critics answer" in text
    assert "Subscribe to our newsletter" not in text and "Cookie settings" not in text
    assert df["n_bytes"][0] == len(ARTICLE.encode())
    # the disallowed page was never requested; the repeated URL was fetched once
    assert "/private/page.html" not in _Handler.requests
    assert _Handler.requests.count("/article.html") == 1 and _Handler.requests.count("/robots.txt") == 1


def test_cache_resumes_and_retries_only_transient_failures(site, tmp_path):
    urls = [f"{site}/article.html", f"{site}/flaky.html", f"{site}/missing.html"]
    first = scrape.scrape_urls(urls, tmp_path, rate_limit_s=0.0, progress=False)
    assert first["status"].to_list() == ["ok", "http_error", "http_error"]
    _Handler.requests = []
    second = scrape.scrape_urls(urls, tmp_path, rate_limit_s=0.0, progress=False)
    assert second.equals(first)
    # only the 503 page is asked again (plus robots.txt for the new run); the 404 and the article come from cache
    assert sorted(_Handler.requests) == ["/flaky.html", "/robots.txt"]


def test_robots_can_be_ignored_when_asked(site, tmp_path):
    df = scrape.scrape_urls([f"{site}/private/page.html"], tmp_path, rate_limit_s=0.0, respect_robots=False,
                            progress=False)
    assert df["status"].to_list() == ["ok"] and "/robots.txt" not in _Handler.requests


def test_bad_url_is_an_error_row(tmp_path):
    df = scrape.scrape_urls(["ftp://example.org/x", "not a url"], tmp_path, progress=False)
    assert df["status"].to_list() == ["error", "error"] and df["error"][0] == "not an http(s) URL"


def test_host_throttle_spaces_requests_per_host():
    now = [0.0]
    slept: list[float] = []

    def sleep(s: float) -> None:
        slept.append(s)
        now[0] += s

    t = scrape.HostThrottle(2.0, clock=lambda: now[0], sleep=sleep)
    t.wait("a")
    t.wait("b")  # another host: no wait
    now[0] += 0.5
    t.wait("a")  # 1.5 s still to wait for host a
    assert slept == [pytest.approx(1.5)]
    now[0] += 5
    t.wait("a")
    assert len(slept) == 1


def test_extract_text_of_empty_input():
    assert scrape.extract_text("") == "" and scrape.extract_text("<html></html>") == ""
