"""``jupyter-book build`` for one build's table of contents, its warnings, and the leak guard on the output.

After Sphinx, the site is lightened (:func:`lighten_site`): the figures the pages carry inline become image files
referenced from the pages and lazy-loaded, style attributes a page repeats become classes of the page, and the
theme's source maps, its icon script and, outside the search page, the search index's scripts are removed (the
theme's own settings are :mod:`bookbuild.site`'s)."""

from __future__ import annotations

import base64
import hashlib
import html
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from bookbuild import keys, leaks, toc
from bookbuild.config import EXIT_BOOK, EXIT_USAGE, BuildError, Config, Summary

_WARNING = re.compile(r"\b(WARNING|ERROR|CRITICAL)\b")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def book_root(cfg: Config) -> Path:
    """The Jupyter Book source folder: the book folder if it has a ``_config.yml``, else the root."""
    if (cfg.book_dir / "_config.yml").exists():
        return cfg.book_dir
    if (cfg.root / "_config.yml").exists():
        return cfg.root
    raise BuildError(f"no _config.yml in {cfg.book_dir} or {cfg.root}", EXIT_USAGE)


def _jupyter_book_command() -> list[str]:
    script = Path(sys.executable).parent / "jupyter-book"
    if script.exists():
        return [str(script)]
    found = shutil.which("jupyter-book")
    if found:
        return [found]
    return [sys.executable, "-c", "import sys; from jupyter_book.cli.main import main; sys.exit(main())"]


def book_key(cfg: Config, root: Path, chapters: list[str]) -> str:
    """What the HTML depends on: the book's sources (config, TOC of this build, Markdown pages, the front page's
    identity line), the executed chapters' bytes and the Jupyter Book command line. Unchanged: no rebuild."""
    files = [root / "_config.yml", cfg.book_dir / "_build" / "_toc.yml", *sorted(cfg.book_dir.glob("*.md")),
             cfg.book_dir / "_build" / "identity.md", *(cfg.chapters_dir / f"{c}.ipynb" for c in chapters)]
    h = hashlib.sha256(json.dumps([cfg.strict, str(cfg.book_dir)]).encode())
    for f in files:
        h.update(str(f).encode() + b"\0")
        h.update(hashlib.sha256(f.read_bytes()).digest() if f.exists() else b"missing")
    return h.hexdigest()


#: An inline image of a page: ``<img ... src="data:image/png;base64,...">`` (what a notebook's HTML output holds).
_DATA_IMG = re.compile(r'<img\b(?P<before>[^>]*?)\ssrc="data:image/(?P<type>png|jpeg|gif|webp|svg\+xml);base64,'
                       r'(?P<data>[A-Za-z0-9+/=\s]*)"(?P<after>[^>]*)>')
_EXTENSION = {"png": "png", "jpeg": "jpg", "gif": "gif", "webp": "webp", "svg+xml": "svg"}
#: The folder of the site where Sphinx puts images; the pages' inline figures are written there as ``fig-<sha>``.
IMAGE_DIR = "_images"
_SOURCE_MAP_COMMENT = re.compile(r"\n?(?://# sourceMappingURL=[^\n]*|/\*# sourceMappingURL=[^*]*\*/)[ \t]*")


def _pages(html_dir: Path) -> list[Path]:
    return sorted(p for p in html_dir.rglob("*.html") if "_static" not in p.relative_to(html_dir).parts)


def externalize_images(html_dir: Path) -> dict[str, int]:
    """Every inline image of the built pages (``data:`` URIs: the chapters' figures, which the executed notebooks
    carry inline so that they render in Jupyter) written once to ``<html>/_images/fig-<sha256>.<ext>`` and
    referenced from the page, lazy-loaded (``loading="lazy" decoding="async"``): a page then weighs its text, and a
    figure is fetched when it scrolls into view and cached. Image files of earlier builds that no page references
    any more are removed. Returns ``pages`` (changed), ``images`` (written), ``html_bytes_before``/``_after``."""
    images = html_dir / IMAGE_DIR
    stats = {"pages": 0, "images": 0, "html_bytes_before": 0, "html_bytes_after": 0}
    for page in _pages(html_dir):
        text = page.read_text(encoding="utf-8")
        stats["html_bytes_before"] += len(text.encode())

        def replace(m: re.Match[str], page: Path = page) -> str:
            data = base64.b64decode(re.sub(r"\s+", "", m.group("data")))
            target = images / f"fig-{hashlib.sha256(data).hexdigest()[:20]}.{_EXTENSION[m.group('type')]}"
            if not target.exists():
                images.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
                stats["images"] += 1
            attrs = m.group("before") + m.group("after")
            lazy = "" if re.search(r"\sloading=", attrs) else ' loading="lazy" decoding="async"'
            src = Path(os.path.relpath(target, page.parent)).as_posix()
            return f'<img{m.group("before")} src="{src}"{m.group("after").rstrip()}{lazy}>'

        new = _DATA_IMG.sub(replace, text)
        if new != text:
            page.write_text(new, encoding="utf-8")
            stats["pages"] += 1
        stats["html_bytes_after"] += len(new.encode())
    referenced = {m for page in _pages(html_dir) for m in re.findall(r"fig-[0-9a-f]{20}\.\w+",
                                                                      page.read_text(encoding="utf-8"))}
    for old in images.glob("fig-*") if images.is_dir() else ():
        if old.name not in referenced:
            old.unlink()
    return stats


_STYLED_TAG = re.compile(r'<[a-zA-Z][a-zA-Z0-9]*(?:\s[^<>]*?)?\sstyle="(?P<style>[^"]*)"[^<>]*>')
#: A style attribute repeated at least this often on a page (and this long) becomes a class of the page.
STYLE_MIN_REPEATS = 3
STYLE_MIN_CHARS = 24


def _important(style: str) -> str:
    """A style attribute's declarations as a rule body, each ``!important`` (an inline style outranks every
    author rule without it; the class must too)."""
    decls = [d.strip() for d in html.unescape(style).split(";") if d.strip()]
    return "; ".join(d if d.endswith("!important") else f"{d} !important" for d in decls)


def classify_inline_styles(page: Path) -> int:
    """The style attributes a page repeats (the tables of the chapters carry their style on every cell, so that
    they render alike in Jupyter) replaced by classes named by their content (``st-<sha>``), defined once in a
    ``<style>`` in the page's head with the same declarations (``!important``, as inline styles outrank the
    theme's rules). Returns the bytes saved."""
    text = page.read_text(encoding="utf-8")
    counts: dict[str, int] = {}
    for m in _STYLED_TAG.finditer(text):
        counts[m.group("style")] = counts.get(m.group("style"), 0) + 1
    frequent = {s: "st-" + hashlib.sha256(s.encode()).hexdigest()[:10] for s, n in counts.items()
                if n >= STYLE_MIN_REPEATS and len(s) >= STYLE_MIN_CHARS and "</" not in s}
    if not frequent or "</head>" not in text:
        return 0

    def replace(m: re.Match[str]) -> str:
        tag, style = m.group(0), m.group("style")
        if style not in frequent:
            return tag
        tag = tag.replace(f' style="{style}"', "", 1)
        name = frequent[style]
        if re.search(r'\sclass="', tag):
            return re.sub(r'(\sclass=")', rf"\g<1>{name} ", tag, count=1)
        return re.sub(r"\s*(/?)>$", rf' class="{name}"\1>', tag, count=1)

    body = _STYLED_TAG.sub(replace, text)
    rules = "\n".join(f".{name} {{{_important(style)}}}" for style, name in sorted(frequent.items(),
                                                                                  key=lambda x: x[1]))
    new = body.replace("</head>", f'<style id="compendium-classes">\n{rules}\n</style>\n</head>', 1)
    page.write_text(new, encoding="utf-8")
    return len(text.encode()) - len(new.encode())


def remove_source_maps(html_dir: Path) -> int:
    """The theme's source maps (``*.map``, read only by a browser's developer tools) removed from the site, with
    the comments that name them in the scripts and style sheets. Returns the bytes removed."""
    removed = 0
    for path in sorted(html_dir.rglob("*.map")):
        removed += path.stat().st_size
        path.unlink()
    for path in sorted([*html_dir.rglob("*.js"), *html_dir.rglob("*.css")]):
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
        new = _SOURCE_MAP_COMMENT.sub("", text)
        if new != text:
            path.write_text(new, encoding="utf-8", errors="surrogateescape")
    return removed


#: Theme scripts no page needs: ``fontawesome.js`` redraws the theme's icons as SVG (1.5 MB, more than the rest of
#: a page's first load together), which the theme's style sheet already draws from its icon font.
UNUSED_SCRIPTS = ("_static/scripts/fontawesome.js",)
#: Scripts only the search page uses: the theme loads Sphinx's search index on every page for a search-as-you-type
#: field the book does not turn on (its search box opens ``search.html``); 150 KB, growing with the book.
SEARCH_SCRIPTS = ("_static/searchtools.js", "_static/language_data.js", "searchindex.js")
SEARCH_PAGE = "search.html"


def remove_unused_scripts(html_dir: Path, unused: tuple[str, ...] = UNUSED_SCRIPTS,
                          search: tuple[str, ...] = SEARCH_SCRIPTS) -> int:
    """The ``<script>`` elements that load ``unused`` (paths in the site) removed from every page, and the files with
    their licence notes; those that load ``search`` removed from every page but the search page, which keeps its
    files. Returns the bytes removed from the pages and the site."""
    removed = 0
    for page in _pages(html_dir):
        text = page.read_text(encoding="utf-8")
        new = text
        for script in (*unused, *(search if page.name != SEARCH_PAGE else ())):
            name = re.escape(Path(script).name)
            new = re.sub(rf'[ \t]*<script\b[^>]*\bsrc="(?:[^"]*/)?{name}(?:\?[^"]*)?"[^>]*>\s*</script>[ \t]*\n?', "",
                         new)
        if new != text:
            page.write_text(new, encoding="utf-8")
            removed += len(text.encode()) - len(new.encode())
    for script in unused:
        for path in (html_dir / script, html_dir / f"{script}.LICENSE.txt"):
            if path.is_file():
                removed += path.stat().st_size
                path.unlink()
    return removed


def lighten_site(html_dir: Path) -> str:
    """:func:`externalize_images`, :func:`classify_inline_styles`, :func:`remove_source_maps` and
    :func:`remove_unused_scripts` on the built site; one line saying what they did."""
    stats = externalize_images(html_dir)
    styles = sum(classify_inline_styles(page) for page in _pages(html_dir))
    maps = remove_source_maps(html_dir)
    scripts = remove_unused_scripts(html_dir)
    after = (stats["html_bytes_after"] - styles) / 1e6
    return (f"book  pages {stats['html_bytes_before'] / 1e6:.1f} MB -> {after:.1f} MB ({stats['pages']} page(s) "
            f"with inline figures, {stats['images']} image file(s) written to {IMAGE_DIR}/; repeated inline styles "
            f"as classes: {styles / 1e3:.0f} KB less); source maps removed: {maps / 1e6:.1f} MB; unused theme "
            f"scripts removed: {scripts / 1e6:.1f} MB")


def build_book(cfg: Config, chapters: list[str], summary: Summary | None = None) -> Summary:
    """Write this build's TOC (``chapters`` only) and run ``jupyter-book build``; the HTML lands in
    ``<book-dir>/_build/html``. Sphinx warnings are listed; they fail the build only with ``cfg.strict``. Nothing
    is run when :func:`book_key` equals the last successful build's (``<state>/book.json``)."""
    summary = summary or Summary()
    root = book_root(cfg)
    try:
        cfg.book_dir.relative_to(root)
    except ValueError as exc:
        raise BuildError(f"the book folder {cfg.book_dir} must lie inside the book root {root}", EXIT_USAGE) from exc
    if not (cfg.book_dir / "intro.md").exists():
        raise BuildError(f"the book needs {cfg.book_dir / 'intro.md'} (the root page)", EXIT_USAGE)
    build_dir = cfg.book_dir / "_build"
    build_dir.mkdir(parents=True, exist_ok=True)
    toc_path = build_dir / "_toc.yml"
    toc_path.write_text(toc.toc_text(root, cfg.book_dir, chapters, root / "_toc.yml"))
    index = cfg.html_dir / "index.html"
    key = book_key(cfg, root, chapters)
    key_path = cfg.state_dir / "book.json"
    if index.exists() and (keys.read_json(key_path) or {}).get("key") == key:
        print(f"book  unchanged since the last build: {index}", flush=True)
        summary.html = index
        return summary
    key_path.unlink(missing_ok=True)

    cmd = [*_jupyter_book_command(), "build", str(root), "--path-output", str(cfg.book_dir), "--toc", str(toc_path)]
    if cfg.strict:
        # --all: Sphinx reports a page's warnings only when it rereads the page, so a strict build reads all.
        cmd += ["-W", "--keep-going", "--all"]
    log_path = build_dir / "jupyter-book.log"
    print(f"book  jupyter-book build {root} (log: {log_path})", flush=True)
    t0 = time.perf_counter()
    with log_path.open("w") as log:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=root)
        assert proc.stdout is not None
        for line in proc.stdout:
            line = _ANSI.sub("", line)
            log.write(line)
            if _WARNING.search(line):
                summary.warnings.append(line.rstrip())
        rc = proc.wait()
    seconds = time.perf_counter() - t0
    if summary.warnings:
        print(f"book  {len(summary.warnings)} Sphinx warning(s):", flush=True)
        for w in summary.warnings:
            print(f"  {w}", flush=True)
    if rc != 0 or not index.exists():
        tail = "".join(log_path.read_text().splitlines(keepends=True)[-30:])
        raise BuildError(f"jupyter-book build failed (exit {rc}); last lines of {log_path}:\n{tail}", EXIT_BOOK)
    summary.html = index
    print(f"book  built in {seconds:.1f} s: {index}", flush=True)
    print(lighten_site(cfg.html_dir), flush=True)
    keys.write_json(key_path, {"key": key})
    found = leaks.find_protected_text([cfg.html_dir, cfg.chapters_dir],
                                      leaks.protected_snippets(cache_dir=cfg.cache_dir / "data"))
    if found:
        listed = "\n".join(f"  {path}" for path in found[:20])
        raise BuildError(
            "BrowseComp problem text appears in the built book (the problems are for statistics only and must "
            f"never be printed); remove the output that shows it:\n{listed}",
            EXIT_BOOK,
        )
    return summary
