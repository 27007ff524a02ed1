"""The next release: every chapter that reads battles runs on a release the papers never saw (new models, no
citation-style field, no intent and language labels, other column order and extra columns), and the comparison
with the papers is a layer on top: a row without a paper value is a new row, a missing optional field skips one
analysis, a user's file is user data."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
from pathlib import Path

import other_release
import polars as pl
import pytest
import release_variants as variants

from analysis_lib import fetch
from analysis_lib.search_arena import bt, loader, release
from bookbuild import fields

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def releases(tmp_path_factory) -> dict[str, Path]:
    return variants.write(tmp_path_factory.mktemp("releases"), n=900, seed=3)


def test_new_models_are_new_rows_and_the_anchor_falls_back(releases):
    battles, report = loader.load_battles_report(releases["new_models"])
    models = set(battles["model_a"]) | set(battles["model_b"])
    assert {"sonar-2026-search", "gpt-5-search-2026", variants.NEW_MODEL} <= models
    assert "gpt-4o-search" not in models  # the paper's anchor was renamed away
    voted = bt.prepare_battles(battles).frame
    assert bt.present_anchor(voted) is None and bt.present_anchor(voted, "sonar") == "sonar"
    board = bt.leaderboard(voted, rounds=0).to_frame()
    assert {"sonar-2026-search", variants.NEW_MODEL} <= set(board["model"])
    # no anchor: the ratings' mean is 1000 (Elo scale, 400 log10 units)
    assert board["rating"].mean() == pytest.approx(1000.0, abs=1e-6)
    assert report.absent == []


@pytest.mark.parametrize(("name", "absent"), [
    ("no_citation_style", ["citation_format_standardized"]),
    ("no_labels", ["primary_intent", "secondary_intent", "languages"]),
    ("reordered", []),
])
def test_optional_fields_are_reported_not_refused(releases, name, absent):
    check = release.validate_release(releases[name])  # the door check passes it
    assert sorted(check.absent) == sorted(absent)
    battles, report = loader.load_battles_report(releases[name])
    assert sorted(report.absent) == sorted(absent)
    base, _ = loader.load_battles_report(releases["reordered"])
    assert battles.height == base.height  # nothing dropped for a missing label
    if name == "no_labels":
        # languages derived as the paper derived them: a detector on the prompt, one per conversation
        assert report.has("languages") and not report.has("primary_intent")
        assert battles["language"].null_count() == 0 and battles["languages"].list.len().max() == 1
        assert battles["primary_intent"].null_count() == battles.height
        assert "py3langid" in report.derived["languages"]


def test_a_release_with_extra_columns_in_another_order_loads_the_same(releases):
    a, _ = loader.load_battles_report(releases["reordered"])
    raw = variants.base(900, 3)
    raw.write_parquet(releases["reordered"].parent / "plain.parquet")
    b, _ = loader.load_battles_report(releases["reordered"].parent / "plain.parquet")
    assert a.equals(b)


def test_fields_table_names_what_each_id_lacks(releases):
    _, report = loader.load_battles_report(releases["combined"])
    assert fields.lacking("SA-F1", report) == ["primary_intent"]
    assert fields.lacking("SA-A2C", report) == ["citation_format_standardized"]
    assert fields.lacking("SA-F2L", report) == []  # languages are detected when the release has none
    assert fields.lacking("SA-D5", report) == []
    skipped = fields.skipped_by(report.absent, report.derived)
    assert "languages" not in skipped and "SA-E1" in skipped["primary_intent"]
    assert fields.reason(["primary_intent"]) == "the release has no `primary_intent`"


def test_an_analysis_of_named_models_is_not_run_on_a_release_without_them(tmp_path):
    """Fig E.3 compares two named models: on a release without one of them it records why, instead of failing."""
    from bookbuild.recorder import Recorder

    rec = Recorder(tmp_path, "04_citations")
    battles = pl.DataFrame({"model_a": ["sonar-pro-high", "x"], "model_b": ["y", "x2"]})
    assert fields.has_models(rec, "SA-E3", battles, ["sonar-pro-high"])
    assert not fields.has_models(rec, "SA-E3", battles, ["sonar-pro-high", "sonar-reasoning-pro-high"])
    (row,) = [r for r in rec.results if r.analysis_id == "SA-E3"]
    assert row.status == "not run" and row.reason == "the release has no model `sonar-reasoning-pro-high`"


def test_only_a_manifest_file_is_real_data(tmp_path):
    entry = fetch.read_manifest()["describing_diffs/lang_factual_qa"]
    mirrored = fetch.fetch(entry.id)
    assert fetch.public_entry(mirrored) == entry.id and fetch.provenance(mirrored) == "real"
    copy = tmp_path / "lang_factual_qa.csv"  # the same name, other bytes: a user's file
    copy.write_bytes(mirrored.read_bytes().replace(b"a", b"b", 1))
    assert fetch.provenance(copy) == "user"
    assert loader.data_kind(copy) == "user" and loader.data_kind(str(mirrored)) == "real"
    assert loader.data_kind("sample:100") == "simulated"
    assert loader.data_kind("hf") == "real" and loader.data_kind(f"hf:{release.HF_REVISION}") == "real"
    assert loader.data_kind("hf:refs/pr/1") == "user"
    assert loader.data_kind(pl.DataFrame({"x": [1]})) == "user"


def test_the_release_chapters_build_on_a_release_the_papers_never_saw(other_book):
    """The chapters that read the release, in the suite's other-release book (``other_release``: the combined
    variant, its busiest models renamed to hostile names)."""
    book, inputs = other_book
    results = {stem: json.loads((book.results_dir / f"{stem}.json").read_text())["results"]
               for stem in other_release.RELEASE_CHAPTERS}
    rows = [r for rs in results.values() for r in rs]
    # every ID either gives numbers or says why not; a missing field is named
    for r in rows:
        assert r["status"] != "not run" or r["reason"], r
    skipped = {r["analysis_id"]: r["reason"] for r in rows if r["quantity"] == fields.SKIPPED_QUANTITY}
    assert skipped["SA-F1"] == "the release has no `primary_intent`"
    assert skipped["SA-A2C"] == "the release has no `citation_format_standardized`"
    assert {"SA-B2", "SA-F5", "SA-D7", "SA-E1"} <= set(skipped)
    # new models (the next release's and the hostile names) are new rows, with no paper value
    d5 = {r["quantity"]: r for r in results["03_preferences"] if r["analysis_id"] == "SA-D5"}
    new = [m for m in inputs["models"] if m in (*other_release.KEPT, *other_release.HOSTILE)]
    assert len(new) == len(other_release.KEPT) + len(other_release.HOSTILE)
    for model in new:
        row = d5[f"{model} rating"]
        assert row["paper"] is None and row["status"] == "computed" and row["ours"] is not None, model
    # a user's file is user data, never real public data: real only for the mirrored benchmark and prompt files
    real = [r["quantity"] for r in rows if r["data"] == "real"]
    assert real and all(("SimpleQA" in q or "BrowseComp" in q or "English" in q) for q in real), real
    assert {r["data"] for r in results["03_preferences"] if r["status"] != "not run"} == {"user"}


def test_the_loader_drops_a_conversation_repeated_without_an_id_and_counts_it():
    """Issue 37: the same conversation 1,000 times with a null conv_id was all kept (model_b's wins 548 -> 1,548)."""
    from raw_factory import conversation, make_raw

    once = [conversation(conv_id=f"c{i}", winner="model_a") for i in range(3)]
    repeated = [conversation(conv_id=None, winner="model_b", user=["same question"]) for _ in range(50)]  # type: ignore[arg-type]
    battles, report = loader.load_battles_report(make_raw(once + repeated))
    assert battles.height == 4 and (battles["winner"] == "model_b").sum() == 1
    assert report.dropped["repeated conversations without conv_id (same models and messages; first kept)"] == 49


def test_the_loader_reads_attribution_counts_from_both_places():
    """Issue 37: counts half under conv_metadata and half at the top level; the loader read only the top level, so
    half the conversations silently dropped out of β_support."""
    from raw_factory import conversation, make_raw

    raw = make_raw([conversation(conv_id=f"c{i}", turn=1) for i in range(4)])
    counts = {f"support_count_{s}": [2.0, 4.0, None, None] for s in ("a", "b")}
    meta = pl.DataFrame({f"support_count_{s}": [None, None, 6.0, 8.0] for s in ("a", "b")})
    raw = raw.with_columns(**{k: pl.Series(v) for k, v in counts.items()}, conv_metadata=meta.to_struct())
    battles, _ = loader.load_battles_report(raw)
    assert battles["support_count_a"].to_list() == [2.0, 4.0, 6.0, 8.0]


def test_the_door_check_names_the_analyses_a_missing_field_skips(releases):
    from bookbuild import inputs

    line = inputs.optional_fields_line(inputs.Described(str(releases["combined"]), {"kind": "file"}))
    assert "primary_intent (SA-F1, SA-B2, SA-F5, SA-D7, SA-E1)" in line
    assert "citation_format_standardized (SA-A2C, SA-TA1 in part)" in line
    assert "languages (derived: detected offline" in line
    assert inputs.optional_fields_line(inputs.Described(str(releases["new_models"]), {"kind": "file"})) == ""


def test_tables_are_left_alone_by_mathjax():
    """A model named with \\( ... \\) in a table cell stays text in the browser (MathJax skips tex2jax_ignore)."""
    from bookbuild.tables import html_table

    out = html_table(pl.DataFrame({"model": [r"x\(\frac{1}{2}\)y"]})).html
    assert 'class="table-box tex2jax_ignore"' in out and r"x\(\frac{1}{2}\)y" in out


def _readme_papermill() -> list[str]:
    """The plain-papermill command of ``notebooks/README.md``, as words (its line continuations joined)."""
    text = (REPO / "notebooks" / "README.md").read_text()
    block = re.search(r"```bash\n(\S*papermill .*?)\n```", text, flags=re.S)
    assert block, "notebooks/README.md shows no papermill command"
    return shlex.split(block.group(1).replace("\\\n", " "))


def test_chapter_01_runs_by_plain_papermill_as_the_notebooks_readme_says(tmp_path):
    """Issue 44: the README's command, offline (no mirror variable, an empty data cache, no network), on a release
    whose users are all in the US and that has no ``llm_config``: exit 0; RU/DE/CN shares are 0, not "not run";
    SA-TA1's configuration counts are not run, naming the field; the other SA-TA1 numbers run."""
    release = tmp_path / "release.parquet"
    variants.us_only_without_config(variants.base(600, 5)).write_parquet(release)
    words = _readme_papermill()
    assert words[0].endswith("papermill") and "notebooks/01_dataset.ipynb" in words
    swap = {"/path/to/search-arena-chat-24k.parquet": str(release), "/tmp/01.ipynb": str(tmp_path / "01.ipynb"),
            "/tmp/my-run": str(tmp_path / "results")}
    assert set(swap) <= set(words), words
    argv = [str(REPO / words[0]), *(swap.get(w, w) for w in words[1:])]
    env = {k: v for k, v in os.environ.items() if k != fetch.MIRROR_ENV and not k.startswith("OPENAI_")}
    env |= {fetch.CACHE_ENV: str(tmp_path / "data"), "ANALYSIS_CACHE_DIR": str(tmp_path / "cache"),
            "HF_HUB_OFFLINE": "1", "HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9"}
    proc = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=900, check=False)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    rows = {(r["analysis_id"], r["quantity"]): r for r in
            json.loads((tmp_path / "results" / "01_dataset.json").read_text())["results"]}
    for code in ("RU", "DE", "CN"):
        row = rows[("SA-B1", f"{code} share of users (%)")]
        assert (row["ours"], row["status"]) == (0.0, "differs"), row
    assert rows[("SA-B1", "US share of users (%)")]["ours"] == 100.0 and rows[("SA-B1", "countries")]["ours"] == 1
    for quantity in ("models with search_context_size=high", "models with user_location enabled"):
        row = rows[("SA-TA1", quantity)]
        assert row["status"] == "not run" and row["reason"] == "the release has no `llm_config`", row
    assert rows[("SA-TA1", "search-augmented models (paper names)")]["status"] != "not run"
