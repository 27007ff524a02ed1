"""The reproduction-status table and page: the aggregation rule per analysis ID, and the catalogue against
ANALYSES.md (its catalogue tables and its "Second pass" section)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import nbformat
import polars as pl
import pytest

from bookbuild import catalogue, navigation, paper_values, status, status_page
from bookbuild.evidence import compare
from bookbuild.paper_values import PaperValue
from bookbuild.recorder import Recorder, Result

REPO = Path(__file__).resolve().parents[1]


def _pv(aid: str, quantity: str, paper: float, tol: float) -> PaperValue:
    return PaperValue(aid, quantity, paper, tol, None, "", "", "test", 0)


#: The paper values of the hand-made build below (a test's own table instead of the library's).
VALUES = {(v.analysis_id, v.quantity): v for v in (
    _pv("SA-A", "beta_length", 0.334, 0.01), _pv("SA-A", "beta_factual", 0.156, 0.01),
    _pv("SA-B", "tau", 0.422, 0.001), _pv("NG-D", "kappa_judge", 0.31, 0.01))}


def r(aid: str, status_: str, quantity: str = "q", data: str = "real", ours=1.0, paper=1.0, note="",
      reason="") -> Result:
    return Result(analysis_id=aid, quantity=quantity, ours=ours, paper=paper, data=data, status=status_, note=note,
                  reason=reason)


# --- the verdict of one ID from hand-made results -------------------------------------------------------------


def many(aid: str, n: int, status_: str, data: str, **kw) -> list[Result]:
    return [r(aid, status_, f"{status_} {data} {i}", data=data, **kw) for i in range(n)]


def _verdict(rs: list[Result]) -> tuple[str, str, str, str]:
    v = status.verdict(rs)
    return v.status, v.basis, v.reason, v.inconsistent


def test_published_matches_beside_simulated_numbers_are_partly_simulated():
    """NG-T1: 30 numbers match on the published table, one is ours only, two ran on the simulator: not the whole
    figure is reproduced (issue 35); without the simulated two it is."""
    rs = (many("NG-T1", 30, "match", "published") + many("NG-T1", 1, "computed", "published")
          + many("NG-T1", 2, "simulated", "simulated"))
    assert _verdict(rs) == ("partly simulated", "published", "", "")
    assert _verdict(rs[:31]) == ("reproduced", "published", "", "")
    differs = rs + many("NG-T1", 1, "differs", "published")
    assert _verdict(differs)[0] == "differs"  # a difference is said whatever else ran
    assert status.evidence_counts(rs) == "published: 30 match · 1 computed; simulated: 2"


def test_real_and_published_bases_and_an_llms_output_counted_apart():
    rs = [r("SA-T1", "match", "a", data="real"), r("SA-T1", "match", "b", data="published"),
          r("SA-T1", "computed", "c", data="llm-cache", paper=None)]
    assert _verdict(rs) == ("reproduced", "real + published", "", "")
    assert status.evidence_counts(rs) == "real: 1 match; published: 1 match; LLM output: 1 computed"


@pytest.mark.parametrize(("data", "verdict"), [
    ("user", "user data"), ("llm", "LLM output"), ("checked", "checked"), ("transcribed", "transcribed")])
def test_only_real_or_published_numbers_reproduce(data, verdict):
    """A match on a user's file, an LLM's output, a check of the paper or a transcription is not a reproduction;
    a check or a transcription never lifts a simulated figure."""
    rs = many("SA-X", 3, "match", data)
    assert _verdict(rs)[:2] == (verdict, data)
    with_sim = rs + many("SA-X", 2, "simulated", "simulated")
    lifted = _verdict(with_sim)[0]
    assert lifted == (verdict if data in ("user", "llm") else "simulated")
    table = status.status_table(with_sim, pl.DataFrame(
        {"analysis_id": ["SA-X"], "paper": ["SA"], "what": ["x"], "paper_numbers": [None], "data_class": ["BATTLE"]}))
    assert status.reproduced_on_data(table) == 0


@pytest.mark.parametrize("reason", ["text vs figure", "mistyped list", "text vs example"])
def test_the_papers_inconsistency_is_not_ours(reason):
    """NG-F4 (5,097 in the figure vs 5,098 in the text), SA-F1T (the authors' mistyped list), AE-M (a set cover
    called a vertex cover): everything else matches, so the ID is reproduced and says where the paper is not."""
    rs = many("NG-F4", 7, "match", "published") + [r("NG-F4", "inconsistent", "n", data="published", ours=5097.0,
                                                     paper=5098.0, reason=reason)]
    v = status.verdict(rs)
    assert (v.status, v.basis, v.inconsistent) == ("reproduced", "published", reason)
    assert v.label == f"reproduced · paper inconsistent ({reason})"
    assert status.evidence_counts(rs) == "published: 7 match · 1 paper inconsistent"


def test_an_unpublished_assumption_is_its_own_verdict():
    """AE-T34: Table 4's t at the participant counts of §3.1, which the paper does not say it used."""
    rs = (many("AE-T34", 8, "assumption", "published", reason="unpublished n")
          + many("AE-T34", 8, "computed", "published", paper=None))
    v = status.verdict(rs)
    assert (v.status, v.basis, v.reason) == ("assumption", "published", "unpublished n")
    assert v.label == "assumption (unpublished n)"


def test_ours_against_the_paper_is_worst():
    rs = (many("SA-A", 3, "match", "real") + [r("SA-A", "differs", "x", ours=2.0)]
          + many("SA-A", 2, "assumption", "published", reason="unpublished n")
          + [r("SA-A", "inconsistent", "y", data="published", reason="text vs figure")])
    v = status.verdict(rs)
    assert (v.status, v.basis, v.inconsistent) == ("differs", "real + published", "text vs figure")
    assert status.summary_line(rs).endswith("; differs: x = 2 (paper 1)")


def test_a_check_that_finds_the_paper_inconsistent_is_said_beside_what_did_not_run():
    """NG-F6 (issue 35): the judge never ran; its one number on published data is a check of the paper's text
    against its own Figure 4, and the paper contradicts itself (838 vs 817): the ID reads "paper inconsistent", so
    the page's count of them is not 0; the not-run numbers are counted beside it."""
    judge = "the simulated response texts are pseudo-words, not for an LLM"
    rs = ([r("NG-F6", "inconsistent", "inversions", data="published", ours=838.0, paper=817.0,
             reason="text vs figure")]
          + many("NG-F6", 4, "not run", "none", ours=None, note=f"paper row note; {judge}"))
    v = status.verdict(rs)
    assert (v.status, v.reason, v.inconsistent) == ("paper inconsistent", "text vs figure", "text vs figure")
    assert status.verdict(rs[1:]).status == "not run" and status.verdict(rs[1:]).reason == judge
    assert status.evidence_counts(rs) == "published: 1 paper inconsistent; not run: 4"
    # the recorder keeps a not-run reason apart from the row's note
    assert status.verdict(many("NG-Q", 3, "not run", "none", ours=None, reason="no LLM endpoint")).reason == (
        "no LLM endpoint")


def test_a_release_without_the_non_search_model():
    """SA-33S on a release without the non-search Gemini: the published totals still match; the battle numbers
    did not run (0 battles), they do not differ from the paper's 315."""
    zero = "0 battles: no battle of the non-search model"
    rs = ([r("SA-33S", "match", "p published", data="published"),
           r("SA-33S", "computed", "p split", data="published", paper=None)]
          + many("SA-33S", 9, "not run", "none", ours=None, reason=zero))
    assert _verdict(rs) == ("reproduced", "published", "", "")
    assert status.evidence_counts(rs) == "published: 1 match · 1 computed; not run: 9"
    battles_only = many("SA-33S", 9, "not run", "none", ours=None, reason=zero)
    assert _verdict(battles_only) == ("not run", "", zero, "")


def test_simulated_computed_worked_examples_and_empty():
    assert _verdict(many("SA-D5", 3, "simulated", "simulated") + many("SA-D5", 1, "not run", "none", ours=None)) \
        == ("simulated", "simulated", "", "")
    assert _verdict(many("SA-B4", 4, "computed", "real", paper=None) + many("SA-B4", 2, "simulated", "simulated")) \
        == ("partly simulated", "real", "", "")
    assert _verdict(many("SA-B4", 4, "computed", "real", paper=None)) == ("computed", "real", "", "")
    # a worked example that needs no data: counted apart, never "on real or published data"
    worked = [r("NG-N", "match", "cap", data="none"), r("NG-N", "computed", "ex", data="none", paper=None)]
    assert _verdict(worked) == ("reproduced", "no data", "", "")
    assert _verdict(worked + many("NG-N", 2, "simulated", "simulated"))[0] == "simulated"
    assert status.evidence_counts(worked) == "no data: 1 match · 1 computed"
    assert status.verdict([]).status == "not yet"
    assert status.verdict([], failed=["07_nuggets"]).status == "failed"


def test_verdict_rejects_unknown_status():
    with pytest.raises(ValueError, match="unknown result status"):
        status.verdict([r("SA-A", "great")])


def test_data_used_labels():
    assert status.data_used(["simulated", "simulated"]) == "simulated"
    assert status.data_used(["published", "real"]) == "real + published"
    assert status.data_used(["none", "simulated"]) == "simulated"
    assert status.data_used(["none"]) == "none"
    assert status.data_used(["llm-cache"]) == status.data_used(["llm"]) == "LLM output"
    assert status.data_used(["user", "real"]) == "real + user data"


@pytest.mark.parametrize(
    ("ours", "paper", "data", "discrepancy", "expected"),
    [
        (5097.0, 5098.0, "published", "inconsistent: text vs figure", "inconsistent"),
        (5098.0, 5098.0, "published", "inconsistent: text vs figure", "match"),  # within tolerance: a match
        (11.7, 22.9, "published", "assumption: unpublished n", "assumption"),
        (11.7, 22.9, "simulated", "assumption: unpublished n", "simulated"),
        (None, 22.9, "published", "assumption: unpublished n", "not run"),
        (11.7, 22.9, "published", "", "differs"),
    ],
)
def test_compare_takes_the_kind_from_the_papers_known_discrepancy(ours, paper, data, discrepancy, expected):
    assert compare(ours, paper, data, 0.0, None, paper_values.parse_discrepancy(discrepancy)) == expected


def test_recorder_takes_the_discrepancy_from_the_paper_values(tmp_path):
    path = tmp_path / "xx.csv"
    path.write_text(",".join(paper_values.COLUMNS) + "\n"
                    "XX-1,battles,5098,0,,XX §4,,inconsistent: text vs figure\n"
                    "XX-1,t,22.94,0.005,,XX Table 4,,assumption: unpublished n\n"
                    "XX-1,kappa,0.3,0.005,,XX §4,\n")  # a row may leave the last column out
    values = paper_values.read_table(path)
    assert str(values[("XX-1", "battles")].discrepancy) == "inconsistent: text vs figure"
    assert values[("XX-1", "kappa")].discrepancy is None
    rec = Recorder(tmp_path / "out", "01_x", data="published", values=values)
    rec.number("XX-1", "battles", 5097)
    rec.number("XX-1", "t", 11.68)
    rec.number("XX-1", "kappa", 0.31)
    rec.not_run("XX-1", "kappa", reason="not run: no endpoint")
    got = {x.quantity: (x.status, x.reason) for x in status.load_results_by_notebook(tmp_path / "out")[0]}
    assert got == {"battles": ("inconsistent", "text vs figure"), "t": ("assumption", "unpublished n"),
                   "kappa": ("not run", "no endpoint")}


@pytest.mark.parametrize(
    ("cell", "message"),
    [("mistake: text", "kind one of"), ("inconsistent", "kind one of"), ("assumption:  ", "a word or two"),
     ("assumption: " + "x" * 40, "a word or two")],
)
def test_paper_values_reject_a_malformed_discrepancy(tmp_path, cell, message):
    path = tmp_path / "xx.csv"
    path.write_text(",".join(paper_values.COLUMNS) + f"\nXX-1,q,1,0,,XX,,{cell}\n")
    with pytest.raises(ValueError, match=f"line 2, column discrepancy: .*{message}"):
        paper_values.read_table(path)
    path.write_text(",".join(paper_values.COLUMNS) + "\nXX-1,q,1,0,,XX,,,,,surplus\n")
    with pytest.raises(ValueError, match="line 2: more fields than the header"):
        paper_values.read_table(path)


def _catalogue() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "analysis_id": ["SA-A", "SA-B", "NG-C", "NG-D", "DR-E"],
            "paper": ["SA", "SA", "NG", "NG", "DR"],
            "section": ["s"] * 5,
            "what": ["a", "b", "c", "d", "e"],
            "paper_numbers": ["0.334", "Fig 1", "κ 0.30", "—", "x"],
            "data_class": ["BATTLE", "PUB", "PUB + BATTLE", "LLM", "code"],
        }
    )


def test_status_table_one_row_per_id_with_hand_made_results():
    results = [
        r("SA-A", "simulated", "beta_length", data="simulated", ours=0.331, paper=0.334),
        r("SA-A", "simulated", "beta_factual", data="simulated", ours=0.15, paper=0.156),
        r("SA-B", "match", "tau", data="published", ours=0.422, paper=0.422),
        r("SA-B", "computed", "n_models", data="published", ours=13.0, paper=None),
        r("NG-C", "match", "kappa", data="published", ours=0.30, paper=0.30),
        r("NG-C", "differs", "kappa_kic", data="published", ours=0.31, paper=0.35, note="rounding in the paper"),
        r("NG-D", "not run", "kappa_judge", data="none", ours=None, paper=0.31, note="no LLM endpoint"),
        r("XX-9", "computed", "typo", data="real", ours=2.0, paper=None),
    ]
    where = {"SA-A": ["03_preferences"], "NG-C": ["06_methods_validation", "05_cross_arena"]}
    table = status.status_table(results, _catalogue(), where)
    assert table.columns == list(status.TABLE_COLUMNS)
    assert table["id"].to_list() == ["SA-A", "SA-B", "NG-C", "NG-D", "DR-E", "XX-9"]
    got = dict(zip(table["id"], table["status"]))
    assert got == {
        "SA-A": "simulated",
        "SA-B": "reproduced",
        "NG-C": "differs",
        "NG-D": "not run",
        "DR-E": "not yet",
        "XX-9": "computed",
    }
    row = {k: v for k, v in zip(table.columns, table.row(0))}
    assert row["this_build"] == "beta_length = 0.331 (paper 0.334)\nbeta_factual = 0.15 (paper 0.156)"
    assert row["paper_value"] == "0.334"
    assert row["data_class"] == "BATTLE" and row["data_used"] == "simulated"
    assert row["notebooks"] == "03_preferences"
    ng_c = table.row(2, named=True)
    assert "rounding in the paper" in ng_c["this_build"]  # a difference carries its reason
    assert ng_c["notebooks"] == "06_methods_validation, 05_cross_arena"
    ng_d = table.row(3, named=True)
    assert ng_d["this_build"] == "kappa_judge: not run (no LLM endpoint)"
    assert ng_d["data_used"] == "none"
    de = table.row(4, named=True)
    assert de["this_build"] is None and de["data_used"] is None
    assert table.row(5, named=True)["paper"] == "?"  # unknown IDs are shown, not dropped

    counts = status.status_counts(table)
    assert dict(zip(counts["status"], counts["ids"])) == {
        "reproduced": 1, "assumption": 0, "differs": 1, "computed": 1, "paper inconsistent": 0, "partly simulated": 0,
        "user data": 0, "LLM output": 0, "simulated": 1, "checked": 0, "transcribed": 0, "not run": 1, "not yet": 1,
        "failed": 0,
    }
    on_published = dict(zip(counts["status"], counts["published"]))
    assert on_published["reproduced"] == 1 and on_published["differs"] == 1 and on_published["simulated"] == 0
    assert status.reproduced_on_data(table) == 1
    by_paper = status.status_by_paper(table)
    assert by_paper["paper"].to_list() == ["SA", "NG", "DR", "?"]
    assert by_paper["total"].sum() == table.height


def test_status_from_recorder_files(tmp_path):
    """End to end through the Recorder's JSON files, as the status notebook reads them."""
    a = Recorder(tmp_path, "03_preferences", data="simulated", values=VALUES)
    a.number("SA-A", "beta_length", 0.331)
    b = Recorder(tmp_path, "04_citations", data="published", values=VALUES)
    b.number("SA-B", "tau", 0.4221)
    b.not_run("NG-D", "kappa_judge", reason="no endpoint")
    results, where = status.load_results_by_notebook(tmp_path)
    table = status.status_table(results, _catalogue(), where)
    got = dict(zip(table["id"], table["status"]))
    assert got == {"SA-A": "simulated", "SA-B": "reproduced", "NG-C": "not yet", "NG-D": "not run", "DR-E": "not yet"}
    assert where == {"SA-A": ["03_preferences"], "SA-B": ["04_citations"], "NG-D": ["04_citations"]}

    page = status_page.status_html(table)
    assert page.count("<tr id=") == table.height
    assert "<a href" not in page  # no built chapters given: nothing is linked
    assert "<script" not in page  # the table is complete without JavaScript; the filter is a script of its own
    assert 'data-verdict="reproduced" data-rank="0" data-evidence="published"' in page
    assert '<span class="verdict-badge" data-verdict="reproduced"' in status_page.counts_html(table)
    assert status_page.summary_sentence(table) == (
        "Of 5 analysis IDs, **1 is reproduced from real or published data** (1 on published aggregates); "
        "1 ran only on the simulator, 1 did not run and 2 are in no chapter yet: 5 in all")


def _chapter_nb(path: Path, title: str, sections: list[str]) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(f"# {title}\n\nWhat it reproduces.")]
    nb.cells += [nbformat.v4.new_markdown_cell(s) for s in sections]
    nbformat.write(nb, path)


def test_build_with_chapters_and_a_failure(tmp_path):
    """One row per ID, links named by the chapter title to the section anchor; a failed chapter's IDs read
    'failed', show no number and are not linked."""
    results_dir, chapters_dir = tmp_path / "_results", tmp_path / "chapters"
    chapters_dir.mkdir()
    a = Recorder(results_dir, "03_preferences", data="simulated", values=VALUES)
    a.number("SA-A", "beta_length", 0.331)
    a.number("SA-A", "beta_factual", 0.15)
    b = Recorder(results_dir, "04_citations", data="published", values=VALUES)
    b.number("SA-B", "tau", 0.4221)
    _chapter_nb(chapters_dir / "03_preferences.ipynb", "User preferences", ["(sa-a)=\n## SA-A · Length (Fig 4)"])
    _chapter_nb(chapters_dir / "04_citations.ipynb", "Citations", ["(sa-b)=\n## SA-B · Tau (Table F.1)"])
    (results_dir / "_failed.json").write_text(
        json.dumps({"failed": [{"notebook": "04_citations", "error": "ValueError: boom"}]})
    )
    build = status.load_build(results_dir)
    assert build.failed == {"04_citations": "ValueError: boom"}
    assert set(build.chapters) == {"03_preferences"}
    assert build.failed_ids == {"SA-B": ["04_citations"]}
    assert {r.analysis_id for r in build.results} == {"SA-A"}  # the failed chapter's partial numbers are gone

    table = status.status_table(build.results, _catalogue(), build.where, build.failed_ids)
    got = dict(zip(table["id"], table["status"]))
    assert got["SA-A"] == "simulated" and got["SA-B"] == "failed" and got["NG-C"] == "not yet"
    summary = dict(zip(table["id"], table["summary"]))
    assert summary["SA-A"] == "simulated: 2"
    assert summary["SA-B"] == "chapter 04_citations failed in this build"

    page = status_page.status_html(table, build.chapters)
    assert page.count('<tr id="status-') == table.height == _catalogue().height
    assert '<a href="03_preferences.html#sa-a" title="SA-A · Length (Fig 4)">User preferences</a>' in page
    assert "04_citations.html" not in page and "0.4221" not in page
    assert "<details><summary>simulated: 2</summary>" in page
    assert "beta_length = 0.331 (paper 0.334)" in page
    assert re.search(r'data-verdict="failed"[^>]*>failed</span></td><td class="n">1</td>',
                     status_page.counts_html(table))
    assert "<code>04_citations</code>: ValueError: boom" in status_page.failed_markdown(build.failed)


def test_a_number_carries_its_planted_value_and_note():
    res = Result("SA-D5", "rating x", 990.0, 1000.0, "simulated", "simulated", planted=995.0,
                 note="calibration target: the simulator is tuned to it")
    assert status.describe_result(res) == (
        "rating x = 990 (planted 995; paper 1000) — calibration target: the simulator is tuned to it"
    )


def test_summary_names_the_first_difference():
    rs = [r("SA-A", "match", "q1"), r("SA-A", "differs", "q2", ours=2.0, paper=1.0, note="why"), r("SA-A", "match")]
    assert status.summary_line(rs) == "real: 2 match · 1 differs; differs: q2 = 2 (paper 1)"
    assert status.summary_line([r("SA-A", "match", "q1")]) == "real: 1 match"


def test_html_escapes_text():
    results = [r("SA-A", "differs", "<b>q</b>", note="a & b")]
    page = status_page.status_html(status.status_table(results, _catalogue()))
    assert "<b>q</b>" not in page and "<br>" not in page and "&lt;b&gt;q&lt;/b&gt;" in page and "a &amp; b" in page
    # a reason, a verdict's reason and a not-run reason can carry a user's text (a model or file name): escaped
    hostile = '<img src=x onerror="alert(1)">'
    results = [r("SA-A", "inconsistent", "q", data="published", reason=hostile), r("SA-A", "match", "m"),
               r("NG-D", "not run", "q", data="none", ours=None, reason=hostile),
               r("SA-B", "assumption", "t", data="published", reason=hostile)]
    page = status_page.status_html(status.status_table(results, _catalogue()))
    assert "<img" not in page and page.count("&lt;img src=x onerror=&quot;alert(1)&quot;&gt;") == 3


HOSTILE = "x`y` <script>alert(1)</script> {eval-rst}`z` [a](javascript:b) **c**\n:::{warning}\nd"


def _markdown_html(text: str) -> str:
    """Markdown as the book renders it (CommonMark through markdown-it, MyST's parser)."""
    markdown_it = pytest.importorskip("markdown_it")
    return markdown_it.MarkdownIt("commonmark").render(text)


def test_user_text_reaches_markdown_escaped():
    """A data path or an error message (user input) is shown as text: no tag, link, role or directive survives."""
    name = HOSTILE.replace("\n", " ").replace("</script>", "<b>")  # a file name has no slash
    banner = status_page.build_banner(f"/data/{name}.parquet", 0, 10, [], {})
    failed = status_page.failed_markdown({"07_nuggets": f"ValueError: {HOSTILE}"})
    for text in (banner, failed):
        rendered = _markdown_html(text)
        assert "<script>" not in rendered and "<a " not in rendered and "<strong>c</strong>" not in rendered
        assert "<b>" not in rendered
        assert "&lt;script&gt;" in rendered
    assert failed.count("</div>") == 1  # the box closes once: the message opened none


def test_build_banner_warns_on_simulated_data():
    banner = status_page.build_banner("sample:2000", 0, 100, [], {})
    assert banner.startswith('<div class="admonition warning"><p class="admonition-title">Simulated data</p>')
    real = status_page.build_banner("/data/release/search-arena-chat-24k.parquet", 1, 1000, [], {})
    assert "search-arena-chat-24k.parquet" in real and "/data/release" not in real and "admonition" not in real


# --- the catalogue against ANALYSES.md ------------------------------------------------------------------------


def _analyses_md() -> Path | None:
    for candidate in (os.environ.get("ANALYSES_MD"), REPO.parent / "shared" / "ANALYSES.md", REPO / "ANALYSES.md"):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    return None


SECOND_PASS = "## Second pass"


def _markdown_rows(text: str) -> dict[str, tuple[str, list[str]]]:
    """ID -> (paper code, [what, paper's numbers, class]) from the catalogue tables of ANALYSES.md: rows under a
    ``## ... (CODE, seed ...)`` heading, and the rows of its "Second pass" section, whose paper is the ID's prefix."""
    rows: dict[str, tuple[str, list[str]]] = {}
    section = None
    for line in text.splitlines():
        if line.startswith("## "):
            heading = re.match(r"^##\s+.*\((SA|NG|DR|AE)\b", line)
            section = heading.group(1) if heading else (SECOND_PASS if line.startswith(SECOND_PASS) else None)
            continue
        if section is None or not line.startswith("| "):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if len(cells) == 4 and re.fullmatch(r"[A-Z]{2}-[A-Za-z0-9]+", cells[0]):
            paper = cells[0].split("-")[0] if section == SECOND_PASS else section
            rows[cells[0]] = (paper, cells[1:])
    return rows


def test_markdown_reader_takes_the_second_pass_paper_from_the_id():
    text = ("## Search Arena (SA, seed 000)\n\n| ID | what | paper's numbers | class |\n|---|---|---|---|\n"
            "| SA-T1 | counts | 24,069 | REAL |\n\n## Notes\n\n| SA-XX | not a catalogue row | x | y |\n\n"
            "## Second pass: items the first catalogue missed\n\n| ID | what | paper's numbers | class |\n"
            "|---|---|---|---|\n| DR-T5 | human preference rates (Table 5) | 89.0% | PUB |\n")
    assert _markdown_rows(text) == {"SA-T1": ("SA", ["counts", "24,069", "REAL"]),
                                    "DR-T5": ("DR", ["human preference rates (Table 5)", "89.0%", "PUB"])}


def test_catalogue_shape():
    cat = catalogue.read()
    assert tuple(cat.columns) == catalogue.COLUMNS
    assert cat["analysis_id"].is_unique().all()
    assert set(cat["paper"].unique()) == {"SA", "NG", "DR", "AE"}
    for col in ("what", "paper_numbers", "data_class"):
        assert cat[col].null_count() == 0, col
    assert all(aid.startswith(p + "-") for aid, p in zip(cat["analysis_id"], cat["paper"]))


def test_every_id_of_analyses_md_is_in_the_catalogue():
    path = _analyses_md()
    if path is None:
        pytest.skip("ANALYSES.md not found (set $ANALYSES_MD)")
    text = path.read_text()
    in_md = {aid: paper for aid, (paper, _) in _markdown_rows(text).items()}
    assert len(in_md) > 60
    if SECOND_PASS in text:
        second = text[text.index(SECOND_PASS):]
        assert {a for a in in_md if f"| {a} |" in second}, "the Second pass section's IDs were not read"
    cat = catalogue.read()
    in_csv = dict(zip(cat["analysis_id"], cat["paper"]))
    assert sorted(set(in_md) - set(in_csv)) == []
    assert sorted(set(in_csv) - set(in_md)) == []
    assert in_csv == in_md


def test_catalogue_rows_match_the_markdown_cells():
    path = _analyses_md()
    if path is None:
        pytest.skip("ANALYSES.md not found (set $ANALYSES_MD)")
    rows = _markdown_rows(path.read_text())
    for row in catalogue.read().iter_rows(named=True):
        assert [row["what"], row["paper_numbers"], row["data_class"]] == rows[row["analysis_id"]][1], \
            row["analysis_id"]


def test_a_chapter_that_recorded_nothing(tmp_path):
    """A results file with no results (a chapter that recorded nothing) is fine."""
    (tmp_path / "01_dataset.json").write_text(json.dumps({"notebook": "01_dataset", "results": []}))
    results, where = status.load_results_by_notebook(tmp_path)
    assert results == [] and where == {}
    table = status.status_table(results, catalogue.read(), where)
    assert set(table["status"]) == {"not yet"}
    assert table.height == catalogue.read().height


# --- what reaches the reader --------------------------------------------------------------------------------

#: The project's own jargon and its catalogue's instructions, which no reader should meet.
JARGON = re.compile(r"seed 00\d|extracted text|text we have|published/|\.csv\b|\.ipynb|state it|say the rest|"
                    r"with a note|show both|`", re.IGNORECASE)


def test_paper_values_speak_the_papers_short_names():
    """Sources and notes (shown in every section table) name the papers as SA, NG later/earlier version, DR, AE,
    never the project's files or seeds."""
    bad = [f"{v.file.rsplit('/', 1)[-1]}, line {v.line}: {text!r}"
           for v in paper_values.table().values() for text in (v.source, v.note) if JARGON.search(text)]
    assert bad == []
    sources = {v.source.split(",")[0].split(" ")[0] for v in paper_values.table().values() if v.paper is not None}
    assert sources <= {"SA", "NG", "DR", "AE", "the"}, sources


def test_the_catalogue_reaches_the_reader_without_instructions():
    raw = catalogue.read()
    shown = catalogue.for_reader(raw)
    assert shown.shape == raw.shape and shown["analysis_id"].to_list() == raw["analysis_id"].to_list()
    bad = [f"{row['analysis_id']} {col}: {row[col]!r}" for row in shown.iter_rows(named=True)
           for col in catalogue.SHOWN if JARGON.search(row[col])]
    assert bad == []
    # the rewording touched only the cells it names
    wording = catalogue.reader_wording()
    changed = {(a, c) for a, r0, r1 in zip(raw["analysis_id"], raw.iter_rows(named=True), shown.iter_rows(named=True))
               for c in catalogue.SHOWN if r0[c] != r1[c]}
    assert changed == set(wording)


def test_reader_wording_rejects_bad_rows(tmp_path):
    path = tmp_path / "w.csv"
    path.write_text("analysis_id,column,text\nSA-T1,section,x\n")
    with pytest.raises(ValueError, match="line 2: column 'section' is not one a reader sees"):
        catalogue.reader_wording(path)
    path.write_text("analysis_id,column,text\nSA-T1,what,x\nSA-T1,what,y\n")
    with pytest.raises(ValueError, match="line 3: SA-T1 / what is reworded twice"):
        catalogue.reader_wording(path)
    with pytest.raises(ValueError, match=r"IDs the catalogue does not have: \['XX-1'\]"):
        catalogue.for_reader(catalogue.read(), {("XX-1", "what"): "x"})


# --- the index of every figure and table of the papers -------------------------------------------------------

SEEDS = REPO.parent / "shared" / "seeds"
#: Seed text of each paper (NG: its later version, whose numbers the index uses) and how its captions start.
CAPTIONS = {"SA": ("000_", r"(Figure|Table) ([A-Z]\.)?(\d+):"), "NG": ("002_", r"(Figure|Table) ([A-Z]\.)?(\d+):"),
            "DR": ("003_", r"(Figure|Table) ([A-Z]\.)?(\d+):"), "AE": ("004_", r"(Figure|Table) ([A-Z]\.)?(\d+)\. ")}


def test_the_figure_catalogue_lists_88_items_with_an_id_or_a_reason():
    figures = catalogue.read_figures()
    assert figures.height == 88
    assert dict(figures.group_by("paper").len().iter_rows()) == {"SA": 35, "NG": 19, "DR": 17, "AE": 17}
    assert dict(figures.group_by("reproducible").len().iter_rows()) == {"yes": 71, "no": 17}
    ids = {a for row in catalogue.figure_ids(figures) for a in row}
    assert ids <= set(catalogue.read()["analysis_id"]), sorted(ids - set(catalogue.read()["analysis_id"]))
    ae8 = figures.filter((pl.col("paper") == "AE") & (pl.col("kind") == "Figure")
                         & pl.col("number").str.starts_with("8"))
    assert ae8.select("number", "analysis_ids").rows() == [("8a", "AE-F8"), ("8b", "AE-F8b")]
    # NG's earlier version: its 11 figures and 2 tables, each once
    earlier = figures.filter(pl.col("number_earlier_version").is_not_null())
    got = sorted(zip(earlier["kind"], earlier["number_earlier_version"].cast(pl.Int64)))
    assert got == sorted([("Figure", n) for n in range(1, 12)] + [("Table", 1), ("Table", 2)])


@pytest.mark.skipif(not SEEDS.is_dir(), reason="the papers' texts (../shared/seeds) are not here")
def test_the_figure_catalogue_has_every_caption_of_the_papers():
    """Independently of the audit: the numbers of the captions in each paper's text (``Figure D.4:``, AE's
    ``Figure 8.``) are exactly the catalogue's, AE's 8a and 8b being one caption."""
    figures = catalogue.read_figures()
    for paper, (prefix, pattern) in CAPTIONS.items():
        text = next(SEEDS.glob(f"{prefix}*.txt")).read_text(encoding="utf-8")
        in_text = {(m[0], (m[1] or "") + m[2]) for m in re.findall(pattern, text)}
        rows = figures.filter(pl.col("paper") == paper)
        listed = {(k, n.rstrip("ab")) for k, n in zip(rows["kind"], rows["number"])}
        assert listed == in_text, (paper, sorted(listed ^ in_text))


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("XX,Figure,1,,c,,no,diagram", "paper 'XX'"),
        ("SA,Plate,1,,c,,no,diagram", "kind 'Plate'"),
        ("SA,Figure,1,,c,,maybe,", "'yes' or 'no'"),
        ("SA,Figure,1,,c,,yes,", "names the analysis IDs"),
        ("SA,Figure,1,,c,SA-T1,no,diagram", "gives the reason, and no analysis ID"),
        ("SA,Figure,1,2,c,SA-T1,yes,", "only NG has an earlier version"),
    ],
)
def test_the_figure_catalogue_rejects_bad_rows(tmp_path, row, message):
    path = tmp_path / "figures.csv"
    path.write_text(",".join(catalogue.FIGURE_COLUMNS) + f"\n{row}\n")
    with pytest.raises(ValueError, match=f"line 2: .*{re.escape(message)}"):
        catalogue.read_figures(path)
    path.write_text(",".join(catalogue.FIGURE_COLUMNS) + "\nSA,Table,1,,c,SA-T1,yes,\nSA,Table,1,,d,SA-T1,yes,\n")
    with pytest.raises(ValueError, match="line 3: SA Table 1 is listed twice"):
        catalogue.read_figures(path)


def test_the_index_links_reproduced_figures_and_gives_the_others_a_reason(tmp_path):
    chapters_dir = tmp_path / "chapters"
    chapters_dir.mkdir()
    _chapter_nb(chapters_dir / "07_nuggets.ipynb", "Nuggets <&>", ["(ng-f2)=\n## NG-F2 · K-S tests (Figure 2)"])
    figures = pl.DataFrame(
        [("NG", "Figure", "2", "3", "ECDFs", "NG-F2", "yes", None),
         ("NG", "Figure", "1", "1", "Example <battle>", None, "no", "example"),
         ("NG", "Table", "1", "1", "Inversions", "NG-T1;NG-Q", "yes", None)],
        schema={c: pl.String for c in catalogue.FIGURE_COLUMNS}, orient="row")
    entries = navigation.paper_figure_index(figures, navigation.built_chapters(chapters_dir),
                                            catalogue.figure_ids(figures))
    assert [(e.label, e.earlier, e.anchor) for e in entries] == [
        ("Fig 2", "Fig 3", "fig-ng-fig-2"), ("Fig 1", "Fig 1", "fig-ng-fig-1"),
        ("Table 1", "Table 1", "fig-ng-table-1")]
    assert entries[0].links == (("NG-F2", "07_nuggets.html#ng-f2", "NG-F2 · K-S tests (Figure 2)"),)
    assert entries[1].links == () and entries[1].reason == "example"
    assert [href for _, href, _ in entries[2].links] == [None, None]  # no section in this build: named only
    page = status_page.index_html(entries, {"NG-F2": "reproduced"})
    assert page.count('<tr id="fig-') == 3 and '<a href="07_nuggets.html#ng-f2">' in page
    assert page.count('class="verdict-badge"') == 1 and status_page.verdict_badge("reproduced") in page
    assert "earlier version: Fig 3" in page and "not reproducible: example" in page
    assert "Example &lt;battle&gt;" in page and "<battle>" not in page
    assert status_page.index_summary(entries).startswith(
        "The four papers (NG in two versions, counted once) have **3 numbered figures and tables**")
    # a figure is as reproduced as its least reproduced analysis: Table 1's NG-Q simulated, NG-T1 not yet built
    verdicts = {"NG-F2": "reproduced", "NG-T1": "reproduced", "NG-Q": "simulated"}
    summary = status_page.index_summary(entries, verdicts)
    assert "1 cannot be reproduced" in summary and "Of the other 2, in this build: **1 reproduced** · 1 simulated" in (
        summary)
    assert [status_page.figure_verdict(e, verdicts) for e in entries] == ["reproduced", None, "simulated"]
    assert "**none reproduced** · 2 not yet" in status_page.index_summary(entries, {"NG-Q": "simulated"})


# --- issue 43: the page at a glance ---------------------------------------------------------------------------


def _every_verdict_table() -> pl.DataFrame:
    """A status table with IDs of every verdict (two reproduced on published data, one on real data, one worked
    example; the paper inconsistent beside one reproduced ID)."""
    rows = []
    specs = [(v, {"simulated": "simulated", "reproduced": "published"}.get(v, "")) for v in status.VERDICTS]
    specs += [("reproduced", "published"), ("reproduced", "published"), ("reproduced", "real"),
              ("reproduced", "no data"), ("partly simulated", "real"), ("simulated", "simulated")]
    for i, (verdict, basis) in enumerate(specs):
        row = dict.fromkeys(status.TABLE_COLUMNS)
        row |= {"id": f"SA-X{i}", "paper": "SA", "what": f"<b>what {i}</b>", "status": verdict, "basis": basis or None,
                "summary": "s", "groups": "published, simulated"}
        if i == len(status.VERDICTS) + 1:
            row["inconsistent"] = "text vs figure"
        rows.append(row)
    return pl.DataFrame(rows, schema={c: pl.String for c in status.TABLE_COLUMNS}, orient="row")


def test_the_summary_counts_every_verdict_and_adds_up_to_the_ids():
    """Point 1: every class with IDs is counted in the sentence (the bug: 'partly simulated' and 'paper
    inconsistent' were left out), and the counts add up to the number of IDs; the table lists every class."""
    table = _every_verdict_table()
    sentence = status_page.summary_sentence(table)
    assert sentence.startswith(f"Of {table.height} analysis IDs, **4 are reproduced from real or published data** "
                               "(1 on real data; 3 on published aggregates; in 1 of them the paper contradicts itself")
    assert sentence.endswith(f": {table.height} in all")
    per = dict(table.group_by("status").len().iter_rows())
    expected = {v: per[v] for v in status.VERDICTS} | {"reproduced": 1}  # the worked example (5 reproduced, 4 on data)
    for verdict, n in expected.items():
        assert f"{n} {status.VERDICT_PHRASE[verdict][n > 1]}" in sentence, verdict
    said = re.findall(r"(?:, |; | and |\*\*)(\d+) ", re.sub(r" \([^)]*\)", "", sentence))  # the counts of classes
    assert sum(map(int, said)) == table.height
    page = status_page.counts_html(table)
    counted = dict(re.findall(r'data-verdict="([^"]+)"[^>]*>[^<]+</span></td><td class="n">(\d+)</td>', page))
    assert {v: int(n) for v, n in counted.items()} == {v: per.get(v, 0) for v in status.VERDICTS}
    assert f'<td>total</td><td class="n">{table.height}</td>' in page
    assert "&lt;b&gt;what 0&lt;/b&gt;" in page and "<b>what" not in page  # the example's tooltip, escaped
    front = status_page.front_page_counts(table, "chapters/99_reproduction_status")
    assert 'href="chapters/99_reproduction_status.html#summary"' in front
    assert "4 are reproduced from real or published data" in front


@pytest.mark.parametrize(("verdict", "basis", "said"), [
    ("reproduced", "published", "on published data"), ("checked", "checked", ""),
    ("partly simulated", "real", "on real data, the rest simulated"), ("simulated", "simulated", ""),
    ("reproduced", "no data", "worked example, no data"), ("not run", "", ""), ("LLM output", "llm", "")])
def test_a_verdict_says_what_it_rests_on_once(verdict, basis, said):
    """Point 4: no "checked on checked data", no "partly simulated on real data"."""
    assert status_page.basis_text(verdict, basis) == said
    badge = status_page.section_badge({"status": verdict, "basis": basis})
    assert badge.startswith(status_page.verdict_badge(verdict)) and (said in badge)


def test_every_verdict_has_a_badge_colour_and_a_meaning():
    assert set(status_page.VERDICT_STYLE) == set(status.VERDICTS) == set(status.STATUS_MEANING)
    assert set(status.VERDICT_PHRASE) == set(status.VERDICTS)
    assert "&lt;" in status_page.verdict_badge("<x>") and "<x>" not in status_page.verdict_badge("<x>")


def test_a_chapter_says_what_its_sections_ran_on_only_where_they_differ():
    rows = [{"id": "DR-T89", "status": "reproduced", "basis": "real"},
            {"id": "DR-T3", "status": "reproduced", "basis": "published"},
            {"id": "DR-S", "status": "simulated", "basis": "simulated"},
            {"id": "DR-F5", "status": "simulated", "basis": "simulated"},
            {"id": "DR-X", "status": "not run", "basis": None}]
    line = status_page.chapter_data_line(rows)
    assert "<strong>real data</strong>: <a href=\"#dr-t89\">DR-T89</a>" in line
    assert '<strong>the simulator</strong>: <a href="#dr-s">DR-S</a>, <a href="#dr-f5">DR-F5</a>' in line
    assert "not run in this build</strong>: <a href=\"#dr-x\">DR-X</a>" in line
    assert status_page.chapter_data_line(rows[2:]) == ""  # the simulator alone (and one not run): no line


def test_the_filter_script_reads_only_the_tables_attributes():
    """The status table's script is the page's own (no data in it) and finds the table, its rows and their verdicts
    by what :func:`status_page.status_html` writes."""
    script = status_page.table_script()
    assert script.startswith("<script>") and script.endswith("</script>") and script.count("<script") == 1
    page = status_page.status_html(status.status_table([r("SA-A", "match")], _catalogue()))
    for script_needle, page_needle in (("table.repro-status", 'class="repro-status"'), ('"status-"', 'id="status-'),
                                       ("dataset.rank", "data-rank="), ('"paper"', 'class="paper"')):
        assert script_needle in script and page_needle in page
