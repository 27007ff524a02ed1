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
   only when the notebook finished; a failed or killed run leaves the last good copy, results and state. A failed
   chapter does not stop the book (:mod:`bookbuild.failures`): the console says ``FAIL  <notebook>: <error>`` at
   once, the log gets its traceback (the failed executed copy is kept in ``<book-dir>/_build/runs/failed/``), it is
   recorded in ``<results_dir>/_failed.json`` (``{"failed": [{"notebook": stem, "error": one line}]}``, which the
   status page shows; an entry is removed once its chapter runs again or is unchanged), and the other chapters and
   the status page run; at the end the runner lists the failures and exits 1, after building the book from what
   finished. Before the first notebook it prints the LLM estimate for the chapters that will rerun
   (:mod:`bookbuild.llm_plan`, with this build's ``--set`` values), or that there is no endpoint or nothing to send.
   The console shows the runner's lines and one bar per notebook; the kernels' output goes to the log, each line
   prefixed with its chapter.
5. marks every chapter page with its identity and flags those computed from other inputs than this build's
   (``stale: ...`` on the console), writes the front page's identity line, then the table of contents of the
   chapters that finished (:mod:`bookbuild.toc`) and runs ``jupyter-book build`` (:mod:`bookbuild.book`, skipped
   when nothing it reads changed), and checks that no BrowseComp text reached the book (:mod:`bookbuild.leaks`).

A chapter whose results say it has unfinished work (numbers not run for the request budget, a deadline, the
endpoint, or a Batch API batch still pending: :func:`bookbuild.keys.unfinished`) is not unchanged: a plain rebuild
resumes it. The kernels get the library's one data-mirror default (:func:`analysis_lib.fetch.default_mirror`)
applied to ``--root`` when ``ANALYSIS_DATA_MIRROR`` is unset.

Exit codes: 0 success, 1 a notebook failed, 2 bad arguments or inputs, 3 the book build failed; a failure ends with
the line ``bookbuild: exit N (what): reason``.
"""

from __future__ import annotations

import fcntl
import os
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from analysis_lib import llm, paths
from analysis_lib.fetch import MIRROR_ENV, default_mirror
from bookbuild import banner, chapter, console, failures, identity, inputs, keys, llm_plan, parameters, schedule, toc
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
    check_folders,
    parse_args,
)
from bookbuild.kernels import check_kernel, declared_parameters, ipc_kernels, papermill

__all__ = ["EXIT_BOOK", "EXIT_NOTEBOOK", "EXIT_OK", "EXIT_USAGE", "USER_INPUTS", "BuildError", "Config",
           "NotebookRun", "Summary", "build", "main", "parse_args", "run_notebooks", "executed_chapters"]

STATUS_NOTEBOOK = toc.STATUS_NOTEBOOK
executed_chapters = chapter.executed_chapters
_ipc_kernels = ipc_kernels


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
    """Execute the notebooks (skipping unchanged ones). A failed chapter is recorded in the summary
    (``summary.errors``, ``_failed.json``) and the others still run; :func:`build` turns failures into exit 1."""
    pm = papermill()
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
    given = {name: d.value for name, d in prep.given.items()}
    chapters = [nb for nb in notebooks if nb.stem != STATUS_NOTEBOOK]
    with console.quiet(cfg.log_path) as quiet_screen:
        run = _Run(cfg, pm, prep, given, declared, summary, _Locked(quiet_screen))
        plans = {nb.stem: _plan(run, nb, chapter.Chapter(cfg, nb)) for nb in chapters}
        to_run = [nb for nb in chapters if not plans[nb.stem].unchanged]
        _print_estimate(run, {nb.stem: plans[nb.stem].params for nb in to_run})
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


def _print_estimate(run: _Run, rerun: dict[str, dict[str, Any]]) -> None:
    """What the LLM steps of the chapters that rerun will send, with the parameters they get (``rerun``: stem ->
    injected parameters), before anything is sent; one line when there is no endpoint or nothing reruns."""
    cfg, prep = run.cfg, run.prep
    defaults = {stem: llm_plan.declared_defaults(run.declared[stem]) for stem in rerun}
    parameters = {stem: {**defaults[stem], **params} for stem, params in rerun.items()}
    try:
        llm_plan.print_estimate(cfg.cache_dir, llm_plan.Inputs(prep.data.value, cfg.seed, cfg.cache_dir, parameters),
                                chapters=list(rerun))
    except Exception as exc:  # noqa: BLE001 - an estimate never stops a build
        print(f"LLM estimate not available: {type(exc).__name__}: {llm.clip_text(exc, 200, collapse=True)}",
              flush=True)


def check_settings(cfg: Config, declared: dict[str, dict[str, dict]]) -> None:
    """Every ``--set NAME`` must be declared by a notebook of this build (a typo would otherwise be ignored);
    ``declared``: each notebook's parameters (:func:`declared_parameters`), by stem."""
    why = parameters.check(cfg.settings, declared)  # declared, and of the kind and range the notebook declares
    if why:
        raise BuildError(why, EXIT_USAGE)


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
    budget (:mod:`bookbuild.schedule`). A failed chapter is recorded by :func:`_run_one` and the others go on; only
    an error of the runner itself (or Ctrl-C) stops new starts, lets those running finish (each committed or rolled
    back on its own) and is raised, the first in book order. papermill's ``cwd`` is a
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
    """One notebook's injected parameters, identity and rebuild key, and whether its last run still stands
    (``unfinished``: the numbers its last run left for a rebuild, :func:`bookbuild.keys.unfinished`)."""

    params: dict[str, Any]
    ident: dict
    key: str
    unchanged: bool
    state: dict | None
    unfinished: int = 0


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
    same = bool(not cfg.force and state and state.get("key") == key and intact)
    unfinished = len(keys.unfinished(ch.results)) if same and not always else 0
    return _Plan(params, ident, key, same and not unfinished, state, unfinished)


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
            failures.record_failures(cfg.results_dir, {nb.stem: None})
        return
    why = f" ({plan.unfinished} numbers left unfinished by its last run: request budget, deadline, endpoint or " \
          "a pending batch)" if plan.unfinished else ""
    screen.line(f"run   {nb.name}{why}")
    ch.prepare()
    screen.screen.log_block(f"===== {nb.stem}: run started {datetime.now(UTC).isoformat(timespec='seconds')}")
    streams = [screen.screen.kernel_stream(nb.stem, name) for name in ("stdout", "stderr")]
    t0 = time.perf_counter()
    try:
        run.pm.execute_notebook(
            str(nb),
            str(ch.partial),
            parameters=params,
            kernel_name=cfg.kernel,
            cwd=None if run.in_notebooks_dir else str(cfg.notebooks_dir),
            progress_bar=screen.bar_options(nb.stem),
            kernel_manager_class=ipc_kernels(),
            stdout_file=streams[0],
            stderr_file=streams[1],
        )
    except BaseException as exc:  # a failing cell (PapermillExecutionError), a dead kernel, Ctrl-C
        for stream in streams:
            stream.close()
        ch.roll_back()
        if not isinstance(exc, Exception):
            raise
        _failed(run, nb, exc, ch.failed_copy, time.perf_counter() - t0)
        return
    for stream in streams:
        stream.close()
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
        failures.record_failures(cfg.results_dir, {nb.stem: None})
        summary.runs.append(NotebookRun(nb.stem, "ran", seconds))
    screen.line(f"done  {nb.name} in {seconds:.1f} s")


def _failed(run: _Run, nb: Path, exc: Exception, failed_copy: Path, seconds: float) -> None:
    """A chapter failed: its traceback into the log, one ``FAIL`` line on the console now, the failure in
    ``_failed.json`` and the summary; the build goes on (:mod:`bookbuild.failures`)."""
    cfg, summary = run.cfg, run.summary
    error = failures.one_line(exc)
    failures.log_failure(run.screen.screen, nb, exc, failed_copy, seconds)
    with run.screen.lock:
        failures.record_failures(cfg.results_dir, {nb.stem: error})
        summary.runs.append(NotebookRun(nb.stem, "failed", seconds))
        summary.errors[nb.stem] = error
        summary.details[nb.stem] = failures.details(nb, failed_copy, exc, cfg.log_path)
    run.screen.line(f"FAIL  {nb.name} after {seconds:.1f} s: {error} (traceback in {cfg.log_path})")


def build(cfg: Config) -> Summary:
    """Validate the inputs, run the notebooks, then (unless ``cfg.book`` is false) build the book. Raises
    :class:`BuildError`.

    One build at a time per state folder: a second one started meanwhile stops at once (exit code 2). Chapters
    that failed do not stop the others nor the book: the book is built from what finished, then
    :class:`BuildError` (exit 1) lists them, carrying the summary.
    """
    check_folders(cfg)  # a folder option naming a file, or a symlink loop: one line, exit 2
    check_kernel(cfg.kernel)
    cfg.state_dir.mkdir(parents=True, exist_ok=True)
    with (cfg.state_dir / ".lock").open("w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            raise BuildError(f"another build is running (lock: {cfg.state_dir / '.lock'})", EXIT_USAGE) from exc
        # the kernels (started with this environment) write their caches there, never into the package, and read
        # what the runner recorded about the inputs
        saved = {k: os.environ.get(k) for k in (paths.CACHE_ENV, banner.INPUTS_ENV, MIRROR_ENV)}
        os.environ[paths.CACHE_ENV] = str(cfg.cache_dir)
        os.environ[banner.INPUTS_ENV] = str(cfg.state_dir / "inputs.json")
        if not os.environ.get(MIRROR_ENV) and (mirror := default_mirror(cfg.root)) is not None:
            os.environ[MIRROR_ENV] = str(mirror)  # the library's default, for this build's --root
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
        book_error = None
        if cfg.book:
            try:
                build_book(cfg, chapter.executed_chapters(cfg), summary)
            except BuildError as exc:
                exc.summary = summary
                if not summary.errors:
                    raise
                book_error = exc  # the chapters failed first: exit 1, the book's failure said after them
        if summary.errors:
            errors = {r.name: summary.errors[r.name] for r in summary.runs if r.name in summary.errors}
            message = failures.closing_message(errors, summary.details)
            if book_error is not None:
                message += f"\nthe book was not built either (exit {book_error.exit_code}): {book_error}"
            raise BuildError(message, EXIT_NOTEBOOK, summary)
        return summary


def main(argv: list[str] | None = None) -> int:
    """The command: exit 0 done, 1 a notebook failed, 2 bad arguments or inputs, 3 the book build failed. A failure
    ends with one line ``bookbuild: exit N (what): reason``."""
    t0 = time.perf_counter()
    try:
        cfg = parse_args(argv)
        summary = build(cfg)
    except BuildError as exc:
        if exc.summary is not None:
            _print_summary(exc.summary, t0)
        lines = str(exc).splitlines() or [""]
        if len(lines) > 1:  # the details (failing cell, executed copy, log), then the one-line summary
            print(f"build failed: {exc}", file=sys.stderr, flush=True)
        reason = lines[0]
        print(f"bookbuild: exit {exc.exit_code} ({EXIT_MEANING[exc.exit_code]}): {reason}", file=sys.stderr,
              flush=True)
        return exc.exit_code
    _print_summary(summary, t0)
    return EXIT_OK


def _print_summary(summary: Summary, t0: float) -> None:
    ran, skipped, failed = summary.ran, summary.skipped, summary.failed
    print(
        f"notebooks: {len(ran)} ran ({', '.join(ran) or '-'}), {len(skipped)} skipped ({', '.join(skipped) or '-'})"
        + (f", {len(failed)} failed ({', '.join(failed)})" if failed else "")
        + f"; {time.perf_counter() - t0:.1f} s in all",
        flush=True,
    )
    if summary.html:
        print(f"HTML: {summary.html}", flush=True)
