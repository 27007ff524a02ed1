"""Run the chapter notebooks with papermill and build the Jupyter Book: ``python -m bookbuild``.

``make book`` calls this module. It

1. validates the data source and every user input given with the library's own loaders before any notebook runs
   (:mod:`bookbuild.inputs`: a bad input exits 2 with one line, the previous book untouched), and computes this
   build's reference identity (:mod:`bookbuild.identity`: inputs, seed, bootstrap rounds, LLM endpoint,
   environment), written to ``<results_dir>/_build.json``;
2. runs ``<notebooks-dir>/*.ipynb`` in book order (the committed ``_toc.yml``; others after, by name; the status
   page last) with papermill (cwd: the notebooks folder), injecting only the parameters a notebook's
   ``parameters`` cell declares among ``data_source``, ``seed``, ``n_bootstrap``, ``results_dir``, ``cache_dir``,
   the user inputs given (``nugget_records``, ``match_logs``, ``answer_records``, ``answer_labels``,
   ``attribution_source``, ``text_arena_source``) and the ``--set NAME=VALUE`` settings (a name no notebook
   declares is a usage error); the kernels get ``$ANALYSIS_CACHE_DIR`` = the cache folder and
   ``$BOOKBUILD_INPUTS`` (the inputs' names, hashes and rows, for the banners); with ``--jobs N`` up to N chapters
   run at once, each in its own kernel, the longest first within ``--memory-gb`` (:mod:`bookbuild.schedule`; the
   status page alone, last), and when more than one chapter reruns, torch in each kernel uses cores / N threads
   (``$ANALYSIS_TORCH_THREADS``, :func:`bookbuild.schedule.torch_share`);
3. skips a notebook whose rebuild key (:mod:`bookbuild.keys`: notebook, declared parameters and their inputs'
   content, library, environment, LLM identity for LLM chapters) matches its last successful run; ``--force``
   reruns everything; the reproduction-status notebook reruns whenever any chapter's results or state changed;
4. replaces a chapter's files atomically (:mod:`bookbuild.chapter`): results are staged while it runs and moved
   into ``<book-dir>/_results`` with the chapter's identity, and the executed copy into ``<book-dir>/chapters``,
   only when the notebook finished; a failed or killed run leaves the last good copy, results and state. It
   stops at the first failing notebook, naming it and the failing cell (the failed executed copy is kept in
   ``<book-dir>/_build/runs/failed/``), and records it in ``<results_dir>/_failed.json``
   (``{"failed": [{"notebook": stem, "error": one line}]}``; removed once every notebook has run). Before the first
   notebook it prints the LLM estimate for the chapters it runs (:mod:`bookbuild.llm_plan`), or that there is no
   endpoint. The console shows the runner's lines and one bar per notebook; the kernels' output goes to the log.
5. marks every chapter page with its identity and flags those computed from other inputs than this build's
   (``stale: ...`` on the console), writes the front page's identity line, then the table of contents of the
   chapters that finished (:mod:`bookbuild.toc`) and runs ``jupyter-book build`` (:mod:`bookbuild.book`, skipped
   when nothing it reads changed), and checks that no BrowseComp text reached the book (:mod:`bookbuild.leaks`).

Exit codes: 0 success, 1 a notebook failed, 2 bad arguments or inputs, 3 the book build failed; a failure ends with
the line ``bookbuild: exit N (what): reason``.
"""

from __future__ import annotations

import fcntl
import os
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from analysis_lib import llm, paths
from analysis_lib.extras import require
from bookbuild import banner, chapter, console, identity, inputs, keys, llm_plan, schedule, toc
from bookbuild.book import build_book
from bookbuild.config import (
    EXIT_BOOK,
    EXIT_MEANING,
    EXIT_NOTEBOOK,
    EXIT_OK,
    EXIT_USAGE,
    USER_INPUTS,
    BuildError,
    Config,
    NotebookRun,
    Summary,
    parse_args,
)
from bookbuild.navigation import FAILED_FILE

__all__ = ["EXIT_BOOK", "EXIT_NOTEBOOK", "EXIT_OK", "EXIT_USAGE", "USER_INPUTS", "BuildError", "Config",
           "NotebookRun", "Summary", "build", "main", "parse_args", "run_notebooks", "executed_chapters"]

STATUS_NOTEBOOK = toc.STATUS_NOTEBOOK
executed_chapters = chapter.executed_chapters


def discover(cfg: Config) -> list[Path]:
    """The notebooks of the notebooks folder in book order, restricted to ``cfg.only`` (stems) if given."""
    notebooks = {p.stem: p for p in cfg.notebooks_dir.glob("*.ipynb") if not p.name.startswith(".")}
    if cfg.only:
        wanted = [o.removesuffix(".ipynb") for o in cfg.only]
        missing = [w for w in wanted if w not in notebooks]
        if missing:
            raise BuildError(
                f"--only names notebooks that are not in {cfg.notebooks_dir}: {', '.join(missing)} "
                f"(available: {', '.join(sorted(notebooks)) or 'none'})",
                EXIT_USAGE,
            )
        notebooks = {k: v for k, v in notebooks.items() if k in wanted}
    order = toc.chapter_order(cfg.root / "_toc.yml")
    # the status page aggregates the others: it runs last whatever its place in the book
    stems = [s for s in toc.order_chapters(list(notebooks), order) if s != STATUS_NOTEBOOK]
    stems += [STATUS_NOTEBOOK] if STATUS_NOTEBOOK in notebooks else []
    return [notebooks[s] for s in stems]


def base_parameters(cfg: Config, data_source: str) -> dict:
    """The parameters every chapter may declare (each is injected only where declared)."""
    return {
        "data_source": data_source,
        "seed": cfg.seed,
        "n_bootstrap": cfg.n_bootstrap,
        "results_dir": str(cfg.results_dir),
        "cache_dir": str(cfg.cache_dir),
    }


def declared_parameters(notebook: Path) -> dict[str, dict]:
    """The parameters a notebook's ``parameters`` cell declares, in order, with their defaults (papermill's
    inspection)."""
    return dict(_papermill().inspect_notebook(str(notebook)))


def _papermill() -> Any:
    return require("papermill", "book", purpose="running the chapter notebooks")


def _ipc_kernels() -> type:
    """nbclient's kernel manager on local (IPC) sockets, each kernel under a short name of its own in the temporary
    folder. Over TCP the manager picks free ports and the kernel binds them a moment later: with several kernels
    starting at once (``--jobs``, the test suite's workers) another process can take a port in between ("Address
    already in use", the kernel dies before replying)."""
    base = require("jupyter_client", "book", purpose="running the chapter notebooks").AsyncKernelManager

    class IPCKernelManager(base):  # type: ignore[misc, valid-type]
        def __init__(self, **kwargs: Any):
            kwargs.setdefault("transport", "ipc")  # socket files <ip>-<n>, removed when the kernel shuts down
            kwargs.setdefault("ip", os.path.join(tempfile.gettempdir(), f"bookbuild-{uuid.uuid4().hex[:12]}"))
            super().__init__(**kwargs)

    return IPCKernelManager


def _execution_error() -> Any:
    return require("papermill.exceptions", "book", purpose="running the chapter notebooks").PapermillExecutionError


def _failure_message(nb: Path, output: Path, exc: Exception, log: Path) -> str:
    if isinstance(exc, _execution_error()):
        first_line = next((ln for ln in (exc.source or "").splitlines() if ln.strip()), "")
        return (
            f"notebook {nb.name} failed at cell index {exc.cell_index} (execution count {exc.exec_count}, "
            f"counting papermill's injected-parameters cell): {exc.ename}: {exc.evalue}\n"
            f"  cell starts: {first_line[:120]}\n"
            f"  executed copy with the traceback: {output}\n"
            f"  kernel log: {log}"
        )
    return f"notebook {nb.name} could not be executed: {type(exc).__name__}: {exc}\n  output: {output}\n  log: {log}"


def _one_line(exc: BaseException) -> str:
    if isinstance(exc, _execution_error()):
        text = f"{exc.ename}: {exc.evalue}"
    else:
        text = f"{type(exc).__name__}: {exc}"
    return " ".join(text.split())[:300]


def _record_failures(cfg: Config, failed: dict[str, str | None]) -> None:
    """Update ``_failed.json``: a stem mapped to an error is added, to ``None`` removed; no entries: no file."""
    path = cfg.results_dir / FAILED_FILE
    current = {f["notebook"]: f["error"] for f in (keys.read_json(path) or {}).get("failed", [])}
    for stem, error in failed.items():
        if error is None:
            current.pop(stem, None)
        else:
            current[stem] = error
    if current:
        keys.write_json(path, {"failed": [{"notebook": k, "error": v} for k, v in sorted(current.items())]})
    else:
        path.unlink(missing_ok=True)


@dataclass
class Prepared:
    """What the notebooks of one build get: the validated inputs, the reference identity, the parameters."""

    data: inputs.Described
    given: dict[str, inputs.Described]
    reference: dict
    base: dict
    described: dict[str, dict]
    lib_hash: str
    llm_identity: dict


def prepare(cfg: Config) -> Prepared:
    """Validate every input before any notebook runs (:mod:`bookbuild.inputs`, exit 2 on a bad one) and compute
    this build's reference identity (:mod:`bookbuild.identity`)."""
    lib_hash = keys.library_hash()
    try:
        data, given = inputs.check_all(cfg.data, cfg.inputs, root=cfg.root, state_dir=cfg.state_dir, seed=cfg.seed,
                                       cache_dir=cfg.cache_dir, lib_hash=lib_hash)
    except inputs.InputError as exc:
        raise BuildError(str(exc), EXIT_USAGE) from exc
    llm_identity = llm.identity()
    reference = {
        "data_source": data.info,
        "seed": cfg.seed,
        "n_bootstrap": cfg.n_bootstrap,
        "inputs": {name: (given[name].info if name in given else inputs.default_input()) for name in cfg.inputs},
        "parameters": dict(sorted(cfg.settings.items())),
        "llm": llm_identity,
        "environment": identity.environment(),
    }
    described = {d.value: d.info for d in (data, *given.values())}
    return Prepared(data, given, reference, base_parameters(cfg, data.value), described, lib_hash, llm_identity)


def run_notebooks(cfg: Config, summary: Summary | None = None, prepared: Prepared | None = None) -> Summary:
    """Execute the notebooks (skipping unchanged ones); raise :class:`BuildError` at the first failure."""
    pm = _papermill()
    summary = summary or Summary()
    if not cfg.notebooks_dir.is_dir():
        raise BuildError(f"notebooks folder not found: {cfg.notebooks_dir}", EXIT_USAGE)
    notebooks = discover(cfg)
    if not notebooks:
        raise BuildError(f"no notebooks to run in {cfg.notebooks_dir}", EXIT_USAGE)
    prep = prepared or prepare(cfg)
    declared = {nb.stem: declared_parameters(nb) for nb in notebooks}  # each parameters cell inspected once
    check_settings(cfg, declared)
    for d in (cfg.chapters_dir, cfg.results_dir, cfg.state_dir, cfg.cache_dir, cfg.work_dir):
        d.mkdir(parents=True, exist_ok=True)
    chapter.recover_legacy(cfg)
    keys.write_json(cfg.results_dir / identity.BUILD_FILE, prep.reference)
    inputs.write_for_kernels(cfg.state_dir / "inputs.json", [prep.data, *prep.given.values()])
    try:  # what the LLM steps will send, before anything is sent (one line when there is no endpoint)
        llm_plan.print_estimate(cfg.cache_dir, llm_plan.Inputs(prep.data.value, cfg.seed, cfg.cache_dir),
                                chapters=[nb.stem for nb in notebooks])
    except Exception as exc:  # noqa: BLE001 - an estimate never stops a build
        print(f"LLM estimate not available: {type(exc).__name__}: {llm.clip_text(exc, 200, collapse=True)}",
              flush=True)
    given = {name: d.value for name, d in prep.given.items()}
    chapters = [nb for nb in notebooks if nb.stem != STATUS_NOTEBOOK]
    with console.quiet(cfg.log_path) as quiet_screen:
        run = _Run(cfg, pm, prep, given, declared, summary, _Locked(quiet_screen))
        to_run = [nb for nb in chapters if not _plan(run, nb, chapter.Chapter(cfg, nb)).unchanged]
        if cfg.jobs > 1 and len(to_run) > 1:  # a chapter rerun alone keeps every core
            with schedule.torch_share(cfg.jobs):
                _run_parallel(run, chapters)
        else:
            for nb in chapters:
                _run_one(run, nb)
        for nb in notebooks[len(chapters):]:  # the status page, alone and last
            _run_one(run, nb)
    stems = {p.stem for p in cfg.notebooks_dir.glob("*.ipynb")}
    orphans = sorted(p.name for p in cfg.results_dir.glob("*.json")
                     if p.stem not in stems and not p.name.startswith("_"))
    if orphans:
        print(
            f"note: {cfg.results_dir} holds results of no current notebook ({', '.join(orphans)}); the status page "
            "includes them. Remove them (or `make clean-book`) if the notebook was renamed or deleted.",
            flush=True,
        )
    return summary


def check_settings(cfg: Config, declared: dict[str, dict[str, dict]]) -> None:
    """Every ``--set NAME`` must be declared by a notebook of this build (a typo would otherwise be ignored);
    ``declared``: each notebook's parameters (:func:`declared_parameters`), by stem."""
    if not cfg.settings:
        return
    unknown = sorted(set(cfg.settings) - set().union(*declared.values()))
    if unknown:
        raise BuildError(
            f"--set {', '.join(unknown)}: no notebook of this build declares "
            f"{'it' if len(unknown) == 1 else 'them'} in its parameters cell", EXIT_USAGE)


class _Locked:
    """The console and, through :attr:`lock`, the summary and the shared failure list: one writer at a time (chapters
    may run at once, :func:`_run_parallel`)."""

    def __init__(self, screen: Any):
        self.screen = screen
        self.lock = threading.Lock()

    def line(self, text: str) -> None:
        with self.lock:
            self.screen.line(text)

    def bar_options(self, stem: str) -> dict[str, Any]:
        return self.screen.bar_options(stem)


@dataclass
class _Run:
    """What every notebook of one build is run with."""

    cfg: Config
    pm: Any
    prep: Prepared
    given: dict[str, str]
    declared: dict[str, dict[str, dict]]
    summary: Summary
    screen: _Locked
    #: False: papermill changes into the notebooks folder for each notebook; True: the caller is already there
    in_notebooks_dir: bool = False


def _run_parallel(run: _Run, chapters: list[Path]) -> None:
    """Run ``chapters`` up to ``cfg.jobs`` at a time, each in its own kernel: longest first within the memory
    budget (:mod:`bookbuild.schedule`). After a failure no further chapter starts, those running finish (each
    committed or rolled back on its own) and the first failure in book order is raised. papermill's ``cwd`` is a
    process-wide ``chdir``, so the runner enters the notebooks folder once for all of them (every path it hands on
    is absolute)."""
    errors: dict[str, BaseException] = {}
    start = len(run.summary.runs)
    inside = replace(run, in_notebooks_dir=True)
    by_stem = {nb.stem: nb for nb in chapters}
    costs = schedule.load_costs()
    pending = schedule.order(list(by_stem), costs)
    running: dict[Future[None], str] = {}

    def task(nb: Path) -> None:
        try:
            _run_one(inside, nb)
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread below
            errors[nb.stem] = exc

    previous = os.getcwd()
    os.chdir(run.cfg.notebooks_dir)
    try:
        with ThreadPoolExecutor(max_workers=run.cfg.jobs) as pool:
            while True:
                while not errors and (stem := schedule.pick(pending, list(running.values()), costs, run.cfg.jobs,
                                                            run.cfg.memory_gb)):
                    pending.remove(stem)
                    running[pool.submit(task, by_stem[stem])] = stem
                if not running:
                    break
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    del running[future]
    finally:
        os.chdir(previous)
    order = {nb.stem: i for i, nb in enumerate(chapters)}
    run.summary.runs[start:] = sorted(run.summary.runs[start:], key=lambda r: order[r.name])
    for nb in chapters:
        if nb.stem in errors:
            raise errors[nb.stem]


@dataclass(frozen=True)
class _Plan:
    """One notebook's injected parameters, identity and rebuild key, and whether its last run still stands."""

    params: dict[str, Any]
    ident: dict
    key: str
    unchanged: bool
    state: dict | None


def _plan(run: _Run, nb: Path, ch: chapter.Chapter) -> _Plan:
    cfg, prep = run.cfg, run.prep
    inspected = run.declared[nb.stem]
    always = nb.stem == STATUS_NOTEBOOK
    # only what the chapter declares is injected and keys its rebuild; an input not given is not injected (the
    # chapter's own default, its simulator, applies) but its absence is part of the key
    params = {k: v for k, v in {**prep.base, **run.given, **cfg.settings}.items() if k in inspected}
    if "results_dir" in params and not always:
        params["results_dir"] = str(ch.staging)  # results reach <book>/_results only when the chapter finished
    uses_llm = keys.uses_llm(nb)
    ident = identity.chapter_identity(set(inspected), prep.reference, uses_llm=uses_llm)
    ids = {"data_source": prep.data.info.get("id", "")} if "data_source" in inspected else {}
    ids |= {k: v.info.get("id", "") for k, v in prep.given.items() if k in inspected}
    if always:  # the status page reads every chapter's results and state: it reruns when any of them changed
        ids["book_state"] = keys.book_state_digest(cfg.results_dir, cfg.state_dir, exclude=nb.stem)
    key = keys.notebook_key(nb, params, ids, prep.lib_hash, cfg.kernel, prep.llm_identity if uses_llm else None,
                            environment=identity.environment_key(prep.reference["environment"]))
    state = keys.read_json(ch.state)
    intact = ch.output.exists() and (not state or not state.get("results") or ch.results.exists())
    return _Plan(params, ident, key, bool(not cfg.force and state and state.get("key") == key and intact), state)


def _run_one(run: _Run, nb: Path) -> None:
    """Run one notebook unless its rebuild key is unchanged."""
    cfg, summary, screen = run.cfg, run.summary, run.screen
    guard = screen.lock
    ch = chapter.Chapter(cfg, nb)
    plan = _plan(run, nb, ch)
    params, ident, key, state, inspected = plan.params, plan.ident, plan.key, plan.state, run.declared[nb.stem]
    if plan.unchanged and state:
        screen.line(f"skip  {nb.name} (unchanged since {state.get('finished', '?')})")
        with guard:
            summary.runs.append(NotebookRun(nb.stem, "skipped"))
            _record_failures(cfg, {nb.stem: None})
        return
    screen.line(f"run   {nb.name}")
    ch.prepare()
    t0 = time.perf_counter()
    try:
        run.pm.execute_notebook(
            str(nb),
            str(ch.partial),
            parameters=params,
            kernel_name=cfg.kernel,
            cwd=None if run.in_notebooks_dir else str(cfg.notebooks_dir),
            progress_bar=screen.bar_options(nb.stem),
            kernel_manager_class=_ipc_kernels(),
        )
    except BaseException as exc:  # a failing cell (PapermillExecutionError), a dead kernel, Ctrl-C
        ch.roll_back()
        if not isinstance(exc, Exception):
            raise
        with guard:
            _record_failures(cfg, {nb.stem: _one_line(exc)})
        raise BuildError(_failure_message(nb, ch.failed_copy, exc, cfg.log_path), EXIT_NOTEBOOK) from exc
    seconds = time.perf_counter() - t0
    chapter.finish_page(ch.partial, inspected, params, run.prep.described)
    ch.commit(ident)
    keys.write_json(ch.state, {
        "key": key,
        "notebook": str(nb),
        "output": str(ch.output),
        "finished": datetime.now(UTC).isoformat(timespec="seconds"),
        "seconds": round(seconds, 2),
        "results": str(ch.results) if ch.results.exists() else None,
        "identity": ident,
    })
    with guard:
        _record_failures(cfg, {nb.stem: None})
        summary.runs.append(NotebookRun(nb.stem, "ran", seconds))
    screen.line(f"done  {nb.name} in {seconds:.1f} s")


def build(cfg: Config) -> Summary:
    """Validate the inputs, run the notebooks, then (unless ``cfg.book`` is false) build the book. Raises
    :class:`BuildError`.

    One build at a time per state folder: a second one started meanwhile stops at once (exit code 2).
    """
    cfg.state_dir.mkdir(parents=True, exist_ok=True)
    with (cfg.state_dir / ".lock").open("w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            raise BuildError(f"another build is running (lock: {cfg.state_dir / '.lock'})", EXIT_USAGE) from exc
        # the kernels (started with this environment) write their caches there, never into the package, and read
        # what the runner recorded about the inputs
        saved = {k: os.environ.get(k) for k in (paths.CACHE_ENV, banner.INPUTS_ENV)}
        os.environ[paths.CACHE_ENV] = str(cfg.cache_dir)
        os.environ[banner.INPUTS_ENV] = str(cfg.state_dir / "inputs.json")
        summary = Summary()
        try:
            prep = prepare(cfg)  # before any notebook runs: a bad input leaves the previous book as it was
            print(f"log   kernel output, warnings and tracebacks: {cfg.log_path}", flush=True)
            run_notebooks(cfg, summary, prep)
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        if stale := chapter.report_identity(cfg, prep.reference):
            summary.stale = sorted(stale)
        if cfg.book:
            build_book(cfg, chapter.executed_chapters(cfg), summary)
        return summary


def main(argv: list[str] | None = None) -> int:
    """The command: exit 0 done, 1 a notebook failed, 2 bad arguments or inputs, 3 the book build failed. A failure
    ends with one line ``bookbuild: exit N (what): reason``."""
    t0 = time.perf_counter()
    try:
        cfg = parse_args(argv)
        summary = build(cfg)
    except BuildError as exc:
        lines = str(exc).splitlines() or [""]
        if len(lines) > 1:  # the details (failing cell, executed copy, log), then the one-line summary
            print(f"build failed: {exc}", file=sys.stderr, flush=True)
        reason = lines[0]
        print(f"bookbuild: exit {exc.exit_code} ({EXIT_MEANING[exc.exit_code]}): {reason}", file=sys.stderr,
              flush=True)
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
