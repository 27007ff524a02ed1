"""The one loader of answer data (:func:`load_answers`): user-supplied answer records when a path is given,
the answer simulator otherwise."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from analysis_lib import fetch, paths
from analysis_lib.fetch import published
from analysis_lib.llm import LLMClient, RunStats
from analysis_lib.reading import read_text

from .batch import batch_metrics, pack_answers
from .conventions import CONVENTIONS, DEFAULT_CONVENTION, SOURCE_METRICS, Convention, check_convention
from .metrics import NecessityMethod
from .pipeline import PAPER_MODEL, JudgeReport, is_charged, is_core, judge_records
from .records import (
    MAX_SUPPORT_BYTES,
    AnswerRecord,
    ConvertedAnswers,
    ScrapeRule,
    load_support_results,
    merge_support,
    parse_records,
    read_answer_json,
    records_to_answers,
)
from .scorecard import engine_scorecard
from .simulate.answers import SimulatedAnswers, simulate_answers


@dataclass(frozen=True)
class AnswerData:
    """Records, their conversion to matrices, and where they came from (``kind``: ``"real"`` or
    ``"simulated"``; ``simulation`` holds the planted profiles on the simulator). ``convention`` is the one the
    records were converted under (:mod:`.conventions`); :meth:`metrics` uses it. ``support_file``: the name of the
    support judgements read beside the records (empty: none); ``judging`` and ``llm_stats``: what this load judged
    through the LLM layer and what it sent (None: nothing judged)."""

    records: list[AnswerRecord]
    converted: ConvertedAnswers
    kind: str
    support: pl.DataFrame | None = None
    simulation: SimulatedAnswers | None = None
    judging: JudgeReport | None = None
    convention: Convention = DEFAULT_CONVENTION
    support_file: str = ""
    llm_stats: RunStats | None = None

    def metrics(self, necessity: NecessityMethod | None = None) -> pl.DataFrame:
        """Per-answer metrics (fractions) under :attr:`convention` with ``id, engine, query_type`` columns,
        vectorised; ``necessity`` overrides the convention's cover."""
        meta = self.converted.meta
        m = batch_metrics(pack_answers(self.converted.answers, meta["debate"].to_list()), necessity,
                          convention=self.convention)
        return pl.concat([meta.select("id", "engine", "query_type"), m], how="horizontal")

    def convention_comparison(self) -> pl.DataFrame:
        """``engine, metric, released, paper, difference``: each engine's percentage of the five source and
        citation metrics with the records converted and scored under each convention (:mod:`.conventions`);
        ``difference`` = released − paper."""
        cards = {}
        for conv in CONVENTIONS:
            c = records_to_answers(self.records, self.support, convention=conv)
            m = batch_metrics(pack_answers(c.answers, c.meta["debate"].to_list()), convention=conv)
            cards[conv] = engine_scorecard(m.with_columns(engine=c.meta["engine"]), convention=conv)
        look = {conv: {r["metric"].removeprefix("pct_"): r for r in card.iter_rows(named=True)}
                for conv, card in cards.items()}
        rows = [{"engine": e, "metric": k, **{conv: look[conv][k][e] for conv in CONVENTIONS}}
                for e in cards[DEFAULT_CONVENTION].columns[1:] for k in SOURCE_METRICS]
        frame = pl.DataFrame(rows, schema={"engine": pl.String, "metric": pl.String, "released": pl.Float64,
                                           "paper": pl.Float64})
        return frame.with_columns(difference=pl.col("released") - pl.col("paper"))


def _unjudged(raw: list) -> bool:
    """Does some (validated) raw record still lack a judging step's result?"""
    return any("core_statements" not in r or r.get("confidence_score") is None
               or (is_charged(r) and any(is_core(s) and "opinion_balance" not in s for s in r["core_statements"]))
               for r in raw)


def sibling_support_path(answer_records: str | Path) -> Path:
    """Where a user's own support judgements for ``answer_records`` are looked for by default:
    ``<name>_support_results.jsonl`` beside it (read only, never written)."""
    path = Path(answer_records)
    return path.with_name(path.stem + "_support_results.jsonl")


def judged_support_path(answers_text: str, support_text: str, model: str, cache_dir: str | Path | None = None) -> Path:
    """Where the judging step appends the support judgements of one input: under the build's cache
    (``cache_dir``, else :func:`analysis_lib.paths.cache_dir`), in ``answer_engine/support-<key>.jsonl`` keyed by the
    sha256 of the answers, the user's support judgements and the judge model, never beside the user's files."""
    key = hashlib.sha256("\0".join((answers_text, support_text, model)).encode("utf-8")).hexdigest()[:20]
    base = Path(cache_dir) if cache_dir is not None else paths.cache_dir()
    return base / "answer_engine" / f"support-{key}.jsonl"


def load_answers(answer_records: str | Path = "", *, support_results: str | Path | None = None, seed: int = 0,
                 convention: Convention = DEFAULT_CONVENTION, scrape_rule: ScrapeRule | None = None,
                 cache_dir: str | Path | None = None) -> AnswerData:
    """Answer records from ``answer_records`` (a JSON file in the released layout, validated:
    :func:`.records.load_answer_records`), or, when the path is empty, simulated answers calibrated on the
    published Fig 8 scorecard (:mod:`.simulate`).

    The user's support judgements are read from ``support_results``, by default
    :func:`sibling_support_path` when it is a regular file (a dangling link there is ignored). Records not yet
    judged are judged with :func:`.pipeline.judge_records` through the LLM layer (endpoint from the
    environment, LLM cache under ``cache_dir``); its judgements go to :func:`judged_support_path`, under the
    build's cache only. Without an endpoint or a cached reply the records stay unjudged and are excluded (and
    counted) by the conversion, and ``judging.not_run_reason`` says why.

    ``convention`` (:mod:`.conventions`, default ``"released"``) and ``scrape_rule`` (default: the convention's)
    govern the conversion; the judging step asks about every source with non-blank text (rule ``"nonempty"``
    unless ``scrape_rule`` is given), as the released ``populate_scores.py`` judges every scraped source.
    """
    check_convention(convention)
    if str(answer_records).strip():
        path = Path(answer_records)
        raw = read_answer_json(path)
        records = parse_records(raw, str(path))  # validate before any request
        sup_path = Path(support_results) if support_results else sibling_support_path(path)
        given = load_support_results(sup_path) if (support_results or sup_path.is_file()) else None
        support, judging, stats = given, None, None
        if _unjudged(raw):
            client = LLMClient(cache_dir=Path(cache_dir) / "llm" if cache_dir else None)
            support_text = (read_text(sup_path, "support results", "jsonl", max_bytes=MAX_SUPPORT_BYTES)
                            if given is not None else "")
            out = judged_support_path(json.dumps(raw, sort_keys=True), support_text,
                                      client.paper_model(PAPER_MODEL), cache_dir)
            raw, judging = judge_records(raw, client, out, known=given, scrape_rule=scrape_rule or "nonempty")
            records = parse_records(raw, str(path))
            support = merge_support(given, load_support_results(out) if out.is_file() else None)
            stats = client.total_stats
        conv = records_to_answers(records, support, convention=convention, scrape_rule=scrape_rule)
        return AnswerData(records, conv, fetch.provenance(path), support, judging=judging, convention=convention,
                          support_file=sup_path.name if given is not None else "",
                          llm_stats=stats)
    card = pl.read_csv(published("aee_figure8_scorecard"))
    sim = simulate_answers(card, seed=seed)
    records = parse_records(sim.records, "answer simulator")
    conv = records_to_answers(records, convention=convention, scrape_rule=scrape_rule)
    return AnswerData(records, conv, "simulated", None, sim, convention=convention)
