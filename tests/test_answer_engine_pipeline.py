"""The judging pipeline end to end against the local chat-completions server, with scripted replies, down to
the eight metrics of a tiny answer set computed by hand."""

from __future__ import annotations

import json
import re

import polars as pl
import pytest
from fake_openai_server import FakeOpenAIServer

from analysis_lib import answer_engine as ae
from analysis_lib import llm
from analysis_lib.answer_engine import metrics as ae_metrics
from analysis_lib.llm import LLMClient


def _records() -> list[dict]:
    empty = {f"S{i}": "" for i in range(1, 11)}
    a = {**empty, "id": "a", "Question": "Why should zoos exist?", "answer_engine": "E1", "is_charged": True,
         "Output": "Great question! Zoos breed endangered leopards [1]. Zoos fund rangers [2]. "
                   "Critics say enclosures are small [1].",
         "S1": "https://one.example",
         "S1_content": "Title: One\nZoos breed endangered leopards. The enclosures are large.",
         "S2": "https://two.example", "S2_content": "Title: Two\nZoos fund rangers. Zoos breed endangered leopards.",
         "S3": "https://three.example", "S3_content": ""}  # scrape failed: dropped
    b = {**empty, "id": "b", "Question": "Which models are used in computational hydrology?", "answer_engine": "E2",
         "is_charged": False, "Output": "Hydrology models include SWAT [1]. They are calibrated on gauges [1, 2].",
         "S1": "https://h.example", "S1_content": "Title: H\nHydrology models include SWAT and HBV.",
         "S2": "https://g.example", "S2_content": "Title: G\nThey are calibrated on gauges."}
    return [a, b]


def _kind(prompt: str) -> str:
    for key, kind in (("Split the answer into its statements", "statements"), ("factually supports", "support"),
                      ("Rate how confident", "confidence"), ("Sort every statement", "stance")):
        if key in prompt:
            return kind
    raise AssertionError("unknown prompt")


def _bare(statement: str) -> str:
    return re.sub(r"\s*\[[\d,\s]+\]", "", statement).strip().rstrip(".").lower()


def responder(payload: dict) -> str:
    prompt = payload["messages"][-1]["content"]
    kind = _kind(prompt)
    if kind == "statements":
        answer = prompt.split("```")[1].strip()
        sentences = re.split(r"(?<=[.!?])\s+", answer)
        return json.dumps({"sentences": [{"sentence": s, "core": "0" if s.startswith("Great") else "1"}
                                         for s in sentences]})
    if kind == "support":
        document = prompt.split("```")[1].lower()
        statement = prompt.split("Statement:\n")[1].split("\n\nReply")[0]
        return json.dumps({"support": "full" if _bare(statement) in document else "none"})
    if kind == "confidence":
        return json.dumps({"confidence": "Strongly Confident" if "zoos" in prompt else "Neutral"})
    numbered = re.findall(r"^\[(\d+)\] (.*)$", prompt, flags=re.MULTILINE)
    agree = [int(k) for k, s in numbered if "Critics" not in s]
    return json.dumps({"agree_statements": agree,
                       "disagree_statements": [int(k) for k, s in numbered if "Critics" in s],
                       "neutral_statements": []})


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for name in llm.settings.ENV_VARS:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def server():
    with FakeOpenAIServer(responder) as srv:
        yield srv


def _client(server, tmp_path) -> LLMClient:
    return LLMClient(base_url=server.base_url, model="fake", cache_dir=tmp_path / "llm", progress=False,
                     backoff_base=0.01, max_concurrency=2)


def _kinds(server) -> list[str]:
    return [_kind(p["messages"][-1]["content"]) for p in server.requests]


HAND = {  # computed by hand from the records and the scripted judge (see the test's comments); paper convention
    "a": {"relevant_statements": "3/4", "uncited_sources": "0/2", "unsupported_statements": "1/3",
          "source_necessity": "1/2", "citation_accuracy": "2/3", "citation_thoroughness": "2/3",
          "one_sided_answer": 0, "overconfident_answer": 0},
    "b": {"relevant_statements": "2/2", "uncited_sources": "0/2", "unsupported_statements": "0/2",
          "source_necessity": "2/2", "citation_accuracy": "2/3", "citation_thoroughness": "2/2",
          "one_sided_answer": None, "overconfident_answer": None},
}
#: Released convention: the same except a's Uncited Sources, over slots 1..3 (S3 is listed though its scrape
#: failed) with the text's citations {1, 2}; the greedy covers ({2} for a, {1, 2} for b) are minimum here.
HAND_RELEASED = {"a": {**HAND["a"], "uncited_sources": "1/3"}, "b": HAND["b"]}


def test_pipeline_end_to_end_gives_the_hand_computed_metrics(server, tmp_path):
    # a: statements "Great question!" (filler), s2 leopards [1], s3 rangers [2], s4 critics [1]; sources 1, 2 kept.
    #    support: s2 ← {1, 2}, s3 ← {2}, s4 ← none. Cover {2}; citations (s2,1) ok, (s3,2) ok, (s4,1) not.
    # b: b-1 SWAT [1] ← {1}; b-2 gauges [1, 2] ← {2}. Cover {1, 2}; citations (b1,1), (b2,2) ok, (b2,1) not.
    support_path = tmp_path / "answers_support_results.jsonl"
    judged, report = ae.judge_records(_records(), _client(server, tmp_path), support_path)
    rep = report.frame()
    assert rep["step"].to_list() == ["statements", "factual support", "confidence", "stance"]
    assert rep["items"].to_list() == [2, 10, 2, 1] and rep["failed"].sum() == 0
    recs = ae.parse_records(judged, "judged")
    for convention, hand in (("paper", HAND), ("released", HAND_RELEASED)):
        conv = ae.records_to_answers(recs, ae.records.load_support_results(support_path), convention=convention)
        assert conv.meta["n_dropped_sources"].to_list() == [1, 0]
        for rid, answer in zip(conv.meta["id"], conv.answers):
            got = {k: (str(v) if isinstance(v, ae_metrics.Ratio) else v)
                   for k, v in ae.answer_metrics(answer, convention=convention).items()}
            assert got == hand[rid], (convention, rid)
    assert [r.confidence for r in recs] == [5, 3]
    # the released layout's own support fields agree with the JSONL
    conv2 = ae.records_to_answers(recs)
    assert all((x.support == y.support).all() for x, y in zip(conv.answers, conv2.answers))


def test_pipeline_resumes_from_the_support_file_and_the_cache(server, tmp_path):
    support_path = tmp_path / "s.jsonl"
    support_path.write_text(
        json.dumps({"verif_id": "a_1_a-2", "sample_id": "a", "source_idx": 1, "core_statement_id": "a-2",
                    "support": "full"}) + "\n"
        + json.dumps({"verif_id": "b_2_b-2", "sample_id": "b", "source_idx": 2, "core_statement_id": "b-2",
                      "support": "full"}) + "\n")
    judged, _ = ae.judge_records(_records(), _client(server, tmp_path), support_path)
    assert _kinds(server).count("support") == 8  # 10 pairs, 2 already judged
    n = len(server.requests)
    again, report = ae.judge_records(judged, _client(server, tmp_path), support_path)
    assert len(server.requests) == n and report.frame()["items"].sum() == 0  # nothing left to judge
    assert again == judged
    # a fresh run on the raw records is served from the LLM cache and the support file
    ae.judge_records(_records(), _client(server, tmp_path), support_path)
    assert len(server.requests) == n
    assert len(support_path.read_text().splitlines()) == 10


def test_failures_are_counted_and_leave_the_record_unjudged(server, tmp_path):
    def broken(payload):
        prompt = payload["messages"][-1]["content"]
        if _kind(prompt) == "confidence" and "hydrology" in prompt:
            return "not json"
        return responder(payload)

    server.responder = broken
    client = _client(server, tmp_path)
    client.max_parse_retries = 0
    judged, report = ae.judge_records(_records(), client, tmp_path / "s.jsonl")
    rep = {r["step"]: r for r in report.frame().iter_rows(named=True)}
    assert (rep["confidence"]["ok"], rep["confidence"]["failed"]) == (1, 1)
    assert "confidence_score" not in judged[1] and judged[0]["confidence_score"] == "Strongly Confident"


def test_without_endpoint_every_step_is_not_run(tmp_path):
    client = LLMClient(cache_dir=tmp_path / "llm", progress=False)
    judged, report = ae.judge_records(_records(), client, tmp_path / "s.jsonl")
    rep = report.frame()
    assert rep.filter(rep["step"] == "statements")["not_run"].item() == 2
    conv = ae.records_to_answers(ae.parse_records(judged))
    assert conv.excluded["reason"].to_list() == ["not judged (no core_statements)"] * 2


# ------------------------------------------------------------------ issue 38: budgets and undefined metrics


def _paper_engine_records() -> list[dict]:
    a, b = _records()
    return [{**a, "answer_engine": "you_com"}, {**b, "answer_engine": "perplexity"}]


def _section(judged, report, support_path, results_dir):
    """AE-F8 as chapter 09 records it (the published and the recomputed scorecard) and its recomputed section."""
    from analysis_lib.answer_engine.loader import AnswerData
    from analysis_lib.fetch import published
    from bookbuild.papers.answer_engine import f8_recomputed_section, f8_record
    from bookbuild.recorder import Recorder

    recs = ae.parse_records(judged, "judged")
    support = ae.records.load_support_results(support_path) if support_path.is_file() else None
    data = AnswerData(recs, ae.records_to_answers(recs, support), "real", support, judging=report)
    card, thresholds = pl.read_csv(published("aee_figure8_scorecard")), ae.load_thresholds()
    metrics = data.metrics()
    long = ae.bootstrap_scorecard(metrics, rounds=20, seed=0, convention=data.convention)
    rec = Recorder(results_dir, "09_answer_engines", data="real")
    f8 = f8_record(data, ae.classify_scorecard(card, thresholds), metrics, long, thresholds)
    rec.record("AE-F8", f8.result, reason=f8.reason, planted=f8.planted, notes=f8.notes)
    return rec.results, f8_recomputed_section(data, metrics, long, card, thresholds, n_bootstrap=20)


def test_a_metric_no_answer_defines_is_not_run_instead_of_raising(server, tmp_path):
    """Perplexity's only answer is not on a debate question: One-Sided Answer is undefined (NaN) for it, which
    the Table 7 classification refused ("nan is not a percentage", the chapter 09 crash)."""
    support_path = tmp_path / "s.jsonl"
    judged, report = ae.judge_records(_paper_engine_records(), _client(server, tmp_path), support_path)
    results, _ = _section(judged, report, support_path, tmp_path / "results")
    by_quantity = {r.quantity: r for r in results}
    one_sided = by_quantity["Perplexity: % one_sided_answer, recomputed from answers"]
    assert one_sided.ours is None and one_sided.reason == "no answer of this engine defines it"
    # You.com's one-sided answer is defined: 0 of its 1 debate answer (hand count above)
    assert by_quantity["You.com: % one_sided_answer, recomputed from answers"].ours == 0.0
    # Perplexity's categories are counted over the metrics it defines, and say so
    counted = [r for r in results
               if r.quantity.startswith("Perplexity: metrics ") and r.quantity.endswith(", recomputed")]
    assert sum(n.ours for n in counted) == 6  # 8 metrics, one-sided and overconfident undefined
    assert all(n.note == "of the 6 of 8 metrics defined" for n in counted)


def test_a_budget_that_runs_out_part_way_leaves_numbers_not_run_with_the_budget_reason(server, tmp_path):
    from bookbuild import keys

    support_path = tmp_path / "s.jsonl"
    client = _client(server, tmp_path)
    client.max_requests = 4  # the two statement requests, then 2 of the 10 support requests
    judged, report = ae.judge_records(_paper_engine_records(), client, support_path)
    assert report.not_run and report.not_run_reason.startswith("not run: request budget")
    results, sec = _section(judged, report, support_path, tmp_path / "results")
    metric_numbers = [r for r in results if "recomputed" in r.quantity and not r.quantity.startswith("BingChat")]
    assert metric_numbers and all(r.ours is None for r in metric_numbers)
    assert all(r.reason.startswith("request budget") and keys.unfinished_reason(r.reason) for r in metric_numbers)
    assert any(t.caption.startswith("Partial scorecard, not recorded") for t in sec.tables)
