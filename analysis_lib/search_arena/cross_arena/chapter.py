"""Chapter 05's sections (SA §3.3, App. F): each function computes one section from its inputs and returns a
:class:`~bookbuild.sections.Section` (numbers to record, figures, tables with readable columns,
reader text), so a notebook cell shows it in a few lines. The notes and reasons the book records are built here.

- :func:`published_totals`: SA-33T / SA-33S p-values from the published vote totals (ties excluded, one-sided in
  the observed direction; ties split half to each side as a sensitivity check).
- :func:`text_arena_section`, :func:`search_arena_section`: the same test on the battles, overall and per intent
  (a Search Arena release without a voted battle of the non-search Gemini records "not run", not zeros).
- :func:`figure8_section`: Fig 8 and the tie-share comparison.
- :func:`table_f1_section`, :func:`figure_f1_section`, :func:`figure_f2_section`: Appendix F on the published scores.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from analysis_lib import plotting, stats
from analysis_lib.fetch import published
from analysis_lib.search_arena import models, plots
from analysis_lib.search_arena.cross_arena.appendix_f import fact_synth_transcription, search_vs_nonsearch_gains
from analysis_lib.search_arena.cross_arena.votes import (
    INTENT_ORDER,
    compare_tie_shares,
    intent_tests,
    search_arena_cross_battles,
    vote_shares_long,
    vote_table,
)
from bookbuild import paper_values
from bookbuild.sections import Figure, Number, Section, Table, not_run

#: The counts recorded per arena: (quantity, column of :func:`vote_table`).
BATTLE_QUANTITIES = [("battles", "n"), ("ties", "tie"), ("search-preferred", "search"),
                     ("non-search-preferred", "non_search"), ("p-value, battle data", "p_value")]
#: The intents whose p-values the paper reports, per arena.
TEXT_INTENTS = ["Factual Lookup", "Info Synthesis", "Text Processing"]
SEARCH_INTENTS = ["Factual Lookup", "Info Synthesis"]
NO_BATTLES = "0 battles: this release has no voted battle of the non-search gemini-2.5-pro against a search model"
NO_INTENTS = "the release has no `primary_intent`"
TEXT_TARGET = "calibration target of the Text Arena simulator"
SEARCH_TARGET = ("calibration target of the Search Arena simulator in expectation only: each simulated release draws "
                 "these few hundred votes at random, so one release's counts and p-value scatter widely around the "
                 "paper's")
#: The vote table's columns shown (counts and shares) and the test table's (side and p-values), with their headers.
VOTE_COLUMNS = {"intent": "intent", "n": "battles", "search": "search", "non_search": "non-search", "tie": "ties",
                "share_search": "% search", "share_non_search": "% non-search", "share_tie": "% ties"}
TEST_COLUMNS = {"intent": "intent", "favours": "favoured side", "p_value": "p (paper's test)",
                "p_two_sided": "p two-sided", "p_two_sided_holm": "p two-sided, Holm"}


def published_totals(analysis_id: str, arena: str) -> Section:
    """The two p-values of one arena's published totals (``arena``: ``text_arena`` or ``search_arena``), with the
    totals table for the Text Arena section (it shows both arenas)."""
    votes = pl.read_csv(published("search_arena_cross_arena_votes"))
    t = {r["arena"]: r for r in votes.iter_rows(named=True)}[arena]
    test = stats.preference_binomial_test(t["search_preferred"], t["non_search_preferred"], t["ties"])
    split = stats.preference_binomial_test(t["search_preferred"], t["non_search_preferred"], t["ties"],
                                           split_ties=True)
    numbers = [
        Number(analysis_id, "p-value, published totals (one-sided, ties excluded)", test.p_value, data="published"),
        Number(analysis_id, "p-value, published totals, ties split half to each side", split.p_value,
               data="published"),
    ]
    shown = votes.rename({c: c.replace("_", " ") for c in votes.columns})
    tables = [Table(shown, "Published vote totals (SA §3.3)")] if arena == "text_arena" else []
    return Section(numbers, tables=tables)


def _intent_note(row: dict[str, object], extra: str) -> str:
    return (f"one-sided in the observed direction; two-sided {row['p_two_sided']:.3g}, "
            f"Holm over 8 intents {row['p_two_sided_holm']:.3g}{extra}")


def _readable(table: pl.DataFrame, columns: dict[str, str]) -> pl.DataFrame:
    """The ``columns`` of a vote or test table under readable headers, shares as percentages (fits the page)."""
    shown = table.select(list(columns)).rename(columns)
    return shown.with_columns(pl.selectors.starts_with("% ").mul(100).round(1))


@dataclass
class ArenaVotes:
    """One arena's section and its per-intent vote table (``None`` when the arena has no battle to count, or no
    intent labels: ``missing`` says which)."""

    section: Section
    by_intent: pl.DataFrame | None
    missing: str = NO_BATTLES


def text_arena_section(text_battles: pl.DataFrame, text_kind: str) -> ArenaVotes:
    """SA-33T on the Text Arena battles: counts and p-value overall, the paper's three intents' p-values and
    favoured sides (on the simulator these are its calibration targets)."""
    target = TEXT_TARGET if text_kind == "simulated" else ""
    overall = vote_table(text_battles, by=None).row(0, named=True)
    numbers = [Number("SA-33T", q, overall[c], data=text_kind, note=target) for q, c in BATTLE_QUANTITIES]
    by_intent = vote_table(text_battles)
    tests = intent_tests(by_intent)
    for r in tests.filter(pl.col("intent").is_in(TEXT_INTENTS)).iter_rows(named=True):
        numbers.append(Number("SA-33T", f"{r['intent']} p-value", r["p_value"], data=text_kind,
                              note=_intent_note(r, f"; {target}" if target else "")))
        numbers.append(Number("SA-33T", f"{r['intent']}: favoured side", r["favours"], data=text_kind))
    tables = [Table(_readable(by_intent, VOTE_COLUMNS), "Text Arena votes by intent (% of each intent's battles)"),
              Table(_readable(tests, TEST_COLUMNS), "Text Arena binomial tests by intent", 4)]
    return ArenaVotes(Section(numbers, tables=tables), by_intent)


def search_arena_section(battles: pl.DataFrame, kind: str) -> ArenaVotes:
    """SA-33S on the Search Arena battles of the non-search Gemini against the search models other than OpenAI's;
    a release without such a battle records every quantity as not run (nothing to count is not a count of 0)."""
    cross = search_arena_cross_battles(battles)
    if cross.height == 0:
        quantities = [q for q, _ in BATTLE_QUANTITIES]
        quantities += [f"{i}{suffix}" for i in SEARCH_INTENTS for suffix in (" p-value", ": favoured side")]
        return ArenaVotes(Section(not_run("SA-33S", quantities, NO_BATTLES)), None)
    simulated = kind == "simulated"
    target = SEARCH_TARGET if simulated else ""
    overall = vote_table(cross, by=None).row(0, named=True)
    numbers = [Number("SA-33S", q, overall[c], note=target) for q, c in BATTLE_QUANTITIES]
    if cross["primary_intent"].null_count() == cross.height:  # a release without intent labels
        quantities = [f"{i}{suffix}" for i in SEARCH_INTENTS for suffix in (" p-value", ": favoured side")]
        return ArenaVotes(Section(numbers + not_run("SA-33S", quantities, NO_INTENTS)), None, NO_INTENTS)
    by_intent = vote_table(cross)
    tests = intent_tests(by_intent)
    no_effect = "; no per-intent effect is planted in the Search Arena simulator" if simulated else ""
    for r in tests.filter(pl.col("intent").is_in(SEARCH_INTENTS)).iter_rows(named=True):
        numbers.append(Number("SA-33S", f"{r['intent']} p-value", r["p_value"], note=_intent_note(r, no_effect)))
        numbers.append(Number("SA-33S", f"{r['intent']}: favoured side", r["favours"]))
    tables = [Table(_readable(by_intent, VOTE_COLUMNS), "Search Arena votes by intent (% of each intent's battles)"),
              Table(_readable(tests, TEST_COLUMNS), "Search Arena binomial tests by intent", 4)]
    return ArenaVotes(Section(numbers, tables=tables), by_intent)


def figure8_section(text: ArenaVotes, search: ArenaVotes, text_kind: str, kind: str) -> Section:
    """Fig 8 (votes by intent in each arena) and the tie shares compared; without Search Arena battles only the
    Text Arena panel and the Text Arena number."""
    if text.by_intent is None:
        raise ValueError("figure8_section: the Text Arena section has no vote table")
    figures = [Figure(plots.vote_bars(
        vote_shares_long(text.by_intent), INTENT_ORDER,
        title="Text Arena: search vs non-search Gemini-2.5-Pro (Fig 8, left)"), text_kind)]
    if search.by_intent is None:
        ties_text = compare_tie_shares(text.by_intent, text.by_intent.clear())  # most_tied reads the first only
        numbers = [Number("SA-F8", "Text Arena: three intents with the highest tie share",
                          ", ".join(sorted(ties_text.most_tied)), data=text_kind)]
        numbers += not_run("SA-F8", ["tie share, Text Arena minus Search Arena (overall, points)",
                                     "intents with more ties in the Text Arena than in the Search Arena"],
                             search.missing)
        return Section(numbers, figures)
    figures.append(Figure(plots.vote_bars(
        vote_shares_long(search.by_intent), INTENT_ORDER,
        title="Search Arena: non-search Gemini-2.5-Pro vs search models (Fig 8, right)"), kind))
    ties = compare_tie_shares(text.by_intent, search.by_intent)
    both = "simulated" if "simulated" in (kind, text_kind) else kind
    numbers = [
        Number("SA-F8", "Text Arena: three intents with the highest tie share", ", ".join(sorted(ties.most_tied)),
               data=text_kind),
        Number("SA-F8", "tie share, Text Arena minus Search Arena (overall, points)", 100 * ties.overall_difference,
               data=both, note=f"Text Arena {ties.overall_first:.1%}, Search Arena {ties.overall_second:.1%}"),
        Number("SA-F8", "intents with more ties in the Text Arena than in the Search Arena",
               f"{ties.n_first_higher} of {ties.n_compared}", data=both),
    ]
    table = ties.by_intent.with_columns(
        pl.col("share_tie_first", "share_tie_second", "difference").mul(100).round(1)
    ).rename({"share_tie_first": "% tie Text Arena", "share_tie_second": "% tie Search Arena",
              "difference": "difference (points)", "n_first": "n Text Arena", "n_second": "n Search Arena"})
    return Section(numbers, figures, [Table(table, "Tie shares by intent")])


#: The Table F.1 pairs recorded, with their names on the page.
F1_PAIRS = {
    ("search_arena", "simpleqa"): "Search Arena vs SimpleQA",
    ("search_arena", "arenahard_v2"): "Search Arena vs ArenaHard-v2",
    ("other", "arenahard_v2"): "Search Arena (Other) vs ArenaHard-v2",
    ("fact_synth", "arenahard_v2"): "Search Arena (Fact+Synth) vs ArenaHard-v2",
}
#: Readable names of the Table F.1 columns.
BENCHMARKS = {"search_arena": "Search Arena", "fact_synth": "Search Arena (Fact+Synth)", "simpleqa": "SimpleQA",
              "arenahard_v2": "ArenaHard-v2", "other": "Search Arena (Other)"}


@dataclass
class TableF1:
    """Table F.1 as published, its correlations (one row per pair) and the SA-F1T section."""

    scores: pl.DataFrame
    correlations: pl.DataFrame
    section: Section

    def pair(self, x: str, y: str) -> dict[str, float]:
        return self.correlations.filter((pl.col("benchmark_x") == x) & (pl.col("benchmark_y") == y)).row(
            0, named=True)


def _correlation_table(corr: pl.DataFrame) -> pl.DataFrame:
    """The correlations with the benchmarks by name and short column headers (the raw frame ran off the page)."""
    named = corr.with_columns(pl.col("benchmark_x", "benchmark_y").replace(BENCHMARKS))
    keep = [c for c in named.columns if c.startswith(("benchmark", "kendall_tau", "pearson_r"))]
    headers = {"benchmark_x": "x", "benchmark_y": "y", "kendall_tau": "τ (ordinal ranks)",
               "kendall_tau_b": "τ-b (raw scores)", "pearson_r": "Pearson r"}
    return named.select(keep).rename(
        lambda c: headers.get(c, c.replace("kendall_tau", "τ").replace("pearson_r", "r").replace("_", " ")))


def table_f1_section(n_bootstrap: int, seed: int) -> TableF1:
    """SA-F1T: Kendall τ (ordinal ranks, the authors' convention) and Pearson r for every pair of Table F.1's
    columns with bootstrap intervals; τ-b on raw scores; the Fact+Synth transcription check as reader text."""
    f1 = pl.read_csv(published("search_arena_table_f1_cross_benchmark"))
    corr = stats.benchmark_correlations(f1, n_bootstrap=n_bootstrap, seed=seed)
    result = TableF1(f1, corr, Section())
    numbers = []
    for (x, y), name in F1_PAIRS.items():
        p = result.pair(x, y)
        numbers.append(Number("SA-F1T", f"{name}: Kendall tau (ordinal ranks)", p["kendall_tau"], data="published"))
        numbers.append(Number("SA-F1T", f"{name}: Pearson r", p["pearson_r"], data="published"))
    sqa = result.pair("search_arena", "simpleqa")
    numbers.append(Number("SA-F1T", "Search Arena vs SimpleQA: Kendall tau-b on raw scores", sqa["kendall_tau_b"],
                          data="published"))
    fs = fact_synth_transcription(f1, pl.read_csv(published("search_arena_authors_fact_synth_list")))
    numbers += [
        Number("SA-F1T", "Search Arena (Fact+Synth) vs ArenaHard-v2: Pearson r from the authors' hand-typed list",
               fs.authors["pearson_r"], data="published"),
        Number("SA-F1T", "Search Arena (Fact+Synth) vs ArenaHard-v2: Kendall tau from the authors' hand-typed list",
               fs.authors["kendall_tau"], data="published"),
    ]
    paper = {q: paper_values.lookup("SA-F1T", q).paper for q in (
        "Search Arena vs SimpleQA: Kendall tau (ordinal ranks)",
        "Search Arena (Fact+Synth) vs ArenaHard-v2: Kendall tau (ordinal ranks)",
        "Search Arena (Fact+Synth) vs ArenaHard-v2: Pearson r")}
    sqa_tau, fs_tau, fs_r = paper.values()
    tied = f1.group_by("simpleqa", maintain_order=True).agg("model").filter(pl.col("model").list.len() > 1)
    tied_text = "; ".join(f"{v:g} for " + " and ".join(f"`{m}`" for m in ms) for v, ms in tied.iter_rows())

    def listed(values: tuple[float, ...]) -> str:
        return " and ".join(f"{v:g}" for v in values)

    result.section.notes.append(f"""
**Which Kendall variant.** Ordinal ranks have no ties, so τ-a, τ-b and τ-c on them coincide and reproduce the
published τ. The choice matters only where a column has tied scores: SimpleQA has tied scores
({tied_text}). Breaking them by table order gives τ = {sqa["kendall_tau"]:.3f} against Search Arena (paper:
{sqa_tau}); τ-b on the raw scores, which counts tied pairs as neither concordant nor discordant, gives
{sqa["kendall_tau_b"]:.3f}. The ordinal value depends on the row order of tied models; τ-b does not.

**Why r for Fact+Synth vs ArenaHard-v2 differs.** With the Fact+Synth column exactly as printed in Table F.1
we get r = {fs.table["pearson_r"]:.3f}, not {fs_r}. The authors' analysis notebook does not read the table: its
hand-typed Fact+Synth list (kept here as `published/search_arena_authors_fact_synth_list.csv`) repeats
{listed(fs.repeated)} and leaves out {listed(fs.missing)}, so it differs from the table at positions
{", ".join(map(str, fs.positions))} of the ten models. That list gives r = {fs.authors["pearson_r"]:.3f} (paper:
{fs_r}) and τ = {fs.authors["kendall_tau"]:.3f}, the same τ as the table column ({fs.table["kendall_tau"]:.3f};
paper: {fs_tau}), since both rank the ten models in the same order. We keep the table's values; the published r
is a transcription slip in the computation, not a different method.
""")
    result.section.numbers = numbers
    result.section.tables = [Table(_correlation_table(corr),
                                   "Correlations between the Table F.1 columns, with bootstrap 95% intervals")]
    return result


def _bars(frame: pl.DataFrame, column: str) -> np.ndarray:
    """(2, n) lower / upper error-bar lengths of a published score from its ``_lo`` (negative) and ``_hi``."""
    return np.vstack([(-frame[f"{column}_lo"]).to_numpy(), frame[f"{column}_hi"].to_numpy()])


def figure_f1_section(f1: TableF1) -> Section:
    """SA-FF1: the radar of the five Table F.1 scores per model, Search Arena against each offline benchmark with
    Table F.1's intervals, and the spread (SD over models) of each benchmark."""
    scores = f1.scores
    named = scores.with_columns(models.paper_name(pl.col("model")))  # the paper's model names on the figures
    axes = ["search_arena", "fact_synth", "simpleqa", "arenahard_v2", "other"]
    figures = [Figure(plotting.radar(named, "model", axes, axis_labels=[BENCHMARKS[a] for a in axes],
                                     title="Model scores across benchmarks, win rate or accuracy (Fig F.1)"),
                      "published")]
    for bench, label in [("simpleqa", "SimpleQA accuracy (%)"), ("arenahard_v2", "ArenaHard-v2 win rate (%)")]:
        c = f1.pair("search_arena", bench)
        figures.append(Figure(plotting.error_scatter(
            scores[bench].to_numpy(), scores["search_arena"].to_numpy(),
            xerr=_bars(scores, bench),
            yerr=_bars(scores, "search_arena"),
            labels=named["model"].to_list(), xlabel=label, ylabel="Search Arena win rate (%)",
            title=f"Search Arena vs {label.split(' ')[0]} (Fig F.1): τ = {c['kendall_tau']:.3f}, "
                  f"r = {c['pearson_r']:.3f}"), "published"))
    numbers = [Number("SA-FF1", f"SD of {name} over models (points)", scores[bench].std(), data="published")
               for bench, name in [("simpleqa", "SimpleQA accuracy"), ("arenahard_v2", "ArenaHard-v2 win rate"),
                                   ("search_arena", "Search Arena win rate")]]
    return Section(numbers, figures)


def figure_f2_section() -> Section:
    """SA-FF2: Gemini with and without search on SimpleQA and ArenaHard-v2, and each model's change with search."""
    f2 = pl.read_csv(published("search_arena_figure_f2_search_vs_nonsearch"))
    fig = plotting.error_scatter(
        f2["simpleqa"].to_numpy(), f2["arenahard_v2"].to_numpy(),
        xerr=_bars(f2, "simpleqa"),
        yerr=_bars(f2, "arenahard_v2"),
        labels=f2["model"].to_list(), groups=f2["variant"].to_list(), fit=True,
        xlabel="SimpleQA accuracy (%)", ylabel="ArenaHard-v2 win rate (%)",
        title="Gemini with and without search (Fig F.2)")
    numbers = []
    for r in search_vs_nonsearch_gains(f2).iter_rows(named=True):
        numbers.append(Number("SA-FF2", f"{r['model']}: SimpleQA change with search (points)", r["simpleqa_gain"],
                              data="published"))
        numbers.append(Number("SA-FF2", f"{r['model']}: ArenaHard-v2 change with search (points)",
                              r["arenahard_v2_gain"], data="published"))
    return Section(numbers, [Figure(fig, "published")])


#: The banner lines of the chapter's three data sources.
SEARCH_BANNER = "Search Arena battles: the per-intent breakdown of SA-33S (Fig 8 right)."
TEXT_SIMULATOR_BANNER = (
    "Text Arena battles (per-intent breakdown of SA-33T, Fig 8 left): the project's **Text Arena simulator**, "
    "calibrated to the paper's totals and per-intent p-values (so those are calibration targets here); run "
    "`make book TEXT_ARENA=path/to/text_arena_battles.jsonl` for the real deployment.")
PUBLISHED_BANNER = ("Overall p-values (SA-33T, SA-33S) and Appendix F (Table F.1, Fig F.1, Fig F.2) use the paper's "
                    "published vote totals and scores.")


def text_arena_read(n_raw: int, n_rows: int, dropped: dict[str, int]) -> str:
    """What the Text Arena loader kept and left out, as one sentence for the banner (nothing dropped silently)."""
    left_out = "; ".join(f"{n} {why}" for why, n in dropped.items())
    return f" {n_raw:,} rows read, {n_rows:,} voted battles kept" + (f" (left out: {left_out})." if left_out else ".")
