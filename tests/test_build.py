"""The notebook runner (bookbuild): injected parameters, skip and rerun, failure reporting, the TOC.

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

import inprocess_kernel
import nbformat
import pytest

from analysis_lib.nuggets import battles as ng_battles
from analysis_lib.nuggets.simulate import simulate_nuggets
from analysis_lib.search_arena import loader
from bookbuild import identity, inputs, keys, leaks, toc
from bookbuild import runner as build

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


@pytest.fixture(autouse=True)
def _in_process(request, monkeypatch):
    """Notebooks run in this process unless the test is marked ``real_kernel`` (tests/inprocess_kernel.py)."""
    inprocess_kernel.use(request, monkeypatch)


@pytest.fixture(autouse=True)
def _fixed_library(request, monkeypatch):
    """One library identity per test (but in the test of that identity): a rebuild in a test reruns a chapter for
    what the test changed, not for an edit of the library made meanwhile in the same checkout."""
    if request.node.name.startswith("test_library_hash"):
        return
    fixed = keys.library_hash()
    monkeypatch.setattr(keys, "library_hash", lambda: fixed)


TINY = FIXTURES / "notebooks" / "01_tiny.ipynb"
BOOM = FIXTURES / "failing" / "02_boom.ipynb"
RELEASE_A = FIXTURES / "inputs" / "release_a.parquet"  # 30 simulated conversations, seed 1
RELEASE_B = FIXTURES / "inputs" / "release_b.parquet"  # 30 simulated conversations, seed 2


@pytest.mark.real_kernel  # what the kernel itself does: the papermill run in the notebooks folder
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
        # the chapter's results are staged while it runs and moved into book/_results when it finished; the copy a
        # reader downloads names the build's folders relative to the repository, as the page does (issue 35)
        "results_dir": "book/_results",
        "cache_dir": ".cache",
    }
    assert str(root) not in executed.read_text()
    assert (root / "book" / "_results" / "01_tiny.json").exists()
    assert not (root / "book" / "_build" / "runs" / "results" / "01_tiny").exists()
    assert any("injected-parameters" in c.metadata.get("tags", []) for c in nb.cells)
    # the folded parameters cell shows the values used, the build's folders relative, no absolute path
    shown = next(c.source for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    assert "data_source = 'sample:50'" in shown and "seed = 7" in shown and "n_bootstrap = 11" in shown
    assert "results_dir = 'book/_results'" in shown and str(root) not in shown
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
    shutil.copy(RELEASE_A, data)
    assert _run(root, "--data", "release.parquet").ran == ["01_tiny"]  # relative to the root
    assert _results(root, "01_tiny")["data_source"] == str(data)  # passed through, absolute
    assert _run(root, "--data", str(data)).skipped == ["01_tiny"]  # same file, same identity
    shutil.copy(RELEASE_B, data)
    assert _run(root, "--data", str(data)).ran == ["01_tiny"]
    nb = nbformat.read(root / "book" / "chapters" / "01_tiny.ipynb", as_version=4)
    shown = next(c.source for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    digest = keys.sha256_file(data)
    # the page names the user's file by its name and hash, never by the build machine's path
    assert f"data_source = 'release.parquet'  # the user's file (sha256 {digest[:12]}…, 30 conversations)" in shown
    assert str(root) not in json.dumps([c.source for c in nb.cells if "remove-cell" not in c.metadata.get("tags", [])])


def test_a_rewrite_that_keeps_size_and_mtime_reruns_the_chapter(tmp_path):
    """Issue 48: the identity was cached by path, size and mtime, so a rewritten release with its mtime restored
    skipped the door and the chapter ("unchanged") and the page showed the old file's sha256."""
    root = _root(tmp_path, TINY)
    data = root / "release.jsonl"
    shutil.copy(FIXTURES / "search_arena" / "attribution_small.jsonl", data)
    assert _run(root, "--data", str(data)).ran == ["01_tiny"]
    before, text = data.stat(), data.read_text()
    data.write_text(text.replace('"winner":"model_a"', '"winner":"model_b"'))
    os.utime(data, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (data.stat().st_size, data.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns) and (
        data.read_text() != text)
    assert _run(root, "--data", str(data)).ran == ["01_tiny"]
    nb = nbformat.read(root / "book" / "chapters" / "01_tiny.ipynb", as_version=4)
    shown = next(c.source for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    assert f"sha256 {keys.sha256_file(data)[:12]}…" in shown  # the page names the file it read


def test_library_change_reruns(tmp_path, monkeypatch):
    root = _root(tmp_path, TINY)
    assert _run(root).ran == ["01_tiny"]
    monkeypatch.setattr(keys, "library_hash", lambda: "a different library")
    assert _run(root).ran == ["01_tiny"]


def test_library_hash_covers_sources_and_resources(tmp_path, monkeypatch):
    pkg = tmp_path / "analysis_lib"
    (pkg / "resources" / "prompts").mkdir(parents=True)
    (pkg / "mod.py").write_text("x = 1\n")
    (pkg / "resources" / "prompts" / "p.txt").write_text("prompt\n")
    (pkg / "resources" / "table.csv").write_text("a,b\n")
    monkeypatch.setattr(keys.paths, "package_dir", lambda: pkg)
    h = keys.library_hash()
    assert len(h) == 64 and h == keys.library_hash()
    seen = {h}
    for edit in (lambda: (pkg / "mod.py").write_text("x = 2\n"),  # a source file
                 lambda: (pkg / "resources" / "prompts" / "p.txt").write_text("changed\n"),  # a nested resource
                 lambda: (pkg / "resources" / "table.csv").rename(pkg / "resources" / "renamed.csv"),  # a name
                 lambda: (pkg / "sub").mkdir() or (pkg / "sub" / "new.py").write_text("")):  # a new module
        edit()
        seen.add(keys.library_hash())
    assert len(seen) == 5  # every change gave a new hash
    (pkg / "__pycache__").mkdir()
    (pkg / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"\0")
    assert keys.library_hash() in seen  # compiled caches are not sources
    book = tmp_path / "bookbuild"
    (book / "resources").mkdir(parents=True)
    (book / "recorder.py").write_text("x = 1\n")
    monkeypatch.setattr(keys, "BOOK_DIR", book)
    before = keys.library_hash()
    (book / "recorder.py").write_text("x = 2\n")  # the chapters import the book's recorder: a change reruns them
    edited = keys.library_hash()
    (book / "resources" / "analyses.csv").write_text("analysis_id\n")
    assert len({before, edited, keys.library_hash()}) == 3


def test_status_notebook_reruns_whenever_a_chapter_changed(tmp_path):
    status_nb = REPO / "notebooks" / "99_reproduction_status.ipynb"
    root = _root(tmp_path, TINY, status_nb)
    assert _run(root).ran == ["01_tiny", "99_reproduction_status"]
    assert _run(root).skipped == ["01_tiny", "99_reproduction_status"]  # nothing changed: a warm build runs nothing
    second = _run(root, "--seed", "1")
    assert second.ran == ["01_tiny", "99_reproduction_status"]  # a chapter reran: the status page follows
    assert _run(root, "--only", "99_reproduction_status", "--seed", "0").ran == ["99_reproduction_status"]
    cells = nbformat.read(root / "book" / "chapters" / "99_reproduction_status.ipynb", 4).cells
    html = json.dumps([c.outputs for c in cells if c.cell_type == "code"])
    assert "FIX-1" in html  # the fixture's ID is listed (as not in the catalogue), with its chapter
    assert "01_tiny.html" in html


def test_a_failing_notebook_is_reported_and_the_others_run(tmp_path, capsys):
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
    assert not (chapters / "02_boom.ipynb").exists()  # the failing one is no chapter...
    failed_copy = root / "book" / "_build" / "runs" / "failed" / "02_boom.ipynb"
    assert failed_copy.exists() and str(failed_copy) in err  # ...its executed copy with the traceback is kept aside
    assert (chapters / "03_after.ipynb").exists()  # a failure does not stop the book
    failed = json.loads((root / "book" / "_results" / "_failed.json").read_text())
    assert failed == {"failed": [{"notebook": "02_boom", "error": "ValueError: boom from the fixture"}]}
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
    text = toc.toc_text(tmp_path, book, ["99_reproduction_status", "01_dataset", "04_citations", "07_new"])
    assert text.splitlines()[1:] == [
        "format: jb-book",
        "root: book/intro",
        "parts:",
        "  - caption: \"Overview\"",
        "    chapters:",
        "      - file: book/chapters/99_reproduction_status",
        "  - caption: \"Chapters\"",
        "    chapters:",
        "      - file: book/chapters/01_dataset",
        "      - file: book/chapters/04_citations",
        "      - file: book/chapters/07_new",
        "  - caption: \"Reference\"",
        "    chapters:",
        "      - file: book/library",
    ]


def test_executed_chapters_order(tmp_path):
    root = _root(tmp_path, TINY)
    shutil.copy(REPO / "_toc.yml", root / "_toc.yml")  # the order comes from the committed TOC
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


def test_committed_toc_lists_every_notebook():
    text = (REPO / "_toc.yml").read_text()
    assert sorted(toc.chapter_order(REPO / "_toc.yml")) == sorted(p.stem for p in (REPO / "notebooks").glob("*.ipynb"))
    assert "root: book/intro" in text


def test_generated_toc_keeps_the_committed_parts_and_only_finished_chapters(tmp_path):
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "library.md").write_text("# Library\n")
    committed = tmp_path / "_toc.yml"
    committed.write_text("format: jb-book\nroot: book/intro\nparts:\n  - caption: Overview\n    chapters:\n"
                         "      - file: book/chapters/99_reproduction_status\n"
                         "  - caption: 'SA · Chapters: one # two'\n    chapters:\n"
                         "      - file: book/chapters/02_b\n      - file: book/chapters/01_a\n"
                         "  - caption: Reference\n    chapters:\n      - file: book/library\n")
    assert toc.chapter_order(committed) == ["99_reproduction_status", "02_b", "01_a"]
    text = toc.toc_text(tmp_path, tmp_path / "book", ["01_a", "02_b", "05_new"], committed)
    import yaml

    parsed = yaml.safe_load(text)
    assert [(p["caption"], [c["file"] for c in p["chapters"]]) for p in parsed["parts"]] == [
        ("SA · Chapters: one # two", ["book/chapters/02_b", "book/chapters/01_a", "book/chapters/05_new"]),
        ("Reference", ["book/library"]),
    ]  # the status page did not finish: no link to it


def test_command_line(tmp_path):
    root = _root(tmp_path, TINY)
    cmd = [sys.executable, "-m", "bookbuild", *_args(root, "--data", "sample:10")]
    first = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    assert "1 ran (01_tiny)" in first.stdout
    second = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert second.returncode == 0 and "1 skipped (01_tiny)" in second.stdout


@pytest.mark.parametrize("source", ["sample", "sample:2000", "hf", "hf:lmarena-ai/search-arena-24k"])
def test_named_data_sources_pass_through(source, tmp_path):
    assert inputs.resolve("data_source", source, tmp_path) == source
    assert keys.input_identity(source) == source


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
    find_protected_text = leaks.find_protected_text

    snippet = "An African author tragically passed away in a road accident"
    (tmp_path / "page.html").write_text("<p>An African author tragically passed&nbsp;away\n in a road accident.</p>")
    (tmp_path / "clean.html").write_text("<p>Nothing to see.</p>")
    nb = tmp_path / "chapters"
    nb.mkdir()
    (nb / "ch.ipynb").write_text('{"text": "An African author tragically passed away in a road accident"}')
    hits = find_protected_text([tmp_path], [snippet])
    assert sorted(p.name for p in hits) == ["ch.ipynb", "page.html"]


def test_protected_snippets_cover_the_browsecomp_problems():
    assert len(leaks.protected_snippets()) > 1200


# ------------------------------------------------------------------ issue 11 items 2, 5, 6, 8; build options


def _variant(tmp_path: Path, name: str, *, params: str = "", cells: tuple[str, ...] = ()) -> Path:
    """TINY saved as ``name``, with extra lines in its parameters cell and extra code cells at the end."""
    nb = nbformat.read(TINY, as_version=4)
    if params:
        nb.cells[1].source += "\n" + params
    for i, code in enumerate(cells):
        nb.cells.append(nbformat.v4.new_code_cell(code, id=f"extra-{i}"))
    out = tmp_path / "variants" / name
    out.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, out)
    return out


def test_a_failed_run_keeps_the_last_good_chapter_and_never_its_partial_results(tmp_path):
    root = _root(tmp_path, TINY)
    assert _run(root, "--seed", "1").ran == ["01_tiny"]
    chapter = root / "book" / "chapters" / "01_tiny.ipynb"
    results = root / "book" / "_results" / "01_tiny.json"
    state = root / ".build_state" / "01_tiny.json"
    good = (chapter.read_bytes(), results.read_bytes(), state.read_bytes())
    # the same chapter now records its numbers (with the new seed) and then fails
    shutil.copy(_variant(tmp_path, "01_tiny.ipynb", cells=("raise RuntimeError('late failure')",)),
                root / "notebooks" / "01_tiny.ipynb")
    assert build.main(_args(root, "--seed", "2")) == build.EXIT_NOTEBOOK
    assert (results.read_bytes(), state.read_bytes()) == good[1:]  # last good results and state, intact

    def content(raw: bytes) -> list[str]:  # the page's cells but the identity line under the title
        return [c.source for c in nbformat.reads(raw.decode(), as_version=4).cells if c.get("id") != identity.CELL_ID]

    assert content(chapter.read_bytes()) == content(good[0])  # the last good page, now flagged as computed with seed 1
    cells = nbformat.read(chapter, as_version=4).cells
    assert "seed" in next(c.source for c in cells if c.get("id") == identity.CELL_ID)
    assert _results(root, "01_tiny")["seed"] == 1.0  # not the failed run's partial numbers
    failed = json.loads((root / "book" / "_results" / "_failed.json").read_text())["failed"]
    assert failed == [{"notebook": "01_tiny", "error": "RuntimeError: late failure"}]
    assert build.executed_chapters(build.parse_args(_args(root))) == ["01_tiny"]  # the good copy stays listed
    assert not list((root / "book" / "_build" / "runs" / "partial").iterdir())
    # an interrupted run (results set aside, a partial copy left) is undone by the next build
    (root / ".build_state" / "last_good").mkdir(exist_ok=True)
    shutil.copy(results, root / ".build_state" / "last_good" / "01_tiny.json")
    results.write_text('{"partial": true}')
    shutil.copy(TINY, root / "notebooks" / "01_tiny.ipynb")
    assert _run(root, "--seed", "1").skipped == ["01_tiny"]  # back to the good state: nothing to do
    assert _results(root, "01_tiny")["seed"] == 1.0
    assert not (root / "book" / "_results" / "_failed.json").exists()  # all ran: the failure record is gone


def _nugget_records(path: Path, n: int) -> Path:
    """Valid nugget records (the simulator's, for single-turn battles of a small simulated release)."""
    single, _ = ng_battles.single_turn(loader.load_battles(f"sample:{n}"))
    return simulate_nuggets(single, seed=0).records.to_jsonl(path)


def test_user_inputs_are_injected_only_where_declared_and_key_the_rebuild(tmp_path):
    records = _nugget_records(tmp_path / "records.jsonl", 200)
    wants = _variant(tmp_path, "02_wants.ipynb", params='nugget_records = ""',
                     cells=("rec.number('FIX-1', 'nugget_records', nugget_records, data='none')",))
    root = _root(tmp_path, TINY, wants)
    assert _run(root, "--nuggets", str(records)).ran == ["01_tiny", "02_wants"]
    injected = nbformat.read(root / "book" / "chapters" / "02_wants.ipynb", 4).metadata["papermill"]["parameters"]
    assert injected["nugget_records"] == records.name  # the user's file by its name in the downloadable copy
    plain = nbformat.read(root / "book" / "chapters" / "01_tiny.ipynb", 4).metadata["papermill"]["parameters"]
    assert "nugget_records" not in plain  # not declared: not injected
    assert _run(root, "--nuggets", str(records)).skipped == ["01_tiny", "02_wants"]
    _nugget_records(records, 300)  # the file's content is its identity
    second = _run(root, "--nuggets", str(records))
    assert second.ran == ["02_wants"] and second.skipped == ["01_tiny"]
    assert _run(root).ran == ["02_wants"]  # not given any more: the chapter's simulator again
    injected = nbformat.read(root / "book" / "chapters" / "02_wants.ipynb", 4).metadata["papermill"]["parameters"]
    assert "nugget_records" not in injected  # not given: the notebook's own default applies
    assert build.main(_args(root, "--answers", "no/such/answers.json")) == build.EXIT_USAGE


def test_options_come_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("BOOK_DATA", "sample:7")
    monkeypatch.setenv("BOOK_SEED", "4")
    monkeypatch.setenv("BOOK_MATCH_LOGS", str(tmp_path))
    cfg = build.parse_args(["--root", str(tmp_path)])
    assert (cfg.data, cfg.seed, cfg.inputs["match_logs"], cfg.inputs["answer_records"]) == ("sample:7", 4,
                                                                                         str(tmp_path), "")
    assert build.parse_args(["--root", str(tmp_path), "--data", "hf"]).data == "hf"  # the option wins


@pytest.mark.parametrize("value", ['x"; touch PWNED; echo "', "`touch PWNED`", "$(touch PWNED)",
                                   "$(shell touch PWNED)", "it's here"])
def test_make_book_passes_values_without_a_shell_and_keeps_the_exit_status(value, tmp_path):
    make = shutil.which("make")
    if make is None:
        pytest.skip("make not installed")
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    fake = venv / "bin" / "python"  # stands in for the runner: reports what it got, then fails
    fake.write_text('#!/bin/sh\nprintf "%s" "$BOOK_DATA" > "$(dirname "$0")/got"\nexit 7\n')
    fake.chmod(0o755)
    (venv / ".installed").touch()
    os.utime(venv / ".installed", (2**31, 2**31))  # newer than pyproject.toml
    proc = subprocess.run([make, "-s", "-C", str(REPO), "book", f"VENV={venv}", f"DATA={value}"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert proc.returncode != 0  # the runner's failure is make's failure
    assert (venv / "bin" / "got").read_text() == value  # every character arrived as a character
    assert not (tmp_path / "PWNED").exists() and not (REPO / "PWNED").exists()


def test_llm_chapters_rerun_when_the_endpoint_or_model_changes(tmp_path, monkeypatch):
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "ANALYSIS_LLM_MODEL", "ANALYSIS_LLM_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    uses = _variant(tmp_path, "02_llm.ipynb", cells=("# the chapter would build an LLMClient here",))
    root = _root(tmp_path, TINY, uses)
    assert _run(root).ran == ["01_tiny", "02_llm"]
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    assert _run(root).ran == ["02_llm"]
    monkeypatch.setenv("ANALYSIS_LLM_MODEL", "another-model")
    assert _run(root).ran == ["02_llm"]
    monkeypatch.setenv("ANALYSIS_LLM_OFFLINE", "1")
    assert _run(root).ran == ["02_llm"]
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-not-part-of-the-key")
    assert _run(root).skipped == ["01_tiny", "02_llm"]  # the key is not the endpoint's identity


@pytest.mark.real_kernel  # what the kernel itself does: its environment
def test_kernels_write_their_caches_under_the_build_cache(tmp_path):
    probe = _variant(tmp_path, "01_tiny.ipynb", cells=(
        "from analysis_lib import fetch, llm, paths\n"
        "rec.number('FIX-1', 'data cache', str(fetch.default_cache_dir()), data='none')\n"
        "rec.number('FIX-1', 'llm cache', str(llm.default_cache_dir()), data='none')",))
    root = _root(tmp_path, probe)
    cache = tmp_path / "buildcache"
    assert _run(root, "--cache-dir", str(cache)).ran == ["01_tiny"]
    got = _results(root, "01_tiny")
    assert got["data cache"] == str(cache / "data") and got["llm cache"] == str(cache / "llm")


def test_setup_cells_folded_and_injected_paths_removed_from_the_page(tmp_path):
    from bookbuild.chapter import collapse_setup_cells

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


def test_every_user_input_has_a_make_variable_and_a_readme_row():
    """Each runner input (``--nuggets``, ``--text-arena``...) is reachable as ``make book VAR=`` (exported to the
    runner's environment, unexported elsewhere), named in the README and documented in the option table of the book's
    page on re-running (book/rerun.md)."""
    makefile = (REPO / "Makefile").read_text()
    readme = (REPO / "README.md").read_text()
    reference = (REPO / "book" / "rerun.md").read_text()
    unexported = next(line for line in makefile.splitlines() if line.startswith("unexport ")).split()[1:]
    for env, param in build.USER_INPUTS.values():
        var = env.removeprefix("BOOK_")
        assert f"book: export {env} = $(value {var})" in makefile, var
        assert var in unexported, var
        assert f"`{var}`" in readme, var
        assert f"| `{var}` | `{param}` |" in reference, var


def test_set_injects_a_declared_parameter_keys_the_rebuild_and_flags_a_chapter_left_with_another_value(tmp_path):
    sized = _variant(tmp_path, "02_sized.ipynb", params="study_size = 100",
                     cells=("assert isinstance(study_size, int)",))
    sized.write_text(sized.read_text().replace('\\"01_tiny\\"', '\\"02_sized\\"'))  # its own results file
    root = _root(tmp_path, TINY, sized)
    assert _run(root, "--set", "study_size=7").ran == ["01_tiny", "02_sized"]
    got = nbformat.read(root / "book" / "chapters" / "02_sized.ipynb", 4).metadata["papermill"]["parameters"]
    assert got["study_size"] == 7  # a Python literal: the number, not the text
    plain = nbformat.read(root / "book" / "chapters" / "01_tiny.ipynb", 4).metadata["papermill"]["parameters"]
    assert "study_size" not in plain  # not declared: not injected
    ident = json.loads((root / ".build_state" / "02_sized.json").read_text())["identity"]
    assert ident["parameters"] == {"study_size": 7} and "study_size" in ident["declares"]
    assert _run(root, "--set", "study_size=7").skipped == ["01_tiny", "02_sized"]
    # another value reruns only the chapter that declares it
    assert _run(root, "--set", "study_size=9").ran == ["02_sized"]
    # a build without the setting that leaves the chapter (--only) flags it as computed with another value
    summary = build.build(build.parse_args(_args(root, "--only", "01_tiny")))
    assert summary.stale == ["02_sized"]
    diff = identity.stale_chapters(root / "book" / "_results")["02_sized"]
    assert any("study_size = 9" in d for d in diff)


@pytest.mark.parametrize(("setting", "problem"), [
    ("nosuch=1", "no notebook of this build declares it"),
    ("seed=3", "the runner sets 'seed' itself"),
    ("study_size", "expects NAME=VALUE"),
    ("study_size=(1, 2)", "is not a number, text"),
])
def test_a_bad_set_exits_2_before_any_notebook_runs(setting, problem, tmp_path, capsys):
    root = _root(tmp_path, _variant(tmp_path, "01_sized.ipynb", params="study_size = 100"))
    assert build.main(_args(root, "--set", setting)) == build.EXIT_USAGE
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("bookbuild: exit 2 (bad arguments or inputs): --set") and problem in err
    assert not (root / "book" / "_results").exists() or not list((root / "book" / "_results").glob("0*.json"))


def test_set_values_are_python_literals_or_text():
    assert build.parse_args(["--set", "a=3", "--set", "b=0.5", "--set", "c=None", "--set", "d=words here",
                             "--set", "e='7'", "--set", "f=[1, 2]"]).settings == {
        "a": 3, "b": 0.5, "c": None, "d": "words here", "e": "7", "f": [1, 2]}


def _named(tmp_path: Path, name: str) -> Path:
    """TINY saved as ``name``, writing its own results file."""
    nb = _variant(tmp_path, name)
    nb.write_text(nb.read_text().replace('\\"01_tiny\\"', f'\\"{nb.stem}\\"'))
    return nb


def test_jobs_run_chapters_at_once_with_the_same_pages_results_and_order(tmp_path):
    notebooks = [_named(tmp_path, f"0{i}_part.ipynb") for i in range(1, 5)]
    serial, parallel = _root(tmp_path / "s", *notebooks), _root(tmp_path / "p", *notebooks)
    one = _run(serial, "--data", "sample:40")
    two = _run(parallel, "--data", "sample:40", "--jobs", "2")
    assert one.ran == two.ran == [nb.stem for nb in notebooks]  # book order, whatever finished first
    for nb in notebooks:
        a, b = _results(serial, nb.stem), _results(parallel, nb.stem)
        # the same values, paths aside: every kernel ran in its root's notebooks folder, as papermill's cwd= does
        assert {k: str(v).replace(str(serial), "ROOT") for k, v in a.items()} == \
            {k: str(v).replace(str(parallel), "ROOT") for k, v in b.items()}
        assert b["cwd"] == str(parallel / "notebooks")
    assert Path.cwd() != parallel / "notebooks"  # the runner's own folder restored
    assert _run(parallel, "--data", "sample:40", "--jobs", "2").skipped == [nb.stem for nb in notebooks]


def test_jobs_after_a_failure_the_other_chapters_still_run(tmp_path, capsys):
    boom = tmp_path / "first" / "01_boom.ipynb"
    boom.parent.mkdir()
    shutil.copy(BOOM, boom)
    slow = _variant(tmp_path, "02_slow.ipynb", cells=("import time; time.sleep(4)",))  # still running at the failure
    slow.write_text(slow.read_text().replace('\\"01_tiny\\"', '\\"02_slow\\"'))
    late = [_named(tmp_path, f"0{i}_late.ipynb") for i in (3, 4)]
    root = _root(tmp_path, boom, slow, *late)
    code = build.main(_args(root, "--jobs", "2"))
    captured = capsys.readouterr()
    assert code == build.EXIT_NOTEBOOK
    assert "01_boom.ipynb" in captured.err and "ValueError: boom from the fixture" in captured.err
    chapters = root / "book" / "chapters"
    assert (chapters / "02_slow.ipynb").exists()  # what was running when the failure came finishes and is kept
    assert (chapters / "03_late.ipynb").exists() and (chapters / "04_late.ipynb").exists()  # the rest still runs
    assert "FAIL  01_boom.ipynb" in captured.out  # said as it happened
    assert not (chapters / "01_boom.ipynb").exists()
    failed = json.loads((root / "book" / "_results" / "_failed.json").read_text())
    assert [f["notebook"] for f in failed["failed"]] == ["01_boom"]


def test_jobs_must_be_a_positive_integer(tmp_path, capsys):
    for bad in ("0", "two"):
        assert build.main(_args(tmp_path, "--jobs", bad)) == build.EXIT_USAGE
        assert "JOBS must be a" in capsys.readouterr().err


def test_jobs_start_the_longest_first_and_keep_heavy_chapters_apart(tmp_path, monkeypatch, capsys):
    from bookbuild import schedule

    notebooks = [_named(tmp_path, f"0{i}_part.ipynb") for i in (1, 2, 3)]
    root = _root(tmp_path, *notebooks)
    costs = tmp_path / "costs.json"
    schedule.write_costs(schedule.Costs(0.0, {"01_part": schedule.Cost(5, 1.5), "02_part": schedule.Cost(50, 1.5),
                                               "03_part": schedule.Cost(1, 0.2)}), "test", costs)
    monkeypatch.setattr(schedule, "COSTS_FILE", costs)
    summary = build.run_notebooks(build.parse_args(_args(root, "--data", "sample:40", "--jobs", "2",
                                                        "--memory-gb", "2")))
    out = [line for line in capsys.readouterr().out.splitlines() if line.startswith(("run ", "done "))]
    done_02 = next(i for i, line in enumerate(out) if line.startswith("done  02"))
    # the longest first; 01 beside it would plan 3 GB of a 2 GB budget, so 01 starts only once 02 is done, while
    # 03 (0.2 GB) fits beside 02
    assert out.index("run   02_part.ipynb") < done_02 < out.index("run   01_part.ipynb")
    assert out.index("run   03_part.ipynb") < done_02
    assert summary.ran == ["01_part", "02_part", "03_part"]  # reported in book order


def test_memory_budget_must_be_a_positive_number(tmp_path, capsys):
    for bad in ("0", "-1", "lots", "nan"):
        assert build.main(_args(tmp_path, "--memory-gb", bad)) == build.EXIT_USAGE
        assert "MEMORY_GB must be a positive number" in capsys.readouterr().err


def test_jobs_give_each_kernel_its_share_of_the_cores_for_torch_when_chapters_rerun_together(tmp_path, monkeypatch):
    from analysis_lib.extras import TORCH_THREADS_ENV
    from bookbuild import runner

    real_one = runner._run_one
    seen: list[tuple[str, str | None]] = []

    def one(run, nb):  # records the setting each chapter starts with, then runs it
        seen.append((nb.stem, os.environ.get(TORCH_THREADS_ENV)))
        real_one(run, nb)

    monkeypatch.setattr(runner, "_run_one", one)
    monkeypatch.setattr(runner.os, "cpu_count", lambda: 4)
    monkeypatch.delenv(TORCH_THREADS_ENV, raising=False)
    root = _root(tmp_path, TINY, _variant(tmp_path, "02_second.ipynb"))
    for jobs in ("2", "3"):  # two chapters rerun: cores // jobs each
        runner.build(build.parse_args(_args(root, "--jobs", jobs, "--force")))
    assert [v for stem, v in seen] == ["2", "2", "1", "1"] and TORCH_THREADS_ENV not in os.environ
    seen.clear()
    (root / "notebooks" / "02_second.ipynb").write_text((root / "notebooks" / "02_second.ipynb").read_text()
                                                        .replace("Tiny fixture chapter", "Tiny fixture, edited"))
    runner.build(build.parse_args(_args(root, "--jobs", "2")))  # only 02 reruns: alone, with every core
    assert seen == [("01_tiny", None), ("02_second", None)]
    seen.clear()
    monkeypatch.setenv(TORCH_THREADS_ENV, "3")  # the user's own setting wins
    runner.build(build.parse_args(_args(root, "--jobs", "2", "--force")))
    assert [v for stem, v in seen] == ["3", "3"] and os.environ[TORCH_THREADS_ENV] == "3"


def test_kernels_run_on_local_sockets_of_their_own(tmp_path):
    """IPC, not TCP: no port for another process to take between the manager's pick and the kernel's bind."""
    from bookbuild import runner

    managers = [runner._ipc_kernels()(kernel_name="python3") for _ in range(2)]
    assert [m.transport for m in managers] == ["ipc", "ipc"] and managers[0].ip != managers[1].ip
    assert all(len(m.ip) < 90 for m in managers)  # a Unix socket path holds at most 107 bytes
    root = _root(tmp_path, TINY)
    assert _run(root).ran == ["01_tiny"]
    assert "over TCP" not in (root / "book" / "_build" / "runs" / "build.log").read_text()
