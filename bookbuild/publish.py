"""``make publish``: push the built book (``book/_build/html``) to the ``gh-pages`` branch of a remote with
ghp-import, the tool Jupyter Book 1 recommends for GitHub Pages.

``python -m bookbuild.publish [--remote origin] [--branch gh-pages] [--html book/_build/html]`` refuses a book that
was not built (no ``index.html``) and a mixed book (chapters computed from other inputs than the status page's,
:func:`bookbuild.identity.stale_chapters`) unless ``--allow-mixed``; then runs ``ghp-import --no-jekyll --push
--force`` with a commit message naming the build's data and environment. Exit codes: 0 published, 2 nothing to
publish or a mixed book, 4 ghp-import or git failed.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

from bookbuild import identity

EXIT_OK, EXIT_REFUSED, EXIT_PUSH = 0, 2, 4


def commit_message(results_dir: Path) -> str:
    """``Publish the book: data …; environment …`` from the build's reference identity."""
    ref = identity.read_reference(results_dir) or {}
    data = (ref.get("data_source") or {})
    env = (ref.get("environment") or {})
    what = data.get("name") or "unknown data"
    if data.get("sha256"):
        what += f" sha256 {str(data['sha256'])[:12]}"
    if data.get("revision"):
        what += f" revision {str(data['revision'])[:12]}"
    return (f"Publish the book: data {what}, seed {ref.get('seed', '?')}; Python {env.get('python', '?')}, "
            f"installed set {str(env.get('installed_sha256', '?'))[:12]}")


def _ghp_import() -> list[str]:
    script = Path(sys.executable).parent / "ghp-import"
    if script.exists():
        return [str(script)]
    found = shutil.which("ghp-import")
    if found:
        return [found]
    return [sys.executable, "-m", "ghp_import"]


def publish(html: Path, results_dir: Path, remote: str, branch: str, *, allow_mixed: bool = False,
            cwd: Path | None = None) -> int:
    if not (html / "index.html").exists():
        print(f"publish: no built book at {html} (run `make book` first)", file=sys.stderr)
        return EXIT_REFUSED
    stale = identity.stale_chapters(results_dir) if results_dir.exists() else {}
    if stale and not allow_mixed:
        print(f"publish: refused, the book is mixed: {len(stale)} chapter(s) were computed from other inputs than "
              f"the status page's ({', '.join(sorted(stale))}); rebuild with `make book` and the same options, or "
              "pass --allow-mixed", file=sys.stderr)
        return EXIT_REFUSED
    cmd = [*_ghp_import(), "--no-jekyll", "--push", "--force", "--remote", remote, "--branch", branch,
           "--message", commit_message(results_dir), str(html)]
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        tail = " ".join((proc.stderr or proc.stdout).split())[-400:]
        print(f"publish: ghp-import failed (exit {proc.returncode}): {tail}", file=sys.stderr)
        return EXIT_PUSH
    print(f"published {html} to branch {branch} of {remote}")
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bookbuild.publish", description=__doc__.split("\n\n")[0])
    p.add_argument("--remote", default="origin", help="git remote to push to (default: origin)")
    p.add_argument("--branch", default="gh-pages", help="branch to publish to (default: gh-pages)")
    p.add_argument("--book-dir", default="book", help="the book folder (default: book)")
    p.add_argument("--allow-mixed", action="store_true", help="publish a book whose chapters disagree")
    a = p.parse_args(argv)
    book = Path(a.book_dir).resolve()
    return publish(book / "_build" / "html", book / "_results", a.remote, a.branch, allow_mixed=a.allow_mixed)


if __name__ == "__main__":
    sys.exit(main())
