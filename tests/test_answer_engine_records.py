"""Answer records (released layout), support JSONL, records → Answer, vectorised metrics, bootstrap scorecard
and the answer simulator."""

from __future__ import annotations

import json
import math

import numpy as np
import polars as pl
import pytest

from analysis_lib import answer_engine as ae
from analysis_lib.answer_engine import batch as ae_batch
from analysis_lib.answer_engine import records as ae_records
from analysis_lib.answer_engine.simulate import simulate_answers
from analysis_lib.fetch import published
from analysis_lib.reading import DataValidationError


def _record(**over) -> dict:
    rec = {"id": "a1", "Question": "Why should zoos exist?", "Output": "Zoos help [1]. Hi. Conservation [1, 2].",
           "answer_engine": "E", "is_charged": True,
           "S1": "https://a.example", "S1_content": "Title: a\ntext a",
           "S2": "https://b.example", "S2_content": "Title: b\ntext b",
           "S3": "https://c.example", "S3_content": "",  # failed scrape: dropped
           "core_statements": [
               {"id": "s1", "sentence": "Zoos help [1].", "core": "1", "supporting_sources": [1, 2],
                "opinion_balance": "agree"},
               {"id": "s2", "sentence": "Hi.", "core": "0"},
               {"id": "s3", "sentence": "Conservation [1, 2] [3].", "core": "1", "supporting_sources": [],
                "opinion_balance": "disagree"}],
           "confidence_score": "Strongly Confident"}
    for i in range(4, 11):
        rec[f"S{i}"] = ""
    rec.update(over)
    return rec


def test_parse_citations_reads_bracket_groups():
    assert ae_records.parse_citations("A [1]. B [2, 3][10] and [x] [ 4 ]") == (1, 2, 3, 10, 4)
    assert ae_records.parse_citations("no markers") == ()


def test_record_to_matrices_by_hand():
    conv = ae.records_to_answers(ae.parse_records([_record()], "mem"))
    a = conv.answers[0]
    # rows: s1, s2, s3; columns: sources 1, 2 (source 3 failed its scrape and is dropped)
    assert a.citations.tolist() == [[True, False], [False, False], [True, True]]
    assert a.support.tolist() == [[True, True], [False, False], [False, False]]
    assert a.relevant.tolist() == [True, False, True]
    assert a.stance == ("pro", "neutral", "con") and a.confidence == 5
    meta = conv.meta.row(0, named=True)
    assert (meta["n_listed"], meta["n_sources"], meta["n_dropped_sources"], meta["unlisted_citations"]) == (3, 2, 1, 1)
    m = ae.answer_metrics(a)
    assert str(m["citation_accuracy"]) == "1/3" and str(m["citation_thoroughness"]) == "1/2"
    assert str(m["unsupported_statements"]) == "1/2" and str(m["source_necessity"]) == "1/2"
    assert m["one_sided_answer"] == 0


def test_support_jsonl_overrides_and_counts_missing(tmp_path):
    lines = [{"verif_id": "a1_1_s1", "sample_id": "a1", "source_idx": 1, "core_statement_id": "s1", "support": "none"},
             {"sample_id": "a1", "source_idx": 1, "core_statement_id": "s1", "support": "full"},  # later line wins
             {"sample_id": "a1", "source_idx": 2, "core_statement_id": "s3", "support": "partial"}]
    path = tmp_path / "x_support_results.jsonl"
    path.write_text("\n".join(json.dumps(d) for d in lines) + "\n")
    sup = ae.records.load_support_results(path)
    assert sup.height == 2
    conv = ae.records_to_answers(ae.parse_records([_record()]), sup)
    assert conv.answers[0].support.tolist() == [[True, False], [False, False], [False, False]]
    assert conv.meta["missing_support"].to_list() == [2]  # (s1, 2) and (s3, 1) never judged


@pytest.mark.parametrize(("over", "needle"), [
    ({"is_charged": "maybe"}, "field 'is_charged'"),
    ({"S2": 3}, "field 'S2'"),
    ({"confidence_score": "Very"}, "field 'confidence_score'"),
    ({"core_statements": [{"id": "s", "sentence": "x", "core": "yes"}]}, "field 'core_statements[0].core'"),
    ({"core_statements": [{"id": "s", "sentence": "x", "core": "1", "opinion_balance": "pro"}]},
     "core_statements[0].opinion_balance"),
    ({"Output": None}, "field 'Output'"),
])
def test_bad_records_name_record_and_field(over, needle):
    with pytest.raises(DataValidationError) as err:
        ae.parse_records([_record(id="ok"), _record(id="bad", **over)], "answers.json")
    assert "answers.json: record 2 (id 'bad')" in str(err.value) and needle in str(err.value)


def test_bad_files_name_file_and_line(tmp_path):
    p = tmp_path / "a.json"
    p.write_text("[{]")
    with pytest.raises(DataValidationError, match=r"a.json, line 1, column 3: not valid JSON"):
        ae.load_answer_records(p)
    p.write_text(json.dumps([_record(), _record()]))
    with pytest.raises(DataValidationError, match="record 2 .*duplicate of record 1"):
        ae.load_answer_records(p)
    j = tmp_path / "s.jsonl"
    j.write_text(json.dumps({"sample_id": "a", "source_idx": 1, "core_statement_id": "s", "support": "full"}) + "\n"
                 + json.dumps({"sample_id": "a", "source_idx": 1, "core_statement_id": "t", "support": "yes"}) + "\n")
    with pytest.raises(DataValidationError, match=r"s.jsonl, line 2, field 'support'"):
        ae.records.load_support_results(j)


def test_exclusions_are_counted():
    recs = ae.parse_records([_record(id="a"), _record(id="b", core_statements=[]),
                             _record(id="c", S1_content=None, S2_content="You've hit the rate limit")])
    conv = ae.records_to_answers(recs)
    assert conv.meta["id"].to_list() == ["a"]
    assert dict(zip(conv.excluded["id"], conv.excluded["reason"])) == {"b": "no statements", "c": "no source scraped"}


def test_jina_scrape_rule():
    assert ae_records.scrape_ok("text") and not ae_records.scrape_ok("text", "jina")
    assert ae_records.scrape_ok("Title: x", "jina")


# ------------------------------------------------------------------------------------------- vectorised


def _random_answer(rng, m):
    s = int(rng.integers(1, 9))
    return ae.Answer(rng.random(s) < 0.7, rng.random((s, m)) < 0.3, rng.random((s, m)) < 0.35,
                     tuple(rng.choice(["pro", "con", "neutral"], size=s)), int(rng.integers(1, 6)))


@pytest.mark.parametrize("method", ["set_cover", "greedy", "konig"])
def test_batch_metrics_equal_per_answer_metrics(method):
    rng = np.random.default_rng(7)
    answers = [_random_answer(rng, int(rng.integers(1, 9))) for _ in range(300)] + [ae.figure7_example()]
    debate = list(rng.random(len(answers)) < 0.5)
    got = ae.batch_metrics(ae.pack_answers(answers, debate), method)
    ref = ae.metrics.metrics_frame([("e", d, a) for d, a in zip(debate, answers)], method)
    for k in ae.metrics.METRICS:
        assert np.allclose(got[k].to_numpy(), ref[k].to_numpy(), equal_nan=True), k
    if method != "konig":
        assert got["source_necessity"][-1] == pytest.approx(3 / 5)  # Fig 7


def test_min_cover_sizes_closed_cases():
    # statements {0}, {1}, {0,1} on 2 sources need both; a statement supported by every source needs one
    sup = np.array([[0b01, 0b10, 0b11], [0b111, 0, 0], [0, 0, 0]])
    assert ae_batch.min_cover_sizes(sup, np.array([2, 3, 4])).tolist() == [2, 1, 0]


def test_bootstrap_scorecard_interval_and_mean():
    rng = np.random.default_rng(1)
    vals = rng.random(400)
    frame = pl.DataFrame({"engine": ["e"] * 400, **{k: vals for k in ae.metrics.METRICS}})
    frame = frame.with_columns(pl.when(pl.int_range(400) < 40).then(None).otherwise(pl.col("citation_accuracy"))
                               .fill_null(math.nan).alias("citation_accuracy"))
    sc = ae.bootstrap_scorecard(frame, rounds=2000, seed=3, convention="paper")  # per-metric skipping
    row = sc.filter(pl.col("metric") == "relevant_statements").row(0, named=True)
    assert row["value"] == pytest.approx(100 * vals.mean())
    se = 100 * vals.std(ddof=1) / np.sqrt(400)  # normal-theory half width ≈ 1.96 se
    assert row["hi"] - row["lo"] == pytest.approx(2 * 1.96 * se, rel=0.15)
    acc = sc.filter(pl.col("metric") == "citation_accuracy").row(0, named=True)
    assert (acc["n_answers"], acc["n_undefined"]) == (360, 40)
    assert acc["value"] == pytest.approx(100 * vals[40:].mean())


def test_simulator_records_validate_and_recover_the_planted_rates():
    card = pl.read_csv(published("aee_figure8_scorecard"))
    sim = simulate_answers(card, seed=0, n_debate=80, n_expertise=60)
    recs = ae.parse_records(sim.records, "simulator")
    conv = ae.records_to_answers(recs)
    assert conv.excluded.height == 0 and conv.meta.height == 3 * 140
    metrics = ae.batch_metrics(ae.pack_answers(conv.answers, conv.meta["debate"].to_list()))
    sc = ae.bootstrap_scorecard(metrics.with_columns(engine=conv.meta["engine"]), rounds=200)
    got = sc.join(sim.planted_frame(), on=["engine", "metric"])
    # metrics planted directly (one probability per statement / answer) are recovered within sampling error
    direct = got.filter(pl.col("metric").is_in(["relevant_statements", "unsupported_statements", "one_sided_answer"]))
    assert ((direct["value"] - direct["planted"]).abs() < 8).all()
    # and the engines keep their published order on the planted-direct metrics
    one_sided = dict(zip(*sc.filter(pl.col("metric") == "one_sided_answer").select("engine", "value")))
    assert one_sided["perplexity"] > max(one_sided["you_com"], one_sided["bing_chat"])


def test_load_answers_reads_user_records_and_their_support_file(tmp_path):
    path = tmp_path / "mine.json"
    path.write_text(json.dumps([_record()]))
    (tmp_path / "mine_support_results.jsonl").write_text(json.dumps(
        {"sample_id": "a1", "source_idx": 2, "core_statement_id": "s3", "support": "full"}) + "\n")
    data = ae.load_answers(path)
    assert data.kind == "user" and data.judging is None and data.support.height == 1
    # the JSONL replaces the records' supporting_sources: s3 ← {2}; s1's pairs were never judged (missing)
    assert data.converted.answers[0].support.tolist() == [[False, False], [False, False], [False, True]]
    assert data.converted.meta["missing_support"].item() == 3
    m = data.metrics()
    assert m.columns[:3] == ["id", "engine", "query_type"] and m["unsupported_statements"].item() == 0.5


def test_confidence_distribution_lists_every_level():
    recs = ae.parse_records([_record(id="x", confidence_score="Neutral"), _record(id="y"),
                             _record(id="z", is_charged=False)])
    dist = ae.confidence_distribution(ae.confidence_frame(recs))
    assert dist.height == 2 * 5  # (E, debate) and (E, expertise), five levels each
    debate = dist.filter(pl.col("query_type") == "debate").sort("confidence")
    assert debate["n"].to_list() == [0, 0, 1, 0, 1] and debate["share"].sum() == pytest.approx(1.0)


def test_confidence_summary_by_query_type_and_over_all():
    conf = pl.DataFrame({"engine": ["a"] * 4 + ["b"], "confidence": [5, 3, 5, 4, 2],
                         "query_type": ["debate", "debate", "expertise", "debate", "expertise"]})
    summary = ae.agreement.confidence_summary(conf)
    a = {r["query_type"]: r for r in summary.filter(pl.col("engine") == "a").iter_rows(named=True)}
    assert (a["debate"]["n"], a["debate"]["strongly"], a["debate"]["mean"]) == (3, pytest.approx(1 / 3), 4.0)
    assert (a["expertise"]["strongly"], a["all"]["n"], a["all"]["strongly"], a["all"]["mean"]) == (1.0, 4, 0.5, 4.25)
    assert summary.filter(pl.col("engine") == "b")["query_type"].to_list() == ["expertise", "all"]


def test_judge_agreement_against_numpy(tmp_path):
    rng = np.random.default_rng(5)
    conf = rng.integers(1, 6, size=30)
    raw = [_record(id=f"r{k}", confidence_score=int(c)) for k, c in enumerate(conf)]
    recs = ae.parse_records(raw)
    human_a = np.clip(conf + rng.integers(-1, 2, size=30), 1, 5)
    human_b = np.clip(conf + rng.integers(-1, 2, size=30), 1, 5)
    lines = ["task,item_id,human"] + [f"confidence,r{k},{a}" for k, a in enumerate(human_a)] \
        + [f"confidence,r{k},{b}" for k, b in enumerate(human_b)] + ["confidence,unknown,3"] \
        + ["support,r0_1_s1,full", "support,r0_2_s1,none", "support,r0_1_s3,partial", "support,r0_2_s3,0"]
    path = tmp_path / "labels.csv"
    path.write_text("\n".join(lines) + "\n")
    labels = ae.load_answer_labels(path)
    assert labels.filter(pl.col("item_id") == "r0")["n_annotators"].item() == 2
    got = ae.judge_agreement(labels, ae.judge_values(recs))
    row = got.filter(pl.col("task") == "confidence").row(0, named=True)
    assert (row["n"], row["n_unmatched"]) == (30, 1)
    assert row["r"] == pytest.approx(np.corrcoef((human_a + human_b) / 2, conf)[0, 1])
    assert row["lo"] < row["r"] < row["hi"]
    sup = got.filter(pl.col("task") == "support").row(0, named=True)
    # judge (records' supporting_sources): s1 ← {1, 2}, s3 ← {}; humans: 1, 0, 0, 0
    assert sup["n"] == 4 and sup["r"] == pytest.approx(np.corrcoef([1, 0, 0, 0], [1, 1, 0, 0])[0, 1])


def test_bad_labels_name_line_and_field(tmp_path):
    path = tmp_path / "labels.csv"
    path.write_text("task,item_id,human\nconfidence,a,4\nconfidence,b,7\n")
    with pytest.raises(DataValidationError, match=r"labels.csv, line 3, field 'human'"):
        ae.load_answer_labels(path)
    path.write_text("task,item_id,human\nstance,a,4\n")
    with pytest.raises(DataValidationError, match=r"line 2, field 'task'"):
        ae.load_answer_labels(path)


def test_scorecard_figure_matches_published_columns_by_engine_name():
    from analysis_lib.answer_engine import plots

    card = pl.read_csv(published("aee_figure8_scorecard"))
    long = pl.DataFrame([{"engine": e, "metric": k, "value": 50.0, "lo": 40.0, "hi": 60.0}
                         for e in ("YouCom", "BingChat", "Perplexity") for k in ae.metrics.METRICS])
    fig = plots.scorecard_intervals(long, card, ae.load_thresholds(), {})
    ax = fig.axes[ae.metrics.METRICS.index("uncited_sources")]
    diamonds = ax.collections[-1].get_offsets()[:, 1].tolist()
    assert diamonds == [1.1, 36.2, 8.4]  # You.com, BingChat, Perplexity of the published Fig 8
