"""Issues 37 and 48: a full build with hostile inputs exits 0 with the hostile values shown as text, or exits 2
before any chapter runs.

The suite's "other release" book (``other_release``: the next release's variants whose busiest models are renamed to
hostile names, beside a Text Arena file, a DR-Arena match log between the same names and answer-engine answers from
engines so named, each input file itself named with a backtick and a role) is read page by page: no element from the
data is live (no ``<script>`` or ``<b>`` from a name), no name is typeset as mathematics, abbreviated or linked, no
file but the notebooks is copied into ``_downloads``, and each name that reached a page is there as its own text.
Inputs the door check refuses (a name over the bound, a model meeting itself) stop the runner with exit 2 before any
chapter runs.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import polars as pl
import pytest
from conftest import book_root
from other_release import (
    BOLD,
    CHAPTERS,
    HOSTILE,
    MATH,
    ROLE_FILE,
    ROLES,
    SCRIPT,
    STATUS,
    match_log,
    release,
    runner,
)

from bookbuild.inputs import MAX_NAME_CHARS


def _text_of(page: str) -> str:
    """A page as a reader sees its text: tags out, entities decoded."""
    return html.unescape(re.sub(r"<[^>]+>", "", page))


def _pages(root: Path) -> dict[str, str]:
    html_dir = root / "book" / "_build" / "html"
    return {str(p.relative_to(html_dir)): p.read_text(encoding="utf-8") for p in html_dir.rglob("*.html")
            if "_static" not in p.parts}


def _shown(name: str, text: str) -> bool:
    """Whether ``name`` is on the page as text: escaped, whole or cut with an ellipsis (bounded cells, labels)."""
    escaped = html.escape(name, quote=False)
    return escaped in text or escaped[:40] in text


def test_hostile_names_build_as_text(other_book):
    book, inputs = other_book
    assert len([m for m in inputs["models"] if m in HOSTILE]) == len(HOSTILE)
    pages = _pages(book.root)
    chapter_pages = {k: v for k, v in pages.items() if any(c in k for c in (*CHAPTERS, STATUS))}
    assert len(chapter_pages) == len(CHAPTERS) + 1, sorted(pages)
    for name, text in pages.items():
        assert SCRIPT not in text and "<script>alert" not in text, name
        assert BOLD not in text, name
        # MathJax would typeset \(…\) or a math span; the dollars must stay text
        assert not re.search(r"\\\(\\undefinedcommand\\\)|class=\"math[^\"]*\"[^>]*>[^<]*undefinedcommand", text), name
    everything = "\n".join(chapter_pages.values())
    for model in HOSTILE:
        assert _shown(model, everything), f"{model[:40]!r} reached no page"
    # issue 48: no role or directive from a name or a file name did anything
    downloads = book.html / "_downloads"
    copied = [p.name for p in downloads.rglob("*") if p.is_file() and p.suffix != ".ipynb"]
    assert copied == [], f"files copied into the site from data: {copied}"
    readable = "\n".join(_text_of(v) for v in chapter_pages.values())
    for text in chapter_pages.values():
        assert "<abbr" not in text
        assert not re.search(r'class="[^"]*math[^"]*"[^>]*>[^<]*(x\^2\+y\^2|a\^2)', text)  # typeset by {math}
        assert not re.search(r"<a [^>]*>[^<]*(<[^>]+>)*[^<]*Search-augmented LLMs: a reproduction compendium",
                             text.split('<div class="bd-sidebar')[0].split("<main")[-1])  # {doc} made a link
    for name in (*ROLES, ROLE_FILE):
        assert name in readable, f"{name!r} is not on any page as its own text"


@pytest.mark.parametrize("case", ["long name", "self match"])
def test_refused_inputs_stop_before_any_chapter(tmp_path, case):
    root = book_root(tmp_path / "bookroot")
    if case == "long name":
        path, _ = release(tmp_path / "release.parquet", n=300)
        raw = pl.read_parquet(path)
        raw.with_columns(pl.when(pl.int_range(pl.len()) == 0).then(pl.lit("n" * (MAX_NAME_CHARS + 1)))
                         .otherwise(pl.col("model_b")).alias("model_b")).write_parquet(path)
        inputs, option = ("--data", str(path)), "DATA"
    else:
        inputs, option = ("--match-logs", str(match_log(tmp_path / "m.jsonl", list(HOSTILE[:3]), self_match=True))), \
            "MATCH_LOGS"
    proc = runner(root, CHAPTERS, *inputs, timeout=600)
    assert proc.returncode == 2, f"{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    assert f"{option}: " in proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    assert not re.search(r"^(run|done|FAIL) ", proc.stdout, flags=re.M)  # no chapter started
    book = root / "book"
    assert not (book / "chapters").exists() or not any((book / "chapters").iterdir())
    assert not (book / "_results").exists() or not any((book / "_results").glob("*.json"))


# --- the fixes the build needed, each on its own -------------------------------------------------------------------


def test_banner_text_keeps_dollars_and_roles_as_text():
    """A user's name with a pair of dollars or a MyST role in a banner's detail (the model list of chapter 01's
    battle-data line): MyST would typeset or act on it; the banner is HTML in which the name is text."""
    from bookbuild import banner

    detail = f"Model ids kept as-is: {MATH}, {SCRIPT}, {ROLES[0]}; code `{MATH}` stays code."
    rendered = banner.data_banner("user", detail)
    assert 'class="math' not in rendered and "<script>" not in rendered and "<a " not in rendered
    assert "x$\\undefinedcommand$y," in rendered and "{download}<code>" in rendered
    assert f"<code>{html.escape(MATH, quote=False)}</code>" in rendered


def test_fig7_marks_only_the_tiers_the_logs_have(tmp_path):
    """Logs without a Much Better verdict (or without a Wide failure): Fig 7 has no such bar, so the paper's mark for
    it is left out instead of stopping the chapter (``Reference.at_marks: no tick labelled``)."""
    from analysis_lib.dr_arena import match_log as dr_match_log
    from analysis_lib.dr_arena import verdict_share_plot, verdict_shares
    from analysis_lib.plotting.display import prepare
    from bookbuild.papers import dr_arena as paper

    rounds = dr_match_log.load_match_logs(match_log(tmp_path / "m.jsonl", list(HOSTILE)))
    shares = verdict_shares(rounds)
    reference = paper.fig7_reference(shares)
    verdicts, failures = reference
    assert set(verdicts.values) == {"Better"} and set(failures.values) == {"DEEP"}  # no Much Better, no Wide
    prepare(verdict_share_plot(shares, "Fig 7"), "user", reference=reference)  # raised before
