"""The Fig 8 scorecard: per-engine percentages with bootstrap intervals over answers, the Table 7 colour
thresholds and the classification of each (engine, metric) cell; Table 2's cited-source shares.

Per-engine percentage of a metric = 100 × mean over that engine's answers of the per-answer value (a macro
average, as the released notebook's cell computes it; answers whose value is undefined are skipped and counted).
Which answers are undefined depends on the convention (:mod:`.conventions`): under ``"released"`` (the default)
only the answers the released notebook skips (no relevant statement or no kept source), for all of the source and
citation metrics at once; under ``"paper"`` also, metric by metric, any 0/0 ratio (no citation for Citation
Accuracy, no supporting pair for Thoroughness). The bootstrap interval resamples an engine's answers with
replacement ``rounds`` times and takes the percentile interval of the resampled means.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from analysis_lib.fetch import published

from .conventions import DEFAULT_CONVENTION, SKIPPED_WITH_ANSWER, SOURCE_METRICS, Convention, check_convention
from .metrics import CATEGORIES, METRICS, Category


def check_metrics_convention(metrics: pl.DataFrame, convention: Convention = DEFAULT_CONVENTION) -> None:
    """Under ``"released"``, raise ``ValueError`` unless each answer (row) has its five source and citation metrics
    all defined or all undefined, and one-sided / overconfident undefined with them (the released notebook scores
    or skips an answer as a whole). A frame computed under ``"paper"`` fails this as soon as one answer has no
    citation or no supporting pair. Under ``"paper"`` any pattern of undefined values is accepted."""
    if check_convention(convention) != "released" or metrics.height == 0:
        return
    finite = np.isfinite(metrics.select(SOURCE_METRICS).to_numpy().astype(float))
    mixed = finite.any(axis=1) & ~finite.all(axis=1)
    skipped = ~finite.any(axis=1)
    extra = np.isfinite(metrics.select(SKIPPED_WITH_ANSWER[len(SOURCE_METRICS):]).to_numpy().astype(float))
    bad = mixed | (skipped & extra.any(axis=1))
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        missing = [m for m, ok in zip(SOURCE_METRICS, finite[k]) if not ok]
        raise ValueError(f"{int(bad.sum())} answers are partly undefined (first: row {k}, undefined {missing}), which "
                         f"the released convention never gives: were these metrics computed with convention='paper'? "
                         f"Score them with convention='paper', or recompute them under 'released'")


def engine_scorecard(metrics: pl.DataFrame, *, convention: Convention = DEFAULT_CONVENTION) -> pl.DataFrame:
    """Per-engine percentages (mean over answers × 100, undefined answers skipped), one column per engine.

    The released notebook averages the per-answer ratios (macro average), so this does too; ``convention`` says
    how the per-answer metrics were computed and is checked (:func:`check_metrics_convention`). Output has the
    layout of ``published/aee_figure8_scorecard.csv``: ``metric`` = ``pct_<name>``.
    """
    check_metrics_convention(metrics, convention)
    engines = list(dict.fromkeys(metrics["engine"].to_list()))
    out: dict[str, list] = {"metric": [f"pct_{k}" for k in METRICS]}
    for e in engines:
        sub = metrics.filter(pl.col("engine") == e)
        out[e] = [100.0 * float(np.nanmean(sub[k].to_numpy())) if np.isfinite(sub[k].to_numpy()).any() else math.nan
                  for k in METRICS]
    return pl.DataFrame(out)


# ---------------------------------------------------------------------------------------------------------
# Table 7 thresholds
# ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Threshold:
    """Table 7 row: half-open percentage intervals ``[lo, hi)`` per category (the one ending at 100 is closed)."""

    metric: str
    intervals: dict[Category, tuple[float, float]]
    higher_is_better: bool

    def classify(self, value: float) -> Category:
        """Category of a percentage in [0, 100]."""
        v = float(value)
        if not 0.0 <= v <= 100.0 or math.isnan(v):
            raise ValueError(f"{self.metric}: {value} is not a percentage in [0, 100]")
        for cat, (lo, hi) in self.intervals.items():
            if lo <= v < hi or (v == hi == 100.0):
                return cat
        raise ValueError(f"{self.metric}: {value} falls in no Table 7 interval")


def _interval(text: str) -> tuple[float, float]:
    t = text.strip()
    if not (t.startswith("[") and t.endswith(")")):
        raise ValueError(f"expected a half-open interval like [0;20), got {text!r}")
    lo, hi = t[1:-1].replace(",", ";").split(";")
    return float(lo), float(hi)


def load_thresholds(path: str | Path | None = None) -> dict[str, Threshold]:
    """Read Table 7 (``published/aee_table7_thresholds.csv``: intervals written ``[lo;hi)``)."""
    if path is None:
        path = published("aee_table7_thresholds")
    frame = pl.read_csv(path, infer_schema=False)
    out = {}
    for row in frame.iter_rows(named=True):
        hib = str(row["higher_is_better"]).strip().lower() == "true"
        out[row["metric"]] = Threshold(row["metric"], {c: _interval(row[c]) for c in CATEGORIES}, hib)
        _check_partition(out[row["metric"]])
    return out


def _check_partition(t: Threshold) -> None:
    """The three intervals must tile [0, 100], in the order the direction implies."""
    spans = sorted(t.intervals.values())
    if spans[0][0] != 0.0 or spans[-1][1] != 100.0 or any(a[1] != b[0] for a, b in itertools.pairwise(spans)):
        raise ValueError(f"{t.metric}: Table 7 intervals {t.intervals} do not tile [0, 100]")
    acc_lo = t.intervals["acceptable"][0]
    if t.higher_is_better != (acc_lo > t.intervals["problematic"][0]):
        raise ValueError(f"{t.metric}: higher_is_better={t.higher_is_better} contradicts the intervals")


def classify(metric: str, value: float, thresholds: Mapping[str, Threshold]) -> Category:
    """Table 7 category of one metric value in percent (``metric`` with or without the ``pct_`` prefix)."""
    return thresholds[metric.removeprefix("pct_")].classify(value)


def classify_scorecard(scorecard: pl.DataFrame, thresholds: Mapping[str, Threshold]) -> pl.DataFrame:
    """Long frame ``engine, metric, value, category`` for the eight metric rows of a Fig 8-style scorecard. A
    value that is undefined (NaN or null: no answer of that engine defines the metric) has no category and no
    row."""
    engines = [c for c in scorecard.columns if c != "metric"]
    rows = []
    for row in scorecard.iter_rows(named=True):
        key = row["metric"].removeprefix("pct_")
        if key not in thresholds:
            continue
        for e in engines:
            if row[e] is None or math.isnan(float(row[e])):
                continue
            rows.append({"engine": e, "metric": key, "value": float(row[e]),
                         "category": classify(key, row[e], thresholds)})
    return pl.DataFrame(rows, schema={"engine": pl.String, "metric": pl.String, "value": pl.Float64,
                                      "category": pl.String})


def category_counts(classified: pl.DataFrame) -> pl.DataFrame:
    """Per engine, how many of the eight metrics fall in each category (the summary row of Fig 8)."""
    engines = list(dict.fromkeys(classified["engine"].to_list()))
    rows = []
    for e in engines:
        cats = classified.filter(pl.col("engine") == e)["category"].to_list()
        rows.append({"engine": e} | {str(c): cats.count(c) for c in CATEGORIES})
    return pl.DataFrame(rows)


def scorecard_matrix(classified: pl.DataFrame) -> tuple[np.ndarray, list[list[str]], list[str], list[str]]:
    """``(values, categories, metrics, engines)`` arrays of :func:`classify_scorecard` output, metrics in
    Fig 8 order, for ``plotting.scorecard``."""
    engines = list(dict.fromkeys(classified["engine"].to_list()))
    metrics = [k for k in METRICS if k in set(classified["metric"].to_list())]
    look = {(r["metric"], r["engine"]): r for r in classified.iter_rows(named=True)}
    values = np.array([[look[(k, e)]["value"] for e in engines] for k in metrics])
    cats = [[look[(k, e)]["category"] for e in engines] for k in metrics]
    return values, cats, metrics, engines


# ---------------------------------------------------------------------------------------------------------
# Table 2: sources displayed vs cited
# ---------------------------------------------------------------------------------------------------------


def table2_cited_share(table2: pl.DataFrame) -> pl.DataFrame:
    """Share of displayed sources that are cited, mean cited / mean displayed, per engine (Table 2's "( )").

    ``table2`` is ``published/aee_table2_sources.csv``. The paper's percentages are the ratio of the two means
    truncated to a whole percent (2.58 / 5.00 = 51.6% is printed 51%), so ``pct_floor`` is compared with them.
    """
    means = table2.filter(pl.col("statistic") == "mean")
    return means.select(
        "engine",
        "displayed",
        "cited",
        (100 * pl.col("cited") / pl.col("displayed")).alias("pct_cited"),
        (100 * pl.col("cited") / pl.col("displayed") + 1e-9).floor().cast(pl.Int64).alias("pct_floor"),
        pl.col("cited_pct_reported"),
    )


def bootstrap_scorecard(metrics: pl.DataFrame, *, rounds: int = 1000, seed: int = 0, level: float = 0.95,
                        group: str = "engine", convention: Convention = DEFAULT_CONVENTION) -> pl.DataFrame:
    """Long frame ``engine, metric, value, lo, hi, n_answers, n_undefined``: per engine and metric the percentage
    (100 × mean of the defined per-answer values) and its percentile bootstrap interval over answers.

    ``metrics`` has one row per answer with a ``group`` column and the :data:`METRICS` columns (fractions in
    [0, 1], NaN when undefined), as from :func:`.batch.batch_metrics`. All metrics of an engine share the same
    resampled answer sets (one index matrix of shape ``rounds × n_answers``). ``convention`` says how the
    per-answer metrics were computed and is checked (:func:`check_metrics_convention`); ``n_undefined`` counts the
    answers skipped for each metric.
    """
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    check_metrics_convention(metrics, convention)
    rng = np.random.default_rng(seed)
    alpha = (1 - level) / 2
    rows = []
    for engine in dict.fromkeys(metrics[group].to_list()):
        values = metrics.filter(pl.col(group) == engine).select(METRICS).to_numpy().astype(float)
        n = values.shape[0]
        idx = rng.integers(0, n, size=(rounds, n))
        finite = np.isfinite(values)
        sums = np.where(finite, values, 0.0)[idx].sum(axis=1)
        counts = finite[idx].sum(axis=1)
        means = np.divide(sums, counts, out=np.full(sums.shape, math.nan), where=counts > 0)
        for k, name in enumerate(METRICS):
            defined = int(finite[:, k].sum())
            point = 100 * float(values[finite[:, k], k].mean()) if defined else math.nan
            boot = means[:, k][np.isfinite(means[:, k])]
            lo, hi = (100 * np.quantile(boot, [alpha, 1 - alpha])) if boot.size else (math.nan, math.nan)
            rows.append({group: engine, "metric": name, "value": point, "lo": float(lo), "hi": float(hi),
                         "n_answers": defined, "n_undefined": n - defined})
    return pl.DataFrame(rows, schema={group: pl.String, "metric": pl.String, "value": pl.Float64, "lo": pl.Float64,
                                      "hi": pl.Float64, "n_answers": pl.Int64, "n_undefined": pl.Int64})


def wide_scorecard(long: pl.DataFrame, group: str = "engine") -> pl.DataFrame:
    """The long :func:`bootstrap_scorecard` frame in the Fig 8 layout (``metric`` = ``pct_<name>``, one column
    per engine), ready for :func:`classify_scorecard`."""
    engines = list(dict.fromkeys(long[group].to_list()))
    look = {(r[group], r["metric"]): r["value"] for r in long.iter_rows(named=True)}
    return pl.DataFrame({"metric": [f"pct_{k}" for k in METRICS],
                         **{e: [look.get((e, k), math.nan) for k in METRICS] for e in engines}})


#: Display names of the three AEE engines, keyed by the lower-cased name without separators, so the
#: published columns (``you_com``), the released records (``YouCom``) and Table 2 (``youchat``) agree.
ENGINE_NAMES = {"youcom": "You.com", "youchat": "You.com", "bingchat": "BingChat", "bingcopilot": "BingChat",
                "perplexity": "Perplexity"}


#: Fig 8a's row labels: the three basic statistics and the eight metrics, in the published table's order.
BASIC_STATISTICS: dict[str, str] = {"number_of_sources": "Number of sources",
                                    "number_of_statements": "Number of statements",
                                    "citations_per_statement": "Citations / statement"}
METRIC_LABELS: dict[str, str] = {"one_sided_answer": "One-sided answer", "overconfident_answer": "Overconfident answer",
                                 "relevant_statements": "Relevant statements", "uncited_sources": "Uncited sources",
                                 "unsupported_statements": "Unsupported statements",
                                 "source_necessity": "Source necessity", "citation_accuracy": "Citation accuracy",
                                 "citation_thoroughness": "Citation thoroughness"}
#: Fig 8a's three groups of metrics (answer text, sources, citations), which its score-card rows summarise.
METRIC_GROUPS: dict[str, tuple[str, ...]] = {
    "Answer text": ("one_sided_answer", "overconfident_answer", "relevant_statements"),
    "Sources": ("uncited_sources", "unsupported_statements", "source_necessity"),
    "Citation": ("citation_accuracy", "citation_thoroughness"),
}


def display_name(engine: str) -> str:
    """The paper's name for an engine key (``you_com``, ``YouCom`` → ``You.com``); unknown keys unchanged."""
    return ENGINE_NAMES.get("".join(ch for ch in engine.lower() if ch.isalnum()), engine)

