"""The LLM judging steps of the answer-engine evaluation (§4.2), through the project's LLM layer.

Each step reads and writes answer records in the released layout (:mod:`.records`), so a judged file is a
valid input of the loader and of the released notebook alike:

1. **statements** (``ae_statements`` prompt): the answer split into statements with the query-relevance flag
   ``core``; each statement gets a deterministic id ``{answer id}-{k}`` and its citations read from its bracket
   markers (:func:`.records.parse_citations`);
2. **factual support** (``ae_support``): one request per (core statement, scraped source) pair, appended to the
   support-results JSONL keyed ``{answer id}_{source index}_{statement id}`` as each reply arrives, so an
   interrupted run resumes where it stopped (pairs already in the file, and statements that already carry
   ``supporting_sources``, are never asked again); then each statement whose pairs are all judged gets
   ``supporting_sources``, the sources judged ``full``;
3. **confidence** (``ae_confidence``): five labels, mapped to 1–5 by the loader;
4. **stance** (``ae_stance``, debate answers only): ``opinion_balance`` agree / disagree / neutral per core
   statement.

Steps skip records (or pairs) that already carry their result. Failures are counted per step and leave the
record without that result (it is then excluded, and counted, by :func:`.records.records_to_answers`); with no
endpoint and no cached reply every request is "not run". Source text longer than ``max_source_chars`` is cut
(and counted) before it is sent.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from analysis_lib.llm import LLMClient, Step, Task, fill, load_prompt

from .records import (
    CONFIDENCE_LABELS,
    N_SOURCE_SLOTS,
    ScrapeRule,
    as_bool,
    load_support_results,
    merge_support,
    parse_citations,
    scrape_ok,
)

PAPER_MODEL = "gpt-4o"  # §4.2: the judges are GPT-4o

STATEMENTS_SCHEMA = {
    "type": "object",
    "properties": {"sentences": {"type": "array", "items": {
        "type": "object",
        "properties": {"sentence": {"type": "string"}, "core": {"type": "string", "enum": ["0", "1"]}},
        "required": ["sentence", "core"]}}},
    "required": ["sentences"],
}
SUPPORT_SCHEMA = {"type": "object", "properties": {"support": {"type": "string", "enum": ["full", "partial", "none"]}},
                  "required": ["support"]}
CONFIDENCE_SCHEMA = {"type": "object",
                     "properties": {"confidence": {"type": "string", "enum": list(CONFIDENCE_LABELS)}},
                     "required": ["confidence"]}
_INTS = {"type": "array", "items": {"type": "integer"}}
STANCE_SCHEMA = {"type": "object", "properties": {"agree_statements": _INTS, "disagree_statements": _INTS,
                                                  "neutral_statements": _INTS},
                 "required": ["agree_statements", "disagree_statements", "neutral_statements"]}


def _user(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def statements_task() -> Task:
    t = load_prompt("ae_statements")
    return Task("ae_statements", STATEMENTS_SCHEMA,
                lambda r: _user(fill(t, question=r["Question"], answer=r["Output"])),
                params={"temperature": 0.0, "max_tokens": 4000})


def support_task() -> Task:
    t = load_prompt("ae_support")
    return Task("ae_support", SUPPORT_SCHEMA,
                lambda p: _user(fill(t, document=p["document"], statement=p["statement"])),
                params={"temperature": 0.0, "max_tokens": 50})


def confidence_task() -> Task:
    t = load_prompt("ae_confidence")
    return Task("ae_confidence", CONFIDENCE_SCHEMA, lambda r: _user(fill(t, query=r["Question"], answer=r["Output"])),
                params={"temperature": 0.0, "max_tokens": 50})


def stance_task() -> Task:
    t = load_prompt("ae_stance")

    def build(item: Mapping[str, Any]) -> list[dict[str, str]]:
        numbered = "\n".join(f"[{k + 1}] {s}" for k, s in enumerate(item["statements"]))
        return _user(fill(t, query=item["query"], statements=numbered))

    return Task("ae_stance", STANCE_SCHEMA, build, params={"temperature": 0.0, "max_tokens": 1000})


@dataclass
class JudgeReport:
    """Per step: items sent, ok, failed, not run (and the LLM layer's one-line summaries)."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    clipped_sources: int = 0
    #: the LLM layer's reason when some request was not run (no endpoint, offline, budget, pending batch)
    not_run_reason: str = ""

    def add(self, step: str, frame: pl.DataFrame, client: LLMClient) -> None:
        counts = frame["status"].value_counts() if frame.height else None
        get = ((lambda s: int(counts.filter(pl.col("status") == s)["count"].sum())) if counts is not None
               else (lambda s: 0))
        self.rows.append({"step": step, "items": frame.height, "ok": get("ok"), "failed": get("failed"),
                          "not_run": get("not run"), "summary": client.last_stats.summary()})
        if get("not run") and not self.not_run_reason:  # the items' own reason (budget, run deadline, ...)
            reasons = frame.filter(pl.col("status") == "not run")["error"].drop_nulls()
            self.not_run_reason = reasons[0] if reasons.len() else client.not_run_reason()

    @property
    def not_run(self) -> int:
        """Items of all steps that were not run."""
        return sum(int(r["not_run"]) for r in self.rows)

    def frame(self) -> pl.DataFrame:
        return pl.DataFrame(self.rows, schema={"step": pl.String, "items": pl.Int64, "ok": pl.Int64, "failed": pl.Int64,
                                               "not_run": pl.Int64, "summary": pl.String})


def is_core(statement: Mapping[str, Any]) -> bool:
    """A raw statement's ``core`` flag read as the records parser reads it (``"1"``, 1, true)."""
    return as_bool(statement.get("core")) is True


def is_charged(record: Mapping[str, Any]) -> bool:
    """A raw record's ``is_charged`` flag read as the records parser reads it (``"false"`` is false)."""
    return as_bool(record.get("is_charged")) is True


def _kept_sources(rec: Mapping[str, Any], rule: ScrapeRule) -> list[int]:
    return [i for i in range(1, N_SOURCE_SLOTS + 1) if rec.get(f"S{i}") and scrape_ok(rec.get(f"S{i}_content"), rule)]


def judge_steps(records: list[dict[str, Any]], *, scrape_rule: ScrapeRule = "nonempty",
                model: str = PAPER_MODEL) -> list[Step]:
    """The requests :func:`judge_records` sends (AE-P, AE-F8b): statements and confidence exactly (one per record
    still without them); factual support and stance bounded by what the statements step will return, unless the
    records already carry their core statements (then: support for each kept source and core statement, stance
    for each charged record)."""
    todo = [r for r in records if "core_statements" not in r]
    core = {str(r["id"]): [s for s in r.get("core_statements", []) if is_core(s)] for r in records}
    support = sum(len(_kept_sources(r, scrape_rule)) * len(core[str(r["id"])]) for r in records)
    stance = sum(1 for r in records if is_charged(r) and core[str(r["id"])])
    later = f"; and more for the {len(todo):,} records whose statements come from the statements step" if todo else ""
    return [Step("AE-F8b", statements_task(), todo, model),
            Step("AE-F8b", support_task(), (), model, at_most=support, note=f"judged statements{later}"),
            Step("AE-F8b", confidence_task(), [r for r in records if r.get("confidence_score") is None], model),
            Step("AE-F8b", stance_task(), (), model, at_most=stance, note=f"charged records{later}")]


def judge_records(records: list[dict[str, Any]], client: LLMClient, support_path: str | Path, *,
                  known: pl.DataFrame | None = None, max_source_chars: int = 30_000,
                  scrape_rule: ScrapeRule = "nonempty",
                  model: str | None = None) -> tuple[list[dict[str, Any]], JudgeReport]:
    """Run the four judging steps over raw records (JSON objects of the released layout, already validated by
    :func:`.records.parse_records`); returns judged copies and the per-step report. Factual-support results are
    appended to ``support_path`` (JSONL; created at the first judged pair, never when nothing was judged);
    pairs already in ``support_path`` or in ``known`` (a :func:`.records.load_support_results` frame, such as
    the user's own support file) are not asked again."""
    model = model or client.paper_model(PAPER_MODEL)
    out = [dict(r) for r in records]
    report = JudgeReport()

    todo = [r for r in out if "core_statements" not in r]
    res = client.run(statements_task(), todo, model=model, desc="statements")
    report.add("statements", res, client)
    for r, status, sentences in zip(todo, res["status"], res["sentences"]):
        if status == "ok":
            r["core_statements"] = [{"id": f"{r['id']}-{k + 1}", "sentence": s["sentence"], "core": s["core"],
                                     "citations": list(parse_citations(s["sentence"]))}
                                    for k, s in enumerate(sentences)]

    support_path = Path(support_path)
    previous = merge_support(known, load_support_results(support_path) if support_path.is_file() else None)
    done = set() if previous is None else set(previous["verif_id"])
    pairs = []
    for r in out:
        for src in _kept_sources(r, scrape_rule):
            text = r[f"S{src}_content"]
            report.clipped_sources += len(text) > max_source_chars
            for st in r.get("core_statements", []):
                vid = f"{r['id']}_{src}_{st['id']}"
                if is_core(st) and "supporting_sources" not in st and vid not in done:
                    pairs.append({"verif_id": vid, "sample_id": str(r["id"]), "source_idx": src,
                                  "core_statement_id": st["id"], "document": text[:max_source_chars],
                                  "statement": st["sentence"]})
    sink: list[Any] = []  # the open support file, once a pair is judged

    def append(i: int, outcome: Mapping[str, Any]) -> None:
        if outcome["status"] == "ok":
            if not sink:
                support_path.parent.mkdir(parents=True, exist_ok=True)
                sink.append(support_path.open("a", encoding="utf-8"))
            p = pairs[i]
            sink[0].write(json.dumps({"verif_id": p["verif_id"], "sample_id": p["sample_id"],
                                      "source_idx": p["source_idx"], "core_statement_id": p["core_statement_id"],
                                      "support": outcome["value"]["support"]}) + "\n")
            sink[0].flush()

    try:
        res = client.run(support_task(), pairs, model=model, desc="factual support", on_result=append)
    finally:
        for fh in sink:
            fh.close()
    report.add("factual support", res, client)
    judged = merge_support(previous, load_support_results(support_path) if sink else None)
    if judged is not None:
        seen = set(zip(judged["sample_id"], judged["source_idx"], judged["core_statement_id"]))
        full_rows = judged.filter(pl.col("support") == "full")
        full = set(zip(full_rows["sample_id"], full_rows["source_idx"], full_rows["core_statement_id"]))
        for r in out:
            kept = _kept_sources(r, scrape_rule)
            for st in r.get("core_statements", []):
                complete = all((str(r["id"]), s, str(st["id"])) in seen for s in kept)  # else resumed later
                if is_core(st) and "supporting_sources" not in st and complete:
                    st["supporting_sources"] = [s for s in kept if (str(r["id"]), s, str(st["id"])) in full]

    todo = [r for r in out if r.get("confidence_score") is None]
    res = client.run(confidence_task(), todo, model=model, desc="confidence")
    report.add("confidence", res, client)
    for r, status, label in zip(todo, res["status"], res["confidence"]):
        if status == "ok":
            r["confidence_score"] = label

    todo = [r for r in out if is_charged(r) and any(is_core(s) and "opinion_balance" not in s
                                                    for s in r.get("core_statements", []))]
    items = [{"query": r["Question"], "statements": [s["sentence"] for s in r["core_statements"] if is_core(s)]}
             for r in todo]
    res = client.run(stance_task(), items, model=model, desc="stance")
    report.add("stance", res, client)
    for r, row in zip(todo, res.iter_rows(named=True)):
        if row["status"] != "ok":
            continue
        core = [s for s in r["core_statements"] if is_core(s)]
        for k, st in enumerate(core, start=1):
            st["opinion_balance"] = ("agree" if k in row["agree_statements"] else
                                     "disagree" if k in row["disagree_statements"] else "neutral")
    return out, report
