"""The status rule, the recorder's persistence and paper-value lookup, the paper-values reader, the book's tables."""

from __future__ import annotations

import json
from dataclasses import asdict

import numpy as np
import polars as pl
import pytest

from bookbuild import paper_values
from bookbuild.evidence import compare
from bookbuild.paper_values import PaperValue
from bookbuild.recorder import Recorder, Result
from bookbuild.section_tables import status_badge, subject_table
from bookbuild.status import describe_result
from bookbuild.tables import folded, html_table, readable


@pytest.mark.parametrize(
    ("ours", "paper", "data", "tol", "bound", "expected"),
    [
        (16.32, 16.3, "real", 0.05, None, "match"),
        (16.40, 16.3, "real", 0.05, None, "differs"),
        (16.40, 16.3, "simulated", 0.05, None, "simulated"),
        (None, 16.3, "real", 0.05, None, "not run"),
        (float("nan"), 16.3, "real", 0.05, None, "not run"),
        (3.0, None, "real", None, None, "computed"),
        (12.0, 11.0, "real", 0.0, "lower", "match"),
        (10.0, 11.0, "real", 0.0, "lower", "differs"),
        (0.004, 0.01, "published", 0.0, "upper", "match"),
        ("a", "a", "real", None, None, "match"),
    ],
)
def test_compare(ours, paper, data, tol, bound, expected):
    assert compare(ours, paper, data, tol, bound) == expected


def _write_values(path, rows):
    path.write_text("analysis_id,quantity,paper,tol,bound,source,note\n" + "".join(r + "\n" for r in rows))


@pytest.fixture
def values(tmp_path):
    _write_values(tmp_path / "xx.csv", ["XX-1,count,4326,0,,Paper §1,", "XX-1,share,,,,,ours only",
                                        "XX-2,users,11,0,lower,Paper §2,"])
    return paper_values.read_table(tmp_path / "xx.csv")


def test_recorder_persists_after_each_call_and_coerces_numpy(tmp_path, values, capsys):
    rec = Recorder(tmp_path / "out", "01_x", data="real", values=values)
    rec.number("XX-1", "count", np.int64(4326))
    rec.number("XX-1", "share", np.float32(0.5))
    rec.number("XX-1", "count", 4325)  # replaces the earlier value of the same quantity
    saved = json.loads((tmp_path / "out" / "01_x.json").read_text())["results"]
    assert [(r["quantity"], r["ours"], r["status"]) for r in saved] == [("share", 0.5, "computed"),
                                                                        ("count", 4325.0, "differs")]
    assert capsys.readouterr().out == ""  # recording prints nothing: a section shows the numbers
    with pytest.raises(TypeError, match="numbers or strings"):
        rec.number("XX-1", "count", [1, 2])


def test_recorder_looks_up_paper_values(tmp_path, values):
    rec = Recorder(tmp_path / "out", "01_x", data="real", values=values)
    rec.number("XX-1", "count", 4325)
    rec.number("XX-1", "share", 0.5, note="extra")
    rec.number("XX-2", "users", 12)
    rec.number("XX-2", "users", 13, data="simulated", planted=12.5)
    got = {(r.analysis_id, r.quantity): r for r in rec.results}
    assert got[("XX-1", "count")].status == "differs" and got[("XX-1", "count")].source == "Paper §1"
    assert got[("XX-1", "share")].status == "computed" and got[("XX-1", "share")].note == "ours only; extra"
    assert got[("XX-2", "users")].status == "simulated" and got[("XX-2", "users")].planted == 12.5
    # a quantity the paper has no row for (a model of a later release) is a new row, never an error
    rec.number("XX-1", "new-model-2027 rating", 1.0)
    new = rec.results[-1]
    assert (new.paper, new.status, new.source, new.tol) == (None, "computed", "", None)
    table = rec.section("XX-1")._repr_html_()
    assert "4,326" not in table and "4326" in table and "—" in table and "differs" in table
    assert "new-model-2027 rating" in table
    part = rec.section("XX-1", keep=lambda q: q == "share")._repr_html_()
    assert ">share<" in part and ">count<" not in part
    assert "planted" in rec.section("XX-2")._repr_html_()
    # a bound is shown as the paper states it ("more than 11"), in the section, the text line and the status
    rec.number("XX-2", "users", 12)
    assert "&gt; 11" in rec.section("XX-2")._repr_html_()
    assert describe_result(got_users := rec.results[-1]) == "users = 12 (paper > 11)" and got_users.bound == "lower"
    saved = json.loads((tmp_path / "out" / "01_x.json").read_text())["results"]
    assert [r["bound"] for r in saved if r["quantity"] == "users"] == ["lower"]
    rec.not_run("XX-1", "share", reason="no endpoint")
    assert rec.results[-1].status == "not run" and rec.results[-1].note == "ours only; no endpoint"


def test_recorder_without_a_table_reads_the_library_paper_values(tmp_path):
    rec = Recorder(tmp_path, "03_x", data="published")
    key = next(iter(paper_values.table()))
    assert rec.paper_value(*key) == paper_values.lookup(*key)
    # no row in the papers' tables: recorded with no paper value, and no "add a row" message reaches a user
    rec.number("XX-9", "nothing", 1.0)
    assert rec.paper_value("XX-9", "nothing") is None and rec.results[-1].paper is None


def test_a_number_without_a_value_records_its_reason(tmp_path):
    rec = Recorder(tmp_path, "03_x", data="user", values={})
    rec.number("SA-31", "sonar-pro win rate (%)", float("nan"), reason="sonar-pro has no decided battle in this data")
    rec.number("SA-31", "sonar-pro-high win rate (%)", 51.0, reason="sonar-pro has no decided battle in this data")
    first, second = rec.results
    assert (first.status, first.reason, first.ours) == ("not run", "sonar-pro has no decided battle in this data", None)
    assert (second.status, second.ours, second.reason, second.data) == ("computed", 51.0, "", "user")


def test_evidence_classes_and_aliases(tmp_path):
    rec = Recorder(tmp_path, "07_x", data="simulated", llm="gpt-4.1 @ http://127.0.0.1:8000", values={})
    rec.number("NG-Q", "share", 12.0, data="llm-cache")  # an older results file's name for an LLM's output
    rec.number("NG-Q", "count", 3.0, data="checked")
    llm_row, checked = rec.results
    assert (llm_row.data, llm_row.evidence, llm_row.llm) == ("llm", "llm", "gpt-4.1 @ http://127.0.0.1:8000")
    assert (checked.evidence, checked.llm) == ("checked", "")
    table = rec.section("NG-Q")._repr_html_()
    assert "LLM output" in table and "gpt-4.1 @ http://127.0.0.1:8000" in table and "check of the paper" in table
    with pytest.raises(ValueError, match="unknown data kind 'reel'"):
        rec.number("NG-Q", "x", 1.0, data="reel")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (["XX-1,count,1,abc,,,"], "line 2, column tol"),
        (["XX-1,count,1,0,sideways,,"], "column bound"),
        (["XX-1,count,1,0,,,", "XX-1,count,2,0,,,"], "line 3: duplicate"),
        ([",count,1,0,,,"], "must both be non-empty"),
    ],
)
def test_paper_values_reject_bad_rows(tmp_path, rows, message):
    _write_values(tmp_path / "xx.csv", rows)
    with pytest.raises(ValueError, match=message):
        paper_values.read_table(tmp_path / "xx.csv")


def test_html_table_shows_every_row_and_escapes():
    frame = pl.DataFrame({"name": [f"<m{i}>" for i in range(40)], "x": [i / 3 for i in range(40)]})
    out = html_table(frame)._repr_html_()
    assert out.count("<tr>") == 41 and "&lt;m39&gt;" in out and "<m39>" not in out and "13" in out
    # a long table is folded whole behind a line naming it and its rows, never cut by a fixed-height box
    assert out.startswith("<details><summary>The table: all 40 rows (click to show)</summary>")
    assert "max-height" not in out and "position:sticky" not in out
    named = html_table(frame, caption="Fig <9>")._repr_html_()
    assert named.startswith("<details><summary>Fig &lt;9&gt;: all 40 rows (click to show)</summary>")
    flags = html_table(pl.DataFrame({"ok": [True, False], "p": [0.5, float("nan")]}))._repr_html_()
    assert ">yes<" in flags and ">no<" in flags and ">—<" in flags and "nan" not in flags and "True" not in flags
    assert not html_table(frame.head(15))._repr_html_().startswith("<details>")  # FOLD_ROWS rows stay open
    assert not html_table(frame, fold_rows=None)._repr_html_().startswith("<details>")
    flags = html_table(pl.DataFrame({"agree": [True, False, None]}))._repr_html_()
    assert [c.split(">")[-1] for c in flags.split("</td>")[:-1]] == ["yes", "no", "—"]


def test_folded_wraps_a_table_in_closed_details():
    out = folded(html_table(pl.DataFrame({"a": [1]})), "All <1> numbers")._repr_html_()
    assert out.startswith("<details><summary>All &lt;1&gt; numbers</summary><div") and out.endswith("</details>")
    assert "open" not in out.split(">")[0]


def _rows(table_html: str) -> list[list[str]]:
    """The body rows of a rendered table as lists of cell HTML."""
    body = table_html.split("<tbody>")[1].split("</tbody>")[0]
    return [row.split("</td>")[:-1] for row in body.split("</tr>")[:-1]]


def test_section_table_says_shared_notes_and_sources_once(tmp_path):
    """SA-E2's note on nine rows, AE-F8's on 24: a note part every row has goes under the table once; one that
    several rows share becomes a numbered footnote; a source common to every paper value is said once."""
    rows = [f"XX-1,share {i},{i},0.5,,Paper Fig 2," + ("calibration target" if i < 3 else "") for i in range(4)]
    _write_values(tmp_path / "xx.csv", rows)
    values = paper_values.read_table(tmp_path / "xx.csv")
    rec = Recorder(tmp_path / "out", "01_x", data="published", values=values)
    for i in range(4):
        rec.number("XX-1", f"share {i}", float(i), note=f"macro average; CI {i}" if i else "macro average")
    out = rec.section("XX-1")._repr_html_()
    assert out.count("macro average") == 1 and out.count("calibration target") == 1
    assert out.count("Paper Fig 2") == 1 and "Paper&#x27;s values: Paper Fig 2." in out
    assert "Every row: macro average." in out and "[1] calibration target." in out
    notes = [cells[-1] for cells in _rows(out)]
    assert [n.split(">")[-1] if "<sup>" not in n else n.split('">', 1)[1] for n in notes] == [
        " <sup>[1]</sup>", "CI 1 <sup>[1]</sup>", "CI 2 <sup>[1]</sup>", "CI 3"]


def test_section_table_collapses_the_numbers_that_did_not_run(tmp_path, values):
    """SA-C1, SA-C2, NG-Q: their not-run rows become one line with the count, the list folded, the reason once."""
    rec = Recorder(tmp_path / "out", "01_x", data="real", values=values)
    rec.number("XX-1", "count", 4326)
    rec.not_run("XX-1", "share", reason="no LLM endpoint")
    only_one = rec.section("XX-1")._repr_html_()
    assert len(_rows(only_one)) == 2  # a single not-run number keeps its own row
    rec.not_run("XX-2", "users", reason="no LLM endpoint")
    rec.results.append(Result(**{**asdict(rec.results[-1]), "analysis_id": "XX-1", "quantity": "extra"}))
    out = rec.section("XX-1")._repr_html_()
    body = _rows(out)
    assert len(body) == 2 and "2 numbers not run" in body[1][0] and out.count("no LLM endpoint") == 1
    assert "<li>share</li>" in out and "<li>extra" in out


def test_section_table_shows_the_papers_inconsistency_with_its_reason(tmp_path):
    path = tmp_path / "xx.csv"
    path.write_text(",".join(paper_values.COLUMNS) + "\nXX-1,battles,5098,0,,Paper §4,,inconsistent: text vs figure\n"
                    "XX-1,kappa,0.3,0.005,,Paper §4,\n")
    rec = Recorder(tmp_path / "out", "01_x", data="published", values=paper_values.read_table(path))
    rec.number("XX-1", "battles", 5097, note="<b>the figure</b>")
    rec.number("XX-1", "kappa", 0.301)
    out = rec.section("XX-1")._repr_html_()
    assert "paper inconsistent (text vs figure)" in out and ">match<" in out
    assert "<b>the figure</b>" not in out and "&lt;b&gt;the figure&lt;/b&gt;" in out


def test_tables_fit_the_column_and_name_their_columns_in_words():
    frame = pl.DataFrame({"p_two_sided_holm": [0.5], "ci_lower": [1.0], "model name": ["x"]})
    out = html_table(frame, notes=["Note <i>once</i>."], headers={"ci_lower": "95% CI, lower"})._repr_html_()
    assert ">p two sided holm<" in out and ">95% CI, lower<" in out and ">model name<" in out
    assert "max-width:100%" in out and "overflow-wrap:anywhere" in out and "margin-bottom" in out
    assert "Note &lt;i&gt;once&lt;/i&gt;." in out
    assert readable("ci_upper") == "CI upper" and readable("n_bootstrap") == "n bootstrap"


def test_a_simulated_miss_beyond_the_tolerance_says_why(tmp_path):
    """Issue 35: calibration targets that miss were shown without a reason where they are shown."""
    values = {("SA-F6L", "beta social_media"): PaperValue("SA-F6L", "beta social_media", 0.057, 0.01, None,
                                                          "SA Fig 6", "", "x.csv", 2)}
    rec = Recorder(tmp_path, "04_x", data="simulated", values=values)
    rec.number("SA-F6L", "beta social_media", 0.104, note="calibration target", interval=(0.03, 0.18))
    assert rec.results[-1].note == ("calibration target; misses the target by +0.047 (tolerance 0.01); its 95% "
                                    "interval [0.03, 0.18] covers the target: sampling noise of one simulated release")
    rec.number("SA-F6L", "beta social_media", 0.104, interval=(0.09, 0.12))
    assert "does not cover the target" in rec.results[-1].note
    rec.number("SA-F6L", "beta social_media", 0.06, interval=(0.09, 0.12))  # within the tolerance: nothing to say
    assert rec.results[-1].note == ""


def test_a_note_is_split_only_outside_brackets():
    """Issue 35: AE-T34's footnotes split mid-sentence at the semicolon inside "(Google: all 21 participants; each
    engine: its 7)"."""
    from bookbuild.section_tables import note_parts

    note = ("Table 4 prints t to 2 decimals; n is not published: 21 vs 7 (Google: all 21 participants; each engine: "
            "its 7) is an assumption; calibration target")
    assert note_parts(note) == ["Table 4 prints t to 2 decimals",
                                "n is not published: 21 vs 7 (Google: all 21 participants; each engine: its 7) is an "
                                "assumption", "calibration target"]
    assert note_parts("a [b; c]; d") == ["a [b; c]", "d"] and note_parts("") == []


def test_subject_table_shows_one_row_per_subject():
    """Issue 43: SA-D5's leaderboard reads one row per model (rating and rank together), not rating and rank rows in
    turn; statuses as badges (one when they agree), notes every row has said once."""

    def res(q, ours, paper, status, note="calibration target"):
        return Result("SA-D5", q, ours, paper, "real", status, source="SA Table D.1", note=note)

    rs = [res("<m> rating", 1141.26, 1150.1, "match"), res("<m> rank", 1.0, 1.0, "match"),
          res("b rating", 990.0, 1000.0, "differs", "calibration target; off by 10"), res("b rank", 9.0, 9.0, "match"),
          res("c rating", 900.0, None, "computed"), Result("SA-X", "d rating", 1.0, 1.0, "real", "match")]
    out = subject_table(rs, "SA-D5", ("rating", "rank"), subject="model", digits=1).html
    body = out[out.index("<tbody>"):]
    assert body.count("<tr>") == 3 and "&lt;m&gt;" in body and "<m>" not in body and "d rating" not in out
    assert "1141.3 (rank 1)" in body and "1150.1 (rank 1)" in body and "900</td>" in body
    assert body.count(status_badge("match")) == 2 and f"rating {status_badge('differs')}" in body
    assert "Every row: calibration target." in out and "off by 10" in body and "values: SA Table D.1." in out
    with pytest.raises(ValueError, match="no SA-D5 quantity ends with one of"):
        subject_table(rs, "SA-D5", ("share",))
