"""Publishing (issue 26): ``make publish`` pushes the built HTML to a ``gh-pages`` branch with ghp-import, the
workflow file passes the GitHub workflow schema, the lock file pins the full install."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bookbuild import identity, publish

REPO = Path(__file__).resolve().parents[1]
WORKFLOW = REPO / ".github" / "workflows" / "book.yml"


def _git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout


def _book(root: Path, *, stale: bool = False) -> Path:
    """A built book as the runner leaves it: HTML, results with identities and the build's reference."""
    html = root / "book" / "_build" / "html"
    (html / "_static").mkdir(parents=True)
    (html / "index.html").write_text("<html><body>the book</body></html>")
    (html / "_static" / "style.css").write_text("body {}")
    results = root / "book" / "_results"
    results.mkdir(parents=True)
    ref = {"data_source": {"kind": "file", "name": "release.parquet", "sha256": "ab" * 32, "id": "sha256:" + "ab" * 32},
           "seed": 0, "environment": identity.environment()}
    (results / identity.BUILD_FILE).write_text(json.dumps(ref))
    chapter = dict(ref, seed=1) if stale else ref
    (results / "01_a.json").write_text(json.dumps({"notebook": "01_a", "results": [], "identity": chapter}))
    return root


@pytest.fixture
def repo_with_remote(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git not installed")
    remote = tmp_path / "remote.git"
    _git("init", "--bare", "-q", str(remote), cwd=tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    _git("init", "-q", cwd=work)
    _git("config", "user.email", "test@example.org", cwd=work)
    _git("config", "user.name", "Test", cwd=work)
    (work / "README.md").write_text("x\n")
    _git("add", "README.md", cwd=work)
    _git("commit", "-qm", "init", cwd=work)
    _git("remote", "add", "pages", str(remote), cwd=work)
    return work, remote


def test_make_publish_pushes_the_html_to_gh_pages_of_a_bare_repository(repo_with_remote):
    work, remote = repo_with_remote
    _book(work)
    make = shutil.which("make")
    if make is None:
        pytest.skip("make not installed")
    venv = work / "venv"  # the stand-in of .venv: this interpreter, marked installed
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    (venv / "bin" / "python").chmod(0o755)
    (venv / ".installed").touch()
    os.utime(venv / ".installed", (2**31, 2**31))
    proc = subprocess.run([make, "-s", "-f", str(REPO / "Makefile"), "-C", str(work), "publish", f"VENV={venv}",
                           "REMOTE=pages"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    files = _git("ls-tree", "-r", "--name-only", "gh-pages", cwd=remote).split()
    assert sorted(files) == [".nojekyll", "_static/style.css", "index.html"]
    assert _git("show", "gh-pages:index.html", cwd=remote) == "<html><body>the book</body></html>"
    message = _git("log", "-1", "--format=%s", "gh-pages", cwd=remote)
    assert "release.parquet sha256 abababababab" in message and "Python" in message


def test_publish_refuses_an_unbuilt_or_mixed_book(repo_with_remote, capsys):
    work, remote = repo_with_remote
    html, results = work / "book" / "_build" / "html", work / "book" / "_results"
    assert publish.publish(html, results, "pages", "gh-pages", cwd=work) == publish.EXIT_REFUSED
    assert "run `make book` first" in capsys.readouterr().err
    _book(work, stale=True)
    assert publish.publish(html, results, "pages", "gh-pages", cwd=work) == publish.EXIT_REFUSED
    assert "the book is mixed: 1 chapter(s)" in capsys.readouterr().err
    assert "gh-pages" not in _git("branch", "--list", cwd=remote)
    assert publish.publish(html, results, "pages", "gh-pages", allow_mixed=True, cwd=work) == publish.EXIT_OK
    assert publish.publish(html, results, "nowhere", "gh-pages", allow_mixed=True, cwd=work) == publish.EXIT_PUSH


def _lint(path: Path) -> subprocess.CompletedProcess:
    tool = Path(sys.executable).parent / "check-jsonschema"
    return subprocess.run([str(tool), "--builtin-schema", "vendor.github-workflows", str(path)],
                          capture_output=True, text=True, timeout=120)


def test_the_workflow_file_passes_the_workflow_schema_and_the_linter_catches_a_broken_one(tmp_path):
    assert _lint(WORKFLOW).returncode == 0
    text = WORKFLOW.read_text()
    assert "DATA=hf" in text and "make publish" in text and "untested" in text.lower()
    broken = tmp_path / "broken.yml"
    broken.write_text(text.replace("runs-on: ubuntu-24.04", "runs-onn: ubuntu-24.04"))
    assert _lint(broken).returncode != 0


def test_the_lock_pins_every_installed_package_of_the_full_install():
    """The lock lists exact versions only, and this environment (installed from it by make) has exactly them."""
    lines = [ln for ln in (REPO / "requirements.lock").read_text().splitlines() if ln and not ln.startswith("#")]
    pinned = dict(ln.split("==", 1) for ln in lines)
    assert all("==" in ln for ln in lines) and len(pinned) == len(lines)
    assert pinned["torch"].startswith("2.13.0") and "ghp-import" in pinned and "jupyter-book" in pinned
    installed = identity.installed()
    locked = {identity.canonical(k): v for k, v in pinned.items()}
    assert {k: installed.get(k) for k in locked} == locked
