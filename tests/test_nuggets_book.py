"""The book's side of chapter 07 (bookbuild.papers.nuggets): every NG row recorded through ``Recorder.record``
from the library's results against the real paper values (the published matrices give the paper's numbers,
thresholds named, notes filled), the claims checked, the paper's values drawn, the tables, the rules of the model
steps (what may be sent, why a step did not run), and the simulator's targets typed as the book's paper values."""

from dataclasses import replace
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from scipy import stats as sps
from sklearn.metrics import cohen_kappa_score

from analysis_lib import nuggets as ng
from analysis_lib.llm import LLMClient
from analysis_lib.nuggets import battles, diversity, llm_analyses, rouge
from analysis_lib.nuggets import loader as ng_loader
from analysis_lib.nuggets.agreement import table1
from analysis_lib.nuggets.scores import SWEEP_THRESHOLDS
from analysis_lib.nuggets.simulate import DEFAULT_PARAMS, target_matrix
from bookbuild import paper_values
from bookbuild.papers import nuggets as book
from bookbuild.papers.nuggets import model_numbers
from bookbuild.recorder import NotRun, Recorder

FIXTURES = Path(__file__).parent / "fixtures" / "nuggets"


@pytest.fixture(scope="module")
def inputs():
    return ng_loader.load_inputs("sample:400", seed=3)


# ------------------------------------------------------------------------------------------- recorded numbers

def _published(tmp_path):
    """The IDs that rest on the published matrices, recorded as the chapter records them."""
    rec = Recorder(tmp_path, "07_nuggets", data="published")  # the per-battle rows read the published matrices too
    conf = ng.published_confusions()
    overall = conf[("overall", "all")]
    published = {t: table1(conf, t) for t in ("query_category", "language")}
    kappas = ng.kappa_table(conf)
    top = book.top_classes(kappas)
    rec.record("NG-F5", ng.responses_only_confusion())
    rec.record("NG-T1", {"published": pl.concat(published.values()), "overall": overall, "ours": overall})
    rec.record("NG-B", {"kappas": kappas, "classes": published["query_category"], "per_battle": kappas,
                        "top_classes": ", ".join(sorted(top))},
               notes=book.notes_at("NG-B", {"top_classes": book.highest_note(kappas, top)}))
    ks = ng.published.published_ks().filter(pl.col("variant") == "with_urls")
    rec.record("NG-F2", {"ks": ks, "check": book.ks_check(ng.ks_consistency())}, notes=book.ks_notes(ks))
    return {r.quantity: r for r in rec.results}


def test_the_published_matrices_give_the_papers_numbers(tmp_path):
    """Every NG-F5, NG-T1 and NG-B row with a paper value, read from the published matrices by its result path,
    matches the paper (NG-F2: the published D and p are the paper's own, and each p follows from its D), and every
    note is filled from the result."""
    got = _published(tmp_path)
    rows = [r for aid in ("NG-F5", "NG-T1", "NG-B", "NG-F2") for r in paper_values.rows_of(aid)]
    assert {r.quantity for r in rows} == set(got)
    with_paper = [got[r.quantity] for r in rows if r.paper is not None and not r.quantity.startswith("per-battle")]
    assert {r.status for r in with_paper} == {"match"}, [r for r in with_paper if r.status != "match"]
    assert got["ambiguous: inversion (%)"].note == "paper rounds to whole %; 38 of 196"
    assert got["agreement share, model_a (%)"].note == "933 of 1704"
    assert got["three query classes with the highest kappa (excluding harmful)"].note == (
        "harmful (92 battles) has the highest κ of all")
    totals = ng.published_confusions()[("overall", "all")].row_totals  # Figure 2's groups: the matrix's rows
    assert got["K-S D, model_a vs tie"].note == f"n = {totals['model_a']:,} and {totals['tie']:,}"
    assert all("{" not in r.note for r in got.values())
    assert {got[q].data for q in ("overall inversion (%)", "Others: battles")} == {"published"}
    assert got["published p follows from D and the group sizes (responses_only, model_b vs tie)"].data == "checked"


def test_the_records_numbers_are_recorded_with_their_notes_and_planted_values(inputs, tmp_path):
    """NG-A1, NG-N, NG-F3, NG-F4, NG-T2 and NG-C on simulated records: every row recorded, notes formatted from the
    result, the simulator's planted values beside the recovered ones, the threshold named off the paper's."""
    rec = Recorder(tmp_path, "07_nuggets", data="simulated")
    scores = ng.battle_scores(inputs.records)
    rec.record("NG-A1", battles.vote_and_language_shares(inputs.single),
               notes=book.notes_at("NG-A1", {"battles": book.SIMULATED_BATTLES}))
    summary = ng.score_summary(scores)
    rec.record("NG-N", {**summary._asdict(), "failed": inputs.records.n_failed,
                        "exclusions": book.exclusions(inputs.records), "example": book.worked_example(0.1)},
               planted=inputs.planted)
    means = ng.perbattle.diff_means(ng.diffs_by_vote(scores))
    rec.record("NG-F3", {"battles": means["battles"].sum(), "by_vote": means})
    overall = ng.published_confusions()[("overall", "all")]
    at_paper = ng.confusion(scores["winner"].to_numpy(), ng.preferences(scores))
    rec.record("NG-F4", {"published": overall, "per_battle": at_paper, "per_battle_kappa": at_paper.kappa,
                         "sweep": {"lowest": 0.2, "highest": 0.3}},
               planted={"per_battle_kappa": overall.kappa}, notes=book.f4_notes(0.12, planted=True))
    div = diversity.battle_diversity(inputs.records.nuggets)
    rec.record("NG-T2", {"jaccard": diversity.spread(div, "jaccard"), "cosine": diversity.spread(div[:9], "jaccard")},
               notes=book.t2_notes(div.height, 9, "float32"))
    rec.record("NG-C", {"traces": inputs.urls, "short_pages": NotRun(book.SCRAPE_NOT_RUN)})
    got = {r.quantity: r for r in rec.results}
    ids = ("NG-A1", "NG-N", "NG-F3", "NG-F4", "NG-T2", "NG-C")
    assert set(got) == {r.quantity for aid in ids for r in paper_values.rows_of(aid)}
    assert all("{" not in r.note for r in got.values())
    assert got["single-turn battles"].ours == inputs.single.height and got["single-turn battles"].note == (
        book.SIMULATED_BATTLES)
    assert sum(got[f"vote share {w} (%)"].ours for w in ("model_a", "model_b", "tie", "tie (bothbad)")) == (
        pytest.approx(100.0))
    assert got["nuggets per battle (mean)"].planted == 12.5 and got["vital share of nuggets"].planted == 0.5
    assert got["battles reaching the 30-nugget cap"].note == f"of {scores.height:,} battles"
    assert got["battles excluded (failed nuggetizer steps)"].note.startswith("all exclusions: 0 without a vote")
    assert got["worked example: nugget preference"].note == "threshold 0.1; score_B − score_A = +0.083"
    assert got["battles in the densities (both-bad excluded)"].ours == (scores["winner"] != "tie (bothbad)").sum()
    kappa = got["per-battle: weighted kappa at threshold 0.07"]
    assert kappa.ours == ng.subset_confusions(scores, 0.07)[("overall", "all")].kappa
    assert kappa.planted == overall.kappa and kappa.note.endswith("use 0.12); " + book.notes.PLANTED_KAPPA)
    share = got["per-battle: agreement share, model_a (%)"]
    assert share.planted is None and share.note.endswith("this page's figures and tables use 0.12)")
    assert got["weighted kappa (quadratic, both-bad excluded)"].note == ""  # a published number: no threshold note
    assert got["within-battle nugget Jaccard, mean"].note == f"{div.height:,} battles"
    assert got["within-battle nugget cosine, mean"].note == "9 battles sampled; all-MiniLM-L6-v2, float32"
    assert got["within-battle nugget Jaccard, sd"].ours == pytest.approx(np.nanstd(div["jaccard"].to_numpy(), ddof=1))
    urls = got["unique URLs of the single-turn battles"]
    assert urls.ours == len(inputs.urls.urls)
    assert urls.note.endswith(f"; {inputs.urls.battles:,} single-turn voted battles")
    scraped = got["URLs yielding <= 100 bytes (%)"]
    assert scraped.ours is None and "network" in scraped.reason and scraped.status == "not run"


def test_a_number_without_a_value_has_no_unfilled_note(tmp_path):
    """Two battles won by A: no K-S D against B or tie; those rows did not run and their notes name no field."""
    ks = ng.ks_by_vote([0.5, 0.1], ["model_a", "model_a"])
    rec = Recorder(tmp_path, "07_nuggets", data="user")
    rec.record("NG-F2", {"ks": ks, "check": book.ks_check(ng.ks_consistency())}, notes=book.ks_notes(ks))
    d = [r for r in rec.results if r.quantity.startswith("K-S D")]
    assert len(d) == 3 and {r.status for r in d} == {"not run"} and all("{" not in r.note for r in rec.results)


def test_threshold_notes_follow_the_parameter():
    """Numbers at the chapter's threshold name it when it is not the paper's; at the paper's, nothing is said."""
    assert book.threshold_note(0.07) == "" and book.f4_notes(0.07, planted=False) == {}
    assert book.threshold_note(0.12) == "at tie threshold 0.12 (the paper's values are at 0.07)"
    notes = book.f4_notes(0.12, planted=False)
    assert set(notes) == {"per-battle: weighted kappa at threshold 0.07", "per-battle: agreement share, model_a (%)",
                          "per-battle: agreement share, model_b (%)"}
    assert book.notes_at("NG-T1", {"ours": "x"}) == {"per-battle: overall inversion (%)": "x"}
    assert book.notes_at("NG-T2", {"cosine.mean": "y", "jaccard": ""}) == {"within-battle nugget cosine, mean": "y"}


def test_worked_example_by_hand():
    """A: 1, .5, 1, 0, .5, 0 -> All 3/6; vital 1, .5, 0 -> 1/2; B: 1, 1, 0, .5, 0, 1 -> All 3.5/6; vital 2.5/3."""
    ex = book.worked_example(0.07)
    assert ex.a["all"] == pytest.approx(0.5) and ex.a["vital"] == pytest.approx(0.5)
    assert ex.b["all"] == pytest.approx(3.5 / 6) and ex.b["vital"] == pytest.approx(2.5 / 3)
    assert ex.b["strict_all"] == pytest.approx(3 / 6)
    assert ex.preference == "model_b" and book.worked_example(0.1).preference == "tie"  # 0.083 > 0.07
    assert ex.cap == "12 vital + 18 okay"
    assert book.worked_example_table().height == len(book.tables.WORKED_EXAMPLE)


# ------------------------------------------------------------------------------------------- claims

def test_rouge_test_against_scipy_and_sklearn_and_the_sentence():
    human = ["model_a"] * 40 + ["model_b"] * 40
    aligned = ng.confusion(human, ["model_a"] * 32 + ["model_b"] * 8 + ["model_a"] * 9 + ["model_b"] * 31)
    test = rouge.alignment_test(aligned)
    assert test.p_value == pytest.approx(sps.fisher_exact([[32, 8], [9, 31]]).pvalue)
    assert test.kappa == pytest.approx(cohen_kappa_score(
        ["A"] * 40 + ["B"] * 40, ["A"] * 32 + ["B"] * 8 + ["A"] * 9 + ["B"] * 31))
    assert test.aligned and "contradicts the paper" in book.alignment_sentence(test, "simulated")
    assert "describes the generator" in book.alignment_sentence(test, "simulated")
    assert "describes the generator" not in book.alignment_sentence(test, "real")
    flat = rouge.alignment_test(ng.confusion(human, ["model_a", "model_b"] * 40))
    assert not flat.aligned and book.alignment_sentence(flat, "real").startswith("As in the paper")


def test_the_papers_top_classes_and_reference_values():
    kappas = ng.kappa_table(ng.published_confusions())
    assert book.top_classes(kappas) == ["knowledge-intensive", "subjective", "reasoning-intensive"]
    by_kappa = kappas.filter(pl.col("subset_type") == "query_category").sort("kappa", descending=True)
    # harmful kept by the library
    assert ng.agreement.top_kappa_classes(kappas, 2) == by_kappa["subset"].head(2).to_list()
    assert book.ks_reference() == {("model_a", "model_b"): 0.313, ("model_a", "tie"): 0.209,
                                   ("model_b", "tie"): 0.205}
    sweep = pl.DataFrame({"threshold": SWEEP_THRESHOLDS, "kappa": [0.3] * len(SWEEP_THRESHOLDS)})
    assert book.sweep_reference(sweep) == ((0.29, 0.31), (0.07, 0.3))
    assert book.sweep_reference(sweep.head(3))[0] is None  # another range: the paper's 0.29-0.31 does not apply
    assert book.paper_value("NG-T2", "within-battle nugget cosine, mean") == 0.39


def test_the_simulators_targets_are_the_books_paper_values():
    """The simulator calibrates to the published Figure 4 matrix and plants the paper's 12.5 nuggets per battle:
    the same numbers as the book's paper-values table (design point 4 of issue 34)."""
    target = target_matrix()
    book_value = {q: paper_values.lookup("NG-F4", q).paper for q in (
        "agreements, human model_a", "battles won by model_a (row total)", "agreements, human model_b",
        "battles won by model_b (row total)", "weighted kappa (quadratic, both-bad excluded)")}
    assert book_value["agreements, human model_a"] == target.agreements_a
    assert book_value["agreements, human model_b"] == target.agreements_b
    assert book_value["battles won by model_a (row total)"] == target.row_totals["model_a"]
    assert book_value["battles won by model_b (row total)"] == target.row_totals["model_b"]
    # the paper's text counts 5,098 battles, its matrix 5,097 (a known inconsistency of the paper, noted in ng.csv)
    assert paper_values.lookup("NG-F4", "battles in the matrix").paper - target.n == 1
    assert book_value["weighted kappa (quadratic, both-bad excluded)"] == pytest.approx(target.kappa, abs=0.005)
    assert paper_values.lookup("NG-N", "nuggets per battle (mean)").paper == DEFAULT_PARAMS.mean_nuggets


def test_tables_have_readable_short_columns():
    for frame in (book.ks_check_table(ng.ks_consistency()),
                  book.sweep_table(ng.threshold_sweep([0.1, 0.5, 0.2], [0.3, 0.2, 0.2], ["model_b", "tie", "tie"])),
                  book.inversion_display(ng.inversion_table(ng.published_confusions(), "language"))):
        assert frame.width <= 8 and not any("_" in c for c in frame.columns)
        assert max(len(str(v)) for row in frame.iter_rows() for v in row) <= 28
    ks = book.ks_check_table(ng.ks_consistency())
    assert ks["nuggets from"][0] == "URLs + responses" and ks["p follows"].to_list() == ["yes"] * 6
    table = book.assignment_table(np.arange(9).reshape(3, 3))
    assert table.row(1) == ("partial_support", 3, 4, 5)


# ------------------------------------------------------------------------------------------- LLM and NLI steps

def test_not_run_reasons_are_the_clients_own(tmp_path):
    client = LLMClient(offline=True, cache_dir=tmp_path)
    task = llm_analyses.judge_task()
    out = client.run(task, [("q", "a", "b")] * 3)
    assert model_numbers.step_reason(out) == client.not_run_reason().removeprefix("not run: ")
    client.pending = 7
    pending = pl.DataFrame({"status": ["not run"] * 7, "error": [client.not_run_reason()] * 7})
    assert model_numbers.step_reason(pending).startswith("7 items pending in a Batch API batch")
    failed = pl.DataFrame({"status": ["failed", "failed", "ok"], "error": ["HTTP 500: boom", "HTTP 500: x", None]})
    assert model_numbers.step_reason(failed) == "no usable LLM reply: 2 of 3 items failed (HTTP 500 ×2)"


def test_llm_steps_on_simulated_records_say_why(inputs, tmp_path):
    client = LLMClient(offline=True, cache_dir=tmp_path)
    pairs, why = book.llm_pairs(inputs.records, "simulated")
    assert pairs is None and why == model_numbers.SIMULATED_TEXTS
    rec = Recorder(tmp_path, "07_nuggets", data="simulated")
    judge = book.judge_result(None, why)
    overall = ng.published_confusions()[("overall", "all")]
    rec.record("NG-F6", {"published": overall, "judge": judge.result}, reason=judge.reason, notes=judge.notes)
    t3 = book.rubric_result(None, why)
    rec.record("NG-T3", t3.result, reason=t3.reason, notes=t3.notes)
    limit = book.query_limit(None, "simulated")
    assert limit == model_numbers.SIMULATED_QUERY_BATTLES and book.query_limit(None, "real") is None
    classified = llm_analyses.classify_queries(inputs.records, client, limit=limit, seed=0)
    with_query = llm_analyses.query_battles(inputs.records.sides).height
    assert classified.height == min(limit, with_query) and (classified["status"] == "not run").all()
    counts = book.query_classes(classified, 400, "simulated")
    rec.record("NG-Q", counts.result, reason=counts.reason, notes=counts.notes)
    got = {r.quantity: r for r in rec.results}
    inversions = got.pop("nugget-based inversions (anti-diagonal of Figure 4)")
    assert inversions.ours == overall.inversions and inversions.data == "published"
    assert len(got) == 4 + 2 + 8 and {r.status for r in got.values()} == {"not run"}
    assert {got[q].reason for q in got if not q.endswith("in the class")} == {why}
    assert {got[q].reason for q in got if q.endswith("in the class")} == {
        client.not_run_reason().removeprefix("not run: ")}
    assert all("{" not in r.note for r in got.values())
    model, why = book.nli_model(inputs.records, "simulated")
    assert model is None and "pseudo-words" in why


def test_model_steps_that_ran_are_recorded_as_the_paper_prints_them(tmp_path):
    """The judge's agreements and the rubric's τ / ρ are one cell each in the paper; the notes say what ran."""
    human = ["model_a"] * 3 + ["model_b"] * 2 + ["tie"]
    verdicts = pl.DataFrame({"judge": ["model_a", "model_a", "tie", "model_b", "model_a", None],
                             "status": ["ok"] * 5 + ["failed"]})
    judged = llm_analyses.Judged(verdicts, ng.confusion(human[:5], verdicts["judge"].to_list()[:5]))
    judge = book.judge_result(judged)
    assert judge.result.agreements == "2 / 1" and judge.result.tie_share == pytest.approx(1 / 5)
    assert judge.notes == {"LLM judge vs human: weighted kappa": "5 of 6 battles judged"}
    corr = pl.DataFrame({"kendall_tau": [0.0704, 0.00651, 0.085], "spearman_rho": [0.074, 0.008, 0.0894]})
    rubric = llm_analyses.Rubric(pl.DataFrame({"qid": ["a", "b"]}), 9, pl.DataFrame(), pl.DataFrame(), corr)
    t3 = book.rubric_result(rubric)
    rec = Recorder(tmp_path, "07_nuggets", data="real")
    rec.record("NG-T3", t3.result, reason=t3.reason, notes=t3.notes)
    kendall, spearman = rec.results
    assert (kendall.ours, kendall.status) == ("0.070 / 0.007 / 0.085", "match")
    assert spearman.ours == "0.074 / 0.008 / 0.089" and spearman.note == "a random 2 of 9 decided battles"
    classified = pl.DataFrame({"classes": [["harmful"], ["harmful", "subjective"], []],
                               "status": ["ok", "ok", "ok"]}, schema={"classes": pl.List(pl.String),
                                                                      "status": pl.String})
    counts = book.query_classes(classified, 5, "simulated")
    assert dict(counts.result.iter_rows())["harmful"] == 2 and dict(counts.result.iter_rows())["ambiguous"] == 0
    assert set(counts.notes.values()) == {"3 of 3 battles rated (a random 3 of 5); 1 with no rating of 7 or more; "
                                          "ratings of the simulator's queries"} and len(counts.notes) == 8


def test_no_query_means_not_run(inputs, tmp_path):
    client = LLMClient(offline=True, cache_dir=tmp_path)
    blank = replace(inputs.records, sides=inputs.records.sides.with_columns(query=pl.lit(None, pl.String)))
    classified = llm_analyses.classify_queries(blank, client, limit=None, seed=0)
    assert classified.height == 0
    assert book.query_classes(classified, 0, "real") == (None, model_numbers.NO_QUERIES, {})


def test_real_records_with_texts_become_pairs():
    recs = ng.load_nugget_records(FIXTURES / "lmsys_assignments")
    pairs, why = book.llm_pairs(recs, "real")
    assert why == "" and pairs.height == 2 and set(pairs.columns) >= {"qid", "query", "winner", "answer_a", "answer_b"}
    assert llm_analyses.response_pairs(recs).equals(pairs)
    assert book.llm_pairs(ng.load_nugget_records(FIXTURES / "valid.jsonl"), "real") == (None, model_numbers.NO_TEXTS)


def test_llm_note_names_the_endpoint_or_how_to_set_one(tmp_path):
    assert "OPENAI_BASE_URL" in book.llm_note(LLMClient(offline=True, cache_dir=tmp_path))
