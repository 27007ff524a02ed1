"""Fig 8b (answer-confidence distributions per engine and query type) and AE-P (agreement between the LLM
judges and human labels, Pearson r as in §4.2: 0.72 for confidence, 0.62 for factual support).

Human-labels file (CSV, one label a row): ``task`` (``confidence`` or ``support``), ``item_id`` (the answer id
for confidence; ``{answer id}_{source index}_{statement id}`` for support, the support-results key) and
``human`` (confidence 1–5, or a label; support ``full`` / ``partial`` / ``none`` or a number in [0, 1]; several
annotators may each have a row, their values are averaged per item). With an ``annotator`` (or ``annotator_id``)
column, one annotator's second row for an item is refused (naming both lines); an item may have at most
:data:`MAX_ANNOTATORS` rows either way, so a row repeated a thousand times is refused, not averaged as a thousand
annotators. The judge's value is the record's
confidence score (1–5) or the support judgement read as the pipeline reads it (``full`` = 1, else 0).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import polars as pl
from scipy import stats

from analysis_lib.reading import DataValidationError, name_key, quote, read_text

from .records import CONFIDENCE_LABELS, AnswerRecord, scrape_ok

LABEL_TASKS = ("confidence", "support")
_SUPPORT_VALUE = {"full": 1.0, "partial": 0.0, "none": 0.0}


def confidence_distribution(conf: pl.DataFrame) -> pl.DataFrame:
    """``engine, query_type, confidence, n, share``: the share of answers at each level 1–5 (all five levels
    listed, zeros included) per engine and query type; ``conf`` is :func:`.records.confidence_frame` output."""
    groups = conf.select("engine", "query_type").unique(maintain_order=True)
    levels = pl.DataFrame({"confidence": list(range(1, 6))}, schema={"confidence": pl.Int64})
    counts = conf.group_by("engine", "query_type", "confidence").agg(n=pl.len())
    out = (groups.join(levels, how="cross").join(counts, on=["engine", "query_type", "confidence"], how="left")
           .with_columns(pl.col("n").fill_null(0).cast(pl.Int64)))
    return out.with_columns(share=pl.col("n") / pl.col("n").sum().over("engine", "query_type"))


def confidence_summary(conf: pl.DataFrame) -> pl.DataFrame:
    """``engine, query_type, n, strongly, mean``: per engine and query type, and over all its answers
    (``query_type`` ``all``), the answers with a confidence score, the share scored 5 (strongly confident) and the
    mean score (1–5); ``conf`` is :func:`.records.confidence_frame` output."""
    rows = []
    for (engine,), sub in conf.group_by("engine", maintain_order=True):
        parts = [(qt, part) for (qt,), part in sub.group_by("query_type", maintain_order=True)]
        for qt, part in [*parts, ("all", sub)]:
            score = part["confidence"].to_numpy()
            rows.append({"engine": engine, "query_type": qt, "n": part.height,
                         "strongly": float(np.mean(score == 5)), "mean": float(np.mean(score))})
    return pl.DataFrame(rows, schema={"engine": pl.String, "query_type": pl.String, "n": pl.Int64,
                                      "strongly": pl.Float64, "mean": pl.Float64})


def _human_value(task: str, text: str, origin: str) -> float:
    t = text.strip()
    if task == "confidence" and t in CONFIDENCE_LABELS:
        return float(CONFIDENCE_LABELS[t])
    if task == "support" and t in _SUPPORT_VALUE:
        return _SUPPORT_VALUE[t]
    expected = (f"one of {list(CONFIDENCE_LABELS)} or a number in [1, 5]" if task == "confidence"
                else f"one of {list(_SUPPORT_VALUE)} or a number in [0, 1]")
    try:
        v = float(t)
    except ValueError:
        raise DataValidationError(f"{origin}, field 'human': expected {expected} for {task}, got {quote(text)}"
                                  ) from None
    lo, hi = (1.0, 5.0) if task == "confidence" else (0.0, 1.0)
    if not lo <= v <= hi:  # NaN fails too
        raise DataValidationError(f"{origin}, field 'human': expected {expected} for {task}, got {quote(text)}")
    return v


#: Human-labels CSV: one short row per (annotator, item).
MAX_LABELS_BYTES = 64 << 20
LABEL_COLUMNS = ("task", "item_id", "human")
#: Columns that name the annotator of a row (the first one the header has is used).
ANNOTATOR_COLUMNS = ("annotator", "annotator_id")
#: Most label rows one item may have (its annotators): the paper's studies had a handful of annotators per item.
MAX_ANNOTATORS = 50


def read_label_rows(path: str | Path, limit: int = MAX_LABELS_BYTES) -> list[tuple[str, str, float]]:
    """The validated ``(task, item_id, human)`` rows of a human-labels CSV, in file order. The file is read
    through :func:`analysis_lib.reading.read_text` (regular, non-empty, UTF-8, at most ``limit`` bytes) and parsed
    with the standard ``csv`` module: the header must name ``task``, ``item_id`` and ``human`` once each (other columns,
    such as an annotator id, are allowed), every row must have as many fields as the header (blank lines are
    not rows), and a header with no row is refused. Errors name the file, the line and the field."""
    text = read_text(path, "human labels (CSV: task, item_id, human)", "csv", max_bytes=limit)
    reader = csv.reader(io.StringIO(text, newline=""))
    rows: list[tuple[str, str, float]] = []
    try:
        header = next(reader)
        stripped = [name_key(h).lower() for h in header]
        missing = [c for c in LABEL_COLUMNS if c not in stripped]
        twice = sorted({c for c in stripped if stripped.count(c) > 1})
        if missing or twice:
            problem = f"missing column(s) {missing}" if missing else f"column(s) named twice {twice}"
            raise DataValidationError(f"{path}, line 1 (header): {problem}; expected {', '.join(LABEL_COLUMNS)}, "
                                      f"got {quote(', '.join(header))}")
        at = {c: stripped.index(c) for c in LABEL_COLUMNS}
        who = next((stripped.index(c) for c in ANNOTATOR_COLUMNS if c in stripped), None)
        first: dict[tuple[str, ...], int] = {}
        per_item: dict[tuple[str, str], int] = {}
        for fields in reader:
            if not fields:
                continue
            origin = f"{path}, line {reader.line_num}"
            if len(fields) != len(header):
                raise DataValidationError(f"{origin}: expected {len(header)} fields (as the header), got {len(fields)}")
            task, item = fields[at["task"]].strip(), fields[at["item_id"]].strip()
            if task not in LABEL_TASKS:
                raise DataValidationError(f"{origin}, field 'task': expected one of {LABEL_TASKS}, got {quote(task)}")
            if not item:
                raise DataValidationError(f"{origin}, field 'item_id': expected an answer or pair id, got an empty "
                                          "field")
            value = _human_value(task, fields[at["human"]], origin)
            if who is not None:
                key = (task, item, name_key(fields[who]))
                if key in first:
                    raise DataValidationError(
                        f"{origin}, field {stripped[who]!r}: annotator {quote(key[2])} already labelled {task} item "
                        f"{quote(item)} on line {first[key]}; expected one row per item and annotator")
                first[key] = reader.line_num
            per_item[(task, item)] = per_item.get((task, item), 0) + 1
            if per_item[(task, item)] > MAX_ANNOTATORS:
                raise DataValidationError(
                    f"{origin}, field 'item_id': {task} item {quote(item)} has more than {MAX_ANNOTATORS} label rows "
                    "(a row repeated?); expected one row per annotator")
            rows.append((task, item, value))
    except csv.Error as err:
        raise DataValidationError(f"{path}, line {reader.line_num}: unreadable CSV ({quote(str(err))})") from None
    if not rows:
        raise DataValidationError(f"{path}: a header and no label rows; expected at least one row")
    return rows


def load_answer_labels(path: str | Path, limit: int = MAX_LABELS_BYTES) -> pl.DataFrame:
    """Read and validate a human-labels CSV (:func:`read_label_rows`); returns ``task, item_id, human,
    n_annotators`` with one row per labelled item (annotators averaged)."""
    rows = read_label_rows(path, limit)
    frame = pl.DataFrame(rows, schema={"task": pl.String, "item_id": pl.String, "human": pl.Float64}, orient="row")
    return average_annotators(frame)


def average_annotators(frame: pl.DataFrame) -> pl.DataFrame:
    """One row per labelled item from one row per (annotator, item): ``task, item_id, human`` (the annotators'
    mean) and ``n_annotators``, the layout :func:`load_answer_labels` returns and :func:`judge_agreement` reads."""
    return frame.group_by("task", "item_id", maintain_order=True).agg(pl.col("human").mean(), n_annotators=pl.len())


def judge_values(records: Sequence[AnswerRecord], support: pl.DataFrame | None = None) -> pl.DataFrame:
    """``task, item_id, judge``: the LLM judges' confidence per answer and support per judged pair (from the
    support-results frame, else from the records' ``supporting_sources`` of core statements and kept sources)."""
    rows = [{"task": "confidence", "item_id": r.id, "judge": float(r.confidence)} for r in records
            if r.confidence is not None]
    if support is not None:
        rows += [{"task": "support", "item_id": vid, "judge": _SUPPORT_VALUE[lab]}
                 for vid, lab in support.select("verif_id", "support").iter_rows()]
    else:
        for r in records:
            for st in r.statements or ():
                if st.core and st.supporting_sources is not None:
                    rows += [{"task": "support", "item_id": f"{r.id}_{s}_{st.id}",
                              "judge": float(s in st.supporting_sources)}
                             for s in r.listed() if scrape_ok(r.contents[s - 1])]
    return pl.DataFrame(rows, schema={"task": pl.String, "item_id": pl.String, "judge": pl.Float64})


def judge_agreement(labels: pl.DataFrame, judged: pl.DataFrame, level: float = 0.95) -> pl.DataFrame:
    """Per task: ``n`` labelled items the judge also scored, ``n_unmatched`` labelled items it did not, Pearson
    ``r`` (scipy.stats.pearsonr) with its Fisher-z confidence interval ``lo, hi`` and ``p_value``."""
    rows = []
    for task in LABEL_TASKS:
        lab = labels.filter(pl.col("task") == task)
        if lab.height == 0:
            continue
        both = lab.join(judged.filter(pl.col("task") == task), on=["task", "item_id"], how="inner")
        row = {"task": task, "n": both.height, "n_unmatched": lab.height - both.height,
               "r": np.nan, "lo": np.nan, "hi": np.nan, "p_value": np.nan}
        h, j = both["human"].to_numpy(), both["judge"].to_numpy()
        if both.height >= 3 and np.ptp(h) > 0 and np.ptp(j) > 0:
            res = stats.pearsonr(h, j)
            ci = res.confidence_interval(level)
            row.update(r=float(res.statistic), lo=float(ci.low), hi=float(ci.high), p_value=float(res.pvalue))
        rows.append(row)
    return pl.DataFrame(rows, schema={"task": pl.String, "n": pl.Int64, "n_unmatched": pl.Int64, "r": pl.Float64,
                                      "lo": pl.Float64, "hi": pl.Float64, "p_value": pl.Float64})
