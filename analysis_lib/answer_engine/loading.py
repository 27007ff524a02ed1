"""The chapter's one loader: user-supplied answer records when a path is given, the answer simulator otherwise."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl

from analysis_lib.fetch import published

from .batch import batch_metrics, pack_answers
from .metrics import NecessityMethod
from .records import (
    AnswerRecord,
    ConvertedAnswers,
    ScrapeRule,
    load_answer_records,
    load_support_results,
    parse_records,
    records_to_answers,
)
from .simulate import SimulatedAnswers, simulate_answers


@dataclass(frozen=True)
class AnswerData:
    """Records, their conversion to matrices, and where they came from (``kind``: ``"real"`` or
    ``"simulated"``; ``simulation`` holds the planted profiles on the simulator)."""

    records: list[AnswerRecord]
    converted: ConvertedAnswers
    kind: str
    detail: str
    support: pl.DataFrame | None = None
    simulation: SimulatedAnswers | None = None

    def metrics(self, necessity: NecessityMethod = "set_cover") -> pl.DataFrame:
        """Per-answer metrics (fractions) with ``id, engine, query_type`` columns, vectorised."""
        meta = self.converted.meta
        m = batch_metrics(pack_answers(self.converted.answers, meta["debate"].to_list()), necessity)
        return pl.concat([meta.select("id", "engine", "query_type"), m], how="horizontal")


def load_answers(answer_records: str | Path = "", *, support_results: str | Path | None = None, seed: int = 0,
                 scrape_rule: ScrapeRule = "nonempty") -> AnswerData:
    """Answer records from ``answer_records`` (a JSON file in the released layout; its sibling
    ``<name>_support_results.jsonl`` is read when present and ``support_results`` is not given), or, when the
    path is empty, simulated answers calibrated on the published Fig 8 scorecard (:mod:`.simulate`)."""
    if str(answer_records):
        path = Path(answer_records)
        records = load_answer_records(path)
        sibling = path.with_name(path.stem + "_support_results.jsonl")
        sup_path = Path(support_results) if support_results else (sibling if sibling.exists() else None)
        support = load_support_results(sup_path) if sup_path else None
        conv = records_to_answers(records, support, scrape_rule=scrape_rule)
        detail = (f"{len(records):,} answer records from `{path.name}`"
                  + (f", support judgements from `{sup_path.name}`" if sup_path else "") + f". {conv.summary()}.")
        return AnswerData(records, conv, "real", detail, support)
    card = pl.read_csv(published("aee_figure8_scorecard"))
    sim = simulate_answers(card, seed=seed)
    records = parse_records(sim.records, "answer simulator")
    conv = records_to_answers(records)
    detail = (f"{len(records):,} simulated answers (3 engines × 303 queries) whose citation, support, stance and "
              f"confidence behaviour is planted from the published Fig 8 values; no real answer is used. "
              f"{conv.summary()}.")
    return AnswerData(records, conv, "simulated", detail, None, sim)
