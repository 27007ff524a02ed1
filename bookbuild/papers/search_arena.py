"""The book side of the Search Arena chapters 01 (dataset), 02 (prompts) and 05 (cross-arena): what each section
records against the paper (:class:`~bookbuild.sections.Number`), under which quantity label and note, why a step
did not run, the paper's values drawn on figures, the reader notes that compare with the paper, and the banners.
The analyses are :mod:`analysis_lib.search_arena`'s; each function here takes their results.

Functions are named after the analysis ID they record (``a2_numbers`` for SA-A2, ``b5_numbers`` for SA-B5, ...).
Chapters 03/04 are :mod:`bookbuild.papers.search_arena_preferences`, chapter 06
:mod:`bookbuild.papers.search_arena_validation`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import polars as pl

from analysis_lib.search_arena import describe, intents, prompt_sets
from analysis_lib.search_arena.cross_arena import F1_COLUMNS, FactSynthTranscription, TieShareComparison
from bookbuild import markup, paper_values
from bookbuild.sections import Number, Table, not_run

# ----------------------------------------------------------------------------------------------- shared

#: A not-run number whose reason is the chapter-wide one (no endpoint, offline, budget) says this instead.
SEE_ABOVE = "LLM step not run (see the note at the top)"
#: The note of a battle-data number that the simulator is built to reproduce (shown when the data are simulated).
CALIBRATION_TARGET = "calibration target: the simulator is built to reproduce this value"
#: The data kind of a number computed from an LLM's outputs (its own evidence class: the model is named).
LLM = "llm"


def paper_marks(analysis_id: str, quantities: Mapping[str, str], scale: float = 1.0) -> dict[str, float | None]:
    """``label -> the paper's value`` of each recorded ``quantity`` of ``analysis_id`` (the book's paper values),
    times ``scale``; None where the paper gives no number. For drawing the paper's numbers on a figure from the
    same rows the chapter's tables compare with."""
    table = paper_values.table()
    out: dict[str, float | None] = {}
    for label, quantity in quantities.items():
        value = table[(analysis_id, quantity)].paper
        out[label] = float(value) * scale if isinstance(value, (int, float)) else None
    return out


def llm_note(available: bool, model: str, reason: str, steps: str) -> markup.Html:
    """The chapter's one note on its LLM steps (a note box): where the calls go, or that ``steps`` show cached
    results or *not run* and why (``reason``: the client's ``not_run_reason()``)."""
    if available:
        return markup.admonition("LLM steps", f"LLM calls go to the configured endpoint (default model "
                                 f"{markup.code_span(model)}) and are cached.")
    return markup.admonition("LLM steps without an endpoint", f"This build has no LLM endpoint: {steps} show cached "
                             f"results where there are any, else *not run* ({reason.removeprefix('not run: ')}). "
                             "Set `OPENAI_BASE_URL` and `OPENAI_API_KEY` to run them.")


def why_not(note: str | None, chapter_reason: str) -> str:
    """A step's not-run reason for its number: the chapter's reason (said once, in :func:`llm_note`) becomes
    :data:`SEE_ABOVE`; a step's own reason (a failed reply, an unreadable input) is kept."""
    return SEE_ABOVE if not note or note == chapter_reason else note


# ----------------------------------------------------------------------------------------------- chapter 01


def paper_turn_shares() -> dict[str, float | None]:
    """The paper's conversations per number of turns as % of its 24,069 conversations (Fig B.3 labels ``1`` to
    ``4``): one turn is 100 − the multi-turn share (§2.1), two to four turns the counts of App. B.1."""
    total = paper_marks("SA-T1", {"n": "Search Arena conversations"})["n"]
    multi = paper_marks("SA-B3", {"multi": "multi-turn conversations (%)"})["multi"]
    shares = paper_marks("SA-B3", {str(t): f"{t}-turn conversations" for t in (2, 3, 4)},
                         scale=100 / total if total else float("nan"))
    return {"1": None if multi is None else 100 - multi, **shares}


#: The two SA-A2 quantities that compare the mean per day with the two ends of the paper's range (SA App. A.1).
MEAN_AGAINST_RANGE = ("mean conversations per day, against the low end of the paper's range",
                      "mean conversations per day, against the high end of the paper's range")


def paper_range() -> tuple[float, float]:
    """The paper's range of conversations recorded per day (800, 1,500; SA App. A.1): the paper values of the two
    :data:`MEAN_AGAINST_RANGE` quantities."""
    table = paper_values.table()
    low, high = (table[("SA-A2", q)].paper for q in MEAN_AGAINST_RANGE)
    return float(low), float(high)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------------------------- chapter 02

#: Fewest annotated prompts for which the chapter reports a κ (below this a κ says little).
MIN_ANNOTATED = 10
KAPPAS = ("κ primary, LLM labels vs release labels", "κ top-2, LLM labels vs release labels")
HUMAN_KAPPAS = ("human inter-annotator κ, primary", "human inter-annotator κ, top-2")
NO_HUMAN_LABELS = "the authors' human labels are not released"
TEXT_ARENA_C1 = ("Search Arena vs Text Arena: properties with p < 0.001",
                 "the Text Arena prompt sample is not released with the describing-differences inputs")
#: Group of :func:`analysis_lib.search_arena.descriptive.factual_vs_rest` -> the recorded quantity (SA-22L).
SA22L_QUANTITIES = {
    "Factual Lookup": "Factual Lookup mean prompt words",
    "other intents": "other intents mean prompt words",
    "other intents, Other excluded": "other intents, Other excluded: mean prompt words",
}


def b5_numbers(annotated: pl.DataFrame, model: str, chapter_reason: str) -> tuple[list[Number], pl.DataFrame | None]:
    """SA-B5 from an :func:`~analysis_lib.search_arena.intents.annotate_sample` frame: prompts not sent, failed
    annotations, the two κ against the release's labels (with at least :data:`MIN_ANNOTATED` annotated prompts;
    else not run, with the first error or the chapter's reason), the human κ (not released); and the primary
    intents of our labels for the figure (None without κ)."""
    status = annotated["status"]
    numbers = [
        Number("SA-B5", "sampled prompts not sent (missing or moderation placeholder)",
               int((status == intents.SKIPPED).sum()), note=f"of {annotated.height} sampled conversations"),
        Number("SA-B5", "failed annotations", int((status == "failed").sum())),
    ]
    distribution = None
    if int((status == "ok").sum()) >= MIN_ANNOTATED:
        agree = intents.sample_agreement(annotated.filter(pl.col("status") == "ok"))
        run = f"n={int(agree['n'])}; LLM labels ({model})"
        numbers += [Number("SA-B5", KAPPAS[0], agree["kappa_primary"], note=run, data=LLM),
                    Number("SA-B5", KAPPAS[1], agree["kappa_top2"], note=run, data=LLM)]
        distribution = intents.intent_distribution(annotated["primary_intent"].to_list())
    else:
        errors = annotated.filter(pl.col("status") != intents.SKIPPED)["error"].drop_nulls()
        reason = why_not(errors.first() if errors.len() else "", chapter_reason)  # type: ignore[arg-type]
        numbers += not_run("SA-B5", KAPPAS, reason)
    return numbers + not_run("SA-B5", HUMAN_KAPPAS, NO_HUMAN_LABELS), distribution


def c1_numbers(results: Mapping[tuple[str, str], describe.DescribeResult],
               chapter_reason: str) -> tuple[list[Number], list[Table]]:
    """SA-C1: per direction, the properties with p < 0.001 (or why not run), the Text Arena direction (not
    released), and the tables to show."""
    numbers, tables = [], []
    for (a, b), res in results.items():
        quantity = f"{a} vs {b}: properties with p < 0.001"
        if res.status == "ok":
            used = ", ".join(f"{step} {model}" for step, model in res.models.items())
            tables.append(Table(describe.display_table(res), f"Properties more common in {a} than in {b} "
                                f"(models: {used})"))
            numbers.append(Number("SA-C1", quantity, res.significant().height, note=f"models: {used}", data=LLM))
        else:
            numbers.append(Number("SA-C1", quantity, reason=why_not(res.note, chapter_reason)))
    numbers.append(Number("SA-C1", TEXT_ARENA_C1[0], reason=TEXT_ARENA_C1[1]))
    return numbers, tables


def c2_numbers(results: Mapping[tuple[str, str, str], describe.DescribeResult],
               chapter_reason: str) -> tuple[list[Number], list[Table]]:
    """SA-C2: per comparison, the top property's shares in the two answer sets and its p-value (or why not
    run), and the tables to show."""
    numbers, tables = [], []
    for (arena, intent, _), res in results.items():
        label = f"{arena.replace('_', ' ').title()}, {intent}: {res.name_a} vs {res.name_b}"
        quantities = (f"{label}: top property, % {res.name_a}", f"{label}: top property, % {res.name_b}",
                      f"{label}: top property p-value")
        if res.status == "ok" and res.validation.height:
            tables.append(Table(describe.display_table(res), label))
            best = res.validation.row(0, named=True)
            values = (100 * best["share_a"], 100 * best["share_b"], best["p_value"])
            numbers += [Number("SA-C2", q, v, note=f"ours: {best['property']}", data=LLM)
                        for q, v in zip(quantities, values, strict=True)]
        else:
            numbers += not_run("SA-C2", quantities, why_not(res.note, chapter_reason))
    return numbers, tables


def g_numbers(loaders: Mapping[str, Callable[[], pl.DataFrame]]) -> tuple[dict[str, pl.DataFrame], list[Number]]:
    """SA-G: each external dataset that loads (mean turns and mean first-prompt length), or not run with the
    reason it could not be loaded (:class:`~analysis_lib.search_arena.prompt_sets.ExternalDataUnavailable`)."""
    frames, numbers = {}, []
    for name, load in loaders.items():
        quantities = (f"{name} mean turns", f"{name} mean prompt length (words)")
        try:
            frames[name] = load()
        except prompt_sets.ExternalDataUnavailable as err:
            numbers += not_run("SA-G", quantities, str(err))
            continue
        values = (frames[name]["turns"].mean(), frames[name]["prompt_words"].mean())
        numbers += [Number("SA-G", q, v, data="real") for q, v in zip(quantities, values, strict=True)]
    return frames, numbers


# ----------------------------------------------------------------------------------------------- chapter 05

#: The counts recorded per arena: (quantity, column of :func:`analysis_lib.search_arena.cross_arena.vote_table`).
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
#: The banner lines of the chapter's three data sources.
SEARCH_BANNER = "Search Arena battles: the per-intent breakdown of SA-33S (Fig 8 right)."
TEXT_SIMULATOR_BANNER = (
    "Text Arena battles (per-intent breakdown of SA-33T, Fig 8 left): the project's **Text Arena simulator**, "
    "calibrated to the paper's totals and per-intent p-values (so those are calibration targets here); run "
    "`make book TEXT_ARENA=path/to/text_arena_battles.jsonl` for the real deployment.")
PUBLISHED_BANNER = ("Overall p-values (SA-33T, SA-33S) and Appendix F (Table F.1, Fig F.1, Fig F.2) use the paper's "
                    "published vote totals and scores.")


def text_arena_read(n_raw: int, n_rows: int, dropped: Mapping[str, int]) -> str:
    """What the Text Arena loader kept and left out, as one sentence for the banner (nothing dropped silently)."""
    left_out = "; ".join(f"{n} {why}" for why, n in dropped.items())
    return f" {n_raw:,} rows read, {n_rows:,} voted battles kept" + (f" (left out: {left_out})." if left_out else ".")


def totals_numbers(analysis_id: str, test: Any, split: Any) -> list[Number]:
    """SA-33T / SA-33S from one arena's published totals: the paper's test (``test``, ties excluded) and the
    sensitivity check with ties split half to each side (``split``), both
    :func:`analysis_lib.stats.preference_binomial_test` results."""
    return [
        Number(analysis_id, "p-value, published totals (one-sided, ties excluded)", test.p_value, data="published"),
        Number(analysis_id, "p-value, published totals, ties split half to each side", split.p_value,
               data="published"),
    ]


def totals_table(totals: pl.DataFrame) -> Table:
    """The published vote totals of both arenas, headers without underscores."""
    return Table(totals.rename({c: c.replace("_", " ") for c in totals.columns}), "Published vote totals (SA §3.3)")


def _intent_note(row: Mapping[str, Any], extra: str) -> str:
    return (f"one-sided in the observed direction; two-sided {row['p_two_sided']:.3g}, "
            f"Holm over 8 intents {row['p_two_sided_holm']:.3g}{extra}")


def _readable(table: pl.DataFrame, columns: Mapping[str, str]) -> pl.DataFrame:
    """The ``columns`` of a vote or test table under readable headers, shares as percentages (fits the page)."""
    shown = table.select(list(columns)).rename(dict(columns))
    return shown.with_columns(pl.selectors.starts_with("% ").mul(100).round(1))


def vote_tables(arena: str, by_intent: pl.DataFrame, tests: pl.DataFrame) -> list[Table]:
    """One arena's per-intent vote table and binomial tests, readable (``arena``: the name in the captions)."""
    return [Table(_readable(by_intent, VOTE_COLUMNS), f"{arena} votes by intent (% of each intent's battles)"),
            Table(_readable(tests, TEST_COLUMNS), f"{arena} binomial tests by intent", 4)]


def sa33t_numbers(overall: Mapping[str, Any], tests: pl.DataFrame, text_kind: str) -> list[Number]:
    """SA-33T on the Text Arena battles: counts and p-value overall (``overall``: the one row of
    ``vote_table(by=None)``), the paper's three intents' p-values and favoured sides (``tests``:
    :func:`~analysis_lib.search_arena.cross_arena.intent_tests`); on the simulator, calibration targets."""
    target = TEXT_TARGET if text_kind == "simulated" else ""
    numbers = [Number("SA-33T", q, overall[c], data=text_kind, note=target) for q, c in BATTLE_QUANTITIES]
    for r in tests.filter(pl.col("intent").is_in(TEXT_INTENTS)).iter_rows(named=True):
        numbers.append(Number("SA-33T", f"{r['intent']} p-value", r["p_value"], data=text_kind,
                              note=_intent_note(r, f"; {target}" if target else "")))
        numbers.append(Number("SA-33T", f"{r['intent']}: favoured side", r["favours"], data=text_kind))
    return numbers


def sa33s_missing(cross: pl.DataFrame) -> str:
    """Why the Search Arena battles of the non-search Gemini have no per-intent table: :data:`NO_BATTLES`,
    :data:`NO_INTENTS`, or ``""`` when they have one."""
    if cross.height == 0:
        return NO_BATTLES
    return NO_INTENTS if cross["primary_intent"].null_count() == cross.height else ""


def sa33s_numbers(cross: pl.DataFrame, overall: Mapping[str, Any] | None, tests: pl.DataFrame | None,
                  kind: str) -> list[Number]:
    """SA-33S on the Search Arena battles of the non-search Gemini against the search models other than OpenAI's
    (``cross``); a release without such a battle records every quantity as not run (nothing to count is not a count
    of 0), one without intent labels its per-intent quantities."""
    intent_quantities = [f"{i}{suffix}" for i in SEARCH_INTENTS for suffix in (" p-value", ": favoured side")]
    missing = sa33s_missing(cross)
    if overall is None or missing == NO_BATTLES:
        return not_run("SA-33S", [q for q, _ in BATTLE_QUANTITIES] + intent_quantities, NO_BATTLES)
    simulated = kind == "simulated"
    target = SEARCH_TARGET if simulated else ""
    numbers = [Number("SA-33S", q, overall[c], note=target) for q, c in BATTLE_QUANTITIES]
    if tests is None or missing:
        return numbers + not_run("SA-33S", intent_quantities, missing or NO_INTENTS)
    no_effect = "; no per-intent effect is planted in the Search Arena simulator" if simulated else ""
    for r in tests.filter(pl.col("intent").is_in(SEARCH_INTENTS)).iter_rows(named=True):
        numbers.append(Number("SA-33S", f"{r['intent']} p-value", r["p_value"], note=_intent_note(r, no_effect)))
        numbers.append(Number("SA-33S", f"{r['intent']}: favoured side", r["favours"]))
    return numbers


_F8_SEARCH = ["tie share, Text Arena minus Search Arena (overall, points)",
              "intents with more ties in the Text Arena than in the Search Arena"]


def f8_numbers(ties: TieShareComparison, text_kind: str, kind: str, missing: str = "") -> list[Number]:
    """SA-F8 from :func:`~analysis_lib.search_arena.cross_arena.compare_tie_shares` (Text Arena first): the Text
    Arena's three most tied intents and, unless ``missing`` says why the Search Arena has no per-intent table,
    the two tie-share comparisons."""
    first = Number("SA-F8", "Text Arena: three intents with the highest tie share", ", ".join(sorted(ties.most_tied)),
                   data=text_kind)
    if missing:
        return [first, *not_run("SA-F8", _F8_SEARCH, missing)]
    both = "simulated" if "simulated" in (kind, text_kind) else kind
    return [
        first,
        Number("SA-F8", _F8_SEARCH[0], 100 * ties.overall_difference, data=both,
               note=f"Text Arena {ties.overall_first:.1%}, Search Arena {ties.overall_second:.1%}"),
        Number("SA-F8", _F8_SEARCH[1], f"{ties.n_first_higher} of {ties.n_compared}", data=both),
    ]


def tie_table(ties: TieShareComparison) -> Table:
    """The tie shares by intent in both arenas (percent) and their difference (points)."""
    table = ties.by_intent.with_columns(
        pl.col("share_tie_first", "share_tie_second", "difference").mul(100).round(1)
    ).rename({"share_tie_first": "% tie Text Arena", "share_tie_second": "% tie Search Arena",
              "difference": "difference (points)", "n_first": "n Text Arena", "n_second": "n Search Arena"})
    return Table(table, "Tie shares by intent")


#: The Table F.1 pairs recorded, with their names on the page.
F1_PAIRS = {
    ("search_arena", "simpleqa"): "Search Arena vs SimpleQA",
    ("search_arena", "arenahard_v2"): "Search Arena vs ArenaHard-v2",
    ("other", "arenahard_v2"): "Search Arena (Other) vs ArenaHard-v2",
    ("fact_synth", "arenahard_v2"): "Search Arena (Fact+Synth) vs ArenaHard-v2",
}


def _pair(corr: pl.DataFrame, x: str, y: str) -> dict[str, Any]:
    return corr.filter((pl.col("benchmark_x") == x) & (pl.col("benchmark_y") == y)).row(0, named=True)


def f1t_numbers(corr: pl.DataFrame, fs: FactSynthTranscription) -> list[Number]:
    """SA-F1T from :func:`analysis_lib.stats.benchmark_correlations` of Table F.1 (``corr``) and the authors'
    hand-typed Fact+Synth list (``fs``)."""
    numbers = []
    for (x, y), name in F1_PAIRS.items():
        p = _pair(corr, x, y)
        numbers.append(Number("SA-F1T", f"{name}: Kendall tau (ordinal ranks)", p["kendall_tau"], data="published"))
        numbers.append(Number("SA-F1T", f"{name}: Pearson r", p["pearson_r"], data="published"))
    numbers.append(Number("SA-F1T", "Search Arena vs SimpleQA: Kendall tau-b on raw scores",
                          _pair(corr, "search_arena", "simpleqa")["kendall_tau_b"], data="published"))
    return numbers + [
        Number("SA-F1T", "Search Arena (Fact+Synth) vs ArenaHard-v2: Pearson r from the authors' hand-typed list",
               fs.authors["pearson_r"], data="published"),
        Number("SA-F1T", "Search Arena (Fact+Synth) vs ArenaHard-v2: Kendall tau from the authors' hand-typed list",
               fs.authors["kendall_tau"], data="published"),
    ]


def correlation_table(corr: pl.DataFrame) -> Table:
    """The correlations with the benchmarks by name and short column headers (the raw frame ran off the page)."""
    named = corr.with_columns(pl.col("benchmark_x", "benchmark_y").replace(F1_COLUMNS))
    keep = [c for c in named.columns if c.startswith(("benchmark", "kendall_tau", "pearson_r"))]
    headers = {"benchmark_x": "x", "benchmark_y": "y", "kendall_tau": "τ (ordinal ranks)",
               "kendall_tau_b": "τ-b (raw scores)", "pearson_r": "Pearson r"}
    return Table(named.select(keep).rename(
        lambda c: headers.get(c, c.replace("kendall_tau", "τ").replace("pearson_r", "r").replace("_", " "))),
        "Correlations between the Table F.1 columns, with bootstrap 95% intervals")


def f1t_note(scores: pl.DataFrame, corr: pl.DataFrame, fs: FactSynthTranscription) -> str:
    """The reader note of SA-F1T: which Kendall variant reproduces the paper, and why r for Fact+Synth vs
    ArenaHard-v2 differs from the paper's (the authors' hand-typed list), with the paper's values."""
    sqa_tau, fs_tau, fs_r = (paper_values.lookup("SA-F1T", q).paper for q in (
        "Search Arena vs SimpleQA: Kendall tau (ordinal ranks)",
        "Search Arena (Fact+Synth) vs ArenaHard-v2: Kendall tau (ordinal ranks)",
        "Search Arena (Fact+Synth) vs ArenaHard-v2: Pearson r"))
    sqa = _pair(corr, "search_arena", "simpleqa")
    tied = scores.group_by("simpleqa", maintain_order=True).agg("model").filter(pl.col("model").list.len() > 1)
    tied_text = "; ".join(f"{v:g} for " + " and ".join(f"`{m}`" for m in ms) for v, ms in tied.iter_rows())

    def listed(values: tuple[float, ...]) -> str:
        return " and ".join(f"{v:g}" for v in values)

    return f"""
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
"""


def ff1_numbers(scores: pl.DataFrame) -> list[Number]:
    """SA-FF1: the spread (SD over models) of SimpleQA, ArenaHard-v2 and the Search Arena win rate in Table F.1."""
    return [Number("SA-FF1", f"SD of {name} over models (points)", scores[bench].std(), data="published")
            for bench, name in [("simpleqa", "SimpleQA accuracy"), ("arenahard_v2", "ArenaHard-v2 win rate"),
                                ("search_arena", "Search Arena win rate")]]


def ff2_numbers(gains: pl.DataFrame) -> list[Number]:
    """SA-FF2 from :func:`~analysis_lib.search_arena.cross_arena.search_vs_nonsearch_gains`: each Gemini model's
    change with search on SimpleQA and ArenaHard-v2."""
    numbers = []
    for r in gains.iter_rows(named=True):
        numbers.append(Number("SA-FF2", f"{r['model']}: SimpleQA change with search (points)", r["simpleqa_gain"],
                              data="published"))
        numbers.append(Number("SA-FF2", f"{r['model']}: ArenaHard-v2 change with search (points)",
                              r["arenahard_v2_gain"], data="published"))
    return numbers
