"""What the built book claims (issue 35, points 1, 2, 4 and 5), read from the session's one build of the book: the
front page, the status page and the figure index count the analyses by verdict class from the same records
(``book/_results``); only real or published numbers make a figure reproduced; a figure whose inputs were not loaded
is not run; a simulated number that misses its calibration target says why; no chapter's prose types a status."""

from __future__ import annotations

import html
import json
import re

import pytest
from conftest import CHAPTERS

from bookbuild import catalogue, fieldpath, navigation, paper_values, status, status_page

pytestmark = pytest.mark.usefixtures("book")


def _table(book):
    build = status.load_build(book.results_dir, book.chapters_dir)
    return build, status.status_table(build.results, catalogue.for_reader(catalogue.read()), build.where,
                                      build.failed_ids)


def _words(markdown: str) -> str:
    """Authored Markdown as a page shows it: emphasis dropped, white space collapsed."""
    return " ".join(markdown.replace("**", "").split())


def _text(path) -> str:
    """A page's text: tags dropped, entities decoded, white space collapsed."""
    raw = re.sub(r"<[^>]+>", " ", path.read_text(encoding="utf-8"))
    return " ".join(html.unescape(raw).split())


def test_front_page_counts_agree_with_the_results(book):
    _, table = _table(book)
    sentence = _words(status_page.summary_sentence(table))
    front = _text(book.html / "book" / "intro.html")
    assert sentence in front  # the status page's sentence, every class counted
    assert re.search(re.escape(f"{sentence} (") + r"\s*each class explained, with an example\s*\)\.", front)
    intro = (book.html / "book" / "intro.html").read_text(encoding="utf-8")
    assert 'href="chapters/99_reproduction_status.html#summary"' in intro
    assert 'id="summary"' in book.page("99_reproduction_status").read_text(encoding="utf-8")


def test_status_page_states_the_rule_and_counts_the_same(book):
    _, table = _table(book)
    page = _text(book.html / "book" / "chapters" / "99_reproduction_status.html")
    assert "counts as reproduced only when its own numbers are computed in this build from real public data" in page
    assert _words(status_page.summary_sentence(table)) + "." in page
    # the figure index counts each figure by the least reproduced analysis behind it, from the same verdicts
    figures = catalogue.read_figures()
    build, _ = _table(book)
    verdicts = dict(zip(table["id"], table["status"], strict=True))
    entries = navigation.paper_figure_index(figures, build.chapters, catalogue.figure_ids(figures))
    n_reproduced = sum(status_page.figure_verdict(e, verdicts) == "reproduced" for e in entries)
    summary = " ".join(status_page.index_summary(entries, verdicts).replace("**", "").split())
    assert summary.split(" A figure counts")[0] in page
    assert (f"{n_reproduced} reproduced" if n_reproduced else "none reproduced") in summary
    # a figure with a simulated analysis is never counted reproduced
    for e in entries:
        if any(verdicts.get(aid) == "simulated" for aid, _, _ in e.links):
            assert status_page.figure_verdict(e, verdicts) != "reproduced"


def test_on_the_simulator_no_figure_counts_as_reproduced_from_a_check_or_a_simulated_row(book):
    build, table = _table(book)
    by_id: dict[str, list] = {}
    for r in build.results:
        by_id.setdefault(r.analysis_id, []).append(r)
    verdicts = dict(zip(table["id"], table["status"], strict=True))
    for aid, rs in by_id.items():
        if verdicts.get(aid) == "reproduced":
            assert all(r.evidence in ("real", "published", "none") for r in rs if r.status != "not run"), aid
            assert not any(r.status == "simulated" for r in rs), aid
    # checks of the paper and transcriptions are their own class (NG-F2's p from D, DR-T5's sums, AE-T1's table)
    kinds = {r.analysis_id: r.evidence for r in build.results if r.evidence in ("checked", "transcribed")}
    assert {"NG-F2", "DR-T5", "AE-T1"} <= set(kinds) or not {"07_nuggets", "08_dr_arena"} & set(build.chapters)


def test_a_figure_whose_inputs_were_not_loaded_is_not_run(book):
    """Figs G.1 and G.2 compare Search Arena with CORAL and WildChat, which the hub does not give here."""
    _, table = _table(book)
    row = table.filter(table["id"] == "SA-G").row(0, named=True)
    if not row["notebooks"]:
        pytest.skip("chapter 02 not in this build")
    assert row["status"] == "not run" and "simulated" not in (row["evidence"] or "")


def test_a_simulated_miss_says_why_beside_the_number(book):
    results = book.results("03_preferences")
    if not results:
        pytest.skip("chapter 03 not in this build")
    for r in results:
        if r.analysis_id != "SA-D5" or not r.quantity.endswith(" rating") or r.paper is None:
            continue
        if abs(float(r.ours) - float(r.paper)) > (r.tol or 0.0) + 1e-9:
            assert "misses the target by" in r.note and "interval" in r.note, r
        assert "share an offset of" in r.note


def test_no_chapter_prose_types_a_status(book):
    """Prose never types a status: it is generated from the records, or it names none (AE-T34's "status
    *differs*" beside rows that read "assumption")."""
    typed = re.compile(r"status \*?(differs|reproduced|match|simulated|assumption|computed)\*?"
                       r"|is reproduced exactly", re.I)
    for path in sorted(book.chapters_dir.glob("*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] == "markdown":
                text = "".join(cell["source"])
                assert not typed.search(text), f"{path.name}: {typed.search(text).group(0)!r}"


def test_every_paper_values_row_of_a_built_chapter_is_recorded(book):
    """Each row of the paper values names a result field that the chapter recorded: every non-template row of the
    chapters of this build is in their results (a value, or not run with its reason), and every recorded quantity
    comes from a row (a template's rows are the frame's)."""
    table = paper_values.table()
    recorded = {(r.analysis_id, r.quantity) for stem in CHAPTERS for r in book.results(stem)}
    built_ids = {aid for aid, _ in recorded}
    rows = [k for k, row in table.items() if k[0] in built_ids and not fieldpath.parse(row.result).template]
    assert [k for k in rows if k not in recorded] == []
    templates = {(aid, q) for (aid, q), row in table.items() if fieldpath.parse(row.result).template}
    untracked = [k for k in recorded - set(table) if not any(k[0] == aid for aid, _ in templates)]
    assert untracked == [], "recorded quantities without a paper-values row"
