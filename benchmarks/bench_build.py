"""The book build, cold and warm: each chapter's seconds and peak memory, against the targets of issue 23.

Runs ``python -m bookbuild`` (the whole book, as ``make book`` does) in a scratch root with an empty cache folder
(cold: nothing computed, no embeddings, no derived battles; the mirrored inputs are copied in from
``$ANALYSIS_DATA_MIRROR`` after their hash check, as on a fresh clone), then again unchanged (warm). While it runs,
a sampler reads the resident memory of the runner's whole process tree (the runner and its kernels) every 0.1 s
and charges it to the chapter running then (with ``--jobs``, to every chapter running then). Prints one row per
chapter (seconds, peak memory) for both runs, the totals, and the targets met or not:

- cold build with an empty cache <= 150 s, warm <= 5 s, no chapter over 30 s, peak memory <= 3 GB.

Usage: ``python benchmarks/bench_build.py [--data sample] [--jobs N] [--memory-gb G] [--keep DIR] [--only a,b]
[--record]`` (2 cores, machine shared: the figures are wall-clock on whatever else runs).

``--record`` (the whole book, ``--jobs 1``, the embedded default) writes what the cold run measured to
``bookbuild/resources/chapter_costs.json``: each chapter's seconds and its kernel's peak (the tree's peak while it ran
less the runner's own), which the runner's scheduler plans ``--jobs`` with (:mod:`bookbuild.schedule`).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

from bookbuild import schedule

REPO = Path(__file__).resolve().parents[1]
TARGETS = {"cold_s": 150.0, "warm_s": 5.0, "chapter_s": 30.0, "peak_gb": 3.0}
_RUN = re.compile(r"^run\s+(\S+)\.ipynb")
_DONE = re.compile(r"^done\s+(\S+)\.ipynb in ([0-9.]+) s")


def _tree_rss(proc: psutil.Process) -> int:
    total = 0
    try:
        procs = [proc, *proc.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0
    for p in procs:
        try:
            total += p.memory_info().rss
        except psutil.NoSuchProcess:
            pass
    return total


def run_build(root: Path, args: list[str]) -> dict:
    """One build; returns seconds in all, per-chapter seconds and peak memory, and the overall peak."""
    cmd = [sys.executable, "-m", "bookbuild", "--root", str(root), *args]
    env = dict(os.environ)  # as `make book` runs it: the machine's environment, the local mirror of the inputs
    if "ANALYSIS_DATA_MIRROR" not in env and (REPO.parent / "shared" / "data").is_dir():
        env["ANALYSIS_DATA_MIRROR"] = str(REPO.parent / "shared" / "data")
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env, cwd=root)
    ps = psutil.Process(proc.pid)
    running: set[str] = set()  # chapters running now (several with --jobs: each is charged the whole tree)
    other = {"name": "(runner)"}
    peaks: dict[str, int] = {}
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            rss = _tree_rss(ps)
            for name in set(running) or {other["name"]}:
                peaks[name] = max(peaks.get(name, 0), rss)
            time.sleep(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    seconds: dict[str, float] = {}
    assert proc.stdout is not None
    for line in proc.stdout:
        if m := _RUN.match(line):
            running.add(m.group(1))
        elif m := _DONE.match(line):
            seconds[m.group(1)] = float(m.group(2))
            running.discard(m.group(1))
        elif line.startswith("book "):
            other["name"] = "(jupyter-book)"
    rc = proc.wait()
    stop.set()
    sampler.join()
    total = time.perf_counter() - t0
    if rc != 0:
        raise SystemExit(f"the build failed (exit {rc}); see {root / 'book' / '_build' / 'runs' / 'build.log'}")
    return {"total": total, "seconds": seconds, "peaks": peaks, "peak": max(peaks.values(), default=0)}


def measured_costs(cold: dict) -> schedule.Costs:
    """Per-chapter costs of a cold serial run: seconds, and the tree's peak while the chapter ran less the
    runner's own peak (the tree's peak while no chapter ran)."""
    gb = 1024**3
    runner = cold["peaks"].get("(runner)", 0) / gb
    return schedule.Costs(runner, {stem: schedule.Cost(sec, max(cold["peaks"].get(stem, 0) / gb - runner, 0.0))
                                   for stem, sec in cold["seconds"].items()})


def scratch_root(base: Path) -> Path:
    """A copy of the book's sources (notebooks, book pages, config) with no cache, state or results."""
    root = base / "root"
    root.mkdir(parents=True)
    shutil.copytree(REPO / "notebooks", root / "notebooks")
    (root / "book").mkdir()
    for page in [*(REPO / "book").glob("*.md"), *(REPO / "book").glob("*.bib")]:
        shutil.copy(page, root / "book" / page.name)
    for name in ("_config.yml", "_toc.yml"):
        shutil.copy(REPO / name, root / name)
    return root


def report(cold: dict, warm: dict) -> str:
    gb = 1024**3
    names = [n for n in cold["seconds"]] + [n for n in ("(runner)", "(jupyter-book)") if n in cold["peaks"]]
    lines = [f"{'chapter':28s} {'cold s':>8s} {'cold peak GB':>13s} {'warm s':>8s} {'warm peak GB':>13s}"]
    for n in names:
        lines.append(f"{n:28s} {cold['seconds'].get(n, float('nan')):8.1f} {cold['peaks'].get(n, 0) / gb:13.2f} "
                     f"{warm['seconds'].get(n, 0.0):8.1f} {warm['peaks'].get(n, 0) / gb:13.2f}")
    lines.append(f"{'whole build':28s} {cold['total']:8.1f} {cold['peak'] / gb:13.2f} {warm['total']:8.1f} "
                 f"{warm['peak'] / gb:13.2f}")
    slowest = max(cold["seconds"].items(), key=lambda kv: kv[1], default=("-", 0.0))
    checks = [
        ("cold build", cold["total"], TARGETS["cold_s"], "s"),
        ("warm build", warm["total"], TARGETS["warm_s"], "s"),
        (f"slowest chapter ({slowest[0]})", slowest[1], TARGETS["chapter_s"], "s"),
        ("peak memory", max(cold["peak"], warm["peak"]) / gb, TARGETS["peak_gb"], "GB"),
    ]
    lines.append("")
    for what, got, target, unit in checks:
        verdict = "met" if got <= target else "NOT met"
        lines.append(f"{what:34s} {got:8.2f} {unit} (target <= {target:g} {unit}, ratio {got / target:.2f}): {verdict}")
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default="sample")
    p.add_argument("--only", default=None, help="comma-separated chapters (default: the whole book)")
    p.add_argument("--keep", default=None, help="build in this folder and keep it (default: a temporary one)")
    p.add_argument("--jobs", default="1", help="chapters run at once (the runner's --jobs)")
    p.add_argument("--memory-gb", default="3", help="the runner's --memory-gb")
    p.add_argument("--record", action="store_true",
                   help="write the cold run's per-chapter costs to bookbuild/resources/chapter_costs.json")
    a = p.parse_args()
    if a.record and (a.jobs != "1" or a.only or a.data != "sample"):
        p.error("--record measures the whole book on the embedded default, one chapter at a time: "
                "no --only, --jobs or --data")
    base = Path(a.keep) if a.keep else Path(tempfile.mkdtemp(prefix="bench_build_"))
    try:
        root = scratch_root(base)
        args = ["--data", a.data, "--jobs", a.jobs, "--memory-gb", a.memory_gb] + (["--only", a.only] if a.only else [])
        cold = run_build(root, args)
        warm = run_build(root, args)
        print(f"bench_build: DATA={a.data}, --jobs {a.jobs}, --memory-gb {a.memory_gb}, {os.cpu_count()} cores, "
              "cold = empty cache, warm = unchanged rebuild")
        print(report(cold, warm))
        if a.record:
            schedule.write_costs(measured_costs(cold), f"measured by benchmarks/bench_build.py --record on "
                                 f"{os.cpu_count()} cores, {time.strftime('%Y-%m-%d')}: a cold build of the embedded "
                                 "default, one chapter at a time; peak_gb = the kernel's peak (the runner's "
                                 "process tree while the chapter ran, less runner_gb)")
            print(f"recorded the costs in {schedule.COSTS_FILE.relative_to(REPO)}")
    finally:
        if not a.keep:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
