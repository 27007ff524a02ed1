"""Simulated annotators for AE-P: human labels for a random sample of judged items, drawn around the LLM judge's
value so that the judge–human Pearson r has a planted expected value (the paper's labels were not released).

Rule (closed form, fixed in advance, never tuned to a recovered number). For a task (``confidence`` or
``support``) let *J* be the judge's value (:func:`analysis_lib.answer_engine.agreement.judge_values`) and *s²* its
variance over every judged item of the task (population variance). Each of ``n_annotators`` (two, as in §4.2) labels a
sampled item as *J* + *e*, with *e* ~ N(0, σ²) independent across annotators and items and

    σ² = n_annotators · s² · (1 / r² − 1),

so the annotators' mean before rounding is *J* plus noise of variance *s²*(1/r² − 1): its covariance with *J* is
*s²* and its variance *s²*/r², a Pearson r of exactly *r*. Each annotator's value is then put on the label scale
(:data:`LABEL_SCALE`): confidence rounded to the nearest level 1–5 (clipped), support ``full`` (1) when
*J* + *e* ≥ 0.5 and ``none`` (0) otherwise (the pipeline reads ``partial`` as 0, so the scale is binary); an
item's label is the annotators' mean, as :func:`analysis_lib.answer_engine.agreement.load_answer_labels` averages a
labels file.

Rounding lowers the correlation, so the planted value is :func:`expected_r`: the population Pearson r between
*J* and the mean of the rounded labels, computed exactly from normal CDFs over the distribution of *J* (no
sampling). The labels are drawn from their own random stream (``default_rng([seed, LABEL_STREAM])``), apart from
the answer simulator's ``default_rng(seed)``, so adding them changes no other simulated number.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import polars as pl
from scipy import special

from analysis_lib.answer_engine.agreement import LABEL_TASKS, average_annotators

#: Label levels per task (an annotator's value is rounded to the nearest level, clipped to the ends).
LABEL_SCALE: dict[str, tuple[float, ...]] = {"confidence": (1.0, 2.0, 3.0, 4.0, 5.0), "support": (0.0, 1.0)}
#: The judge–human agreement the simulated annotators are calibrated to, per task: Pearson r of the paper's
#: validation (source: Venkit et al., §4.2: 0.72 for answer confidence on 100 answers, 0.62 for factual support on
#: 100 verification tasks, two annotators each).
PAPER_R: dict[str, float] = {"confidence": 0.72, "support": 0.62}
#: Second word of the labels' seed sequence, keeping their draws apart from the answer simulator's.
LABEL_STREAM = 0xAE9


def noise_sd(judge_sd: float, r: float, n_annotators: int = 1) -> float:
    """Per-annotator noise SD σ at which the mean of ``n_annotators`` unrounded labels has Pearson r = ``r``
    with a judge of SD ``judge_sd``."""
    if not 0 < r <= 1:
        raise ValueError(f"target r must be in (0, 1], got {r}")
    return float(judge_sd * np.sqrt(n_annotators * (1 / r**2 - 1)))


def _cuts(scale: tuple[float, ...]) -> np.ndarray:
    mid = (np.asarray(scale[1:]) + np.asarray(scale[:-1])) / 2
    return np.concatenate([[-np.inf], mid, [np.inf]])


def expected_r(judge: np.ndarray, sd: float, scale: tuple[float, ...], n_annotators: int = 1) -> float:
    """Population Pearson r between the judge's value (distributed as the values in ``judge``) and the mean of
    ``n_annotators`` labels, each judge + N(0, ``sd``²) rounded to the nearest level of ``scale``."""
    vals, counts = np.unique(np.asarray(judge, float), return_counts=True)
    p = counts / counts.sum()
    levels = np.asarray(scale)
    if sd == 0:
        cdf = (_cuts(scale)[None, :] > vals[:, None]).astype(float)
    else:
        cdf = special.ndtr((_cuts(scale)[None, :] - vals[:, None]) / sd)
    prob = np.diff(cdf, axis=1)  # P(label = level | J = value)
    m = prob @ levels
    v = prob @ levels**2 - m**2
    mean_j, mean_h = p @ vals, p @ m
    var_j = p @ vals**2 - mean_j**2
    var_h = p @ (v / n_annotators + m**2) - mean_h**2
    if var_j <= 0 or var_h <= 0:
        return float("nan")
    return float((p @ (vals * m) - mean_j * mean_h) / np.sqrt(var_j * var_h))


def _round_to(x: np.ndarray, scale: tuple[float, ...]) -> np.ndarray:
    idx = np.searchsorted(_cuts(scale)[1:-1], x, side="right")
    return np.asarray(scale)[idx]


@dataclass(frozen=True)
class SimulatedLabels:
    """``labels``: the simulated human labels in the :func:`analysis_lib.answer_engine.agreement.load_answer_labels`
    layout; ``planted``: per task the target r, the judge's SD over all judged items, the per-annotator noise SD,
    the planted ``expected_r`` (after rounding), the items labelled and the items the sample was drawn from."""

    labels: pl.DataFrame
    planted: pl.DataFrame

    def planted_r(self, task: str) -> float:
        """The planted expected r of one task."""
        return float(self.planted.filter(pl.col("task") == task)["expected_r"].item())


def simulate_labels(judged: pl.DataFrame, target_r: Mapping[str, float] = PAPER_R, *, n_items: int = 100,
                    n_annotators: int = 2, seed: int = 0) -> SimulatedLabels:
    """Simulated human labels for ``n_items`` items per task drawn at random (without replacement) from
    ``judged`` (:func:`analysis_lib.answer_engine.agreement.judge_values` output), for each task in ``target_r`` (task →
    nominal r; default :data:`PAPER_R`, the paper's); see the module docstring for the rule."""
    unknown = sorted(set(target_r) - set(LABEL_TASKS))
    if unknown:
        raise ValueError(f"unknown task(s) {unknown}; expected some of {LABEL_TASKS}")
    rng = np.random.default_rng([seed, LABEL_STREAM])
    rows: list[pl.DataFrame] = []
    calib = []
    for task in LABEL_TASKS:
        if task not in target_r:
            continue
        pool = judged.filter(pl.col("task") == task)
        j_all = pool["judge"].to_numpy()
        sd = noise_sd(float(j_all.std()), float(target_r[task]), n_annotators) if pool.height else float("nan")
        k = min(n_items, pool.height)
        pick = rng.choice(pool.height, size=k, replace=False)
        items = pool["item_id"].to_numpy()[pick]
        j = j_all[pick]
        for _ in range(n_annotators):
            human = _round_to(j + rng.normal(0.0, sd, size=k), LABEL_SCALE[task])
            rows.append(pl.DataFrame({"task": [task] * k, "item_id": items.tolist(), "human": human},
                                     schema={"task": pl.String, "item_id": pl.String, "human": pl.Float64}))
        calib.append({"task": task, "target_r": float(target_r[task]), "judge_sd": float(j_all.std()),
                      "noise_sd": sd, "n_annotators": n_annotators,
                      "expected_r": expected_r(j_all, sd, LABEL_SCALE[task], n_annotators) if k else float("nan"),
                      "n_items": k, "n_pool": pool.height})
    # interleaved annotators -> one long frame; averaging keeps the sampled order of items
    long = (pl.concat(rows) if rows else
            pl.DataFrame(schema={"task": pl.String, "item_id": pl.String, "human": pl.Float64}))
    return SimulatedLabels(average_annotators(long), pl.DataFrame(calib))
