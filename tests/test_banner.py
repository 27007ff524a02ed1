"""The data banner and the names of a user's inputs (issues 25 item 2, 48): nothing a user's file is called
becomes live HTML, a link or a path of the build machine; a user's file is never called real public data."""

from __future__ import annotations

import json

import pytest
from markdown_it import MarkdownIt

from bookbuild import banner

PAYLOADS = ["ta_<img src=x onerror=alert(1)>.jsonl", "a`b``<script>alert(1)</script>.json",
            "``<img src=x onerror=alert(2)>``.csv", "[click](javascript:alert(3)).parquet", "x & y.jsonl"]
MD = MarkdownIt("commonmark")  # raw HTML on, as MyST renders it


def _html(markdown: str) -> str:
    return MD.render(markdown)


@pytest.mark.parametrize("name", PAYLOADS)
def test_a_name_in_a_code_span_renders_as_its_own_text(name):
    html = _html(banner.md_code(name))
    assert "<img" not in html and "<script" not in html and "<a " not in html
    assert html.count("<code>") == 1
    text = html.removeprefix("<p><code>").removesuffix("</code></p>\n")
    assert text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&").replace("&quot;", '"') == name


def test_the_banner_names_a_user_file_with_its_hash_and_never_its_folder(tmp_path, monkeypatch):
    path = tmp_path / "deep" / "ta_<img src=x onerror=alert(1)>.jsonl"
    recorded = tmp_path / "inputs.json"
    recorded.write_text(json.dumps({str(path): {"name": path.name, "sha256": "0123456789abcdef" * 4, "rows": 544,
                                                "unit": "battles", "kind": "file"}}))
    monkeypatch.setenv(banner.INPUTS_ENV, str(recorded))
    detail = banner.source_line(str(path), "Text Arena battles") + f"Read from {path}."
    md = banner.data_banner(banner.kind_of(str(path)), detail, paths=[str(path)])
    html = _html(md)
    assert "<img" not in html and str(tmp_path) not in md
    assert "the user's file" in md and "sha256 0123456789ab…" in md and "544 battles" in md
    assert "real public data" not in md and banner.kind_of(str(path)) == "user"
    assert banner.kind_of("sample:10") == "simulated" and banner.kind_of("hf") == "real"


def test_outside_a_build_a_user_input_is_named_by_its_file_name_only(tmp_path, monkeypatch):
    monkeypatch.delenv(banner.INPUTS_ENV, raising=False)
    assert banner.user_input(str(tmp_path / "records.jsonl")) == "the user's file `records.jsonl`"
    assert banner.scrub(f"from {tmp_path}/a.jsonl and {tmp_path}", [str(tmp_path / "a.jsonl")]) == (
        f"from a.jsonl and {tmp_path}")


def test_load_summary_counts_every_drop_and_never_shows_an_absolute_path(tmp_path):
    from analysis_lib.search_arena.loader import LoadReport

    rep = LoadReport(source=str(tmp_path / "sub" / "release.parquet"), n_raw=1200, n_rows=1150,
                     dropped={"no model ids": 50, "empty": 0}, flags={"no vote (winner is null)": 600},
                     unmapped_models=["new-model", "{download}`/etc/hostname`"])
    text = banner.load_summary(rep, root=tmp_path)
    assert text.startswith("Battle data: `sub/release.parquet`: 1,200 rows read, 1,150 kept.")
    assert "Dropped: 50 no model ids." in text and "empty" not in text  # zero counts left out
    assert "Flagged (kept, counted): 600 no vote (winner is null)." in text
    assert "`new-model`, `` {download}`/etc/hostname` ``" in text  # names in code spans nothing in them closes
    outside = banner.load_summary(rep, root=tmp_path / "elsewhere")
    assert "`release.parquet`" in outside and str(tmp_path) not in outside
    rep.source = "simulator (n=2,000, seed=0)"
    assert banner.load_summary(rep).startswith("Battle data: `simulator (n=2,000, seed=0)`")


def test_a_simulated_banner_names_the_sections_it_concerns():
    """Issue 43: a chapter that mixes data (DR-Arena, the answer engines) says which sections are simulated, not that
    every number of the page is."""
    scoped = banner.data_banner("simulated", "Match logs: 12 agents.", simulator="DR-Arena simulation study",
                                rerun="make book MATCH_LOGS=dir", scope="the match-log sections (DR-S, DR-T6)")
    assert "The numbers of the match-log sections (DR-S, DR-T6) come from" in scoped
    assert "numbers on this page" not in scoped and "other sections ran on the data their own banners name" in scoped
    plain = banner.data_banner("simulated")
    assert "marked <em>simulated</em> on this page (each section" in plain and "numbers on this page come" not in plain
