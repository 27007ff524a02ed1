"""The DR-Arena chapter's section functions: labels exist in the paper-values table, claims follow their
thresholds, the paper's reference values are placed where the paper puts them, tables are trimmed."""

from __future__ import annotations

import dataclasses

import numpy as np
import polars as pl
import pytest

from analysis_lib.dr_arena import (
    chapter_examiner,
    chapter_logs,
    chapter_loop,
    chapter_published,
    chapter_trees,
    loop,
    source,
)
from analysis_lib.fetch import published
from bookbuild import paper_values
from bookbuild.sections import Section

#: Two small trees (root with children to depth 3) for a quick simulated tournament.
TREE = {"children": [{"children": [{"children": []}, {"children": []}]}, {"children": [{"children": []}]},
                     {"children": []}]}


@pytest.fixture(scope="module")
def small_logs() -> source.MatchSource:
    return source.load_match_source("", {"t1": TREE, "t2": TREE}, n_agents=6, n_rounds=3, seed=1)


def _labels_known(sec: Section) -> None:
    for n in sec.numbers:
        paper_values.lookup(n.analysis_id, n.quantity)  # raises KeyError naming the CSV when a label is missing
        assert (n.reason != "") == (n.ours is None)


def test_log_sections_label_and_record(small_logs: source.MatchSource) -> None:
    swiss, board = chapter_logs.swiss_section(small_logs, n_bootstrap=5, seed=0)
    sections = [swiss, chapter_logs.correlation_section(small_logs, board), chapter_logs.gap_section(small_logs, board),
                chapter_logs.profile_section(small_logs), chapter_logs.verdict_section(small_logs)]
    for sec in sections:
        _labels_known(sec)
        assert all(f.kind == "simulated" for f in sec.figures)
    got = {n.quantity: n.ours for sec in sections for n in sec.numbers}
    assert got["models in the tournament"] == 6
    assert got["matches played"] == small_logs.rounds["match_id"].n_unique()
    r1, all_rounds = got["Spearman rho, round 1 only"], got["Spearman rho, all rounds"]
    assert got["claim: round 1 alone gives a lower Spearman than all rounds"] == (
        "holds" if r1 < all_rounds else "does not hold")
    summary = chapter_logs.claims_summary([n for sec in sections for n in sec.numbers], seed=1)
    assert summary.count("in the simulation.") == sum(q.startswith("claim:") for q in got)


def test_profile_table_shares_sum_to_100(small_logs: source.MatchSource) -> None:
    sec = chapter_logs.profile_section(small_logs)
    table = sec.tables[0].frame
    shares = table.select(pl.col("^(Deep|Wide|Both|None) %$")).fill_null(0).to_numpy().sum(axis=1)
    lost = table["losses"].to_numpy() > 0
    assert np.allclose(shares[lost], 100)
    assert not any(c.startswith("n_") or c.startswith("share_") for c in table.columns)


def test_fig4_contradiction_sentence() -> None:
    text = chapter_logs.fig4_contradiction(round1=False, round2=True, kind="simulated")
    assert "Unlike the paper's Fig 4" in text and "this simulated tournament" in text and "round 1 alone" in text
    both = chapter_logs.fig4_contradiction(round1=False, round2=False, kind="real")
    assert "these match logs" in both and f"more than {chapter_logs.ROUND2_MARGIN:g} below" in both


def test_fig4_reference_is_table6() -> None:
    spearman, pearson = chapter_logs.fig4_reference(last_k=10)
    assert spearman.x == (1.0, 2.0, 10.0) and spearman.y == (0.77, 0.94, 0.94)
    assert pearson.y == (0.41, 0.68, 0.74)
    assert "paper" in spearman.label and "paper" in pearson.label


def test_fig5_reference_gaps_from_table3() -> None:
    ref = chapter_logs.fig5_reference()
    # Table 3's DR-Arena Elo: GPT-5.1 1084, Grok-4 958, Gemini 1054, o3 1041
    assert ref.x == (126.0, 13.0, 43.0) and ref.y == (2.0, 2.8, 3.07)
    assert "126, 13 and 43" in chapter_logs.FIG5_NOTE


def test_mle_note_says_when_ridge_was_needed() -> None:
    board = pl.DataFrame({"ridge": [0.01]})
    assert chapter_logs.mle_note(True, 0, 100, board).startswith("The MLE exists")
    warn = chapter_logs.mle_note(False, 5, 100, board)
    assert "No maximum-likelihood estimate" in warn and "more than 2.5%" in warn and "reg = 0.01" in warn
    assert "No bootstrap" in chapter_logs.mle_note(True, 0, 0, board)


def test_loop_sections() -> None:
    rules = chapter_loop.rules_section(loop.FRAMEWORK)
    _labels_known(rules)
    assert set(chapter_loop.RULE_LABELS) == {f.name for f in dataclasses.fields(loop.LoopConfig)}
    assert "kind" not in rules.tables[0].frame.columns
    traces = chapter_loop.traces_section(loop.FRAMEWORK)
    page = chapter_loop.page_section(loop.FRAMEWORK)
    for sec in (traces, page):
        _labels_known(sec)
    shown = page.tables[0].frame
    assert shown["page task"].to_list() == shown["task (depth × width)"].to_list()  # every round reproduced
    assert shown["page task"].to_list() == [f"2 × {w}" for w in range(2, 7)]
    assert shown["stop"][-1] == "SCORE GAP" and shown["score A–B"][-1] == "2–5"
    example = traces.tables[0].frame
    assert example["logged task"].to_list() == example["task (depth × width)"].to_list()
    assert example["logged score"].to_list() == example["score A–B"].to_list()


def test_trees_banner_names_the_missing_trees() -> None:
    trees = {"tree_a": TREE}
    summary = {"trees": [{"tree_id": "tree_a"}, {"tree_id": "tree_b"}]}
    assert chapter_trees.missing_trees(summary, trees) == ["tree_b"]
    text = chapter_trees.trees_detail(trees, ["tree_b"])
    assert "The other 1 trees listed" in text and "(tree_b)" in text and "cover 1 trees" in text


def test_published_sections_labels() -> None:
    t3 = pl.read_csv(published("dr_arena_table3_leaderboards"))
    for sec in (chapter_published.table3_section(t3), chapter_published.table4_section(t3),
                chapter_published.table5_section(), chapter_published.table7_section()):
        _labels_known(sec)


class _NoEndpoint:
    available = False

    def not_run_reason(self) -> str:
        return "no LLM endpoint configured"


def test_examiner_not_run_reasons() -> None:
    sec = chapter_examiner.examiner_section(_NoEndpoint(), ["a", "b"], {}, "results")  # type: ignore[arg-type]
    _labels_known(sec)
    assert [n.reason for n in sec.numbers][:2] == ["no LLM endpoint configured"] * 2
    assert chapter_examiner.agent_names(" a, ,b ,") == ["a", "b"]

    class _Endpoint(_NoEndpoint):
        available = True

    assert "two or more" in (chapter_examiner.why_not_run(_Endpoint(), ["a"]) or "")  # type: ignore[arg-type]


def test_fig7_reference_marks_the_printed_shares(small_logs: source.MatchSource) -> None:
    verdicts, failures = chapter_logs.fig7_reference()
    assert dict(verdicts.values) == {"Better": 49.9, "Much\nBetter": 32.8} and verdicts.ax == 0
    assert dict(failures.values) == {"DEEP": 32.3, "WIDE": 30.0} and failures.ax == 1
    sec = chapter_logs.verdict_section(small_logs)
    fig = sec.figures[0].figure
    ticks = {t.get_text() for t in fig.axes[0].get_xticklabels()}
    assert set(verdicts.values) <= ticks  # every mark has its bar (else draw_reference raises)
