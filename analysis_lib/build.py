"""Run the chapter notebooks with papermill and build the Jupyter Book: ``python -m analysis_lib.build``.

``make book`` calls this module. It

1. runs ``<notebooks-dir>/*.ipynb`` in name order with papermill (cwd: the notebooks folder), injecting
   ``data_source``, ``seed``, ``n_bootstrap``, ``results_dir`` (``<book-dir>/_results``, absolute) and
   ``cache_dir`` (``<root>/.cache``, absolute), and writes each executed copy to ``<book-dir>/chapters/``
   (never into the notebooks folder);
2. skips a notebook whose inputs have not changed since its last successful run. Its inputs are hashed into one
   key stored in ``<state-dir>/<notebook>.json`` after the run succeeds: the notebook's bytes, the injected
   parameters, the data source's identity (a file's sha256, cached by path, mtime and size; the string itself
   for ``sample``, ``sample:N`` and ``hf``), the kernel name, and the library's source (every
   ``analysis_lib/**/*.py`` and ``analysis_lib/resources/**`` file). ``--force`` reruns everything; the
   reproduction-status notebook always reruns, since its input is the other notebooks' results;
3. stops at the first failing notebook, naming it and the failing cell, with a non-zero exit code; the
   executed copies of the notebooks that finished (and the failing one, with its traceback) stay in place;
4. writes the table of contents of this build (the notebooks that have an executed copy, in book order) and runs
   ``jupyter-book build`` on the folder holding ``_config.yml`` (the repository root, or the book folder if it
   has its own), with the HTML in ``<book-dir>/_build/html``. Sphinx warnings are listed, and fail the build
   only with ``--strict`` (which also rebuilds every page: an incremental build only reports the warnings of
   the pages it rereads).

Exit codes: 0 success, 1 a notebook failed, 2 bad arguments or inputs, 3 the book build failed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

STATUS_NOTEBOOK = "99_reproduction_status"

#: Book order after the intro: the status page first, then the chapters. Notebooks not listed here follow in
#: name order; ``library`` (the "Using analysis_lib" page) closes the book.
BOOK_ORDER: tuple[str, ...] = (
    STATUS_NOTEBOOK,
    "01_dataset",
    "02_prompts",
    "03_preferences",
    "04_citations",
    "05_cross_arena",
    "06_methods_validation",
    "07_nuggets",
    "08_dr_arena",
    "09_answer_engines",
)



def _named_source(source: str) -> bool:
    """Data sources that are names rather than paths (their identity is the string itself)."""
    from analysis_lib.data import sample_size

    try:
        return sample_size(source) is not None or source == "hf" or source.startswith("hf:")
    except ValueError:  # "sample:abc": not a usable name; the path check reports it
        return False

EXIT_OK, EXIT_NOTEBOOK, EXIT_USAGE, EXIT_BOOK = 0, 1, 2, 3


class BuildError(RuntimeError):
    """A build step failed; ``exit_code`` is the process exit status to use."""

    def __init__(self, message: str, exit_code: int):
        super().__init__(message)
        self.exit_code = exit_code


@dataclass
class Config:
    """Everything one build needs; paths are absolute."""

    root: Path
    notebooks_dir: Path
    book_dir: Path
    state_dir: Path
    cache_dir: Path
    data: str = "sample"
    seed: int = 0
    n_bootstrap: int = 100
    kernel: str = "python3"
    only: list[str] | None = None
    force: bool = False
    book: bool = True
    strict: bool = False

    @property
    def chapters_dir(self) -> Path:
        return self.book_dir / "chapters"

    @property
    def results_dir(self) -> Path:
        return self.book_dir / "_results"

    @property
    def html_dir(self) -> Path:
        return self.book_dir / "_build" / "html"


@dataclass
class NotebookRun:
    name: str
    action: str  # "ran" | "skipped"
    seconds: float = 0.0


@dataclass
class Summary:
    runs: list[NotebookRun] = field(default_factory=list)
    html: Path | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def ran(self) -> list[str]:
        return [r.name for r in self.runs if r.action == "ran"]

    @property
    def skipped(self) -> list[str]:
        return [r.name for r in self.runs if r.action == "skipped"]


# --- inputs and their hashes ----------------------------------------------------------------------------------


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def resolve_data_source(source: str, base: Path) -> str:
    """``sample``, ``sample:N``, ``hf`` (or ``hf:...``) as given; anything else must be an existing path,
    returned absolute (the notebooks run in the notebooks folder, so a relative path would not resolve)."""
    if _named_source(source):
        return source
    path = Path(source).expanduser()
    if not path.is_absolute():
        path = (base / path).resolve()
    if not path.exists():
        raise BuildError(
            f"data source {source!r} is neither 'sample', 'sample:N', 'hf' nor an existing path ({path})", EXIT_USAGE
        )
    return str(path)


def data_identity(source: str, state_dir: Path) -> str:
    """What identifies the data: the string for named sources, else ``sha256:<hex>`` of the file (or of a
    folder's files). File hashes are cached in ``<state-dir>/data_hashes.json`` by path, mtime and size."""
    if _named_source(source):
        return source
    path = Path(source)
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    cache_path = state_dir / "data_hashes.json"
    try:
        cache = json.loads(cache_path.read_text())
    except (OSError, ValueError):
        cache = {}
    changed = False
    digests = []
    for f in files:
        st = f.stat()
        key = str(f.resolve())
        entry = cache.get(key)
        if not entry or entry.get("mtime_ns") != st.st_mtime_ns or entry.get("size") != st.st_size:
            entry = {"mtime_ns": st.st_mtime_ns, "size": st.st_size, "sha256": _sha256_file(f)}
            cache[key] = entry
            changed = True
        rel = f.name if f == path else f.relative_to(path).as_posix()
        digests.append(f"{rel}:{entry['sha256']}")
    if changed:
        state_dir.mkdir(parents=True, exist_ok=True)
        _write_json(cache_path, cache)
    if path.is_file():
        return "sha256:" + digests[0].split(":", 1)[1]
    return "sha256-tree:" + hashlib.sha256("\n".join(digests).encode()).hexdigest()


def library_hash() -> str:
    """sha256 over the library's source: every ``analysis_lib/**/*.py`` and ``analysis_lib/resources/**`` file."""
    pkg = Path(__file__).resolve().parent
    files = {p for p in pkg.rglob("*.py") if "__pycache__" not in p.parts}
    resources_dir = pkg / "resources"
    if resources_dir.is_dir():
        files |= {p for p in resources_dir.rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    h = hashlib.sha256()
    for p in sorted(files):
        h.update(p.relative_to(pkg).as_posix().encode() + b"\0")
        h.update(hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()


def notebook_key(notebook: Path, parameters: dict, data_id: str, lib_hash: str, kernel: str) -> str:
    """The hash of everything a notebook's executed copy depends on (see the module docstring)."""
    payload = {
        "notebook": hashlib.sha256(notebook.read_bytes()).hexdigest(),
        "parameters": parameters,
        "data": data_id,
        "library": lib_hash,
        "kernel": kernel,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def _write_json(path: Path, payload) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(payload, indent=1, sort_keys=True))
    tmp.replace(path)


def _read_state(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


# --- running notebooks ----------------------------------------------------------------------------------------


def discover(notebooks_dir: Path, only: Sequence[str] | None = None) -> list[Path]:
    """``NN_name.ipynb`` files of the notebooks folder in name order, restricted to ``only`` (stems) if given."""
    notebooks = sorted(p for p in notebooks_dir.glob("*.ipynb") if not p.name.startswith("."))
    if only:
        wanted = [o.removesuffix(".ipynb") for o in only]
        names = {p.stem for p in notebooks}
        missing = [w for w in wanted if w not in names]
        if missing:
            raise BuildError(
                f"--only names notebooks that are not in {notebooks_dir}: {', '.join(missing)} "
                f"(available: {', '.join(sorted(names)) or 'none'})",
                EXIT_USAGE,
            )
        notebooks = [p for p in notebooks if p.stem in wanted]
    return notebooks


def parameters_for(cfg: Config, data_source: str) -> dict:
    return {
        "data_source": data_source,
        "seed": cfg.seed,
        "n_bootstrap": cfg.n_bootstrap,
        "results_dir": str(cfg.results_dir),
        "cache_dir": str(cfg.cache_dir),
    }


def _failure_message(nb: Path, output: Path, exc: Exception) -> str:
    from papermill.exceptions import PapermillExecutionError

    if isinstance(exc, PapermillExecutionError):
        first_line = next((ln for ln in (exc.source or "").splitlines() if ln.strip()), "")
        return (
            f"notebook {nb.name} failed at cell index {exc.cell_index} (execution count {exc.exec_count}, "
            f"counting papermill's injected-parameters cell): {exc.ename}: {exc.evalue}\n"
            f"  cell starts: {first_line[:120]}\n"
            f"  executed copy with the traceback: {output}"
        )
    return f"notebook {nb.name} could not be executed: {type(exc).__name__}: {exc}\n  output: {output}"


def run_notebooks(cfg: Config, summary: Summary | None = None) -> Summary:
    """Execute the notebooks (skipping unchanged ones); raise :class:`BuildError` at the first failure."""
    import papermill as pm
    from tqdm.auto import tqdm

    summary = summary or Summary()
    if not cfg.notebooks_dir.is_dir():
        raise BuildError(f"notebooks folder not found: {cfg.notebooks_dir}", EXIT_USAGE)
    notebooks = discover(cfg.notebooks_dir, cfg.only)
    if not notebooks:
        raise BuildError(f"no notebooks to run in {cfg.notebooks_dir}", EXIT_USAGE)
    data_source = resolve_data_source(cfg.data, cfg.root)
    for d in (cfg.chapters_dir, cfg.results_dir, cfg.state_dir, cfg.cache_dir):
        d.mkdir(parents=True, exist_ok=True)
    params = parameters_for(cfg, data_source)
    data_id = data_identity(data_source, cfg.state_dir)
    lib_hash = library_hash()

    bar = tqdm(notebooks, desc="notebooks", unit="nb", position=0, leave=True, dynamic_ncols=True)
    for nb in bar:
        bar.set_postfix_str(nb.stem)
        output = cfg.chapters_dir / nb.name
        state_path = cfg.state_dir / f"{nb.stem}.json"
        key = notebook_key(nb, params, data_id, lib_hash, cfg.kernel)
        state = _read_state(state_path)
        always = nb.stem == STATUS_NOTEBOOK
        results_file = cfg.results_dir / f"{nb.stem}.json"
        intact = output.exists() and (not state or not state.get("results") or results_file.exists())
        if not (cfg.force or always) and state and state.get("key") == key and intact:
            tqdm.write(f"skip  {nb.name} (unchanged since {state.get('finished', '?')})")
            summary.runs.append(NotebookRun(nb.stem, "skipped"))
            continue
        state_path.unlink(missing_ok=True)  # a crash mid-run must not leave a stale "done"
        tqdm.write(f"run   {nb.name}")
        t0 = time.perf_counter()
        try:
            pm.execute_notebook(
                str(nb),
                str(output),
                parameters=params,
                kernel_name=cfg.kernel,
                cwd=str(cfg.notebooks_dir),
                progress_bar={"desc": f"  {nb.stem}", "leave": False, "position": 1, "dynamic_ncols": True},
            )
        except Exception as exc:  # papermill raises PapermillExecutionError for a failing cell
            bar.close()
            raise BuildError(_failure_message(nb, output, exc), EXIT_NOTEBOOK) from exc
        seconds = time.perf_counter() - t0
        collapse_setup_cells(output)
        _write_json(
            state_path,
            {
                "key": key,
                "notebook": str(nb),
                "output": str(output),
                "finished": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                "seconds": round(seconds, 2),
                "results": str(results_file) if results_file.exists() else None,
            },
        )
        summary.runs.append(NotebookRun(nb.stem, "ran", seconds))
        tqdm.write(f"done  {nb.name} in {seconds:.1f} s")
    bar.close()
    stems = {p.stem for p in cfg.notebooks_dir.glob("*.ipynb")}
    orphans = sorted(p.name for p in cfg.results_dir.glob("*.json") if p.stem not in stems)
    if orphans:
        print(
            f"note: {cfg.results_dir} holds results of no current notebook ({', '.join(orphans)}); the status page "
            "includes them. Remove them (or `make clean-book`) if the notebook was renamed or deleted.",
            flush=True,
        )
    return summary


def collapse_setup_cells(executed: Path) -> None:
    """Fold the parameter cell of an executed chapter (tag ``hide-cell``) and remove papermill's
    injected-parameters cell from the page (tag ``remove-cell``), so that each page opens with its title, its
    paragraph and the data banner. The injected values hold the build machine's absolute paths; they stay in
    the executed notebook's metadata (``papermill.parameters``) and the build state, and the page's banner
    names the data. Readers can still unfold the parameter cell with its defaults."""
    import nbformat

    nb = nbformat.read(executed, as_version=4)
    changed = False
    for cell in nb.cells:
        tags = cell.get("metadata", {}).get("tags", [])
        wanted = "remove-cell" if "injected-parameters" in tags else "hide-cell" if "parameters" in tags else None
        if wanted and wanted not in tags:
            cell.setdefault("metadata", {})["tags"] = [*tags, wanted]
            changed = True
    if changed:
        nbformat.write(nb, executed)


# --- the book -------------------------------------------------------------------------------------------------


def book_root(cfg: Config) -> Path:
    """The Jupyter Book source folder: the book folder if it has a ``_config.yml``, else the root."""
    if (cfg.book_dir / "_config.yml").exists():
        return cfg.book_dir
    if (cfg.root / "_config.yml").exists():
        return cfg.root
    raise BuildError(f"no _config.yml in {cfg.book_dir} or {cfg.root}", EXIT_USAGE)


def executed_chapters(cfg: Config) -> list[str]:
    """Stems of the notebooks with an executed copy from a successful run, in book order."""
    names = []
    for nb in sorted(cfg.notebooks_dir.glob("*.ipynb")):
        state = _read_state(cfg.state_dir / f"{nb.stem}.json")
        output = cfg.chapters_dir / nb.name
        if output.exists() and state is not None and state.get("output") == str(output):
            names.append(nb.stem)
    known = [n for n in BOOK_ORDER if n in names]
    return known + [n for n in names if n not in BOOK_ORDER]


def toc_text(root: Path, book_dir: Path, chapters: Sequence[str]) -> str:
    """A ``jb-book`` table of contents: intro, status page, chapters, library page (those that exist)."""
    rel = book_dir.relative_to(root).as_posix()
    prefix = "" if rel == "." else rel + "/"
    lines = [
        "# Generated by analysis_lib.build for this build (the committed _toc.yml lists the full book).",
        "format: jb-book",
        f"root: {prefix}intro",
        "parts:",
    ]
    status = [c for c in chapters if c == STATUS_NOTEBOOK]
    rest = [c for c in chapters if c != STATUS_NOTEBOOK]
    if status:
        lines += ["  - caption: Overview", "    chapters:", f"      - file: {prefix}chapters/{STATUS_NOTEBOOK}"]
    if rest:
        lines += ["  - caption: Chapters", "    chapters:"]
        lines += [f"      - file: {prefix}chapters/{c}" for c in rest]
    if (book_dir / "library.md").exists():
        lines += ["  - caption: Reference", "    chapters:", f"      - file: {prefix}library"]
    if lines[-1] == "parts:":
        lines[-1] = "chapters: []"
    return "\n".join(lines) + "\n"


def _jupyter_book_command() -> list[str]:
    script = Path(sys.executable).parent / "jupyter-book"
    if script.exists():
        return [str(script)]
    found = shutil.which("jupyter-book")
    if found:
        return [found]
    return [sys.executable, "-c", "import sys; from jupyter_book.cli.main import main; sys.exit(main())"]


_WARNING = re.compile(r"\b(WARNING|ERROR|CRITICAL)\b")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def build_book(cfg: Config, summary: Summary | None = None) -> Summary:
    """Write this build's TOC and run ``jupyter-book build``; the HTML lands in ``<book-dir>/_build/html``."""
    summary = summary or Summary()
    root = book_root(cfg)
    try:
        cfg.book_dir.relative_to(root)
    except ValueError as exc:
        raise BuildError(f"the book folder {cfg.book_dir} must lie inside the book root {root}", EXIT_USAGE) from exc
    if not (cfg.book_dir / "intro.md").exists():
        raise BuildError(f"the book needs {cfg.book_dir / 'intro.md'} (the root page)", EXIT_USAGE)
    build_dir = cfg.book_dir / "_build"
    build_dir.mkdir(parents=True, exist_ok=True)
    toc = build_dir / "_toc.yml"
    toc.write_text(toc_text(root, cfg.book_dir, executed_chapters(cfg)))

    cmd = [*_jupyter_book_command(), "build", str(root), "--path-output", str(cfg.book_dir), "--toc", str(toc)]
    if cfg.strict:
        # --all: Sphinx reports a page's warnings only when it rereads the page, so a strict build reads all.
        cmd += ["-W", "--keep-going", "--all"]
    log_path = build_dir / "jupyter-book.log"
    print(f"book  jupyter-book build {root} (log: {log_path})", flush=True)
    t0 = time.perf_counter()
    with log_path.open("w") as log:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=root)
        assert proc.stdout is not None
        for line in proc.stdout:
            line = _ANSI.sub("", line)
            log.write(line)
            if _WARNING.search(line):
                summary.warnings.append(line.rstrip())
        rc = proc.wait()
    seconds = time.perf_counter() - t0
    if summary.warnings:
        print(f"book  {len(summary.warnings)} Sphinx warning(s):", flush=True)
        for w in summary.warnings:
            print(f"  {w}", flush=True)
    index = cfg.html_dir / "index.html"
    if rc != 0 or not index.exists():
        tail = "".join(log_path.read_text().splitlines(keepends=True)[-30:])
        raise BuildError(f"jupyter-book build failed (exit {rc}); last lines of {log_path}:\n{tail}", EXIT_BOOK)
    summary.html = index
    print(f"book  built in {seconds:.1f} s: {index}", flush=True)
    leaks = find_protected_text([cfg.html_dir, cfg.chapters_dir], protected_snippets())
    if leaks:
        listed = "\n".join(f"  {path}" for path in leaks[:20])
        raise BuildError(
            "BrowseComp problem text appears in the built book (the problems are for statistics only and must "
            f"never be printed); remove the output that shows it:\n{listed}",
            EXIT_BOOK,
        )
    return summary


def protected_snippets(length: int = 60) -> list[str]:
    """Whitespace-normalised opening characters of every BrowseComp problem (never to be printed)."""
    from analysis_lib import prompts_data

    snippets = [" ".join(t.split())[:length] for t in prompts_data.benchmark_prompts("browsecomp")]
    return [t for t in snippets if len(t) >= 30]


def find_protected_text(folders: Sequence[Path], snippets: Sequence[str]) -> list[Path]:
    """Files (HTML pages, executed notebooks) under ``folders`` whose visible text contains any snippet.

    HTML entities are unescaped and whitespace folded before matching (one Aho-Corasick pass per file).
    """
    import html as html_lib

    import polars as pl

    if not snippets:
        return []
    files = [p for folder in folders if folder.exists() for p in sorted(folder.rglob("*")) if p.suffix in (".html", ".ipynb")]
    if not files:
        return []
    texts = []
    for path in files:
        raw = path.read_text(errors="replace")
        if path.suffix == ".ipynb":
            raw = raw.encode().decode("unicode_escape", errors="replace")
        texts.append(" ".join(html_lib.unescape(raw).split()))
    hits = pl.Series(texts).str.contains_any(list(snippets))
    return [path for path, hit in zip(files, hits.to_list(), strict=True) if hit]


# --- command line ---------------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None = None) -> Config:
    p = argparse.ArgumentParser(
        prog="python -m analysis_lib.build",
        description="Run the chapter notebooks with papermill (skipping unchanged ones) and build the book.",
    )
    p.add_argument("--data", default="sample", help="data_source: sample, sample:N, hf, or a path (default: sample)")
    p.add_argument("--seed", type=int, default=0, help="simulator and bootstrap seed (default: 0)")
    p.add_argument("--bootstrap", type=int, default=100, help="bootstrap rounds, n_bootstrap (default: 100)")
    p.add_argument(
        "--only", default=None, help="comma-separated notebook names to run, e.g. 01_dataset,99_reproduction_status"
    )
    p.add_argument("--root", default=".", help="repository root: .cache, .build_state and _config.yml (default: .)")
    p.add_argument("--notebooks-dir", default=None, help="notebooks folder (default: <root>/notebooks)")
    p.add_argument("--book-dir", default=None, help="book folder (default: <root>/book)")
    p.add_argument("--state-dir", default=None, help="build state folder (default: <root>/.build_state)")
    p.add_argument("--cache-dir", default=None, help="cache_dir passed to the notebooks (default: <root>/.cache)")
    p.add_argument("--kernel", default="python3", help="Jupyter kernel name (default: python3)")
    p.add_argument("--force", action="store_true", help="rerun every notebook, changed or not")
    p.add_argument("--no-book", action="store_true", help="run the notebooks only, do not build the book")
    p.add_argument("--strict", action="store_true", help="fail the book build on Sphinx warnings")
    a = p.parse_args(argv)
    if a.seed < 0 or a.bootstrap < 0:
        p.error("--seed and --bootstrap must be non-negative")
    root = Path(a.root).resolve()

    def path(value: str | None, default: str) -> Path:
        return Path(value).resolve() if value else (root / default)

    return Config(
        root=root,
        notebooks_dir=path(a.notebooks_dir, "notebooks"),
        book_dir=path(a.book_dir, "book"),
        state_dir=path(a.state_dir, ".build_state"),
        cache_dir=path(a.cache_dir, ".cache"),
        data=a.data,
        seed=a.seed,
        n_bootstrap=a.bootstrap,
        kernel=a.kernel,
        only=[s.strip() for s in a.only.split(",") if s.strip()] if a.only else None,
        force=a.force,
        book=not a.no_book,
        strict=a.strict,
    )


def build(cfg: Config) -> Summary:
    """Run the notebooks, then (unless ``cfg.book`` is false) build the book. Raises :class:`BuildError`.

    One build at a time per state folder: a second one started meanwhile stops at once (exit code 2).
    """
    import fcntl

    cfg.state_dir.mkdir(parents=True, exist_ok=True)
    with (cfg.state_dir / ".lock").open("w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            raise BuildError(f"another build is running (lock: {cfg.state_dir / '.lock'})", EXIT_USAGE) from exc
        summary = run_notebooks(cfg)
        if cfg.book:
            build_book(cfg, summary)
        return summary


def main(argv: Sequence[str] | None = None) -> int:
    cfg = parse_args(argv)
    t0 = time.perf_counter()
    try:
        summary = build(cfg)
    except BuildError as exc:
        print(f"build failed: {exc}", file=sys.stderr, flush=True)
        return exc.exit_code
    ran, skipped = summary.ran, summary.skipped
    print(
        f"notebooks: {len(ran)} ran ({', '.join(ran) or '-'}), {len(skipped)} skipped ({', '.join(skipped) or '-'}); "
        f"{time.perf_counter() - t0:.1f} s in all",
        flush=True,
    )
    if summary.html:
        print(f"HTML: {summary.html}", flush=True)
    return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
