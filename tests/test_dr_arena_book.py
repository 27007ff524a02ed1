"""The DR-Arena chapter's book side (:mod:`bookbuild.papers.dr_arena`): labels exist in the paper-values table,
claims follow their thresholds, the paper's reference values are placed where the paper puts them, tables are
trimmed; and the library analyses it records (replays, reference agreement) against independent computations."""

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
from bookbuild import paper_values
from bookbuild.papers import dr_arena as paper
from bookbuild.papers.dr_arena import logs as paper_logs
from bookbuild.papers.dr_arena import loop as paper_loop
from bookbuild.sections import Number

#: Two small trees (root with children to depth 3) for a quick simulated tournament.
TREE = {"children": [{"children": [{"children": []}, {"children": []}]}, {"children": [{"children": []}]},
                     {"children": []}]}


@pytest.fixture(scope="module")
def small_logs() -> dr_arena.MatchSource:
    return dr_arena.load_match_source("", {"t1": TREE, "t2": TREE}, n_agents=6, n_rounds=3, seed=1)


def _labels_known(numbers: list[Number]) -> None:
    for n in numbers:
        paper_values.lookup(n.analysis_id, n.quantity)  # raises KeyError naming the CSV when a label is missing
        assert (n.reason != "") == (n.ours is None)


def test_log_numbers_label_and_record(small_logs: dr_arena.MatchSource) -> None:
    rounds, kind = small_logs.rounds, small_logs.kind
    matches = dr_arena.matches(rounds)
    board = dr_arena.ratings(matches, rounds=5, seed=0)
    agree = dr_arena.reference_agreement(board, small_logs.reference)
    by_k = dr_arena.correlation_by_rounds(rounds, dr_arena.reference_models(board, small_logs.reference))
    numbers = [*paper.s_numbers(small_logs, matches, board, agree, 5), *paper.t6_numbers(by_k, small_logs),
               *paper.f5_numbers(dr_arena.rounds_vs_gap(rounds, board), dr_arena.mean_rounds(rounds), kind),
               *paper.f6_numbers(dr_arena.failure_profile(rounds), kind),
               *paper.f7_numbers(dr_arena.verdict_shares(rounds), rounds.height, kind)]
    _labels_known(numbers)
    got = {n.quantity: n.ours for n in numbers}
    assert got["models in the tournament"] == 6
    assert got["matches played"] == rounds["match_id"].n_unique()
    assert got["Spearman rho, all rounds"] == pytest.approx(by_k["spearman"][-1])
    r1, all_rounds = got["Spearman rho, round 1 only"], got["Spearman rho, all rounds"]
    assert got["claim: round 1 alone gives a lower Spearman than all rounds"] == (
        "holds" if r1 < all_rounds else "does not hold")
    summary = paper.claims_summary(numbers, seed=1)
    assert summary.count("in the simulation.") == sum(q.startswith("claim:") for q in got)


def test_reference_agreement_is_scipy_spearman(small_logs: dr_arena.MatchSource) -> None:
    board = dr_arena.ratings(dr_arena.matches(small_logs.rounds), rounds=0, seed=0)
    agree = dr_arena.reference_agreement(board, small_logs.reference)
    assert agree is not None
    ref = [small_logs.reference[m] for m in board["model"]]
    assert agree.spearman == pytest.approx(sps.spearmanr(board["rating"].to_numpy(), ref).statistic)
    assert dr_arena.reference_agreement(board, dict(list(small_logs.reference.items())[:2])) is None


def test_too_few_reference_models_is_not_run(small_logs: dr_arena.MatchSource) -> None:
    numbers = paper.t6_numbers(None, small_logs)
    _labels_known(numbers)
    assert all(n.ours is None for n in numbers) and paper.t6_tables(None) == [] and paper.fig4_notes(None, "x") == []


def test_profile_table_shares_sum_to_100(small_logs: dr_arena.MatchSource) -> None:
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


def test_loop_numbers_and_tables() -> None:
    cfg = dr_arena.FRAMEWORK
    table2 = dr_arena.transition_table(cfg)
    _labels_known(paper.rules_numbers(table2))
    assert set(paper_loop.RULE_LABELS) == {f.name for f in dataclasses.fields(dr_arena.LoopConfig)}
    assert "kind" not in paper.rules_tables(table2, dr_arena.config_table(cfg), cfg.name)[0].frame.columns
    replays = dr_arena.replay_published_traces(cfg)
    replay = dr_arena.replay_cases_trace(cfg)
    _labels_known([*paper.traces_numbers(replays), *paper.page_numbers(replay)])
    shown = paper.page_tables(replay)[0].frame
    assert shown["page task"].to_list() == shown["task (depth × width)"].to_list()  # every round reproduced
    assert shown["page task"].to_list() == [f"2 × {w}" for w in range(2, 7)]
    assert shown["stop"][-1] == "SCORE GAP" and shown["score A–B"][-1] == "2–5"
    example = paper.traces_tables(replays[paper_loop.EXAMPLE_ID].replay)[0].frame
    assert example["logged task"].to_list() == example["task (depth × width)"].to_list()
    assert example["logged score"].to_list() == example["score A–B"].to_list()


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


def test_published_numbers_labels() -> None:
    t3 = pl.read_csv(published("dr_arena_table3_leaderboards"))
    agree = leaderboard_correlations(t3)
    _labels_known([*paper.t3_numbers(agree), *paper.t4_numbers(agree, t3.height, dr_arena.table4()),
                   *paper.t5_numbers(dr_arena.table5_check(dr_arena.table5())),
                   *paper.t7_numbers(dr_arena.table7_check(dr_arena.table7()))])


class _NoEndpoint:
    available = False
    model = "m"

    def not_run_reason(self) -> str:
        return "no LLM endpoint configured"


def test_examiner_not_run_reasons() -> None:
    prompts, why = paper.examiner_prompts(_NoEndpoint(), ["a", "b"])  # type: ignore[arg-type]
    assert prompts is None and why == "no LLM endpoint configured"
    numbers = paper.x_numbers(_NoEndpoint(), None, None, why)  # type: ignore[arg-type]
    _labels_known(numbers)
    assert [n.reason for n in numbers][:2] == ["no LLM endpoint configured"] * 2
    assert paper.x_tables(None) == [] and paper.x_notes(_NoEndpoint(), None, [], "") == []  # type: ignore[arg-type]
    assert paper.agent_names(" a, ,b ,") == ["a", "b"]

    class _Endpoint(_NoEndpoint):
        available = True

    _, why = paper.examiner_prompts(_Endpoint(), ["a"])  # type: ignore[arg-type]
    assert "two or more" in (why or "")


def test_fig7_reference_marks_the_printed_shares(small_logs: dr_arena.MatchSource) -> None:
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
