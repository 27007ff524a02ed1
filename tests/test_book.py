"""A small book build, opened in headless Chromium: pages load, figures are real images, links resolve, and no
secret from the environment leaks into the book.

The build runs ``python -m bookbuild`` in a temporary root (the repository's ``_config.yml``, intro and
library pages) on ``--data sample:2000``: the real ``01_dataset`` chapter when ``notebooks/01_dataset.ipynb``
exists, else the fixture chapter ``tests/fixtures/book/01_figures.ipynb``; the reproduction-status page always.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
import time
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from analysis_lib import status

pytestmark = pytest.mark.book

REPO = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
FAKE_KEY = "sk-test-" + secrets.token_hex(16)


class Book:
    def __init__(self, root: Path, chapter: str, seconds: float, stdout: str):
        self.root = root
        self.chapter = chapter
        self.seconds = seconds
        self.stdout = stdout
        self.html = root / "book" / "_build" / "html"

    def page(self, name: str) -> Path:
        return self.html / "book" / "chapters" / f"{name}.html"


@pytest.fixture(scope="module")
def book(tmp_path_factory) -> Book:
    root = tmp_path_factory.mktemp("bookroot")
    (root / "book").mkdir()
    shutil.copy(REPO / "_config.yml", root / "_config.yml")
    for page in ("intro.md", "library.md"):
        if (REPO / "book" / page).exists():
            shutil.copy(REPO / "book" / page, root / "book" / page)
    if (REPO / "notebooks" / "01_dataset.ipynb").exists():
        chapter, notebooks = "01_dataset", REPO / "notebooks"
        only = ["--only", "01_dataset,99_reproduction_status"]
    else:
        chapter, notebooks = "01_figures", root / "notebooks"
        notebooks.mkdir()
        shutil.copy(FIXTURES / "book" / "01_figures.ipynb", notebooks)
        shutil.copy(REPO / "notebooks" / "99_reproduction_status.ipynb", notebooks)
        only = []
    env = dict(os.environ, OPENAI_API_KEY=FAKE_KEY, ANTHROPIC_API_KEY=FAKE_KEY, HF_TOKEN=FAKE_KEY)
    cmd = [
        sys.executable, "-m", "bookbuild",
        "--root", str(root), "--notebooks-dir", str(notebooks), "--data", "sample:2000",
        "--cache-dir", str(REPO / ".cache"), *only,
    ]  # fmt: skip
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
    seconds = time.perf_counter() - t0
    assert proc.returncode == 0, f"build failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
    print(f"\nbook build ({chapter} + status page, sample:2000): {seconds:.1f} s")
    return Book(root, chapter, seconds, proc.stdout)


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.skip("chromium not installed (scripts/ensure_chromium.sh installs Debian's package)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


def test_build_reports_the_html(book):
    index = book.html / "index.html"
    assert index.exists()
    assert f"HTML: {index}" in book.stdout
    toc = (book.root / "book" / "_build" / "_toc.yml").read_text()
    assert toc.index("99_reproduction_status") < toc.index(book.chapter)
    assert not list((REPO / "notebooks").glob("*_executed*"))


#: JavaScript errors of the theme itself, not of our pages (sphinx-thebe declares its URL constant twice).
KNOWN_THEME_ERRORS = ("THEBE_JS_URL",)


def _open(browser, path: Path):
    page = browser.new_page()
    errors: list[str] = []
    page.on(
        "pageerror",
        lambda exc: None if any(k in str(exc) for k in KNOWN_THEME_ERRORS) else errors.append(str(exc)),
    )
    page.goto(path.as_uri(), wait_until="load")
    return page, errors


def test_chapter_page_loads_with_real_figures(book, browser):
    path = book.page(book.chapter)
    assert path.exists()
    page, errors = _open(browser, path)
    try:
        assert page.locator("main h1").first.inner_text().strip()
        widths = page.eval_on_selector_all(
            "main img", "imgs => imgs.map(i => [i.getAttribute('src'), i.complete, i.naturalWidth])"
        )
        assert widths, "no figure on the chapter page"
        broken = [src for src, complete, w in widths if not complete or w == 0]
        assert broken == [], f"images that did not load: {broken}"
        # the data banner is rendered as an admonition, not as literal MyST
        assert page.locator("main .admonition").count() >= 1
        assert ":::{" not in page.locator("main").inner_text()
        assert errors == []
    finally:
        page.close()


def test_status_page_lists_every_analysis(book, browser):
    page, errors = _open(browser, book.page("99_reproduction_status"))
    try:
        assert "Reproduction status" in page.locator("main h1").first.inner_text()
        rows = page.locator("table.repro-status tbody tr[id^='status-']")
        assert rows.count() >= status.catalogue().height
        text = page.locator("main").inner_text()
        assert ":::{" not in text
        assert "Simulated data" in text  # the build ran on sample:2000
        assert errors == []
    finally:
        page.close()


def test_navigation_order(book, browser):
    page, _ = _open(browser, book.html / "book" / "intro.html")
    try:
        links = page.eval_on_selector_all(
            "nav.bd-docs-nav a.reference.internal", "as => as.map(a => a.getAttribute('href'))"
        )
    finally:
        page.close()
    names = [Path(urlsplit(h).path).stem for h in links]
    assert names.index("99_reproduction_status") < names.index(book.chapter)
    if "library" in names:
        assert names.index(book.chapter) < names.index("library")


class _Collector(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids: set[str] = set()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for key in ("id", "name"):
            if a.get(key):
                self.ids.add(a[key])
        if tag == "a" and a.get("href") is not None:
            self.hrefs.append(a["href"])


def test_no_broken_links_inside_the_book(book):
    pages: dict[Path, _Collector] = {}
    for path in book.html.rglob("*.html"):
        c = _Collector()
        c.feed(path.read_text(encoding="utf-8", errors="replace"))
        pages[path.resolve()] = c
    assert len(pages) >= 4
    broken = []
    checked = 0
    for path, c in pages.items():
        for href in c.hrefs:
            parts = urlsplit(href)
            if parts.scheme and parts.scheme != "file" or parts.netloc or href.startswith(("mailto:", "javascript:")):
                continue
            target = path if not parts.path else (path.parent / unquote(parts.path)).resolve()
            if parts.scheme == "file":
                target = Path(unquote(parts.path))
            if target.is_dir():
                target = target / "index.html"
            checked += 1
            if not target.exists():
                broken.append(f"{path.relative_to(book.html)}: {href} (no file)")
                continue
            anchor = unquote(parts.fragment)
            if anchor and target.suffix == ".html":
                ids = pages[target.resolve()].ids if target.resolve() in pages else set()
                if anchor not in ids:
                    broken.append(f"{path.relative_to(book.html)}: {href} (no #{anchor})")
    assert checked > 20
    assert broken == []


def test_no_secret_in_the_book(book):
    leaks = []
    for folder in (book.html, book.root / "book" / "chapters", book.root / "book" / "_results"):
        for path in folder.rglob("*"):
            if path.is_file() and FAKE_KEY.encode() in path.read_bytes():
                leaks.append(str(path))
    assert leaks == []
