"""The runner's plan for ``--jobs N`` (bookbuild.schedule): longest first, within the memory budget."""

from __future__ import annotations

import json

import pytest

from bookbuild import schedule
from bookbuild.schedule import Cost, Costs

COSTS = Costs(0.25, {
    "01_light": Cost(10.0, 0.5),
    "02_heavy": Cost(80.0, 1.6),
    "03_light": Cost(12.0, 0.5),
    "04_heavy": Cost(45.0, 1.9),
    "05_light": Cost(12.0, 0.4),
})
BOOK = ["01_light", "02_heavy", "03_light", "04_heavy", "05_light"]


def simulate(costs: Costs, stems: list[str], jobs: int, budget: float) -> tuple[float, float, list[str]]:
    """Run the plan on a clock where each chapter takes its seconds: (makespan, planned peak, start order)."""
    pending = schedule.order(stems, costs)
    running: dict[str, float] = {}  # stem -> finish time
    clock, peak, started = 0.0, 0.0, []
    while pending or running:
        while stem := schedule.pick(pending, list(running), costs, jobs, budget):
            pending.remove(stem)
            running[stem] = clock + costs.of(stem).seconds
            started.append(stem)
            peak = max(peak, costs.runner_gb + sum(costs.of(s).peak_gb for s in running))
        stem = min(running, key=running.__getitem__)
        clock = running.pop(stem)
    return clock, peak, started


def test_longest_first_with_ties_in_book_order():
    costs = Costs(0.0, {"a": Cost(5, 1), "b": Cost(9, 1), "c": Cost(5, 1), "d": Cost(9, 1)})
    assert schedule.order(["a", "b", "c", "d"], costs) == ["b", "d", "a", "c"]


def test_heavy_chapters_never_run_together_within_the_budget():
    makespan, peak, started = simulate(COSTS, BOOK, jobs=2, budget=3.0)
    assert started[0] == "02_heavy"  # the longest starts first
    assert peak <= 3.0  # 1.6 + 1.9 + 0.25 would not fit: 04 waits for 02
    serial = sum(c.seconds for c in COSTS.chapters.values())
    assert makespan < serial
    # no budget: the two heavy chapters overlap and the plan's peak passes 3 GB
    assert simulate(COSTS, BOOK, jobs=2, budget=100.0)[1] > 3.0


def test_one_job_is_the_serial_plan():
    makespan, _, started = simulate(COSTS, BOOK, jobs=1, budget=3.0)
    assert makespan == sum(c.seconds for c in COSTS.chapters.values())
    assert sorted(started) == sorted(BOOK)


def test_a_chapter_above_the_budget_runs_alone_and_the_build_never_stalls():
    costs = Costs(0.25, {"big": Cost(20, 5.0), "small": Cost(5, 0.5)})
    assert schedule.pick(["big", "small"], [], costs, 2, 3.0) == "big"  # nothing running: it starts
    assert schedule.pick(["small"], ["big"], costs, 2, 3.0) is None  # and nothing joins it
    assert schedule.pick(["big"], ["small"], costs, 2, 3.0) is None  # it waits until it can run alone
    assert simulate(costs, ["big", "small"], jobs=2, budget=3.0)[0] == 25


def test_no_free_lane_and_unmeasured_chapters():
    assert schedule.pick(["01_light"], ["02_heavy", "03_light"], COSTS, 2, 10.0) is None
    assert COSTS.of("99_new") == schedule.DEFAULT_COST


def test_costs_round_trip_and_a_bad_file_is_named(tmp_path):
    path = tmp_path / "costs.json"
    schedule.write_costs(COSTS, "test", path)
    assert schedule.load_costs(path) == COSTS
    assert schedule.load_costs(tmp_path / "missing.json") == Costs(0.0, {})
    path.write_text(json.dumps({"runner_gb": 0.2, "chapters": {"01": {"seconds": 3}}}))
    with pytest.raises(ValueError, match="costs.json"):
        schedule.load_costs(path)


def test_the_recorded_costs_cover_every_chapter_of_the_book():
    from pathlib import Path

    costs = schedule.load_costs()
    notebooks = sorted(p.stem for p in (Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))
    assert set(costs.chapters) == set(notebooks)
    assert all(c.seconds > 0 and c.peak_gb > 0 for c in costs.chapters.values())
