"""The DR-Arena chapter's book side (:mod:`bookbuild.papers.dr_arena`): every section records through
``Recorder.record`` against the real paper values (each row's path exists in the analyses' results), claims follow
their thresholds, the paper's reference values are placed where the paper puts them, tables are trimmed; and the
library analyses it records (replays, reference agreement) against independent computations."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import numpy as np
import polars as pl
import pytest
from scipy import stats as sps

from analysis_lib import dr_arena
from analysis_lib.dr_arena import match_log
from analysis_lib.fetch import published
from analysis_lib.stats import leaderboard_correlations
from bookbuild.papers import dr_arena as paper
from bookbuild.papers.dr_arena import examiner as paper_examiner
from bookbuild.papers.dr_arena import logs as paper_logs
from bookbuild.papers.dr_arena import loop as paper_loop
from bookbuild.recorder import NotRun, Recorder

#: Two small trees (root with children to depth 3) for a quick simulated tournament.
TREE = {"children": [{"children": [{"children": []}, {"children": []}]}, {"children": [{"children": []}]},
                     {"children": []}]}


@pytest.fixture(scope="module")
def small_logs() -> dr_arena.loader.MatchSource:
    return dr_arena.load_match_source("", {"t1": TREE, "t2": TREE}, n_agents=6, n_rounds=3, seed=1)


def _recorded(rec: Recorder, analysis_id: str) -> dict[str, object]:
    return {r.quantity: r.ours for r in rec.results if r.analysis_id == analysis_id}


def test_log_sections_record_every_row(small_logs: dr_arena.loader.MatchSource, tmp_path) -> None:
    rounds, kind = small_logs.rounds, small_logs.kind
    rec = Recorder(tmp_path, "08_dr_arena", data=kind)
    matches = dr_arena.matches(rounds)
    board = dr_arena.ratings(matches, rounds=5, seed=0)
    tour = dr_arena.tournament_summary(matches, board, small_logs.pairings)
    agree = dr_arena.reference_agreement(board, small_logs.reference)
    rec.record("DR-S", {"tour": tour, "mle": "yes", "n_bootstrap": 5, "spearman": agree.spearman if agree else None})
    by_k = dr_arena.correlation_by_rounds(rounds, dr_arena.reference_models(board, small_logs.reference))
    rec.record("DR-T6", paper.t6_result(by_k))
    gap = dr_arena.rounds_vs_gap(rounds, board)
    rec.record("DR-F5", {"gap": gap, "claim": paper.f5_claim(gap)})
    profile = dr_arena.failure_profile(rounds)
    rec.record("DR-F6", {"profile": profile, "balanced": paper.f6_claim(profile)})
    verdicts = dr_arena.verdict_summary(rounds)
    rec.record("DR-F7", {"verdicts": verdicts, "better_first": paper.f7_claim(verdicts)})
    got = {r.quantity: r.ours for r in rec.results}
    assert got["models in the tournament"] == 6 and got["byes"] == 0
    assert got["matches played"] == rounds["match_id"].n_unique()
    assert got["mean rounds per match"] == pytest.approx(matches["n_rounds"].mean())
    assert got["Spearman rho, all rounds"] == pytest.approx(by_k["spearman"][-1])
    r1, all_rounds = got["Spearman rho, round 1 only"], got["Spearman rho, all rounds"]
    assert got["claim: round 1 alone gives a lower Spearman than all rounds"] == (
        "holds" if r1 < all_rounds else "does not hold")  # type: ignore[operator]
    assert got["lowest failure rate (%)"] == pytest.approx(100 * profile["failure_rate"].min())
    assert got["share of tie verdicts (%)"] == pytest.approx(100 * rounds["verdict"].eq("TIE").mean())
    assert [r.status for r in rec.results if "without rubrics" in r.quantity] == ["not run"] * 2
    summary = paper.claims_summary(rec.results, seed=1)
    assert summary.count("in the simulation.") == sum(q.startswith("claim:") for q in got)


def test_reference_agreement_is_scipy_spearman(small_logs: dr_arena.loader.MatchSource) -> None:
    board = dr_arena.ratings(dr_arena.matches(small_logs.rounds), rounds=0, seed=0)
    agree = dr_arena.reference_agreement(board, small_logs.reference)
    assert agree is not None
    ref = [small_logs.reference[m] for m in board["model"]]
    assert agree.spearman == pytest.approx(sps.spearmanr(board["rating"].to_numpy(), ref).statistic)
    assert dr_arena.reference_agreement(board, dict(list(small_logs.reference.items())[:2])) is None


def test_too_few_reference_models_is_not_run(small_logs: dr_arena.loader.MatchSource, tmp_path) -> None:
    rec = Recorder(tmp_path, "08_dr_arena", data="simulated")
    rec.record("DR-T6", paper.t6_result(None), reason=paper.too_few(small_logs))
    assert {r.status for r in rec.results} == {"not run"}
    assert {r.reason for r in rec.results} == {paper.too_few(small_logs), paper_logs.RUBRIC_REASON}
    assert paper.t6_tables(None) == [] and paper.fig4_notes(None, "x") == []


def test_profile_table_shares_sum_to_100(small_logs: dr_arena.loader.MatchSource) -> None:
    table = paper.f6_tables(dr_arena.failure_profile(small_logs.rounds))[0].frame
    shares = table.select(pl.col("^(Deep|Wide|Both|None) %$")).fill_null(0).to_numpy().sum(axis=1)
    lost = table["losses"].to_numpy() > 0
    assert np.allclose(shares[lost], 100)
    assert not any(c.startswith("n_") or c.startswith("share_") for c in table.columns)


def test_fig4_contradiction_sentence() -> None:
    text = paper_logs.fig4_contradiction(round1=False, round2=True, kind="simulated")
    assert "Unlike the paper's Fig 4" in text and "this simulated tournament" in text and "round 1 alone" in text
    both = paper_logs.fig4_contradiction(round1=False, round2=False, kind="real")
    assert "these match logs" in both and f"more than {paper_logs.ROUND2_MARGIN:g} below" in both
    flat = pl.DataFrame({"k": [1, 2, 3], "spearman": [0.9, 0.9, 0.9], "pearson": [0.5, 0.5, 0.5]})
    assert "round 1 alone" in paper.fig4_notes(flat, "simulated")[0]  # round 1 not below all rounds


def test_fig4_reference_is_table6() -> None:
    spearman, pearson = paper.fig4_reference(last_k=10)
    assert spearman.x == (1.0, 2.0, 10.0) and spearman.y == (0.77, 0.94, 0.94)
    assert pearson.y == (0.41, 0.68, 0.74)
    assert "paper" in spearman.label and "paper" in pearson.label


def test_fig5_reference_gaps_from_table3() -> None:
    ref = paper.fig5_reference()
    # Table 3's DR-Arena Elo: GPT-5.1 1084, Grok-4 958, Gemini 1054, o3 1041
    assert ref.x == (126.0, 13.0, 43.0) and ref.y == (2.0, 2.8, 3.07)
    assert "126, 13 and 43" in paper.FIG5_NOTE


def test_mle_note_says_when_ridge_was_needed() -> None:
    def board(mle: bool, ridge: int) -> pl.DataFrame:
        return pl.DataFrame({"ridge": [0.01], "mle": [mle], "ridge_resamples": [ridge]})

    assert paper.mle_note(board(True, 0), 100).startswith("The MLE exists")
    warn = paper.mle_note(board(False, 5), 100)
    assert "No maximum-likelihood estimate" in warn and "more than 2.5%" in warn and "reg = 0.01" in warn
    assert "No bootstrap" in paper.mle_note(board(True, 0), 0)


def test_loop_records_the_replays_and_shows_their_tables(tmp_path) -> None:
    cfg = dr_arena.FRAMEWORK
    table2 = dr_arena.transition_table(cfg)
    assert set(paper_loop.RULE_LABELS) == {f.name for f in dataclasses.fields(dr_arena.LoopConfig)}
    assert "kind" not in paper.rules_tables(table2, dr_arena.config_table(cfg), cfg.name)[0].frame.columns
    replays = dr_arena.replay_published_traces(cfg)
    replay = dr_arena.replay_cases_trace(cfg)
    example = replays[paper_loop.EXAMPLE_ID].replay
    rec = Recorder(tmp_path, "08_dr_arena")
    rec.record("DR-L", {"combinations": table2.height, "traces": len(replays),
                        "reproduced": sum(r.reproduced for r in replays.values()),
                        "example": dr_arena.replay_summary(example), "page": dr_arena.replay_summary(replay)})
    by = {r.quantity: r for r in rec.results}
    page = by["project-page trace (Handheld Game Consoles): rounds whose depth and width the replay reproduces"]
    assert page.ours == replay.height == 5 and page.status == "match"
    assert by["project-page trace (Handheld Game Consoles): stop rule after the last round"].status == "match"
    assert by["(verdict, failure type) combinations mapped by Table 2"].ours == 4 * 4 + 2
    assert by["worked example (tree_0022): rounds played"].note.endswith(f"; stop: {example['stop'][-1]}")
    shown = paper.page_tables(replay)[0].frame
    assert shown["page task"].to_list() == shown["task (depth × width)"].to_list()  # every round reproduced
    assert shown["page task"].to_list() == [f"2 × {w}" for w in range(2, 7)]
    assert shown["stop"][-1] == "SCORE GAP" and shown["score A–B"][-1] == "2–5"
    example_shown = paper.traces_tables(example)[0].frame
    assert example_shown["logged task"].to_list() == example_shown["task (depth × width)"].to_list()
    assert example_shown["logged score"].to_list() == example_shown["score A–B"].to_list()
    summary = dr_arena.replay_summary(example)
    assert summary.score_gap == abs(example["score_a"][-1] - example["score_b"][-1]) and summary.rounds == 5


def test_replay_published_traces_match_their_logs() -> None:
    traces = match_log.published_traces()
    replays = dr_arena.replay_published_traces()
    assert list(replays) == list(dict.fromkeys(traces["match_id"]))
    for mid, r in replays.items():
        logged = traces.filter(pl.col("match_id") == mid).sort("round")
        same = r.replay.height == logged.height and all(
            r.replay[c].to_list() == logged[c].cast(r.replay[c].dtype).to_list() for c in ("depth", "width"))
        assert r.reproduced == (same and r.replay["score_a"].to_list() == logged["score_a"].cast(pl.Float64).to_list()
                                and r.replay["score_b"].to_list() == logged["score_b"].cast(pl.Float64).to_list())
    cut = replays[paper_loop.EXAMPLE_ID].replay
    assert not match_log.reproduces(cut, cut.height + 1)  # a logged round the replay never played


def test_trees_banner_names_the_missing_trees() -> None:
    trees = {"tree_a": TREE}
    summary = {"trees": [{"tree_id": "tree_a"}, {"tree_id": "tree_b"}]}
    assert dr_arena.missing_trees(summary, trees) == ["tree_b"]
    text = paper.trees_detail(trees, ["tree_b"])
    assert "The other 1 trees listed" in text and "(tree_b)" in text and "cover 1 trees" in text


def test_trees_are_recorded_domain_by_domain_against_tables_8_and_9(tmp_path) -> None:
    summary = {"dataset_info": {"total_trees": 3}, "trees": [{}, {}, {}],
               "trees_by_domain": {"en.wikipedia.org": 2, "x.org": 1}, "trees_by_topic": {"Beauty & Fitness": 3}}
    domains, topics = dr_arena.domain_table(summary), dr_arena.topic_table(summary)
    rec = Recorder(tmp_path, "08_dr_arena")
    rec.record("DR-T89", {"total_trees": 3, "listed_trees": 3, "domains": domains, "n_domains": domains.height,
                          "recount": "yes", "topics": topics, "n_topics": topics.height, "topic_trees": 3})
    by = {r.quantity: r for r in rec.results}
    assert by["en.wikipedia.org trees"].status == "differs" and by["en.wikipedia.org trees"].paper == 8
    assert by["x.org trees"].status == "computed" and by["x.org trees"].note == "a domain Table 8 does not list"
    assert by["gmgc.com trees"].status == "not run" and "domain gmgc.com" in by["gmgc.com trees"].reason
    assert by["Beauty & Fitness trees"].ours == 3 and by["topics"].status == "inconsistent"


def test_published_sections_record_against_the_paper(tmp_path) -> None:
    t3 = pl.read_csv(published("dr_arena_table3_leaderboards"))
    agree = leaderboard_correlations(t3)
    t4 = dr_arena.table4()
    stated = t4.filter(pl.col("sign_stated").is_not_null())
    rec = Recorder(tmp_path, "08_dr_arena")
    rec.record("DR-T3", agree)
    rec.record("DR-T4", {"agree": agree, "n_models": t3.height, "n_stated": stated.height,
                         "stated": "; ".join(stated["benchmark"]), "body": NotRun(paper.T4_MISSING)})
    check5 = dr_arena.table5_check(dr_arena.table5())
    rec.record("DR-T5", {"check": check5, "full_tree": paper.holds(check5.full_tree_best)})
    rec.record("DR-T7", paper.t7_result(dr_arena.table7_check(dr_arena.table7())))
    t3_status = {r.status for r in rec.results if r.analysis_id == "DR-T3" and r.paper is not None}
    assert t3_status == {"match"}
    t4_rows = {r.quantity: r for r in rec.results if r.analysis_id == "DR-T4"}
    assert t4_rows["DR-Arena: Spearman rho with Search Arena (from Table 3)"].note.endswith("; 6 models")
    assert {r.reason for r in t4_rows.values() if r.status == "not run"} == {paper.T4_MISSING}
    assert _recorded(rec, "DR-T5")["shares that are a whole count of the 50 cases"] == 4
    t7 = _recorded(rec, "DR-T7")
    assert t7["stop efficiency as a count of the matches"] == "none of k/30"
    assert [r.note for r in rec.results if r.quantity == "stop efficiency as a count of the matches"] == [
        "the text: 92.2% of the matches stopped at an efficient round count; as turns: 59/64"]


class _NoEndpoint:
    available = False
    model = "m"

    def not_run_reason(self) -> str:
        return "no LLM endpoint configured"


def test_examiner_not_run_reasons(tmp_path) -> None:
    prompts, why = paper.examiner_prompts(_NoEndpoint(), ["a", "b"])  # type: ignore[arg-type]
    assert prompts is None and why == "no LLM endpoint configured"
    rec = Recorder(tmp_path, "08_dr_arena")
    rec.record("DR-X", paper.x_result(_NoEndpoint(), None), reason=why)  # type: ignore[arg-type]
    assert [r.reason for r in rec.results] == [why, why, paper_examiner.AGREEMENT_REASON]
    assert paper.x_tables(None) == [] and paper.x_notes(_NoEndpoint(), None, [], "") == []  # type: ignore[arg-type]
    assert paper.agent_names(" a, ,b ,") == ["a", "b"]

    class _Endpoint(_NoEndpoint):
        available = True

    _, why = paper.examiner_prompts(_Endpoint(), ["a"])  # type: ignore[arg-type]
    assert "two or more" in (why or "")


def test_fig7_reference_marks_the_printed_shares(small_logs: dr_arena.loader.MatchSource) -> None:
    verdicts, failures = paper.fig7_reference()
    assert dict(verdicts.values) == {"Better": 49.9, "Much\nBetter": 32.8} and verdicts.ax == 0
    assert dict(failures.values) == {"DEEP": 32.3, "WIDE": 30.0} and failures.ax == 1
    fig = dr_arena.verdict_share_plot(dr_arena.verdict_shares(small_logs.rounds), "Fig 7")
    ticks = {t.get_text() for t in fig.axes[0].get_xticklabels()}
    assert set(verdicts.values) <= ticks  # every mark has its bar (else draw_reference raises)


def test_library_never_imports_the_book_side() -> None:
    code = ("import sys, analysis_lib.dr_arena as d; [getattr(d, n) for n in d.__all__]; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'bookbuild'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
