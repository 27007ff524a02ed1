"""The runner when a chapter fails (issue 33 point 3, issue 37 points 3 and 6), when its options are bad (one line,
exit 2) and when a chapter's last run left work for a rebuild (issue 38 point 3).

Tiny fixture notebooks in a temporary root (``test_build``'s helpers), a real kernel each.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import inprocess_kernel
import nbformat
import pytest
from test_build import BOOM, REPO, TINY, _args, _named, _root, _run, _variant

from analysis_lib import fetch
from bookbuild import config, keys
from bookbuild import runner as build

STATUS_NB = REPO / "notebooks" / "99_reproduction_status.ipynb"


@pytest.fixture(autouse=True)
def _in_process(request, monkeypatch):
    """Notebooks run in this process unless the test is marked ``real_kernel`` (tests/inprocess_kernel.py)."""
    inprocess_kernel.use(request, monkeypatch)


@pytest.fixture(autouse=True)
def _fixed_library(monkeypatch):
    """One library identity for the whole test: a rebuild here reruns a chapter for what the test changed, not
    for an edit of the library made meanwhile."""
    fixed = keys.library_hash()
    monkeypatch.setattr(keys, "library_hash", lambda: fixed)


def _loud_boom(tmp_path: Path) -> Path:
    """A chapter that prints to both streams, then raises."""
    nb = _variant(tmp_path, "02_boom.ipynb", cells=(
        "import sys\nprint('hello from the kernel')\nprint('a warning line', file=sys.stderr)",
        "raise ValueError('boom from the fixture')"))
    nb.write_text(nb.read_text().replace('\\"01_tiny\\"', '\\"02_boom\\"'))
    return nb


def _failed(root: Path) -> list[dict]:
    return json.loads((root / "book" / "_results" / "_failed.json").read_text())["failed"]


@pytest.mark.real_kernel  # what the kernel itself does: its streams into the log
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_failed_chapter_does_not_stop_the_book(jobs, tmp_path, capsys, monkeypatch):
    after = _named(tmp_path, "03_after.ipynb")
    notebooks = [TINY, _loud_boom(tmp_path), after] + ([STATUS_NB] if jobs == "1" else [])
    root = _root(tmp_path, *notebooks)
    shutil.copy(REPO / "_toc.yml", root / "_toc.yml")
    books: list[list[str]] = []
    monkeypatch.setattr(build, "build_book", lambda cfg, chapters, summary: books.append(list(chapters)))
    code = build.main(["--root", str(root), "--jobs", jobs])  # the book too (its build stubbed here)
    out, err = capsys.readouterr()
    assert code == build.EXIT_NOTEBOOK
    chapters = root / "book" / "chapters"
    # the chapters after the failure ran, the failed one is no chapter, and the book was built from what finished
    assert (chapters / "01_tiny.ipynb").exists() and (chapters / "03_after.ipynb").exists()
    assert not (chapters / "02_boom.ipynb").exists()
    assert len(books) == 1 and "02_boom" not in books[0] and {"01_tiny", "03_after"} <= set(books[0])
    assert _failed(root) == [{"notebook": "02_boom", "error": "ValueError: boom from the fixture"}]
    # the console: the failure as it happened, the summary, the list at the end, the details
    assert "FAIL  02_boom.ipynb" in out and "ValueError: boom from the fixture" in out
    assert "1 failed (02_boom)" in out and "run   03_after.ipynb" in out
    last = err.strip().splitlines()[-1]
    assert last == ("bookbuild: exit 1 (a notebook failed): 1 chapter failed: 02_boom "
                    "(ValueError: boom from the fixture)")
    assert "cell index 5" in err  # 0 title, 1 parameters, 2 injected, 3 recorder, 4 the prints, 5 raises
    assert str(root / "book" / "_build" / "runs" / "failed" / "02_boom.ipynb") in err
    # the log: the kernel's output (both streams, by chapter) and the traceback
    log = (root / "book" / "_build" / "runs" / "build.log").read_text()
    assert "[02_boom] hello from the kernel" in log and "[02_boom:stderr] a warning line" in log
    assert "===== 02_boom: FAILED" in log and "ValueError" in log.split("----- traceback:")[1]
    assert "raise ValueError('boom from the fixture')" in log
    assert "\x1b[" not in log  # no colour codes
    if jobs == "1":  # the status page ran after the failure and lists it
        status = nbformat.read(chapters / "99_reproduction_status.ipynb", as_version=4)
        shown = json.dumps([c.get("outputs", []) for c in status.cells])
        assert "Chapters that failed in this build" in shown and "02_boom" in shown
    # the next build retries the failure only
    assert build.main(_args(root, "--jobs", jobs)) == build.EXIT_NOTEBOOK
    out = capsys.readouterr().out
    assert "skip  01_tiny.ipynb" in out and "skip  03_after.ipynb" in out and "run   02_boom.ipynb" in out


def test_a_failure_is_listed_until_its_chapter_runs_again(tmp_path, capsys):
    root = _root(tmp_path, TINY, BOOM)
    assert build.main(_args(root)) == build.EXIT_NOTEBOOK
    assert [f["notebook"] for f in _failed(root)] == ["02_boom"]
    shutil.copy(_named(tmp_path, "02_boom.ipynb"), root / "notebooks" / "02_boom.ipynb")  # fixed
    capsys.readouterr()
    assert build.main(_args(root)) == build.EXIT_OK
    assert not (root / "book" / "_results" / "_failed.json").exists()
    assert "FAIL" not in capsys.readouterr().out


# ------------------------------------------------------------------------- one line, exit 2 (issue 37 point 3)


def _last_err(capsys) -> str:
    return capsys.readouterr().err.strip().splitlines()[-1]


@pytest.mark.parametrize("option", ["--cache-dir", "--state-dir", "--book-dir"])
def test_a_folder_option_naming_a_file_is_one_line_exit_2(option, tmp_path, capsys):
    root = _root(tmp_path, TINY)
    a_file = tmp_path / "a_file"
    a_file.write_text("not a folder")
    for value, problem in ((a_file, "is a file, not a folder"), (a_file / "below", "which is a file")):
        assert build.main(_args(root, option, str(value))) == build.EXIT_USAGE
        last = _last_err(capsys)
        assert last.startswith(f"bookbuild: exit 2 (bad arguments or inputs): {option} ") and problem in last
    assert not (root / "book").exists()  # nothing ran


def test_a_symlink_loop_is_one_line_exit_2(tmp_path, capsys):
    root = _root(tmp_path, TINY)
    loop = tmp_path / "loop"
    loop.symlink_to(tmp_path / "loop")
    for named, args in (("DATA", ("--data", str(loop))), ("NUGGETS", ("--nuggets", str(loop))),
                        ("--cache-dir", ("--cache-dir", str(loop / "x"))), ("--root", ("--root", str(loop)))):
        assert build.main(["--no-book", *args] if named == "--root" else _args(root, *args)) == build.EXIT_USAGE
        err = capsys.readouterr().err
        last = err.strip().splitlines()[-1]
        assert last.startswith(f"bookbuild: exit 2 (bad arguments or inputs): {named}"), last
        assert "resolve" in last and "Traceback" not in err


def test_an_unknown_kernel_is_one_line_exit_2(tmp_path, capsys):
    root = _root(tmp_path, TINY)
    assert build.main(_args(root, "--kernel", "nope")) == build.EXIT_USAGE
    last = _last_err(capsys)
    assert last.startswith("bookbuild: exit 2 (bad arguments or inputs): --kernel 'nope': no such Jupyter kernel")
    assert "python3" in last  # the installed kernels are named
    assert not (root / "book" / "chapters").exists()


@pytest.mark.parametrize(("value", "ok"), [("0", False), ("1", True), (str(config.MAX_BOOTSTRAP), True),
                                           (str(config.MAX_BOOTSTRAP + 1), False), ("1000000000", False),
                                           ("-3", False), ("ten", False)])
def test_bootstrap_rounds_have_documented_bounds(value, ok, tmp_path, monkeypatch, capsys):
    if ok:
        assert build.parse_args(["--root", str(tmp_path), "--bootstrap", value]).n_bootstrap == int(value)
        monkeypatch.setenv("BOOK_BOOTSTRAP", value)
        assert build.parse_args(["--root", str(tmp_path)]).n_bootstrap == int(value)
        return
    assert build.main(_args(tmp_path, "--bootstrap", value)) == build.EXIT_USAGE
    last = _last_err(capsys)
    assert f"--bootstrap/BOOTSTRAP must be an integer from 1 to {config.MAX_BOOTSTRAP:,}" in last
    assert ("intervals" in last) == (value == "0")  # why 0 is refused: the comparison with the paper's ranks


def test_a_long_value_is_quoted_short(tmp_path, capsys):
    assert build.main(_args(tmp_path, "--bootstrap", "9" * 100_000)) == build.EXIT_USAGE
    assert len(_last_err(capsys)) < 300


# ----------------------------------------------------------------- the data mirror (issue 38 point 5)


def test_the_runner_sets_the_same_mirror_as_make_book(tmp_path, monkeypatch):
    probe = _variant(tmp_path, "01_tiny.ipynb", cells=(
        "rec.number('FIX-1', 'data cache', os.environ.get('ANALYSIS_DATA_MIRROR', ''), data='none')",))
    root = _root(tmp_path / "repo", probe)  # <tmp>/repo/root: the mirror is <tmp>/repo/shared/data
    monkeypatch.delenv("ANALYSIS_DATA_MIRROR", raising=False)
    assert fetch.default_mirror(root) is None
    assert _run(root).ran == ["01_tiny"]
    recorded = json.loads((root / "book" / "_results" / "01_tiny.json").read_text())["results"]
    assert next(r["ours"] for r in recorded if r["quantity"] == "data cache") == ""  # no such folder: unset
    mirror = root.parent / "shared" / "data"
    mirror.mkdir(parents=True)
    assert fetch.default_mirror(root) == mirror
    assert _run(root, "--force").ran == ["01_tiny"]
    recorded = json.loads((root / "book" / "_results" / "01_tiny.json").read_text())["results"]
    assert next(r["ours"] for r in recorded if r["quantity"] == "data cache") == str(mirror)
    assert "ANALYSIS_DATA_MIRROR" not in os.environ  # the runner's own environment restored
    monkeypatch.setenv("ANALYSIS_DATA_MIRROR", str(tmp_path))  # the user's own setting wins
    assert _run(root, "--force").ran == ["01_tiny"]
    recorded = json.loads((root / "book" / "_results" / "01_tiny.json").read_text())["results"]
    assert next(r["ours"] for r in recorded if r["quantity"] == "data cache") == str(tmp_path)


def test_the_makefile_leaves_the_mirror_default_to_the_library():
    makefile = (REPO / "Makefile").read_text()
    assert not any(line.startswith("ANALYSIS_DATA_MIRROR") for line in makefile.splitlines())
    assert "fetch.default_mirror" in makefile


def test_the_library_finds_the_mirror_beside_its_checkout_without_the_variable(monkeypatch):
    monkeypatch.delenv("ANALYSIS_DATA_MIRROR", raising=False)
    beside = REPO.parent / "shared" / "data"
    assert fetch.default_mirror() == (beside if beside.is_dir() else None)
    assert fetch.mirror_dir() == fetch.default_mirror() and fetch.mirror_dir("/given") == "/given"
    monkeypatch.setenv("ANALYSIS_DATA_MIRROR", "/elsewhere")
    assert fetch.mirror_dir() == "/elsewhere"


def test_a_plain_papermill_run_that_fails_leaves_no_results_file(tmp_path):
    """Issue 44: the recorder writes its file when it is made; a cell that then fails removes it, so a later build
    reads nothing of the failed run (a run that finishes keeps it)."""
    import papermill

    results = tmp_path / "results"
    ok = _variant(tmp_path, "01_tiny.ipynb")
    papermill.execute_notebook(str(ok), str(tmp_path / "ok.ipynb"), parameters={"results_dir": str(results)},
                               progress_bar=False)
    assert (results / "01_tiny.json").exists()
    failing = _variant(tmp_path / "failing", "01_tiny.ipynb", cells=("raise ValueError('boom')",))
    with pytest.raises(papermill.PapermillExecutionError, match="boom"):
        papermill.execute_notebook(str(failing), str(tmp_path / "failed.ipynb"),
                                   parameters={"results_dir": str(results)}, progress_bar=False)
    assert not (results / "01_tiny.json").exists()


# ------------------------------------------------------- unfinished work resumes (issue 38 point 3)

BUDGET = "not run: the request budget ($ANALYSIS_LLM_MAX_REQUESTS=5) was reached before this item was sent"


@pytest.mark.parametrize(("reason", "unfinished"), [
    (BUDGET, True),
    ("the request budget ($ANALYSIS_LLM_MAX_REQUESTS=5) was reached", True),
    ("deadline exceeded after 300 s", True),
    ("not run: run deadline ($ANALYSIS_LLM_RUN_DEADLINE=60 s) passed", True),
    ("endpoint failed part-way: HTTP 503", True),
    ("not run: 12 items pending in a Batch API batch; rebuild to collect them", True),
    ("not run: no LLM endpoint configured (set OPENAI_BASE_URL / OPENAI_API_KEY) and no cached result", False),
    ("not run: offline build and no cached LLM result", False),
    ("the release has no `primary_intent`", False),
    ("", False),
])
def test_which_not_run_reasons_a_rebuild_can_finish(reason, unfinished):
    assert keys.unfinished_reason(reason) is unfinished


def test_a_chapter_with_work_left_for_budget_reruns_on_a_plain_rebuild(tmp_path, capsys):
    marker = tmp_path / "budget_was_raised"
    resumable = _variant(tmp_path, "02_llm.ipynb", params='marker = ""', cells=(
        "from pathlib import Path\n"
        "if Path(marker).exists():\n"
        "    rec.number('FIX-1', 'llm cache', 1.0, data='none')\n"
        "else:\n"
        f"    rec.not_run('FIX-1', 'llm cache', reason={BUDGET!r})",))
    resumable.write_text(resumable.read_text().replace('\\"01_tiny\\"', '\\"02_llm\\"'))
    offline = _variant(tmp_path, "03_offline.ipynb", cells=(
        "rec.not_run('FIX-1', 'llm cache', reason='not run: no LLM endpoint configured and no cached result')",))
    offline.write_text(offline.read_text().replace('\\"01_tiny\\"', '\\"03_offline\\"'))
    root = _root(tmp_path, TINY, resumable, offline)
    setting = ("--set", f"marker={str(marker)!r}")
    assert _run(root, *setting).ran == ["01_tiny", "02_llm", "03_offline"]
    assert keys.unfinished(root / "book" / "_results" / "02_llm.json") == ["FIX-1: llm cache"]
    capsys.readouterr()
    again = _run(root, *setting)  # nothing changed but the budget-skipped work: that chapter alone reruns
    assert again.ran == ["02_llm"] and again.skipped == ["01_tiny", "03_offline"]
    assert "run   02_llm.ipynb (1 numbers left unfinished" in capsys.readouterr().out
    marker.touch()  # e.g. a larger budget: the rebuild finishes the rest
    assert _run(root, *setting).ran == ["02_llm"]
    assert keys.unfinished(root / "book" / "_results" / "02_llm.json") == []
    assert _run(root, *setting).skipped == ["01_tiny", "02_llm", "03_offline"]  # finished: a warm build again
