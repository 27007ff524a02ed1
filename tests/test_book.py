"""The book as a reader meets it: one build of the chapters and the status page, opened in headless Chromium.

Checked per chapter page (issues 12, 13 and 22): the page loads with real figures; every analysis ID it records has a
section anchor ``#<id lower>`` holding an our-vs-paper table; no ``shape: (`` polars repr, no stderr output block,
no raw Python structure printed, no absolute path of the build machine; on pages whose numbers come from the
simulator the simulated banner is the first output; at least 80% of the executed notebook's code cells are hidden
or removed; the page cites its paper and links to the bibliography; no table is wider than the content column
(a table may scroll inside a box that is not); every image has alt text; no "seed 00". The status page has exactly
one row per catalogue ID, counted by kind of evidence, and its links reach the sections; its index lists the 88
figures and tables of the papers; nothing in the paper-values tables goes unrecorded (when the whole book was
built); no link inside the book is broken; no secret from the environment reaches the book.

ONE build per test session (the ``book`` fixture of ``conftest.py``, shared by every test that reads the built
book). Which chapters: every ``notebooks/NN_*.ipynb`` by default, or the comma-separated stems in
``$BOOK_TEST_CHAPTERS`` (the status page is always built). The runner's invocation lives in
``conftest.build_command`` only.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import nbformat
import pytest
from conftest import CHAPTERS, FAKE_KEY, NOTEBOOKS, REPO, STATUS, Book  # the one book build: conftest's `book`

from bookbuild import catalogue, identity, navigation, status

pytestmark = pytest.mark.book

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
#: Folders of the build machine that must not show on a page: the checkout's parent, the home and temp folders.
#: (Not every absolute path: prompts in the real data quote paths of their own users' machines.)
ABSOLUTE_PATHS = tuple(sorted({f"{Path(__file__).resolve().parents[2]}/", f"{Path.home()}/",
                               f"{tempfile.gettempdir()}/", "/work/", "/root/", "/tmp/"}))
#: The longest code line a reader should meet when unfolding a cell.
#: Tags that hide a code cell's input on the page (the runner folds the parameter cells with ``hide-cell``).
HIDING_TAGS = {"hide-input", "hide-cell", "remove-input", "remove-cell"}


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.skip("chromium not installed (scripts/ensure_chromium.sh installs Debian's package)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


def _open(browser, path: Path, width: int = 1200):
    """A page loaded in a ``width`` x 900 window, and the JavaScript errors it raised or logged (uncaught exceptions
    and ``console.error``, such as the theme's "Got invalid theme mode"), which it keeps collecting."""
    page = browser.new_page(viewport={"width": width, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(f"console.error: {msg.text}") if msg.type == "error" else None)
    page.goto(path.as_uri(), wait_until="load")
    return page, errors


@pytest.fixture(scope="module")
def pages(browser):
    """The pages of the built book, each loaded once (:func:`_open`: a 1200 x 900 window) and shared by the checks
    that only read it: ``pages(path)`` gives the page and the JavaScript errors it raised since it loaded. A check
    that needs another window opens its own page."""
    opened: dict[Path, tuple] = {}

    def load(path: Path):
        if path not in opened:
            opened[path] = _open(browser, path)
        return opened[path]

    yield load
    for page, _ in opened.values():
        page.close()


def _built(book: Book, chapter: str) -> None:
    if chapter in book.failed():
        pytest.fail(f"{chapter} failed in the build: {book.failed()[chapter]}")
    assert book.page(chapter).exists(), f"{chapter} has no page in the built book"


# --- the build ------------------------------------------------------------------------------------------------


def test_build_reports_the_html(book):
    index = book.html / "index.html"
    assert index.exists()
    assert f"HTML: {index}" in book.stdout
    toc = (book.root / "book" / "_build" / "_toc.yml").read_text()
    assert toc.index(STATUS) < min(toc.index(c) for c in CHAPTERS)
    assert not list((REPO / "notebooks").glob("*_executed*"))


# --- every chapter page ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_chapter_page_loads_with_real_figures(book, pages, chapter):
    _built(book, chapter)
    page, errors = pages(book.page(chapter))
    assert page.locator("main h1").first.inner_text().strip()
    images = page.eval_on_selector_all(  # the figures are lazy-loaded: load each before reading its size
        "main img",
        """async imgs => { await Promise.all(imgs.map(i => { i.loading = 'eager'; i.scrollIntoView();
            return i.complete && i.naturalWidth ? null : new Promise(r => { i.onload = i.onerror = r;
            setTimeout(r, 10000); }); }));
          return imgs.map(i => [i.getAttribute('src'), i.complete, i.naturalWidth]); }""",
    )
    broken = [src for src, complete, w in images if not complete or w == 0]
    assert broken == [], f"images that did not load: {broken}"
    assert page.locator("main .admonition").count() >= 1  # the data banner, rendered
    assert ":::{" not in page.locator("main").inner_text()
    assert errors == []


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_chapter_page_has_no_dumps_stderr_or_paths(book, pages, chapter):
    """No polars repr, no stderr block, no raw Python structure printed, no absolute path (hidden cells too)."""
    _built(book, chapter)
    page, _ = pages(book.page(chapter))
    text = page.locator("main").text_content() or ""  # includes folded cells
    polars_repr = "shape: (" in text
    assert not polars_repr, "a polars repr is on the page: render tables with tables.html_table"
    stderr = page.locator("main .output.stderr").all_text_contents()
    assert stderr == [], f"stderr output blocks on the page: {[s[:120] for s in stderr]}"
    plain = page.locator("main .output.text_plain, main .output.stream").all_text_contents()
    dumps = [t[:120] for t in plain if re.match(r"\s*[\[{]['\"(\[{0-9]", t)]
    assert dumps == [], f"raw Python structures printed on the page: {dumps}"
    paths = sorted({m for p in ABSOLUTE_PATHS for m in re.findall(re.escape(p) + r"[^\s\"'<]*", text)})
    assert paths == [], f"absolute paths on the page: {paths[:5]}"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_simulated_banner_comes_before_the_first_output(book, pages, chapter):
    _built(book, chapter)
    if not any(r.data == "simulated" for r in book.results(chapter)):
        pytest.skip(f"{chapter} recorded no simulated number in this build")
    page, _ = pages(book.page(chapter))
    first = page.locator("main .cell_output").first
    assert first.count() == 1, "no output on a simulated page"
    assert "Simulated data" in (first.text_content() or ""), (
        "the first output of a simulated page must be the simulated-data banner, found: "
        + (first.text_content() or "")[:200]
    )


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_each_recorded_id_has_an_anchored_section_with_its_table(book, pages, chapter):
    """The section of every ID the chapter records: target ``#<id lower>``, heading naming the ID, and the
    our-vs-paper table (``rec.section``) rendered inside it."""
    _built(book, chapter)
    ids = sorted({r.analysis_id for r in book.results(chapter)})
    if not ids:
        pytest.skip(f"{chapter} records no analysis ID")
    page, _ = pages(book.page(chapter))
    problems = []
    for aid in ids:
        found = page.evaluate(
            """id => {
                const el = document.getElementById(id);
                if (!el) return null;
                const section = el.closest('section') || el.parentElement;
                const heading = section.querySelector('h1, h2, h3');
                const tables = [...section.querySelectorAll('table')].map(t =>
                    [...t.querySelectorAll('th')].map(th => th.textContent.trim()));
                return {heading: heading ? heading.textContent : '', tables: tables};
            }""",
            aid.lower(),
        )
        if found is None:
            problems.append(f"{aid}: no element with id '{aid.lower()}' (add the target ({aid.lower()})=)")
            continue
        if aid not in found["heading"]:
            problems.append(f"{aid}: the section heading does not name the ID ({found['heading'][:80]!r})")
        if not any({"this build", "paper", "status"} <= set(headers) for headers in found["tables"]):
            problems.append(f"{aid}: no our-vs-paper table in the section (display(rec.section({aid!r})))")
    assert problems == []


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_most_code_cells_are_hidden(book, chapter):
    """At least 80% of the executed notebook's code cells have their input hidden or removed."""
    _built(book, chapter)
    nb = json.loads((book.chapters_dir / f"{chapter}.ipynb").read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    hidden = [c for c in code if HIDING_TAGS & set(c.get("metadata", {}).get("tags", []))]
    shown = [("".join(c["source"]).splitlines() or [""])[0][:60] for c in code if c not in hidden]
    assert len(hidden) >= 0.8 * len(code), f"{len(hidden)}/{len(code)} code cells hidden; shown: {shown}"


# --- the status page ------------------------------------------------------------------------------------------


def test_status_page_has_one_row_per_catalogue_id(book, pages):
    page, errors = pages(book.page(STATUS))
    assert "Reproduction status" in page.locator("main h1").first.inner_text()
    rows = page.eval_on_selector_all(
        "table.repro-status tbody tr[id^='status-']", "rows => rows.map(r => r.id.slice(7))"
    )
    ids = [a.lower() for a in catalogue.read()["analysis_id"]]
    assert sorted(i for i in rows if i in ids) == sorted(ids)
    assert len(rows) == len(set(rows))
    text = page.locator("main").inner_text()
    assert ":::{" not in text
    assert "Simulated data" in text  # the build ran on sample:2000
    full = page.locator("main").text_content() or ""
    has_repr = "shape: (" in full
    assert not has_repr, "a polars repr on the status page"
    paths = sorted({m for p in ABSOLUTE_PATHS for m in re.findall(re.escape(p) + r"[^\s\"'<]*", full)})
    assert paths == [], f"absolute paths on the status page: {paths[:5]}"
    assert errors == []


def test_status_links_reach_every_recorded_section(book, pages):
    """Each ID a built chapter records is linked from its status row to ``<chapter>.html#<id lower>``, named by
    the chapter's title, and the anchor exists on the chapter page."""
    page, _ = pages(book.page(STATUS))
    links = page.eval_on_selector_all(
        "table.repro-status tbody tr[id^='status-'] a",
        "as => as.map(a => [a.closest('tr').id.slice(7), a.getAttribute('href'), a.textContent.trim()])",
    )
    by_row: dict[str, list[tuple[str, str]]] = {}
    for row, href, text in links:
        by_row.setdefault(row, []).append((href, text))
    problems = []
    targets: dict[str, set[str]] = {}
    for chapter in CHAPTERS:
        if chapter in book.failed():
            continue
        for aid in sorted({r.analysis_id for r in book.results(chapter)}):
            want = f"{chapter}.html#{aid.lower()}"
            got = [href for href, _ in by_row.get(aid.lower(), [])]
            if want not in got:
                problems.append(f"{aid}: status row links {got}, not {want}")
            else:
                targets.setdefault(chapter, set()).add(aid.lower())
    for chapter, anchors in targets.items():
        chapter_page, _ = pages(book.page(chapter))
        title = chapter_page.locator("main h1").first.inner_text().replace("#", "").strip()
        missing = [a for a in sorted(anchors)
                   if not chapter_page.evaluate("id => !!document.getElementById(id)", a)]
        problems += [f"{chapter}.html#{a}: no such anchor" for a in missing]
        names = {text for row in anchors for href, text in by_row[row] if href.startswith(f"{chapter}.html")}
        if names != {title}:
            problems.append(f"links to {chapter} are named {sorted(names)}, not the chapter title {title!r}")
    assert problems == []


def test_status_page_links_no_chapter_outside_the_build(book):
    toc = (book.root / "book" / "_build" / "_toc.yml").read_text()
    built = set(re.findall(r"chapters/(\w+)", toc))
    html = book.page(STATUS).read_text(encoding="utf-8")
    linked = set(re.findall(r'href="(\d\d_\w+)\.html', html))
    assert linked <= built, f"the status page links chapters that are not in the book: {sorted(linked - built)}"


# --- navigation and links -------------------------------------------------------------------------------------


def test_navigation_order(book, browser):
    page, _ = _open(browser, book.html / "book" / "intro.html")
    try:
        links = page.eval_on_selector_all(
            "nav.bd-docs-nav a.reference.internal", "as => as.map(a => a.getAttribute('href'))"
        )
        captions = page.eval_on_selector_all("nav.bd-docs-nav p.caption", "ps => ps.map(p => p.textContent.trim())")
    finally:
        page.close()
    names = [Path(urlsplit(h).path).stem for h in links]
    assert names.index(STATUS) < min(names.index(c) for c in CHAPTERS)
    if "library" in names:
        assert max(names.index(c) for c in CHAPTERS) < names.index("library")
    papers = {"07_nuggets": "Nuggets", "08_dr_arena": "DR-Arena", "09_answer_engines": "Answer engine"}
    for chapter, caption in papers.items():
        if chapter in CHAPTERS:
            assert any(caption.lower() in c.lower() for c in captions), f"no '{caption}' part in {captions}"


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
    for folder in (book.html, book.chapters_dir, book.results_dir):
        for path in folder.rglob("*"):
            if path.is_file() and FAKE_KEY.encode() in path.read_bytes():
                leaks.append(str(path))
    assert leaks == []


# --- the reader's book (issue 22): citations, tables that fit, alt text, plain words --------------------------

#: The author a chapter's citation names ({cite:t} with author-year references), by chapter stem prefix.
CITED = {"01": "Miroyan", "02": "Miroyan", "03": "Miroyan", "04": "Miroyan", "05": "Miroyan", "06": "Miroyan",
         "07": "Sharifymoghaddam", "08": "Gao", "09": "Venkit"}


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_chapter_cites_its_paper_with_a_link_into_the_bibliography(book, pages, chapter):
    _built(book, chapter)
    page, _ = pages(book.page(chapter))
    citations = page.eval_on_selector_all(
        "main span.bibtex-citation",
        "ss => ss.map(s => [s.textContent.trim(), [...s.querySelectorAll('a')].map(a => a.getAttribute('href'))])")
    assert citations, "the chapter cites no paper"
    author = CITED.get(chapter[:2])
    if author:
        assert any(author in text for text, _ in citations), f"no citation of {author}: {citations}"
    bibliography = book.html / "book" / "bibliography.html"
    assert bibliography.exists()
    html = bibliography.read_text(encoding="utf-8")
    hrefs = [h for _, hs in citations for h in hs]
    assert hrefs and all("bibliography.html#" in h for h in hrefs), hrefs
    for href in hrefs:
        anchor = unquote(urlsplit(href).fragment)
        assert f'id="{anchor}"' in html, f"{href}: no such entry on the bibliography page"


def _wide_tables(page) -> list[str]:
    """Tables wider than the content column, unless they scroll inside a box that is not. A cell tagged
    ``full_width`` may take the page's main area (the status page hides the contents sidebar for its tables); no
    table may make the page scroll sideways."""
    return page.evaluate("""() => {
        const article = document.querySelector('main article') || document.querySelector('main');
        const cs = getComputedStyle(article);
        const a = article.getBoundingClientRect();
        const left = a.left + parseFloat(cs.paddingLeft), right = a.right - parseFloat(cs.paddingRight);
        const main = (document.querySelector('.bd-main') || article).getBoundingClientRect();
        const out = [];
        for (const table of article.querySelectorAll('table')) {
            let box = table;
            for (let el = table.parentElement; el && el !== article; el = el.parentElement) {
                const ox = getComputedStyle(el).overflowX;
                if (ox === 'auto' || ox === 'scroll') { box = el; break; }
            }
            const r = box.getBoundingClientRect();
            const limit = table.closest('.tag_full_width') ? main.right : right;
            if (r.right > limit + 1 || r.left < left - 1) {
                const head = [...table.querySelectorAll('th')].slice(0, 3).map(th => th.textContent.trim());
                out.push(`${Math.round(r.left)}-${Math.round(r.right)} px outside ${Math.round(left)}-` +
                         `${Math.round(limit)} px: table with headers ${head.join(' | ')}`);
            }
        }
        const doc = document.documentElement;
        if (doc.scrollWidth > doc.clientWidth + 1) out.push(`the page scrolls sideways (${doc.scrollWidth} px)`);
        return out;
    }""")


@pytest.mark.parametrize("page_name", [*CHAPTERS, STATUS])
def test_no_table_is_wider_than_the_content_column(book, browser, page_name):
    _built(book, page_name)
    for width in (1280, 1024):
        page = browser.new_page(viewport={"width": width, "height": 900})
        try:
            page.goto(book.page(page_name).as_uri(), wait_until="load")
            wide = _wide_tables(page)
        finally:
            page.close()
        assert wide == [], f"at a {width} px window: {wide[:5]}"


@pytest.mark.parametrize("page_name", [*CHAPTERS, STATUS])
def test_every_image_has_alt_text_and_no_page_says_seed(book, pages, page_name):
    _built(book, page_name)
    page, _ = pages(book.page(page_name))
    images = page.eval_on_selector_all("main img", "imgs => imgs.map(i => i.getAttribute('alt') || '')")
    text = page.locator("main").text_content() or ""
    missing = [alt for alt in images if not alt.strip() or re.search(r"\.(png|jpe?g|svg|gif)$|^[0-9a-f]{32,}", alt)]
    assert missing == [], f"{len(missing)} of {len(images)} images without alt text: {missing[:3]}"
    seeds = sorted(set(re.findall(r".{0,40}seed 00\d.{0,20}", text)))
    assert seeds == [], f"'seed 00' on the page: {seeds[:5]}"


def test_status_page_counts_ids_by_kind_of_evidence(book, pages):
    page, _ = pages(book.page(STATUS))
    rows = page.eval_on_selector_all(
        "table.repro-status tbody tr[id^='status-']",
        "rows => rows.map(r => [r.id.slice(7), r.cells[2].textContent.trim(), r.cells[3].textContent.trim()])")
    text = page.locator("main").inner_text()
    # the summary table of verdicts: the table whose first header reads "verdict"
    page_counts = dict(page.evaluate("""() => {
        const t = [...document.querySelectorAll('main table')].find(
            t => (t.querySelector('th') || {}).textContent === 'verdict');
        return t ? [...t.querySelectorAll('tbody tr')].map(r => [r.cells[0].textContent.trim(),
                                                                 parseInt(r.cells[1].textContent)])
                     .filter(([v, n]) => v !== 'total') : [];
    }"""))
    verdicts = {row: verdict for row, verdict, _ in rows}
    assert {v.split(" ")[0] for v in verdicts.values()} <= {
        "reproduced", "assumption", "differs", "computed", "paper", "partly", "user", "LLM", "simulated", "checked",
        "transcribed", "not", "failed"}
    counts = [c for _, _, c in rows if c and not c.startswith("no chapter")]
    assert counts and all(re.match(r"(real|published|user data|LLM output|checked|transcribed|no data|simulated|"
                                   r"not run): ", c) for c in counts), counts[:5]
    assert re.search(r"Of \d+ analysis IDs, \d+ are reproduced from real or published data", text)
    counts_table = page_counts
    for verdict in ("reproduced", "assumption", "differs", "computed", "simulated", "not run", "not yet"):
        assert verdict in counts_table, f"no count of '{verdict}' IDs: {counts_table}"
    assert sum(counts_table.values()) == len(rows)
    if CHAPTERS == sorted(p.stem for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb") if p.stem != STATUS):
        reproduced = [r for r, v in verdicts.items() if v.startswith("reproduced") and ("on real" in v
                                                                                     or "on published" in v)]
        assert counts_table["reproduced"] >= len(reproduced)
        # issue 35: a figure with simulated numbers beside its matches is "partly simulated", not reproduced; the
        # analyses that match on real or published data are those two together
        reproduced += [r for r, v in verdicts.items() if v.startswith("partly simulated")]
        # issue 21 asked for 20 once the Second pass IDs are in the chapters; issue 35 made four of them what they
        # are, checks of the paper and transcriptions (NG-F2, DR-T4, DR-T5, AE-T1), so 16 (12 of the first pass's)
        recorded = {r.analysis_id for c in CHAPTERS for r in book.results(c)}
        need = 16 if set(SECOND_PASS_IDS) <= recorded else 12
        assert len(reproduced) >= need, f"{len(reproduced)} IDs reproduced from real or published data: {reproduced}"


#: The nine IDs of ANALYSES.md's "Second pass" (issue 21, item 1).
SECOND_PASS_IDS = ("SA-A2", "SA-TA1", "SA-A2C", "SA-22L", "DR-T4", "DR-T5", "DR-T7", "AE-F6", "AE-T1")


def test_status_page_indexes_all_88_figures_and_tables(book, pages):
    page, _ = pages(book.page(STATUS))
    rows = page.eval_on_selector_all(
        "table.figure-index tbody tr[id^='fig-']",
        "rows => rows.map(r => [r.id, r.cells[0].textContent, r.cells[2].textContent,"
        " r.cells[2].querySelectorAll('a').length])")
    assert len(rows) == 88 and len({r[0] for r in rows}) == 88
    no = [r for r in rows if r[2].startswith("not reproducible: ")]
    assert len(no) == 17 and all(len(r[2]) > len("not reproducible: ") for r in no)
    assert sum(1 for r in rows if r[3] > 0) >= 60  # reproduced ones link to their sections
    assert sum("earlier version: " in r[1] for r in rows if r[0].startswith("fig-ng-")) == 13


# --- the identity in the built book ------------------------------------------------


@pytest.mark.book
def test_front_page_and_status_page_name_this_builds_data_and_environment(book):
    intro = (book.html / "book" / "intro.html").read_text(encoding="utf-8")
    assert "This build" in intro and "simulator" in intro  # the conftest build runs on the simulator
    assert 'href="chapters/99_reproduction_status.html"' in intro  # linking the status page
    status = (book.html / "book" / "chapters" / "99_reproduction_status.html").read_text(encoding="utf-8")
    assert "This build’s inputs and environment" in status or "This build's inputs and environment" in status
    assert "numpy" in status and "installed" in status and "Mixed book" not in status
    for chapter in book.chapters_dir.glob("0*.ipynb"):
        nb = nbformat.read(chapter, as_version=4)
        cell = next((c.source for c in nb.cells if c.get("id") == identity.CELL_ID), "")
        assert "What this page was computed from" in cell and "Computed from other inputs" not in cell, chapter.name


# --- issue 35: downloads that do not leak, page weight, navigation, the LLM box ------------------------------

#: The heaviest a chapter page's HTML may be (its figures are image files beside it).
MAX_PAGE_BYTES = 300_000
#: A Python warning as the warnings module prints it (``<path>:<line>: TqdmWarning: ...``).
WARNING_LINE = re.compile(r"\b[A-Za-z]+Warning: |warnings\.warn\(")


def _downloadable(book: Book) -> list[Path]:
    """Every file a reader can download from the built book: the executed chapters (the download button's
    notebooks, also under ``_sources``) and every file of the site but the theme's."""
    site = [p for p in book.html.rglob("*") if p.is_file() and "_static" not in p.relative_to(book.html).parts
            and p.suffix not in (".png", ".jpg", ".svg", ".gif", ".webp", ".woff", ".woff2")]
    return sorted(book.chapters_dir.glob("*.ipynb")) + site


def test_downloadable_files_carry_no_build_path_and_no_warning(book):
    """Point 6: no absolute path of the build machine (the book root, the checkout, home, temp) and no printed
    warning in any downloadable file; the notebooks' parameters (metadata and injected cell) are the page's."""
    roots = tuple(sorted({*ABSOLUTE_PATHS, f"{book.root}/", f"{REPO}/"}))
    problems = []
    files = _downloadable(book)
    assert any(p.suffix == ".ipynb" and "_sources" in p.parts for p in files), "no notebook offered for download"
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        problems += [f"{path.name}: {m}" for r in roots for m in sorted(set(re.findall(re.escape(r) + r"[^\s\"'<]*",
                                                                                       text)))[:3]]
        problems += [f"{path.name}: warning {m.group(0)!r}" for m in WARNING_LINE.finditer(text)][:3]
    assert problems == [], problems[:10]
    for path in sorted(book.chapters_dir.glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        params = nb.metadata.get("papermill", {}).get("parameters", {})
        assert params.get("results_dir") == "book/_results", (path.name, params)
        stderr = [o.get("text", "")[:80] for c in nb.cells for o in c.get("outputs", [])
                  if o.get("output_type") == "stream" and o.get("name") == "stderr" and WARNING_LINE.search(
                      o.get("text", ""))]
        assert stderr == [], (path.name, stderr)


@pytest.mark.parametrize("page_name", [*CHAPTERS, STATUS])
def test_page_weight_and_lazy_figures(book, page_name):
    """Point 7: a chapter page is under 300 KB of HTML; its figures are image files of the site (no ``data:``
    URI), lazy-loaded, that exist; no source map is left in the site."""
    _built(book, page_name)
    page = book.page(page_name)
    size = page.stat().st_size
    assert size < MAX_PAGE_BYTES, f"{page_name}.html is {size / 1e3:.0f} KB"
    html = page.read_text(encoding="utf-8")
    assert "data:image" not in html
    figures = re.findall(r'<img\b[^>]*class="[^"]*\bcompendium-figure\b[^>]*>', html)
    for tag in figures:
        src = re.search(r'src="([^"]+)"', tag).group(1)
        assert (page.parent / src).resolve().is_file(), src
        assert 'loading="lazy"' in tag, tag[:120]
    if page_name != STATUS and book.results(page_name):
        assert figures, f"{page_name}: no figure found"
    assert list(book.html.rglob("*.map")) == []


def test_general_index_lists_the_ids_recorded_by_the_chapters(book):
    """Point 7: genindex.html names every ID a built chapter records, each linking into its chapter's page."""
    index = (book.html / "genindex.html").read_text(encoding="utf-8")
    missing = []
    for chapter in CHAPTERS:
        for aid in sorted({r.analysis_id for r in book.results(chapter)}):
            entry = re.search(re.escape(aid) + r"(?![A-Za-z0-9-]).{0,2000}?href=\"([^\"]+)\"", index, re.S)
            if entry is None or f"{chapter}.html" not in entry.group(1):
                missing.append(f"{chapter}: {aid}")
    assert missing == []


def test_sections_link_back_to_their_status_rows(book):
    """Point 7: under each section heading a link to the ID's row of the status page, which has that row."""
    status = book.page(STATUS).read_text(encoding="utf-8")
    rows = set(re.findall(r'<tr id="(status-[^"]+)"', status))
    problems = []
    for chapter in CHAPTERS:
        if chapter in book.failed():
            continue
        html = book.page(chapter).read_text(encoding="utf-8")
        links = set(re.findall(r'class="section-status" href="99_reproduction_status\.html#([^"]+)"', html))
        for aid in sorted({r.analysis_id for r in book.results(chapter)}):
            if f'id="{aid.lower()}"' in html and f"status-{aid.lower()}" not in links:
                problems.append(f"{chapter}: no link from section {aid} to its status row")
        problems += [f"{chapter}: links {a}, which the status page lacks" for a in sorted(links - rows)]
    assert problems == []


def test_all_analyses_table_lists_ids_in_paper_order(book):
    """Point 7: the status table's rows follow the catalogue's paper order; each paper has one block."""
    status = book.page(STATUS).read_text(encoding="utf-8")
    table = status[status.index('<table class="repro-status"'):]
    rows = [r.removeprefix("status-") for r in re.findall(r'<tr id="(status-[^"]+)"', table)]
    ids = [a.lower() for a in catalogue.read()["analysis_id"]]
    assert [r for r in rows if r in ids] == ids
    headers = re.findall(r'<tr class="paper"><th[^>]*>([^<]+)</th>', table)
    assert len(headers) == len(set(headers)), headers


def test_environment_boxes_name_an_llm_model_only_when_used(book):
    """Point 3: the status page's box and each chapter's name a model only when numbers rest on its outputs
    (the ``llm`` the recorder writes beside an LLM output that ran); otherwise :data:`bookbuild.identity.NO_LLM`."""
    used_all = set()
    for path in sorted(book.chapters_dir.glob("0*.ipynb")):
        results = json.loads((book.results_dir / f"{path.stem}.json").read_text()).get("results", [])
        used = sorted({r["llm"] for r in results if r.get("llm")})
        used_all |= set(used)
        cell = next((c.source for c in nbformat.read(path, as_version=4).cells if c.get("id") == identity.CELL_ID), "")
        line = next((x for x in cell.splitlines() if x.startswith("- LLM:")), None)
        if line is None:
            continue  # a chapter without LLM steps has no LLM line
        if used:
            assert all(f"`{m}`" in line for m in used), (path.name, line)
        else:
            assert line == f"- LLM: {identity.NO_LLM}", (path.name, line)
    status = book.page(STATUS).read_text(encoding="utf-8")
    if not used_all:
        assert identity.NO_LLM in status and "gpt-4.1" not in status


# --- issue 43: the book at a glance --------------------------------------------------------------------------

#: The reader's window of issue 43, and how far down the status page its per-ID table must start (three screens).
WINDOW = {"width": 1280, "height": 900}
SCREENS = 3
#: The most a chapter page may fetch on its first load (its HTML, the theme, the figures in view).
MAX_FIRST_LOAD_BYTES = 1_500_000


def _site_pages(book: Book) -> list[Path]:
    """Every page of the built site a reader can open (the theme's files aside)."""
    return sorted(p for p in book.html.rglob("*.html") if "_static" not in p.relative_to(book.html).parts)


def _status_rows(book: Book) -> dict[str, str]:
    """The status page's verdict of each ID (lower case), read from its table's rows."""
    html = book.page(STATUS).read_text(encoding="utf-8")
    return dict(re.findall(r'<tr id="status-([^"]+)" data-paper="[^"]*" data-verdict="([^"]+)"', html))


def test_no_page_logs_a_javascript_error(book, browser):
    """Point 8: no uncaught exception (the theme's second ``const THEBE_JS_URL``) and no ``console.error`` ("Got
    invalid theme mode") on any page, the status page's filter script included."""
    problems = {}
    for path in _site_pages(book):
        page, errors = _open(browser, path, WINDOW["width"])
        try:
            page.wait_for_timeout(300)  # what the theme's deferred scripts start on load
        finally:
            page.close()
        if errors:
            problems[str(path.relative_to(book.html))] = errors[:3]
    assert problems == {}


def test_one_search_box(book, browser):
    page, _ = _open(browser, book.html / "book" / "intro.html", WINDOW["width"])
    try:
        boxes = page.eval_on_selector_all(
            ".search-button-field", "bs => bs.filter(b => b.getClientRects().length > 0).length")
    finally:
        page.close()
    assert boxes == 1


def test_status_summary_counts_every_id_and_matches_the_table(book, pages):
    """Point 1: the summary counts every verdict class, its counts add up to the IDs, each equals the rows of the
    per-ID table with that verdict, and its sentence names every class with IDs (the one the front page shows)."""
    page, _ = pages(book.page(STATUS))
    got = page.evaluate("""() => {
        const counts = {}, rows = {};
        let total = null;
        for (const r of document.querySelectorAll('table.verdict-counts tbody tr')) {
            const badge = r.querySelector('.verdict-badge');
            if (badge) counts[badge.dataset.verdict] = parseInt(r.cells[1].textContent);
            else if (r.cells[0].textContent.trim() === 'total') total = parseInt(r.cells[1].textContent);
        }
        const ids = [...document.querySelectorAll("table.repro-status tbody tr[id^='status-']")];
        for (const r of ids) rows[r.dataset.verdict] = (rows[r.dataset.verdict] || 0) + 1;
        const summary = document.querySelector('table.verdict-counts').previousElementSibling;
        return {counts, rows, total, ids: ids.length, sentence: summary.textContent};
    }""")
    assert set(got["counts"]) == set(status.VERDICTS)
    assert sum(got["counts"].values()) == got["total"] == got["ids"]
    assert got["counts"] == {v: got["rows"].get(v, 0) for v in status.VERDICTS}
    sentence = " ".join(got["sentence"].split())
    assert sentence.endswith(f": {got['ids']} in all.")
    said = re.findall(r"(?:, |; | and |IDs, )(\d+) ", re.sub(r" \([^)]*\)", "", sentence))
    assert sum(map(int, said)) == got["ids"], sentence
    for verdict, n in got["counts"].items():
        if n and verdict != "reproduced":
            assert f"{n} {status.VERDICT_PHRASE[verdict][n > 1]}" in sentence, verdict


def test_status_table_starts_within_three_screens(book, browser):
    """Point 2: the per-ID table (and its filter line) begins within the first three screens of a 1280 x 900
    window."""
    page, _ = _open(browser, book.page(STATUS), WINDOW["width"])
    try:
        top = page.evaluate("""() => { const t = document.querySelector('table.repro-status');
            return t.getBoundingClientRect().top + window.scrollY; }""")
        above = page.evaluate("() => !!document.querySelector('.status-filter + table.repro-status')")
    finally:
        page.close()
    assert top <= SCREENS * WINDOW["height"], f"the per-ID table starts at {top:.0f} px"
    assert above, "the filter line stands right above the table"


def test_status_filter_by_verdict_and_the_whole_table_without_javascript(book, browser):
    """Point 2: with JavaScript a verdict filter shows that verdict's rows only and a header sorts; without it the
    table is complete (every row shown, no controls)."""
    select = "table.repro-status tbody tr[id^='status-']"
    page, errors = _open(browser, book.page(STATUS), WINDOW["width"])
    try:
        verdicts = page.eval_on_selector_all(select, "rs => rs.map(r => r.dataset.verdict)")
        target = max(sorted(set(verdicts)), key=verdicts.count)
        page.select_option(".status-filter select[aria-label='only this verdict']", target)
        shown = page.eval_on_selector_all(select, "rs => rs.filter(r => r.getClientRects().length).map(r => r.id)")
        assert len(shown) == verdicts.count(target) < len(verdicts)
        assert f"{len(shown)} of {len(verdicts)} IDs shown" in page.locator(".status-filter").inner_text()
        page.select_option(".status-filter select[aria-label='only this verdict']", "")
        page.fill(".status-filter input", "SA-D5")
        assert "status-sa-d5" in page.eval_on_selector_all(
            select, "rs => rs.filter(r => r.getClientRects().length).map(r => r.id)")
        page.fill(".status-filter input", "")
        page.click("table.repro-status thead th:nth-child(3) button")  # sort by verdict
        ranks = page.eval_on_selector_all(select, "rs => rs.map(r => Number(r.dataset.rank))")
        assert ranks == sorted(ranks)
        assert errors == []
    finally:
        page.close()
    context = browser.new_context(java_script_enabled=False, viewport=WINDOW)
    try:
        bare = context.new_page()
        bare.goto(book.page(STATUS).as_uri(), wait_until="load")
        visible = bare.eval_on_selector_all(select, "rs => rs.filter(r => r.getClientRects().length).length")
        assert visible == len(verdicts) and bare.locator(".status-filter").count() == 0
    finally:
        context.close()


@pytest.mark.parametrize("page_name", [*CHAPTERS, STATUS])
def test_no_table_is_cut_by_a_fixed_height_box(book, browser, page_name):
    """Point 5: every folded block opened, no table sits in a box that shows less than its height."""
    _built(book, page_name)
    page, _ = _open(browser, book.page(page_name), WINDOW["width"])
    try:
        cut = page.evaluate("""() => {
            for (const d of document.querySelectorAll('main details')) d.open = true;
            const out = [];
            for (const t of document.querySelectorAll('main table')) {
                for (let el = t.parentElement; el && el.tagName !== 'MAIN'; el = el.parentElement) {
                    const cs = getComputedStyle(el);
                    if (cs.overflowY !== 'visible' && el.scrollHeight > el.clientHeight + 1) {
                        const head = [...t.querySelectorAll('th')].slice(0, 3).map(th => th.textContent.trim());
                        out.push(`${el.clientHeight} of ${el.scrollHeight} px shown: table ${head.join(' | ')}`);
                        break;
                    }
                }
            }
            return out;
        }""")
    finally:
        page.close()
    assert cut == []


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_no_chapter_says_every_number_is_simulated_when_its_sections_mix(book, pages, chapter):
    """Point 4: no banner claims every number of a page is simulated (DR-Arena and the answer engines hold
    reproduced analyses); a page whose sections ran on different data lists each kind of data with its sections."""
    _built(book, chapter)
    page, _ = pages(book.page(chapter))
    text = " ".join(page.locator("main").inner_text().split())
    assert "numbers on this page come from" not in text
    verdicts = _status_rows(book)
    sections = [s for s in navigation.read_chapter(book.chapters_dir / f"{chapter}.ipynb").sections
                if s.analysis_id.lower() in verdicts]
    kinds = {verdicts[s.analysis_id.lower()] for s in sections} - {"not run", "not yet", "failed"}
    if {"reproduced", "simulated"} <= kinds:
        box = page.locator("main .chapter-data")
        assert box.count() == 1, "no line saying what the sections of this mixed page ran on"
        listed = box.inner_text()
        assert all(s.analysis_id in listed for s in sections)
    if chapter in ("08_dr_arena", "09_answer_engines") and "simulated" in kinds:
        assert "The numbers of the" in text and "sections" in text


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_section_heading_carries_its_verdict_badge(book, pages, chapter):
    """Point 2: right under every analysis section heading, its verdict badge, the status page's verdict, linked to
    its row there."""
    _built(book, chapter)
    verdicts = _status_rows(book)
    sections = [s for s in navigation.read_chapter(book.chapters_dir / f"{chapter}.ipynb").sections
                if s.anchor and s.analysis_id.lower() in verdicts]
    if not sections:
        pytest.skip(f"{chapter} has no analysis section")
    page, _ = pages(book.page(chapter))
    found = dict(page.evaluate("""anchors => anchors.map(a => {
        const el = document.getElementById(a);
        const section = el && (el.closest('section') || el.parentElement);
        const heading = section && section.querySelector('h2');
        const next = heading && heading.nextElementSibling;
        const badge = next && next.querySelector('a.section-status .verdict-badge');
        return [a, badge ? [badge.dataset.verdict, badge.closest('a').getAttribute('href')] : null];
    })""", [s.anchor for s in sections]))
    problems = []
    for s in sections:
        want = (verdicts[s.analysis_id.lower()], f"99_reproduction_status.html#status-{s.analysis_id.lower()}")
        if found.get(s.anchor) != list(want):
            problems.append(f"{s.analysis_id}: badge {found.get(s.anchor)}, status page {want}")
    assert problems == []


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_first_load_of_a_chapter_page_is_light(book, browser, chapter):
    """Point 9: what a chapter page fetches on its first load (the page, the theme's styles, scripts and fonts, the
    figures in view) is at most 1.5 MB: the theme's fontawesome.js (1.5 MB alone) and the search index are gone."""
    _built(book, chapter)
    page = browser.new_page(viewport=WINDOW)
    sizes: dict[str, int] = {}

    def fetched(response):
        try:
            sizes[response.url] = len(response.body())
        except Exception:  # noqa: BLE001 - a response without a body (a redirect) weighs nothing
            sizes[response.url] = 0

    page.on("response", fetched)
    try:
        page.goto(book.page(chapter).as_uri(), wait_until="networkidle")
    finally:
        page.close()
    total = sum(sizes.values())
    heaviest = sorted(sizes.items(), key=lambda kv: -kv[1])[:3]
    assert total <= MAX_FIRST_LOAD_BYTES, f"{total / 1e6:.2f} MB; heaviest: {heaviest}"
    assert not any(url.split("?")[0].endswith(("fontawesome.js", "searchindex.js")) for url in sizes)
