"""Which chapter starts next when several run at once (``--jobs N``): the longest first, within a memory budget.

Each chapter's cost, its seconds and the peak memory of its kernel in a cold build of the embedded default, is
measured by ``benchmarks/bench_build.py --record`` (chapters run one at a time) and kept in
``bookbuild/resources/chapter_costs.json`` with the runner's own peak; a chapter not listed there counts as
:data:`DEFAULT_COST`. With ``jobs`` lanes a free lane takes the first pending chapter, longest first (ties in book
order, :func:`order`), whose start keeps

    runner_gb + Σ peak_gb(running) + peak_gb(candidate) ≤ budget_gb

(:func:`pick`). A chapter that fits beside nothing running now waits for one to finish; a chapter larger than the
budget on its own starts only when nothing else runs. Longest first shortens the build (the long chapter does not
start last, beside an idle lane); the budget keeps two heavy chapters (topic embeddings, nugget records) apart.
The costs are those of the embedded default on the project's 2-core machines: on another release the peaks scale
with its size, so the budget is a plan, not a limit the runner enforces while a chapter runs.

:func:`torch_share` gives each kernel's torch cores / jobs threads while chapters run side by side, so that two
kernels do not both spread over every core; the runner uses it only when more than one chapter reruns (a chapter
rerun alone keeps every core).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from analysis_lib.extras import TORCH_THREADS_ENV

COSTS_FILE = Path(__file__).resolve().parent / "resources" / "chapter_costs.json"


@dataclass(frozen=True)
class Cost:
    """A chapter's seconds and its kernel's peak resident memory (GB), measured alone in a cold build."""

    seconds: float
    peak_gb: float


#: A chapter without a measured cost (a user's own notebook): a short chapter with a kernel of about 1 GB.
DEFAULT_COST = Cost(seconds=10.0, peak_gb=1.0)


@dataclass(frozen=True)
class Costs:
    """The measured costs: the runner's own peak (``runner_gb``) and each chapter's :class:`Cost` by stem."""

    runner_gb: float
    chapters: dict[str, Cost]

    def of(self, stem: str) -> Cost:
        return self.chapters.get(stem, DEFAULT_COST)


def load_costs(path: Path | None = None) -> Costs:
    """The costs in ``path`` (default :data:`COSTS_FILE`; ``{"runner_gb": x, "chapters": {stem: {"seconds": s,
    "peak_gb": g}}}``); no file means no measurements (every chapter at :data:`DEFAULT_COST`, the runner at 0)."""
    path = path or COSTS_FILE
    if not path.exists():
        return Costs(0.0, {})
    raw = json.loads(path.read_text())
    try:
        chapters = {stem: Cost(float(c["seconds"]), float(c["peak_gb"])) for stem, c in raw["chapters"].items()}
        return Costs(float(raw["runner_gb"]), chapters)
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{path}: expected runner_gb and chapters.<stem>.seconds / peak_gb ({exc})") from exc


def write_costs(costs: Costs, note: str, path: Path | None = None) -> None:
    """Write ``costs`` to ``path`` (default :data:`COSTS_FILE`): what ``bench_build.py --record`` measured, with
    ``note`` saying how."""
    path = path or COSTS_FILE
    payload = {
        "note": note,
        "runner_gb": round(costs.runner_gb, 3),
        "chapters": {stem: {"seconds": round(c.seconds, 1), "peak_gb": round(c.peak_gb, 3)}
                     for stem, c in costs.chapters.items()},
    }
    path.write_text(json.dumps(payload, indent=1) + "\n")


def order(stems: Sequence[str], costs: Costs) -> list[str]:
    """``stems`` (in book order) longest first; equal costs keep book order (the sort is stable)."""
    return sorted(stems, key=lambda s: -costs.of(s).seconds)


def pick(pending: Sequence[str], running: Sequence[str], costs: Costs, jobs: int, budget_gb: float) -> str | None:
    """The first of ``pending`` (already in :func:`order`) that may start beside ``running``, or None (no free
    lane, or nothing fits until a running chapter finishes). With nothing running the first pending chapter
    always starts, whatever its peak, so a build never stalls."""
    if not pending or len(running) >= jobs:
        return None
    if not running:
        return pending[0]
    used = costs.runner_gb + sum(costs.of(s).peak_gb for s in running)
    for stem in pending:
        if used + costs.of(stem).peak_gb <= budget_gb:
            return stem
    return None


@contextmanager
def torch_share(jobs: int) -> Iterator[None]:
    """While the block runs, kernels started from this process give torch ``cores // jobs`` threads (at least 1;
    ``$ANALYSIS_TORCH_THREADS``, read by :func:`analysis_lib.extras.limit_torch_threads`). A value the user set
    wins; the environment is restored afterwards."""
    if os.environ.get(TORCH_THREADS_ENV):
        yield
        return
    os.environ[TORCH_THREADS_ENV] = str(max(1, (os.cpu_count() or 1) // jobs))
    try:
        yield
    finally:
        os.environ.pop(TORCH_THREADS_ENV, None)
