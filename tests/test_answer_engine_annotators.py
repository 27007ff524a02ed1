"""Simulated annotators for AE-P (analysis_lib.answer_engine.simulate.annotators)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from analysis_lib import answer_engine as ae
from analysis_lib.answer_engine.simulate import annotators as ae_annotators


def _judged(n_conf: int, n_sup: int, seed: int = 1) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    conf = rng.choice([3.0, 4.0, 5.0], size=n_conf, p=[0.15, 0.35, 0.5])
    sup = (rng.random(n_sup) < 0.3).astype(float)
    return pl.DataFrame({
        "task": ["confidence"] * n_conf + ["support"] * n_sup,
        "item_id": [f"a{i}" for i in range(n_conf)] + [f"a{i}_1_s{i}" for i in range(n_sup)],
        "judge": np.concatenate([conf, sup]),
    })


def test_layout_matches_load_answer_labels(tmp_path):
    path = tmp_path / "labels.csv"
    path.write_text("task,item_id,human\nconfidence,a1,4\nconfidence,a1,5\nsupport,a1_1_s1,full\n")
    real = ae.load_answer_labels(path)
    sim = ae.simulate_labels(_judged(300, 300), {"confidence": 0.72, "support": 0.62}, seed=3)
    assert sim.labels.schema == real.schema
    assert sim.labels.group_by("task").len().sort("task")["len"].to_list() == [100, 100]
    assert sim.labels["n_annotators"].unique().to_list() == [2]
    assert sim.labels["item_id"].n_unique() == 200
    conf = sim.labels.filter(pl.col("task") == "confidence")["human"]
    assert set((2 * conf).to_list()) <= set(range(2, 11))  # mean of two labels on 1-5
    assert set(sim.labels.filter(pl.col("task") == "support")["human"].to_list()) <= {0.0, 0.5, 1.0}
    agreement = ae.judge_agreement(sim.labels, _judged(300, 300))
    assert agreement["n"].to_list() == [100, 100] and agreement["n_unmatched"].to_list() == [0, 0]


def test_deterministic_per_seed():
    judged = _judged(500, 500)
    a = ae.simulate_labels(judged, {"confidence": 0.72, "support": 0.62}, seed=7)
    b = ae.simulate_labels(judged, {"confidence": 0.72, "support": 0.62}, seed=7)
    c = ae.simulate_labels(judged, {"confidence": 0.72, "support": 0.62}, seed=8)
    assert a.labels.equals(b.labels) and a.planted.equals(b.planted)
    assert not a.labels.equals(c.labels)


def test_noise_sd_closed_form_without_rounding():
    # a scale so fine that rounding is negligible: the expected r is the nominal r
    fine = tuple(np.round(np.arange(-40, 40.0001, 0.02), 2))
    judge = np.array([3.0, 4.0, 4.0, 5.0, 5.0, 5.0])
    for r in (0.3, 0.62, 0.72, 0.95):
        sd = ae_annotators.noise_sd(float(judge.std()), r, n_annotators=2)
        assert ae_annotators.expected_r(judge, sd, fine, n_annotators=2) == pytest.approx(r, abs=1e-4)


def test_expected_r_matches_monte_carlo():
    # independent: brute-force draw of rounded labels on a large sample
    rng = np.random.default_rng(11)
    judge = rng.choice([3.0, 4.0, 5.0], size=400_000, p=[0.2, 0.3, 0.5])
    sd = 0.9
    labels = np.clip(np.rint(judge[:, None] + rng.normal(0, sd, size=(judge.size, 2))), 1, 5).mean(axis=1)
    mc = np.corrcoef(judge, labels)[0, 1]
    expected = ae_annotators.expected_r(judge, sd, ae_annotators.LABEL_SCALE["confidence"], 2)
    assert expected == pytest.approx(mc, abs=4 / np.sqrt(judge.size))


@pytest.mark.parametrize("task,r", [("confidence", 0.72), ("support", 0.62)])
def test_recovered_r_within_sampling_error(task, r):
    n = 20_000
    judged = _judged(60_000, 60_000)
    sim = ae.simulate_labels(judged, {task: r}, n_items=n, seed=5)
    got = ae.judge_agreement(sim.labels, judged)
    assert got["task"].to_list() == [task]
    planted = sim.planted_r(task)
    if task == "support":
        assert planted < r  # binary labels attenuate the correlation
    se = 1 / np.sqrt(n - 3)  # Fisher-z standard error
    assert abs(np.arctanh(got["r"].item()) - np.arctanh(planted)) < 4 * se


def test_rejects_bad_targets():
    with pytest.raises(ValueError):
        ae.simulate_labels(_judged(10, 10), {"relevance": 0.5})
    with pytest.raises(ValueError):
        ae_annotators.noise_sd(1.0, 0.0)


def test_the_simulated_annotators_targets_are_the_papers_values():
    """The simulator carries its own calibration targets (``PAPER_R``, §4.2); they must equal the book's paper
    values, so the planted r and the paper's r the chapter compares with are one number."""
    from bookbuild import paper_values

    names = {"confidence": "answer confidence", "support": "factual support"}
    assert set(ae_annotators.PAPER_R) == set(names)
    for task, name in names.items():
        assert ae_annotators.PAPER_R[task] == paper_values.lookup("AE-P", f"Pearson r, LLM vs annotators, {name}").paper
