"""One identity per build (issue 23): inputs validated at the door, results replaced atomically, a mixed book
flagged, the environment's identity, the exit codes of the runner and of ``make book``, a quiet console.

Each test runs tiny fixture notebooks from ``tests/fixtures/`` in a temporary root (a real kernel, about a second
per notebook) with the runner's ``--no-book``; the hand-made bad inputs are in ``tests/fixtures/inputs/``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import inprocess_kernel
import nbformat
import pytest

from bookbuild import identity, keys
from bookbuild import runner as build

FIXTURES = Path(__file__).resolve().parent / "fixtures"
REPO = Path(__file__).resolve().parents[1]
TINY = FIXTURES / "notebooks" / "01_tiny.ipynb"
BOOM = FIXTURES / "failing" / "02_boom.ipynb"
STATUS_NB = REPO / "notebooks" / "99_reproduction_status.ipynb"
INPUTS = FIXTURES / "inputs"
RELEASE_A, RELEASE_B = INPUTS / "release_a.parquet", INPUTS / "release_b.parquet"


@pytest.fixture(autouse=True)
def _in_process(request, monkeypatch):
    """Notebooks run in this process unless the test is marked ``real_kernel`` (tests/inprocess_kernel.py)."""
    inprocess_kernel.use(request, monkeypatch)


@pytest.fixture(autouse=True)
def _fixed_library(monkeypatch):
    """One library identity per test: a rebuild reruns a chapter for what the test changed, not for an edit of the
    library made meanwhile in the same checkout."""
    fixed = keys.library_hash()
    monkeypatch.setattr(keys, "library_hash", lambda: fixed)


def _root(tmp_path: Path, *notebooks: Path) -> Path:
    root = tmp_path / "root"
    (root / "notebooks").mkdir(parents=True, exist_ok=True)
    for nb in notebooks:
        shutil.copy(nb, root / "notebooks" / nb.name)
    return root


def _copy_as(nb: Path, name: str, tmp_path: Path, *, extra: tuple[str, ...] = (), params: str | None = None) -> Path:
    """``nb`` saved under ``name`` (its results file follows the name), with extra cells at the end."""
    book = nbformat.read(nb, as_version=4)
    stem = name.removesuffix(".ipynb")
    for cell in book.cells:
        cell.source = cell.source.replace('"01_tiny"', f'"{stem}"')
        if params is not None and "parameters" in cell.metadata.get("tags", []):
            cell.source = params
    for i, code in enumerate(extra):
        book.cells.append(nbformat.v4.new_code_cell(code, id=f"extra-{i}"))
    out = tmp_path / "variants" / name
    out.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(book, out)
    return out


def _args(root: Path, *extra: str) -> list[str]:
    return ["--root", str(root), "--no-book", *extra]


def _run(root: Path, *extra: str) -> build.Summary:
    return build.build(build.parse_args(_args(root, *extra)))


def _snapshot(root: Path) -> dict[str, bytes]:
    """Every file of the previous book: chapters, results and state (the lock and hash caches aside)."""
    out = {}
    for folder in (root / "book" / "chapters", root / "book" / "_results", root / ".build_state"):
        for p in sorted(folder.rglob("*")):
            if p.is_file() and p.name not in (".lock", "data_hashes.json", "validated.json", "inputs.json"):
                out[str(p.relative_to(root))] = p.read_bytes()
    return out


def _status_text(root: Path) -> str:
    nb = nbformat.read(root / "book" / "chapters" / "99_reproduction_status.ipynb", as_version=4)
    return json.dumps([o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])])


def _identity_cell(root: Path, stem: str) -> str:
    nb = nbformat.read(root / "book" / "chapters" / f"{stem}.ipynb", as_version=4)
    return next((c.source for c in nb.cells if c.get("id") == identity.CELL_ID), "")


# --- inputs validated at the door ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "problem"), [
    ("missing.parquet", "does not exist"),
    ("truncated.parquet", "could not be read as parquet"),
    ("no_winner.parquet", "missing column 'winner'"),
    ("empty.parquet", "is empty (0 bytes)"),
    ("no_rows.parquet", "no rows"),
])
def test_a_bad_release_exits_2_with_one_line_and_leaves_the_previous_book(name, problem, tmp_path, capsys):
    root = _root(tmp_path, TINY)
    assert _run(root, "--data", str(RELEASE_A)).ran == ["01_tiny"]
    before = _snapshot(root)
    capsys.readouterr()
    code = build.main(_args(root, "--data", str(INPUTS / name)))
    captured = capsys.readouterr()
    assert code == build.EXIT_USAGE == 2
    last = captured.err.strip().splitlines()[-1]
    assert last.startswith("bookbuild: exit 2 (bad arguments or inputs): DATA: ")
    assert name in last and problem in last
    assert "Traceback" not in captured.err and "run   " not in captured.out  # nothing ran
    assert _snapshot(root) == before  # the previous book, untouched


def test_every_user_input_is_validated_by_its_loader_before_any_notebook_runs(tmp_path, capsys):
    root = _root(tmp_path, TINY)
    bad = tmp_path / "records.jsonl"
    bad.write_text('{"qid": "1", "side": "a"\n')  # truncated JSON
    labels = tmp_path / "labels.csv"
    labels.write_text("task,item\nx,1\n")  # column-less: no 'human'
    cases = {
        "--nuggets": (bad, "not valid JSON"),
        "--answer-labels": (labels, "missing column"),
        "--match-logs": (tmp_path / "no-logs", "does not exist"),
        "--answers": (tmp_path, "is a folder; expected a file"),
        "--text-arena": (Path("/dev/null"), "not a regular file"),
    }
    for option, (path, problem) in cases.items():
        assert build.main(_args(root, option, str(path))) == build.EXIT_USAGE
        err = capsys.readouterr().err.strip().splitlines()
        assert problem in err[-1] and path.name in err[-1], (option, err[-1])
    assert not (root / "book" / "chapters" / "01_tiny.ipynb").exists()  # nothing ran


def test_a_bad_seed_is_one_line_not_a_traceback(tmp_path, capsys, monkeypatch):
    root = _root(tmp_path, TINY)
    monkeypatch.setenv("BOOK_SEED", "abc")
    assert build.main(_args(root)) == build.EXIT_USAGE
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1] == ("bookbuild: exit 2 (bad arguments or inputs): SEED must be a non-negative "
                                            "integer, got 'abc'")


# --- atomic results, --only, a killed build -----------------------------------------------------------------------


def test_only_on_other_data_flags_the_chapters_it_left_stale(tmp_path, capsys):
    second = _copy_as(TINY, "02_second.ipynb", tmp_path)
    root = _root(tmp_path, TINY, second, STATUS_NB)
    assert _run(root, "--data", str(RELEASE_A)).ran == ["01_tiny", "02_second", "99_reproduction_status"]
    assert "Mixed book" not in _status_text(root)
    assert "Computed from other inputs" not in _identity_cell(root, "01_tiny")
    assert "release_a.parquet" in _identity_cell(root, "01_tiny")  # the page names its data
    capsys.readouterr()
    summary = _run(root, "--only", "02_second,99_reproduction_status", "--data", str(RELEASE_B))
    out = capsys.readouterr().out
    assert summary.ran == ["02_second", "99_reproduction_status"] and summary.stale == ["01_tiny"]
    assert "stale: 1 chapter(s)" in out and "01_tiny (data source" in out  # --only says what it left stale
    status = _status_text(root)
    assert "Mixed book" in status and "01_tiny" in status and "release_a.parquet" in status
    assert "release_b.parquet" in status  # this build's identity, at the top of the status page
    assert "Computed from other inputs" in _identity_cell(root, "01_tiny")  # the page that differs says so
    assert "Computed from other inputs" not in _identity_cell(root, "02_second")
    # the same options for the whole book: consistent again, the flag gone
    assert _run(root, "--data", str(RELEASE_B)).ran == ["01_tiny", "99_reproduction_status"]
    assert "Mixed book" not in _status_text(root)
    assert "Computed from other inputs" not in _identity_cell(root, "01_tiny")


def test_a_killed_build_never_publishes_partial_results(tmp_path):
    """Chapter 06 kept 18 of its 54 numbers when a build was killed: here a chapter records a number, then the
    runner is killed (SIGKILL, the whole process group) while the chapter still runs."""
    root = _root(tmp_path, TINY, STATUS_NB)
    assert _run(root, "--seed", "1").ran == ["01_tiny", "99_reproduction_status"]
    results = root / "book" / "_results" / "01_tiny.json"
    good = results.read_bytes()
    slow = _copy_as(TINY, "01_tiny.ipynb", tmp_path, extra=(
        "rec.number('FIX-1', 'cwd', 'PARTIAL-NUMBER', data='none')\nimport time\ntime.sleep(120)",))
    shutil.copy(slow, root / "notebooks" / "01_tiny.ipynb")
    staged = root / "book" / "_build" / "runs" / "results" / "01_tiny" / "01_tiny.json"
    proc = subprocess.Popen([sys.executable, "-m", "bookbuild", *_args(root, "--seed", "2")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not (staged.exists() and b"PARTIAL-NUMBER" in staged.read_bytes()):
            assert time.monotonic() < deadline and proc.poll() is None, "the chapter never started"
            time.sleep(0.2)
        assert results.read_bytes() == good  # while it runs, the status page reads the last good results
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert results.read_bytes() == good
    shutil.copy(TINY, root / "notebooks" / "01_tiny.ipynb")
    # a status-only build with the book's options: the last good, complete results, not flagged (the killed build
    # changed no chapter's results or state, so the status page already shows them and nothing reruns)
    assert _run(root, "--only", "99_reproduction_status", "--seed", "1").ran == []
    assert results.read_bytes() == good and "PARTIAL-NUMBER" not in _status_text(root)
    assert "Mixed book" not in _status_text(root)
    # with the killed build's options the chapter is stale, and the status page says so
    summary = _run(root, "--only", "99_reproduction_status", "--seed", "2")
    assert summary.stale == ["01_tiny"] and "Mixed book" in _status_text(root)
    assert not staged.exists() or b"PARTIAL-NUMBER" in staged.read_bytes()  # staging is never read by the status page
    assert _run(root, "--seed", "2").ran == ["01_tiny", "99_reproduction_status"]  # the next build clears it
    assert not staged.parent.exists()


# --- the environment's identity -----------------------------------------------------------------------------------


def test_environment_identity_hashes_the_whole_installed_set():
    packages = identity.installed()
    assert "numpy" in packages and "analysis-lib" not in packages
    env = identity.environment(packages)
    assert env["packages"]["numpy"] == packages["numpy"] and env["n_installed"] == len(packages)
    assert identity.environment(dict(reversed(list(packages.items())))) == env  # order does not matter
    changed = dict(packages, numpy="0.0.1")
    assert identity.environment(changed)["installed_sha256"] != env["installed_sha256"]
    other = dict(packages, **{"some-small-tool": "1.0"})  # a package outside the key list counts too
    assert identity.environment(other)["installed_sha256"] != env["installed_sha256"]


def test_the_offline_encoders_precision_is_part_of_the_environment(monkeypatch):
    """A book moved to a processor without native bfloat16 embeds in float32: its chapters then differ from the
    recorded ones, and the status page says which precision a build used."""
    from analysis_lib.search_arena import encoder

    packages = {"numpy": "2.0.0"}
    monkeypatch.setattr(encoder, "native_bfloat16", lambda: True)
    here = identity.environment(packages)
    monkeypatch.setattr(encoder, "native_bfloat16", lambda: False)
    there = identity.environment(packages)
    assert (here["offline_encoder"], there["offline_encoder"]) == ("bfloat16", "float32")
    assert here["installed_sha256"] == there["installed_sha256"]
    assert identity.environment_key(here) != identity.environment_key(there)
    assert identity.differences({"environment": here}, {"environment": there}) != []
    assert "offline encoder in bfloat16" in identity.describe_environment(here)


def test_installed_reads_what_importlib_metadata_parses():
    """The header scan gives each distribution's name and version as the full metadata parse does."""
    import importlib.metadata

    full = {identity.canonical(d.metadata["Name"]): d.version for d in importlib.metadata.distributions()
            if d.metadata["Name"]}
    full.pop("analysis-lib", None)
    assert identity.installed() == dict(sorted(full.items())) and len(full) > 100


def test_a_changed_locked_version_reruns_and_flags_what_was_built_under_the_old_one(tmp_path, monkeypatch, capsys):
    second = _copy_as(TINY, "02_second.ipynb", tmp_path)
    root = _root(tmp_path, TINY, second, STATUS_NB)
    assert _run(root).ran == ["01_tiny", "02_second", "99_reproduction_status"]
    assert "numpy " in _status_text(root)  # the environment beside the data identity on the status page
    packages = identity.installed()
    monkeypatch.setattr(identity, "installed", lambda: dict(packages, numpy="0.0.1"))
    summary = _run(root, "--only", "02_second,99_reproduction_status")
    assert summary.stale == ["01_tiny"]
    assert "environment" in _identity_cell(root, "01_tiny") and "Mixed book" in _status_text(root)
    assert _run(root).ran == ["01_tiny", "99_reproduction_status"]  # a new environment reruns every chapter
    assert "Mixed book" not in _status_text(root)


def test_a_chapter_reruns_only_on_the_inputs_it_declares(tmp_path):
    own = tmp_path / "02_own.ipynb"  # like chapter 06: its own simulator, no release
    nb = nbformat.v4.new_notebook(metadata=nbformat.read(TINY, as_version=4).metadata)
    nb.cells = [nbformat.v4.new_markdown_cell("# Own inputs only", id="title"),
                nbformat.v4.new_code_cell('seed = 0\nresults_dir = "../book/_results"', id="params",
                                          metadata={"tags": ["parameters"]}),
                nbformat.v4.new_code_cell("print(seed)", id="body")]
    nbformat.write(nb, own)
    root = _root(tmp_path, TINY, own)
    assert _run(root, "--data", str(RELEASE_A)).ran == ["01_tiny", "02_own"]
    injected = nbformat.read(root / "book" / "chapters" / "02_own.ipynb", 4).metadata["papermill"]["parameters"]
    assert set(injected) == {"seed", "results_dir"}  # only what it declares
    second = _run(root, "--data", str(RELEASE_B))
    assert second.ran == ["01_tiny"] and second.skipped == ["02_own"] and second.stale == []


def test_the_chapters_that_read_no_release_do_not_declare_data_source():
    declared = {nb.stem: set(build.declared_parameters(nb)) for nb in (REPO / "notebooks").glob("0[89]_*.ipynb")}
    assert declared and all("data_source" not in names for names in declared.values())


# --- exit codes through make, a quiet console ---------------------------------------------------------------------


def _make_venv(tmp_path: Path) -> Path:
    """A stand-in for .venv whose python is this interpreter, marked installed (newer than the lock)."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    (venv / "bin" / "python").chmod(0o755)
    (venv / ".installed").touch()
    os.utime(venv / ".installed", (2**31, 2**31))
    return venv


@pytest.mark.parametrize(("variables", "runner_code", "message"), [
    (["SEED=abc"], 2, "SEED must be a non-negative integer, got 'abc'"),
    (["DATA=missing.parquet"], 2, "DATA: 'missing.parquet' does not exist"),
    ([], 1, "1 chapter failed: 02_boom (ValueError: boom from the fixture)"),
])
def test_make_book_exit_status_and_last_lines(variables, runner_code, message, tmp_path):
    make = shutil.which("make")
    if make is None:
        pytest.skip("make not installed")
    root = _root(tmp_path, BOOM)
    proc = subprocess.run([make, "-s", "-f", str(REPO / "Makefile"), "-C", str(root), "book",
                           f"VENV={_make_venv(tmp_path)}", *variables],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2  # GNU make's status for any failed recipe (the README says so)
    lines = proc.stderr.strip().splitlines()
    assert "Traceback" not in proc.stderr
    # the runner's code and reason, then make's closing line carrying the same code
    assert lines[-2].startswith(f"bookbuild: exit {runner_code} (") and message in lines[-2]
    assert lines[-1].endswith(f"Error {runner_code}")


def test_console_shows_runner_lines_and_bars_and_the_log_gets_the_kernel_noise(tmp_path):
    noisy = _copy_as(TINY, "01_tiny.ipynb", tmp_path, extra=(
        "import sys, warnings\nwarnings.warn('a library warning from the fixture')\n"
        "print('kernel stderr line from the fixture', file=sys.__stderr__)",))
    root = _root(tmp_path, noisy)
    proc = subprocess.run([sys.executable, "-m", "bookbuild", *_args(root)], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    log = root / "book" / "_build" / "runs" / "build.log"
    assert f"log   kernel output, warnings and tracebacks: {log}" in proc.stdout
    console = proc.stdout + proc.stderr
    assert "kernel stderr line from the fixture" not in console and "without encryption" not in console
    assert "kernel stderr line from the fixture" in log.read_text()
    assert "run   01_tiny.ipynb" in proc.stdout and "done  01_tiny.ipynb" in proc.stdout
    assert proc.stderr.count("01_tiny:") >= 1  # its progress bar
