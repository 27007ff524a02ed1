"""Test-session defaults: the local mirror of the inputs (../shared/data) pre-seeds the fetch cache; shared fixtures,
among them the one build of the book (``book``) that every test reading the built book shares."""

from __future__ import annotations

import json
import os
import resource
import secrets
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from filelock import FileLock

from bookbuild import paper_values
from bookbuild.recorder import Result

MIRROR = Path(__file__).resolve().parents[1].parent / "shared" / "data"
REPO = Path(__file__).resolve().parents[1]
#: The chapter notebooks to build: the repository's, or ``$BOOK_TEST_NOTEBOOKS`` (a folder, to try the checks on
#: other notebooks; it needs the status notebook too).
NOTEBOOKS = Path(os.environ.get("BOOK_TEST_NOTEBOOKS") or REPO / "notebooks")
STATUS = "99_reproduction_status"
FAKE_KEY = "sk-test-" + secrets.token_hex(16)
#: The simulated release the book test builds on: the smallest on which every chapter runs every section (the
#: checks are about pages, links and structure, not about the numbers).
BOOK_SAMPLE = "sample:2000"
#: Smaller study sizes for the same pages (the checks read pages, links and structure): five bootstrap rounds (the
#: intervals are percentiles of any number of rounds), and the chapters' own sizes set with the runner's ``--set``
#: (topics on 150 of the real prompts with clusters of 10, the smallest sample that still finds several topics;
#: fewer replicate releases in the methods validation; fewer battles embedded for the nugget cosine and scored by
#: ROUGE-L).
BOOK_SIZES = ("--bootstrap", "5", "--set", "topic_prompts=150", "--set", "min_cluster_size=10", "--set",
              "min_samples=5", "--set", "n_seeds=3", "--set", "n_replicates=20", "--set", "cosine_battles=50",
              "--set", "rouge_battles=50")

if "ANALYSIS_DATA_MIRROR" not in os.environ and MIRROR.is_dir():
    os.environ["ANALYSIS_DATA_MIRROR"] = str(MIRROR)


@pytest.fixture(scope="session")
def figure7_paper() -> dict[str, tuple[int, int] | int]:
    """The paper's values of the eight metrics on its Fig 7 worked example (AE §4.2), read from the paper-values
    table (AE-M rows, the one home of the paper's numbers): a fraction ``"6/7"`` as ``(6, 7)``, a flag as an int."""
    out: dict[str, tuple[int, int] | int] = {}
    for (aid, quantity), row in paper_values.table().items():
        if aid != "AE-M" or not row.source.endswith("Fig 7"):
            continue
        name = quantity.removesuffix(" (fraction)")
        if isinstance(row.paper, str):
            num, den = row.paper.split("/")
            out[name] = (int(num), int(den))
        else:
            out[name] = int(row.paper)  # type: ignore[arg-type]
    return out


# --- the book, built once per session ---------------------------------------------------------------------------


def chapters_to_build() -> list[str]:
    """The chapter stems this session builds: ``$BOOK_TEST_CHAPTERS`` or every chapter notebook."""
    every = sorted(p.stem for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb") if p.stem != STATUS)
    wanted = [s.strip().removesuffix(".ipynb") for s in os.environ.get("BOOK_TEST_CHAPTERS", "").split(",")]
    wanted = [s for s in wanted if s]
    unknown = sorted(set(wanted) - set(every))
    if unknown:
        raise ValueError(f"$BOOK_TEST_CHAPTERS names notebooks that do not exist: {unknown} (have {every})")
    return wanted or every


CHAPTERS = chapters_to_build()


def book_sizes(chapters: list[str]) -> list[str]:
    """:data:`BOOK_SIZES` less the ``--set`` of parameters that none of ``chapters`` declares (the runner refuses
    those, so a ``$BOOK_TEST_CHAPTERS`` build passes only its own chapters' sizes)."""
    declared = set()
    for stem in chapters:
        nb = json.loads((NOTEBOOKS / f"{stem}.ipynb").read_text(encoding="utf-8"))
        cell = next(c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", []))
        source = "".join(cell["source"])
        declared |= {line.split("=", 1)[0].strip() for line in source.splitlines() if "=" in line}
    out: list[str] = []
    for option, value in zip(BOOK_SIZES[::2], BOOK_SIZES[1::2], strict=True):
        if option != "--set" or value.split("=", 1)[0] in declared:
            out += [option, value]
    return out


def build_command(root: Path, chapters: list[str]) -> list[str]:
    """The one invocation of the runner."""
    return [
        sys.executable, "-m", "bookbuild",
        "--root", str(root), "--notebooks-dir", str(NOTEBOOKS), "--data", BOOK_SAMPLE,
        "--cache-dir", str(REPO / ".cache"), "--only", ",".join([*chapters, STATUS]), *book_sizes(chapters),
        "--jobs", "2", "--memory-gb", "6",  # two chapters at once: the book is the suite's longest chain of work
    ]  # fmt: skip


class Book:
    def __init__(self, root: Path, seconds: float, stdout: str):
        self.root = root
        self.seconds = seconds
        self.stdout = stdout
        self.html = root / "book" / "_build" / "html"
        self.results_dir = root / "book" / "_results"
        self.chapters_dir = root / "book" / "chapters"

    def page(self, name: str) -> Path:
        return self.html / "book" / "chapters" / f"{name}.html"

    def results(self, name: str) -> list[Result]:
        path = self.results_dir / f"{name}.json"
        if not path.exists():
            return []
        return [Result(**r) for r in json.loads(path.read_text())["results"]]

    def failed(self) -> dict[str, str]:
        path = self.results_dir / "_failed.json"
        return ({e["notebook"]: e.get("error", "") for e in json.loads(path.read_text())["failed"]}
                if path.exists() else {})


def book_root(root: Path) -> Path:
    """A fresh book root: the repository's configuration and book pages (the chapters are built into it)."""
    (root / "book").mkdir(parents=True, exist_ok=True)
    for name in ("_config.yml", "_toc.yml"):
        shutil.copy(REPO / name, root / name)
    for page in sorted((REPO / "book").glob("*.md")) + sorted((REPO / "book").glob("*.bib")):
        shutil.copy(page, root / "book" / page.name)
    return root


def offline_env() -> dict[str, str]:
    """The environment of an offline test build: keys present, network closed. With a key and no endpoint the client
    would try the OpenAI API (and the hub), which this machine cannot reach; cache-only mode keeps the build from
    waiting."""
    env = dict(os.environ, OPENAI_API_KEY=FAKE_KEY, ANTHROPIC_API_KEY=FAKE_KEY, HF_TOKEN=FAKE_KEY,
               ANALYSIS_LLM_OFFLINE="1", HF_HUB_OFFLINE="1")
    env.pop("OPENAI_BASE_URL", None)
    return env


def _build_book(root: Path) -> dict[str, object]:
    """Build the book into ``root`` (a copy of the repository's book pages and configuration) with the one
    invocation of the runner; the run's return code, seconds and output."""
    book_root(root)
    env = offline_env()
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(build_command(root, CHAPTERS), capture_output=True, text=True, env=env, timeout=5400,
                              check=False)
    except subprocess.TimeoutExpired as exc:  # recorded as a failed build, so a waiting worker does not retry it
        return {"returncode": None, "seconds": time.perf_counter() - t0, "stdout": str(exc.stdout or ""),
                "stderr": f"timed out after {exc.timeout} s", "root": str(root)}
    return {"returncode": proc.returncode, "seconds": time.perf_counter() - t0, "stdout": proc.stdout,
            "stderr": proc.stderr, "root": str(root)}


def shared_build(tmp_path_factory, name: str, make) -> dict:
    """One build of a test run, whatever the number of workers: ``make(folder)`` builds into ``folder`` and returns a
    JSON-able record of the run. Under pytest-xdist the first worker that asks builds in the run's own temporary
    folder (the parent of the workers' folders) while holding a file lock and writes the record beside it; the others
    wait for the lock and read the record, so a run builds it once however its test files are spread."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        folder = tmp_path_factory.getbasetemp().parent / name
        record = folder.with_name(f"{name}.json")
        with FileLock(str(folder) + ".lock"):
            if not record.exists():
                record.write_text(json.dumps(make(folder)))
        return json.loads(record.read_text())
    folder = tmp_path_factory.mktemp(name)
    folder.rmdir()
    return make(folder)


@pytest.fixture(scope="session")
def book(tmp_path_factory) -> Book:
    """The one build of the book of a test run (the embedded default at the suite's sizes), shared by every test that
    reads the built book."""
    run = shared_build(tmp_path_factory, "bookroot", _build_book)
    assert run["returncode"] == 0, f"build failed:\n{run['stdout'][-3000:]}\n{run['stderr'][-5000:]}"
    print(f"\nbook build ({', '.join(CHAPTERS)} + status page, {BOOK_SAMPLE}): {run['seconds']:.1f} s")
    return Book(Path(run["root"]), run["seconds"], run["stdout"])


@pytest.fixture(scope="session")
def other_book(tmp_path_factory) -> tuple[Book, dict]:
    """The one build of the "other release" book (``tests/other_release.py``: the next release's variants with
    hostile names, a Text Arena file, a match log and answers) and the inputs it was given."""
    import other_release

    run = shared_build(tmp_path_factory, "otherbook", other_release.build)
    assert run["returncode"] == 0, f"build failed:\n{run['stdout'][-3000:]}\n{run['stderr'][-5000:]}"
    print(f"\nother-release build ({', '.join(other_release.CHAPTERS)} + status page): {run['seconds']:.1f} s")
    return Book(Path(run["root"]), run["seconds"], run["stdout"]), run["inputs"]


# --- the longest files first ----------------------------------------------------------------------------------------

#: The files that hold the suite's long chains of work (the endpoint book's three builds, the book, the other-release
#: book), collected first: with ``-n 3 --dist loadfile --no-loadscope-reorder`` (``make test``) each worker starts on
#: one of them and the short files fill the workers around them, instead of one long file starting last and running
#: alone at the end.
LONGEST_FIRST = ("test_llm_book.py", "test_book.py", "test_hostile_build.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(LONGEST_FIRST)))  # stable: the rest keep their order


# --- where the suite's time goes ----------------------------------------------------------------------------------

_FILE_SECONDS: dict[str, list[float]] = {}
_CPU_MARK: list[float] = []


def _cpu_seconds() -> float:
    """CPU seconds of this process and of its children that ended (subprocesses, kernels, the book builds). A
    child's CPU counts when it is reaped: joblib's reusable worker processes (topics, clustering) end after some
    idle minutes and land in whichever test the worker is running then."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    _CPU_MARK[:] = [_cpu_seconds()]
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """Each phase's report carries the CPU seconds spent since the last one (``user_properties``: under
    pytest-xdist they travel to the controller with the report)."""
    outcome = yield
    now = _cpu_seconds()
    outcome.get_result().user_properties.append(("cpu_s", now - (_CPU_MARK[0] if _CPU_MARK else now)))
    _CPU_MARK[:] = [now]


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Sum wall and CPU seconds of setup, call and teardown per test file."""
    path = report.nodeid.split("::", 1)[0]
    wall_cpu = _FILE_SECONDS.setdefault(path, [0.0, 0.0])
    wall_cpu[0] += report.duration
    wall_cpu[1] += dict(report.user_properties).get("cpu_s", 0.0)


def pytest_terminal_summary(terminalreporter) -> None:
    """The ten test files that took the most CPU, after ``--durations``' slowest tests: a session-scoped build (the
    book) counts in the file of the first test that asked for it; wall seconds are per worker, so under
    ``-n 3`` on two cores they include the wait for a core."""
    if not _FILE_SECONDS or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    terminalreporter.write_sep("=", "10 test files taking the most CPU (setup, call and teardown summed)")
    terminalreporter.write_line(f"{'CPU s':>8} {'wall s':>8}  file")
    for path, (wall, cpu) in sorted(_FILE_SECONDS.items(), key=lambda kv: -kv[1][1])[:10]:
        terminalreporter.write_line(f"{cpu:8.1f} {wall:8.1f}  {path}")
    total_cpu = sum(cpu for _, cpu in _FILE_SECONDS.values())
    terminalreporter.write_line(f"{total_cpu:8.1f} {'':8}  all {len(_FILE_SECONDS)} files")
