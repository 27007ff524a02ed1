"""The notebook runner (analysis_lib.build): injected parameters, skip and rerun, failure reporting, the TOC.

Each test runs tiny fixture notebooks from ``tests/fixtures/`` in a temporary root with papermill (a real
kernel, about a second per notebook); the book itself is built in ``test_book.py``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from analysis_lib import build

FIXTURES = Path(__file__).resolve().parent / "fixtures"
REPO = Path(__file__).resolve().parents[1]


def _root(tmp_path: Path, *notebooks: Path) -> Path:
    root = tmp_path / "root"
    nbdir = root / "notebooks"
    nbdir.mkdir(parents=True)
    for nb in notebooks:
        shutil.copy(nb, nbdir / nb.name)
    return root


def _args(root: Path, *extra: str) -> list[str]:
    return ["--root", str(root), "--no-book", *extra]


def _run(root: Path, *extra: str) -> build.Summary:
    return build.build(build.parse_args(_args(root, *extra)))


def _results(root: Path, name: str) -> dict[str, object]:
    payload = json.loads((root / "book" / "_results" / f"{name}.json").read_text())
    return {r["quantity"]: r["ours"] for r in payload["results"]}


TINY = FIXTURES / "notebooks" / "01_tiny.ipynb"
BOOM = FIXTURES / "failing" / "02_boom.ipynb"


def test_runs_a_notebook_with_injected_parameters(tmp_path):
    root = _root(tmp_path, TINY)
    summary = _run(root, "--data", "sample:50", "--seed", "7", "--bootstrap", "11")
    assert summary.ran == ["01_tiny"] and summary.skipped == []

    got = _results(root, "01_tiny")
    assert got["data_source"] == "sample:50"
    assert got["seed"] == 7.0 and got["n_bootstrap"] == 11.0
    assert got["cache_dir"] == str(root / ".cache")
    assert got["cwd"] == str(root / "notebooks")  # notebooks run in the notebooks folder

    executed = root / "book" / "chapters" / "01_tiny.ipynb"
    nb = nbformat.read(executed, as_version=4)
    params = nb.metadata["papermill"]["parameters"]
    assert params == {
        "data_source": "sample:50",
        "seed": 7,
        "n_bootstrap": 11,
        "results_dir": str(root / "book" / "_results"),
        "cache_dir": str(root / ".cache"),
    }
    assert any("injected-parameters" in c.metadata.get("tags", []) for c in nb.cells)
    # the source notebook is untouched: nothing is written into notebooks/
    assert sorted(p.name for p in (root / "notebooks").iterdir()) == ["01_tiny.ipynb"]
    assert TINY.read_bytes() == (root / "notebooks" / "01_tiny.ipynb").read_bytes()
    assert (root / ".build_state" / "01_tiny.json").exists()


def test_skips_unchanged_and_reruns_on_changes(tmp_path):
    root = _root(tmp_path, TINY)
    nb_path = root / "notebooks" / "01_tiny.ipynb"
    executed = root / "book" / "chapters" / "01_tiny.ipynb"

    assert _run(root).ran == ["01_tiny"]
    first_mtime = executed.stat().st_mtime_ns

    second = _run(root)  # nothing changed
    assert second.ran == [] and second.skipped == ["01_tiny"]
    assert executed.stat().st_mtime_ns == first_mtime

    os.utime(nb_path)  # a new mtime with the same bytes (a checkout, a copy) is not a change
    assert _run(root).skipped == ["01_tiny"]

    nb = nbformat.read(nb_path, as_version=4)  # an edit to the notebook is
    nb.cells.append(nbformat.v4.new_markdown_cell("An added note.", id="added-note"))
    nbformat.write(nb, nb_path)
    assert _run(root).ran == ["01_tiny"]
    assert _run(root).skipped == ["01_tiny"]

    assert _run(root, "--seed", "3").ran == ["01_tiny"]  # a changed parameter reruns
    assert _results(root, "01_tiny")["seed"] == 3.0
    assert _run(root, "--seed", "3").skipped == ["01_tiny"]
    assert _run(root, "--seed", "3", "--bootstrap", "5").ran == ["01_tiny"]
    assert _run(root, "--seed", "3", "--bootstrap", "5", "--data", "sample:10").ran == ["01_tiny"]

    assert _run(root, "--seed", "3", "--bootstrap", "5", "--data", "sample:10", "--force").ran == ["01_tiny"]

    executed.unlink()  # a missing executed copy is rebuilt
    assert _run(root, "--seed", "3", "--bootstrap", "5", "--data", "sample:10").ran == ["01_tiny"]
    (root / "book" / "_results" / "01_tiny.json").unlink()  # so are missing results
    assert _run(root, "--seed", "3", "--bootstrap", "5", "--data", "sample:10").ran == ["01_tiny"]
    assert _run(root, "--seed", "3", "--bootstrap", "5", "--data", "sample:10").skipped == ["01_tiny"]


def test_data_file_identity_is_its_content(tmp_path):
    root = _root(tmp_path, TINY)
    data = root / "release.parquet"
    data.write_bytes(b"version one")
    assert _run(root, "--data", "release.parquet").ran == ["01_tiny"]  # relative to the root
    assert _results(root, "01_tiny")["data_source"] == str(data)  # passed through, absolute
    assert _run(root, "--data", str(data)).skipped == ["01_tiny"]  # same file, same identity
    data.write_bytes(b"version two")
    assert _run(root, "--data", str(data)).ran == ["01_tiny"]
    cache = json.loads((root / ".build_state" / "data_hashes.json").read_text())
    assert list(cache) == [str(data)]


def test_library_change_reruns(tmp_path, monkeypatch):
    root = _root(tmp_path, TINY)
    assert _run(root).ran == ["01_tiny"]
    monkeypatch.setattr(build, "library_hash", lambda: "a different library")
    assert _run(root).ran == ["01_tiny"]


def test_library_hash_covers_sources_and_resources():
    h = build.library_hash()
    assert len(h) == 64 and h == build.library_hash()


def test_status_notebook_always_reruns(tmp_path):
    status_nb = REPO / "notebooks" / "99_reproduction_status.ipynb"
    root = _root(tmp_path, TINY, status_nb)
    assert _run(root).ran == ["01_tiny", "99_reproduction_status"]
    second = _run(root)
    assert second.ran == ["99_reproduction_status"] and second.skipped == ["01_tiny"]
    html = json.dumps(nbformat.read(root / "book" / "chapters" / "99_reproduction_status.ipynb", 4).cells[-1].outputs)
    assert "FIX-1" in html  # the fixture's ID is listed (as not in the catalogue), with its chapter
    assert "01_tiny.html" in html


def test_failing_notebook_stops_the_build(tmp_path, capsys):
    after = tmp_path / "03_after.ipynb"
    shutil.copy(TINY, after)
    root = _root(tmp_path, TINY, BOOM, after)
    code = build.main(_args(root))
    err = capsys.readouterr().err
    assert code == build.EXIT_NOTEBOOK
    assert "02_boom.ipynb" in err
    assert "cell index 4" in err  # 0 title, 1 parameters, 2 injected parameters, 3 `x = 1`, 4 raises
    assert "ValueError: boom from the fixture" in err
    chapters = root / "book" / "chapters"
    assert (chapters / "01_tiny.ipynb").exists()  # finished notebooks stay
    assert (chapters / "02_boom.ipynb").exists()  # the failing one, with its traceback
    assert not (chapters / "03_after.ipynb").exists()  # nothing after the failure runs
    state = root / ".build_state"
    assert (state / "01_tiny.json").exists() and not (state / "02_boom.json").exists()

    # the next build skips what succeeded and retries the failure
    code = build.main(_args(root))
    assert code == build.EXIT_NOTEBOOK
    assert "skip  01_tiny.ipynb" in capsys.readouterr().out


def test_only_and_bad_arguments(tmp_path, capsys):
    second = tmp_path / "02_second.ipynb"
    shutil.copy(TINY, second)
    root = _root(tmp_path, TINY, second)
    assert _run(root, "--only", "02_second").ran == ["02_second"]
    assert build.main(_args(root, "--only", "07_missing")) == build.EXIT_USAGE
    assert "07_missing" in capsys.readouterr().err
    assert build.main(_args(root, "--data", "no/such/file.parquet")) == build.EXIT_USAGE
    assert "no/such/file.parquet" in capsys.readouterr().err


def test_toc_follows_book_order_and_lists_only_executed_chapters(tmp_path):
    book = tmp_path / "book"
    book.mkdir()
    (book / "library.md").write_text("# Using analysis_lib\n")
    toc = build.toc_text(tmp_path, book, ["99_reproduction_status", "01_dataset", "04_citations", "07_new"])
    assert toc.splitlines()[1:] == [
        "format: jb-book",
        "root: book/intro",
        "parts:",
        "  - caption: Overview",
        "    chapters:",
        "      - file: book/chapters/99_reproduction_status",
        "  - caption: Chapters",
        "    chapters:",
        "      - file: book/chapters/01_dataset",
        "      - file: book/chapters/04_citations",
        "      - file: book/chapters/07_new",
        "  - caption: Reference",
        "    chapters:",
        "      - file: book/library",
    ]


def test_executed_chapters_order(tmp_path):
    root = _root(tmp_path, TINY)
    nbdir = root / "notebooks"
    for name in ("00_aaa", "03_preferences", "99_reproduction_status", "01_dataset"):
        shutil.copy(TINY, nbdir / f"{name}.ipynb")
    cfg = build.parse_args(_args(root))
    cfg.chapters_dir.mkdir(parents=True)
    cfg.state_dir.mkdir(parents=True)
    for nb in nbdir.glob("*.ipynb"):
        (cfg.chapters_dir / nb.name).write_text("{}")
        (cfg.state_dir / f"{nb.stem}.json").write_text(json.dumps({"output": str(cfg.chapters_dir / nb.name)}))
    (cfg.state_dir / "01_dataset.json").unlink()  # not successfully run: left out
    assert build.executed_chapters(cfg) == ["99_reproduction_status", "03_preferences", "00_aaa", "01_tiny"]


def test_committed_toc_matches_book_order():
    toc = (REPO / "_toc.yml").read_text()
    files = [ln.split("file:")[1].strip() for ln in toc.splitlines() if "file:" in ln]
    assert files == [f"book/chapters/{n}" for n in build.BOOK_ORDER] + ["book/library"]
    assert "root: book/intro" in toc


def test_command_line(tmp_path):
    root = _root(tmp_path, TINY)
    cmd = [sys.executable, "-m", "analysis_lib.build", *_args(root, "--data", "sample:5")]
    first = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    assert "1 ran (01_tiny)" in first.stdout
    second = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert second.returncode == 0 and "1 skipped (01_tiny)" in second.stdout


@pytest.mark.parametrize("source", ["sample", "sample:2000", "hf", "hf:lmarena-ai/search-arena-24k"])
def test_named_data_sources_pass_through(source, tmp_path):
    assert build.resolve_data_source(source, tmp_path) == source
    assert build.data_identity(source, tmp_path) == source


def test_one_build_at_a_time(tmp_path):
    import fcntl

    root = _root(tmp_path, TINY)
    (root / ".build_state").mkdir()
    with (root / ".build_state" / ".lock").open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        with pytest.raises(build.BuildError, match="another build is running"):
            _run(root)
    assert _run(root).ran == ["01_tiny"]


def test_protected_text_guard_finds_escaped_snippets(tmp_path):
    from analysis_lib.build import find_protected_text

    snippet = "An African author tragically passed away in a road accident"
    (tmp_path / "page.html").write_text("<p>An African author tragically passed&nbsp;away\n in a road accident.</p>")
    (tmp_path / "clean.html").write_text("<p>Nothing to see.</p>")
    nb = tmp_path / "chapters"
    nb.mkdir()
    (nb / "ch.ipynb").write_text('{"text": "An African author tragically passed away in a road accident"}')
    hits = find_protected_text([tmp_path], [snippet])
    assert sorted(p.name for p in hits) == ["ch.ipynb", "page.html"]


def test_protected_snippets_cover_the_browsecomp_problems():
    from analysis_lib.build import protected_snippets

    assert len(protected_snippets()) > 1200


def test_setup_cells_folded_and_injected_paths_removed_from_the_page(tmp_path):
    from analysis_lib.build import collapse_setup_cells

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# T"),
                nbformat.v4.new_code_cell("seed = 0", metadata={"tags": ["parameters"]}),
                nbformat.v4.new_code_cell(f'results_dir = "{tmp_path}/book/_results"',
                                          metadata={"tags": ["injected-parameters"]}),
                nbformat.v4.new_code_cell("x = 1")]
    path = tmp_path / "01_t.ipynb"
    nbformat.write(nb, path)
    collapse_setup_cells(path)
    collapse_setup_cells(path)  # idempotent
    tags = [c.metadata.get("tags", []) for c in nbformat.read(path, as_version=4).cells]
    assert tags == [[], ["parameters", "hide-cell"], ["injected-parameters", "remove-cell"], []]
