"""Cross-arena vote coding, tabulation, the Text Arena loader and the Text Arena simulator."""

import json
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import polars as pl
import pytest
from scipy import stats as sps

from analysis_lib.fetch import published
from analysis_lib.reading import DataValidationError
from analysis_lib.search_arena import cross_arena, loader, schema
from analysis_lib.search_arena.cross_arena import (
    compare_tie_shares,
    fact_synth_transcription,
    intent_tests,
    load_text_arena_report,
    search_arena_cross_battles,
    text_arena_kind,
    vote_table,
)
from analysis_lib.search_arena.cross_arena.text_arena import load_text_arena
from analysis_lib.search_arena.cross_arena.votes import INTENT_ORDER, orient_votes, vote_shares_long
from analysis_lib.search_arena.models import NON_SEARCH_RAW, TEXT_ARENA_SEARCH_MODEL
from analysis_lib.search_arena.simulate import simulate_text_arena
from analysis_lib.search_arena.simulate.text_arena_battles import PLANTED_COUNTS, planted_counts

FIXTURES = Path(__file__).parent / "fixtures" / "search_arena"
S, NS = TEXT_ARENA_SEARCH_MODEL, "gemini-2.5-pro-exp-03-25"
CONV = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]


_ROWS = iter(range(10**9))


def _row(**kw):
    """One battle; each call a conversation of its own (two rows without an id and with one conversation are one
    battle read twice, and the loader keeps the first)."""
    n = next(_ROWS)
    conv = [{**m, "content": f"{m['content']} ({n})"} if m.get("role") == "assistant" else m for m in CONV]
    row = {"model_a": S, "model_b": NS, "winner": "model_a", "intent": "Factual Lookup",
           "conversation_a": conv, "conversation_b": conv}
    row.update(kw)
    return row


def _write(tmp_path, rows, raw_lines=()):
    path = tmp_path / "text_arena_battles.jsonl"
    lines = [json.dumps(r) for r in rows] + list(raw_lines)
    path.write_text("\n".join(lines) + "\n")
    return path


# ------------------------------------------------------------------------------------------- coding


def test_orient_votes_codes_both_ties_as_tie():
    frame = pl.DataFrame(
        {
            "winner": ["model_a", "model_b", "tie", "tie (bothbad)", "model_a", "model_b", None],
            "search_side": ["model_a", "model_a", "model_a", "model_b", "model_b", "model_b", "model_a"],
        }
    )
    assert orient_votes(frame)["vote"].to_list() == ["search", "non-search", "tie", "tie", "non-search", "search", None]


def test_search_arena_selection_and_orientation():
    W = NON_SEARCH_RAW
    battles = pl.DataFrame(
        {
            "raw_model_a": [W, "sonar", W, "gpt-4o-search-preview", W, "sonar-pro", W],
            "raw_model_b": ["sonar", W, "gemini-2.0-flash-grounding", W, "sonar", "sonar", W],
            "winner": ["model_a", "model_a", "tie (bothbad)", "model_b", None, "model_a", "tie"],
            "primary_intent": ["Factual Lookup"] * 7,
        }
    )
    out = search_arena_cross_battles(battles)
    # kept: rows 0, 1, 2 (gpt opponent, no vote, no non-search model and self-battle dropped)
    assert out.height == 3
    assert out["vote"].to_list() == ["non-search", "search", "tie"]
    assert out["search_model"].to_list() == ["sonar", "sonar", "gemini-2.0-flash-grounding"]


def test_vote_table_counts_and_tests():
    frame = pl.DataFrame(
        {
            "intent": ["Factual Lookup"] * 10 + ["Other"] * 3,
            "vote": ["search"] * 7 + ["non-search"] * 2 + ["tie"] + ["non-search", "tie", "tie"],
        }
    )
    table = vote_table(frame)
    assert table["intent"].to_list()[: len(INTENT_ORDER)] == list(INTENT_ORDER)
    assert table["intent"].to_list()[-1] == "Other"
    fact = table.filter(pl.col("intent") == "Factual Lookup").row(0, named=True)
    assert (fact["n"], fact["search"], fact["non_search"], fact["tie"]) == (10, 7, 2, 1)
    assert fact["p_value"] == pytest.approx(sps.binomtest(7, 9, alternative="greater").pvalue)
    assert fact["favours"] == "search"
    empty = table.filter(pl.col("intent") == "Guidance").row(0, named=True)
    assert empty["n"] == 0 and empty["favours"] is None  # no battle favours no side
    assert vote_table(frame.filter(pl.col("vote") == "tie"))["favours"][0] == "even"  # battles, none decided
    overall = vote_table(frame, by=None).row(0, named=True)
    assert (overall["search"], overall["non_search"], overall["tie"]) == (7, 3, 3)
    with_null = vote_table(pl.concat([frame, pl.DataFrame({"intent": [None], "vote": ["tie"]}, schema=frame.schema)]))
    assert with_null["intent"].to_list()[-2:] == ["Other", None]
    long = vote_shares_long(table)
    assert set(long["vote"]) == {"search", "non-search", "tie"}
    assert "Other" not in long["intent"].to_list()


# ------------------------------------------------------------------------------------------- loader


def test_loader_reads_conversation_and_messages_fields(tmp_path):
    rows = [
        _row(),
        _row(model_a=NS, model_b=S, winner="model_a", intent="Text Processing"),
        {k.replace("conversation", "messages"): v for k, v in _row(winner="tie (bothbad)").items()},
        _row(winner=None),
    ]
    frame, report = load_text_arena_report(_write(tmp_path, rows, raw_lines=[""]))
    assert isinstance(report, loader.LoadReport)
    assert frame.height == 3 and report.n_raw == 4 and report.n_rows == 3
    assert report.dropped == {"no vote (winner null)": 1}
    assert frame["vote"].to_list() == ["search", "non-search", "tie"]
    assert frame["search_side"].to_list() == ["model_a", "model_b", "model_a"]
    assert frame["prompt"].to_list() == ["hi"] * 3
    assert report.flags == {
        "conversations read from conversation_a/conversation_b": 3,
        "conversations read from messages_a/messages_b": 1,
    }


def test_loader_accepts_primary_intent(tmp_path):
    row = _row()
    row["primary_intent"] = row.pop("intent")
    assert load_text_arena(_write(tmp_path, [row]))["intent"].to_list() == ["Factual Lookup"]


@pytest.mark.parametrize(
    "bad,match",
    [
        (_row(winner="model_c"), r"line 2, field 'winner': 'model_c'"),
        ({k: v for k, v in _row().items() if k != "winner"}, r"line 2, field 'winner': missing"),
        ({k: v for k, v in _row().items() if k != "intent"}, r"line 2, field 'intent'"),
        (_row(model_a=None), r"line 2, field 'model_a'"),
        ({k: v for k, v in _row().items() if not k.startswith("conversation")}, r"line 2: no conversation field"),
        ({k: v for k, v in _row().items() if k != "conversation_b"}, r"line 2, field 'conversation_b': missing"),
        (_row(conversation_a=[]), r"line 2, field 'conversation_a': expected a non-empty list"),
        (_row(conversation_b=[{"role": "user"}]), r"line 2, field 'conversation_b'\[0\]: expected a dict"),
        (
            _row(conversation_a=[{"role": "assistant", "content": "x"}]),
            r"line 2, field 'conversation_a'\[0\]: the first",
        ),
        (_row(model_a="gpt-4o", model_b="claude"), r"line 2, fields 'model_a'/'model_b': neither side"),
        (_row(model_b=S), r"line 2, fields 'model_a'/'model_b': both sides"),
        ([1, 2], r"text_arena_battles\.jsonl, line 2: not a JSON object \(a list\)"),
    ],
)
def test_loader_names_line_and_field(tmp_path, bad, match):
    with pytest.raises(DataValidationError, match=match):
        load_text_arena(_write(tmp_path, [_row(), bad]))


def test_loader_rejects_invalid_json_line(tmp_path):
    with pytest.raises(DataValidationError, match=r"line 2, column \d+: not valid JSON"):
        load_text_arena(_write(tmp_path, [_row()], raw_lines=['{"model_a": ']))


def test_loader_missing_file_says_where_to_get_it(tmp_path):
    with pytest.raises(DataValidationError, match=r"nope\.jsonl: not found.*lmarena/search-arena"):
        load_text_arena(tmp_path / "nope.jsonl")


# ---------------------------------------------------------------------------------------- simulator


def test_planted_counts_equal_published_totals():
    counts = planted_counts()
    totals = (counts["search"].sum(), counts["non_search"].sum(), counts["tie"].sum(), counts["n"].sum())
    assert totals == (143, 156, 245, 544)
    assert planted_counts(1000)["n"].sum() == 1000
    assert planted_counts(7)["n"].sum() == 7


def test_simulator_round_trip_recovers_planted_counts(tmp_path):
    sim = simulate_text_arena(n=544, seed=3)
    rows, planted = sim.rows, sim.planted
    assert len(rows) == 544
    frame = load_text_arena(_write(tmp_path, rows))
    table = vote_table(frame, order=list(PLANTED_COUNTS))
    got = table.select("intent", "search", "non_search", "tie", "n")
    assert got.equals(planted.counts.select("intent", "search", "non_search", "tie", "n").cast(got.schema))
    overall = vote_table(frame, by=None).row(0, named=True)
    assert round(overall["p_value"], 3) == 0.244


@pytest.mark.parametrize(
    "intent,p,alt",
    [("Factual Lookup", 0.012, "greater"), ("Info Synthesis", 0.095, "greater"), ("Text Processing", 0.077, "less")],
)
def test_simulator_per_intent_calibrated_to_paper(intent, p, alt):
    rows = simulate_text_arena(seed=0).rows
    table = vote_table(load_text_arena(rows))
    row = table.filter(pl.col("intent") == intent).row(0, named=True)
    assert row["alternative"] == alt and round(row["p_value"], 3) == p


def test_simulator_is_seeded_and_sample_source_works():
    a, b, c = (simulate_text_arena(n=50, seed=s).rows for s in (1, 1, 2))
    assert a == b and a != c
    frame, report = load_text_arena_report("sample:60", seed=1)
    assert frame.height == 60 and report.source == "sample:60"


# ------------------------------------------------------------------------ sources named "sample..."


def test_file_named_sample_is_read_as_a_file(tmp_path, monkeypatch):
    # a real file whose name starts with "sample" must not be replaced by the simulator
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sample_real.jsonl").write_text("\n".join(json.dumps(r) for r in [_row(), _row(winner="tie")]) + "\n")
    frame, report = load_text_arena_report("sample_real.jsonl")
    assert frame.height == 2 and report.source == "sample_real.jsonl"
    assert frame["vote"].to_list() == ["search", "tie"]
    assert text_arena_kind("sample_real.jsonl") == "user"  # a file (named like the simulator), not in the manifest


def test_path_with_colon_under_samples_is_read_as_a_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "samples").mkdir()
    (tmp_path / "samples" / "x:y.jsonl").write_text(json.dumps(_row()) + "\n")
    frame = load_text_arena("samples/x:y.jsonl")
    assert frame.height == 1
    assert text_arena_kind("samples/x:y.jsonl") == "user"
    with pytest.raises(DataValidationError, match=r"missing\.jsonl: not found"):
        load_text_arena("samples/missing.jsonl")


def test_sample_sources_use_the_simulator():
    frame, report = load_text_arena_report("sample")
    assert frame.height == 544 and report.source == "sample"
    assert text_arena_kind("sample") == text_arena_kind("sample:60") == "simulated"
    with pytest.raises(ValueError, match="sample:N"):
        load_text_arena("sample:abc")


@pytest.mark.parametrize("winner", schema.WINNERS)
def test_loader_accepts_every_release_winner_and_codes_it(tmp_path, winner):
    """Every winner of the shared vocabulary is read; model_a/model_b become the search or non-search vote
    depending on the side the search model sits on, both kinds of tie become ``tie``."""
    rows = [_row(winner=winner), _row(model_a=NS, model_b=S, winner=winner)]
    frame = load_text_arena(_write(tmp_path, rows))
    expected = {"model_a": ["search", "non-search"], "model_b": ["non-search", "search"]}.get(winner, ["tie", "tie"])
    assert frame["vote"].to_list() == expected


@pytest.mark.parametrize("winner", ["tie(bothbad)", "model_c", "A"])
def test_loader_rejects_winners_outside_the_vocabulary(tmp_path, winner):
    with pytest.raises(DataValidationError, match=r"line 1, field 'winner'"):
        load_text_arena(_write(tmp_path, [_row(winner=winner)]))


# ----------------------------------------------------------------------------- ties, per-intent tests


def _table(counts):
    rows = []
    for intent, (s, ns, t) in counts.items():
        for vote, k in (("search", s), ("non-search", ns), ("tie", t)):
            rows += [{"intent": intent, "vote": vote}] * k
    return vote_table(pl.DataFrame(rows))


def test_compare_tie_shares():
    text = _table({"Factual Lookup": (5, 3, 2), "Analysis": (1, 1, 8), "Guidance": (2, 2, 6),
                   "Creative Generation": (3, 0, 7), "Explanation": (4, 4, 2), "Other": (0, 0, 10)})
    search = _table({"Factual Lookup": (6, 3, 1), "Analysis": (4, 4, 2), "Guidance": (3, 3, 4),
                     "Creative Generation": (5, 4, 1), "Explanation": (3, 3, 4)})
    cmp = compare_tie_shares(text, search)
    # Analysis 0.8, Guidance 0.6 and Creative Generation 0.7: highest first
    assert cmp.most_tied == ("Analysis", "Creative Generation", "Guidance")
    assert cmp.overall_first == pytest.approx(35 / 60) and cmp.overall_second == pytest.approx(12 / 50)
    assert cmp.overall_difference == pytest.approx(35 / 60 - 12 / 50)
    row = cmp.by_intent.filter(pl.col("intent") == "Analysis").row(0, named=True)
    assert row["share_tie_first"] == pytest.approx(0.8) and row["difference"] == pytest.approx(0.6)
    assert cmp.by_intent["share_tie_first"].drop_nans().max() <= 1  # fractions, not percentages
    # five intents with battles in both; Explanation has the higher share in the second table
    assert (cmp.n_first_higher, cmp.n_compared) == (4, 5)
    assert compare_tie_shares(text, search, k=1).most_tied == ("Analysis",)
    with pytest.raises(ValueError, match="k must"):
        compare_tie_shares(text, search, k=0)


def test_intent_tests_two_sided_and_holm():
    from statsmodels.stats.multitest import multipletests

    table = _table({"Factual Lookup": (27, 12, 30), "Info Synthesis": (14, 7, 15), "Text Processing": (15, 25, 30),
                    "Other": (10, 2, 0)})
    out = intent_tests(table)
    assert out["intent"].to_list() == table["intent"].to_list()
    fact = out.filter(pl.col("intent") == "Factual Lookup").row(0, named=True)
    assert fact["p_two_sided"] == pytest.approx(sps.binomtest(27, 39).pvalue)
    assert fact["p_two_sided"] == pytest.approx(2 * fact["p_value"])  # the observed-direction value is half
    fam = out.filter(pl.col("in_family") & pl.col("p_two_sided").is_not_nan())
    assert fam.height == 3  # Other is outside the family; intents without decisive votes drop out
    expected = multipletests(fam["p_two_sided"].to_numpy(), method="holm")[1]
    assert fam["p_two_sided_holm"].to_list() == pytest.approx(list(expected))
    assert out.filter(pl.col("intent") == "Other")["p_two_sided_holm"].is_nan().all()


def test_fact_synth_transcription_reads_published_list():
    f1 = pl.read_csv(published("search_arena_table_f1_cross_benchmark"))
    authors = pl.read_csv(published("search_arena_authors_fact_synth_list"))
    res = fact_synth_transcription(f1, authors)
    assert round(res.table["pearson_r"], 3) == 0.771 and round(res.authors["pearson_r"], 3) == 0.675
    assert round(res.table["kendall_tau"], 3) == round(res.authors["kendall_tau"], 3) == 0.511
    assert res.repeated == (56.8, 54.8) and res.missing == (54.5, 30.3)
    assert res.positions == (6, 7, 8, 9, 10)
    with pytest.raises(ValueError, match="same models"):
        fact_synth_transcription(f1, authors.head(9))


def test_cross_arena_figure_draws_the_vote_counts():
    """Figure 8's bars are the vote table's counts, the intents in INTENT_ORDER from the top, one colour per vote,
    each bar labelled with its share of the intent's battles."""
    from analysis_lib.plotting.style import VOTE_COLORS
    from analysis_lib.search_arena.plots import vote_bars

    sim = simulate_text_arena(n=544, seed=0)
    rows, planted = sim.rows, sim.planted
    table = cross_arena.vote_table(cross_arena.text_arena.load_text_arena(rows))
    long = cross_arena.votes.vote_shares_long(table)
    fig = vote_bars(long, cross_arena.votes.INTENT_ORDER)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == list(cross_arena.votes.INTENT_ORDER) and ax.yaxis_inverted()
    counts = planted.counts.filter(pl.col("intent").is_in(list(cross_arena.votes.INTENT_ORDER)))
    by_intent = {r["intent"]: r for r in counts.iter_rows(named=True)}
    # one group of bars per vote (search, non-search, tie), each over the intents in order, in the vote's colour
    assert len(ax.containers) == 3
    for bars, vote, col in zip(ax.containers, ("search", "non-search", "tie"), ("search", "non_search", "tie"),
                               strict=True):
        wanted = [by_intent[i][col] for i in cross_arena.votes.INTENT_ORDER]
        assert [b.get_width() for b in bars] == pytest.approx(wanted)
        assert {matplotlib.colors.to_hex(b.get_facecolor()) for b in bars} == {VOTE_COLORS[vote]}
        centres = [b.get_y() + b.get_height() / 2 for b in bars]
        assert centres == sorted(centres)  # first intent on top (the y axis inverted)
    first = table.row(0, named=True)  # Factual Lookup
    assert f"{first['share_search']:.0%}" == ax.texts[0].get_text()
    plt.close(fig)


# ------------------------------------------------------------------------------------------ chapter 05's numbers


def _recorded(tmp_path, analysis_id, result, **kw):
    """``result`` recorded for ``analysis_id`` through the book's recorder against the real paper values."""
    from bookbuild.recorder import Recorder

    rec = Recorder(tmp_path, "05_cross_arena", data="real")
    rec.record(analysis_id, result, **kw)
    return {r.quantity: r for r in rec.results}


def _published(arena):
    from analysis_lib import stats

    t = cross_arena.published_vote_totals().row(by_predicate=pl.col("arena") == arena, named=True)
    counts = (t["search_preferred"], t["non_search_preferred"], t["ties"])
    return {"published": stats.preference_binomial_test(*counts),
            "split": stats.preference_binomial_test(*counts, split_ties=True)}


def test_chapter_text_arena_numbers_record_the_vote_counts(tmp_path):
    from bookbuild.papers import search_arena as sa

    frame, _ = load_text_arena_report(FIXTURES / "text_arena_small.jsonl")
    by_intent = vote_table(frame)
    tests = intent_tests(by_intent)
    votes = {**_published("text_arena"), "overall": vote_table(frame, by=None), "tests": tests}
    by = _recorded(tmp_path, "SA-33T", votes, notes=sa.vote_notes("SA-33T", votes, simulated=False))
    got = {q: r.ours for q, r in by.items()}
    assert (got["battles"], got["ties"], got["search-preferred"], got["non-search-preferred"]) == (3, 1, 2, 0)
    # two search-preferred of two decided votes: one-sided binomial p = 0.5 ** 2 (scipy's exact test)
    assert got["p-value, battle data"] == pytest.approx(sps.binomtest(2, 2, 0.5, alternative="greater").pvalue)
    assert got["Factual Lookup: favoured side"] == "search" and by["ties"].note == "tie and tie (bothbad)"
    assert by["Factual Lookup p-value"].note.startswith("one-sided in the observed direction; two-sided 0.5")
    # the published totals are the paper's test (a match), whatever data the battles are
    published = by["p-value, published totals (one-sided, ties excluded)"]
    assert (published.data, published.status) == ("published", "match") and by["battles"].data == "real"
    assert by["Text Processing p-value"].status == "not run"  # no Text Processing battle in the file
    counts, shown = (t.frame for t in sa.vote_tables("Text Arena", by_intent, tests))
    assert counts.columns == ["intent", "battles", "search", "non-search", "ties", "% search", "% non-search", "% ties"]
    assert counts.filter(pl.col("intent") == "Factual Lookup").row(0) == ("Factual Lookup", 2, 2, 0, 0, 100.0, 0.0, 0.0)
    assert shown.columns == ["intent", "favoured side", "p (paper's test)", "p two-sided", "p two-sided, Holm"]


def test_chapter_search_arena_without_the_non_search_model_is_not_run(tmp_path):
    from analysis_lib.search_arena.simulate import simulate_release
    from bookbuild.papers import search_arena as sa

    battles = loader.load_battles(simulate_release(200, seed=0).raw)
    without = battles.filter((pl.col("raw_model_a") != NON_SEARCH_RAW) & (pl.col("raw_model_b") != NON_SEARCH_RAW))
    cross = search_arena_cross_battles(without)
    assert sa.sa33s_missing(cross) == sa.NO_BATTLES
    votes = {**_published("search_arena"), "overall": None, "tests": intent_tests(vote_table(cross))}
    by = _recorded(tmp_path, "SA-33S", votes, reason=sa.NO_BATTLES,
                   notes=sa.vote_notes("SA-33S", votes, simulated=True))
    assert {q for q, r in by.items() if r.status != "not run"} == {
        "p-value, published totals (one-sided, ties excluded)",
        "p-value, published totals, ties split half to each side"}
    assert {r.reason for r in by.values() if r.status == "not run"} == {sa.NO_BATTLES}
    assert "{" not in by["Factual Lookup p-value"].note
    text_frame, _ = load_text_arena_report("sample:120", seed=1)
    ties = compare_tie_shares(vote_table(text_frame), vote_table(text_frame).clear())
    f8 = {"most_tied": ", ".join(sorted(ties.most_tied)), "ties": None, "higher": None}
    by = _recorded(tmp_path, "SA-F8", f8, reason=sa.NO_BATTLES, notes=sa.run_notes("SA-F8", f8, {"ties": sa.TIE_NOTE}))
    assert [r.reason for r in by.values()] == ["", sa.NO_BATTLES, sa.NO_BATTLES]


def test_chapter_search_arena_without_intent_labels_records_the_totals_only(tmp_path):
    from analysis_lib.search_arena.simulate import simulate_release
    from bookbuild.papers import search_arena as sa

    battles = loader.load_battles(simulate_release(3000, seed=0).raw).with_columns(
        pl.lit(None, dtype=pl.String).alias("primary_intent"))
    cross = search_arena_cross_battles(battles)
    assert cross.height > 0 and sa.sa33s_missing(cross) == sa.NO_INTENTS
    votes = {**_published("search_arena"), "overall": vote_table(cross, by=None),
             "tests": intent_tests(vote_table(cross))}
    by = _recorded(tmp_path, "SA-33S", votes, reason=sa.NO_INTENTS, notes=sa.vote_notes("SA-33S", votes, False))
    assert by["battles"].ours == cross.height and not by["battles"].reason  # the cross battles are the voted ones
    assert by["Factual Lookup p-value"].reason == by["Info Synthesis: favoured side"].reason == sa.NO_INTENTS


def test_chapter_text_arena_read_names_what_was_left_out():
    from bookbuild.papers import search_arena as sa

    assert sa.text_arena_read(4, 3, {"no vote (winner null)": 1}) == (
        " 4 rows read, 3 voted battles kept (left out: 1 no vote (winner null)).")
    assert sa.text_arena_read(2, 2, {}) == " 2 rows read, 2 voted battles kept."


def test_vote_bars_draw_each_count_and_share_at_10_pt():
    from analysis_lib.plotting.display import prepare, smallest_font_pt
    from analysis_lib.search_arena.plots import vote_bars

    frame, _ = load_text_arena_report("sample", seed=0)
    long = vote_shares_long(vote_table(frame))
    fig = vote_bars(long, INTENT_ORDER, title="Fig 8")
    widths = sorted(b.get_width() for bars in fig.axes[0].containers for b in bars)
    assert widths == sorted(float(c) for c in long["count"])
    labels = {t.get_text() for t in fig.axes[0].texts}
    assert {f"{s:.0%}" for s in long["share"]} <= labels
    prepare(fig, "simulated")
    assert smallest_font_pt(fig) >= 10 - 0.05 and fig.get_size_inches()[0] == pytest.approx(7.0)
    plt.close(fig)


def test_appendix_f_figures_draw_every_published_model():
    from analysis_lib.search_arena.cross_arena import f1_radar, f1_scatter, f2_scatter, figure_f2_scores, table_f1

    f1, f2 = table_f1(), figure_f2_scores()
    radar = f1_radar(f1)
    assert len(radar.axes[0].get_lines()) >= f1.height  # one closed polygon per model
    scatter = f1_scatter(f1, "simpleqa", "SimpleQA accuracy (%)", 0.5, 0.25)
    points = [c for c in scatter.axes[0].containers if hasattr(c, "lines")]
    xs = sorted(float(x) for c in points for x in c.lines[0].get_xdata())
    assert xs == sorted(f1["simpleqa"].to_list()) and "τ = 0.500, r = 0.250" in scatter.axes[0].get_title()
    f2_points = [c for c in f2_scatter(f2).axes[0].containers if hasattr(c, "lines")]
    assert sum(len(c.lines[0].get_xdata()) for c in f2_points) == f2.height
    plt.close("all")
