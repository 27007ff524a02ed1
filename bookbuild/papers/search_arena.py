"""The book side of the Search Arena chapters 01 (dataset), 02 (prompts) and 05 (cross-arena): what the chapters
pass to :meth:`~bookbuild.recorder.Recorder.record` where it is more than one library result (why a step did not
run, notes of rows that may not run), the paper's values drawn on figures, the reader notes that compare with the
paper, the display tables and the banners. The analyses are :mod:`analysis_lib.search_arena`'s; each paper-values
row names the field of their results that it records.

Chapters 03/04 are :mod:`bookbuild.papers.search_arena_preferences`, chapter 06
:mod:`bookbuild.papers.search_arena_validation`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any, NamedTuple

import polars as pl

from analysis_lib.search_arena import describe, intents, prompt_sets, topics
from analysis_lib.search_arena.cross_arena.appendix_f import F1_COLUMNS, FactSynthTranscription
from analysis_lib.search_arena.cross_arena.votes import TieShareComparison
from bookbuild import fieldpath, markup, paper_values
from bookbuild.recorder import NotRun, llm_source
from bookbuild.sections import Table

# ----------------------------------------------------------------------------------------------- shared

#: A not-run number whose reason is the chapter-wide one (no endpoint, offline, budget) says this instead.
SEE_ABOVE = "LLM step not run (see the note at the top)"
#: The note of a battle-data number that the simulator is built to reproduce (shown when the data are simulated).
CALIBRATION_TARGET = "calibration target: the simulator is built to reproduce this value"


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
NO_HUMAN_LABELS = "the authors' human labels are not released"
NO_TEXT_ARENA_PROMPTS = "the Text Arena prompt sample is not released with the describing-differences inputs"
NO_EXTERNAL = "neither CORAL nor WildChat loaded (nothing to compare with)"
#: Notes of numbers that only an LLM run gives (:func:`run_notes`): the κ's sample and labeller (SA-B5), the models
#: of a comparison (SA-C1), our top property (SA-C2).
KAPPA_NOTE = "n={n}; LLM labels ({model})"
MODELS_NOTE = "models: propose {models[propose]}, reduce {models[reduce]}, rank {models[rank]}"
TOP_NOTE = "ours: {property}"


class TopicEvidence(NamedTuple):
    """What SA-B4's topic numbers rest on (:func:`b4_evidence`): their data kind and, for ``llm``, the source named
    beside them (:func:`~bookbuild.evidence.llm_source`), and the embedding as the settings note names it."""

    data: str
    llm: str | None
    embedding: str


def b4_evidence(embedded: topics.Embedded, precision: str) -> TopicEvidence:
    """SA-B4: the topics of the endpoint's embeddings are LLM output naming ``model @ endpoint (embeddings)``; those
    of the offline encoder rest on the real mirrored prompts. A fallback to the offline encoder says why, and how to
    ask for the endpoint's embeddings once it serves them (a rebuild with ``--force``: the rebuild key does not see
    an endpoint's new models)."""
    label = topics.embedding_label(embedded.embedding, precision)  # type: ignore[arg-type]
    if embedded.fallback:
        label += f" ({embedded.fallback}; once the endpoint serves them, rebuild with --force)"
    if embedded.embedding == "offline":
        return TopicEvidence("real", None, label)
    return TopicEvidence("llm", llm_source(embedded.embedding, "embeddings"), label)


def topic_namer(topic_table: pl.DataFrame, model: str) -> str:
    """Who wrote the topic names, when an LLM did: ``LLM output: <model> @ <endpoint> (chat)`` (and that the rest
    are named by their keywords, if any); ``""`` when every name comes from the keywords."""
    sources = set(topic_table.filter(pl.col("topic") >= 0)["label_source"].to_list())
    if "llm" not in sources:
        return ""
    return f"LLM output: {llm_source(model)}" + ("; the others by their keywords" if "keywords" in sources else "")


def run_notes(analysis_id: str, result: Any, templates: Mapping[str, str]) -> dict[str, str]:
    """``notes=`` for :meth:`~bookbuild.recorder.Recorder.record`, for rows that may not run: each row of
    ``analysis_id`` whose path (its field names, selections left out) is or starts with a key of ``templates`` and
    reaches a value gets that template, formatted as a row note is (the fields of the value's record, then of
    ``result``). A row's own note cannot say these: the recorder shows the placeholders of a row that did not run as
    they are."""
    notes = {}
    for row in paper_values.rows_of(analysis_id):
        path = fieldpath.parse(row.result)
        names = ".".join(s.name for s in path.steps if s.name)
        template = next((t for key, t in templates.items() if names == key or names.startswith(f"{key}.")), "")
        if not template or path.template:
            continue
        value, owner = fieldpath.resolve(result, path)
        if not isinstance(value, fieldpath.Missing):
            notes[row.quantity] = template.format_map(fieldpath.Context({}, owner, result))
    return notes


def b5_result(annotated: pl.DataFrame, model: str, chapter_reason: str) -> dict[str, Any]:
    """SA-B5 from an :func:`~analysis_lib.search_arena.intents.annotate_sample` frame: the conversations sampled,
    the prompts not sent and the failed annotations, the agreement of our labels with the release's (with at least
    :data:`MIN_ANNOTATED` annotated prompts; else None, ``reason``: the first error or the chapter's reason), the
    labeller ``model``, and the human κ (not released)."""
    status = annotated["status"]
    ok = annotated.filter(status == "ok")
    errors = annotated.filter(status != intents.SKIPPED)["error"].drop_nulls()
    return {"sampled": annotated.height, "not_sent": int((status == intents.SKIPPED).sum()),
            "failed": int((status == "failed").sum()), "model": model,
            "agreement": intents.sample_agreement(ok) if ok.height >= MIN_ANNOTATED else None,
            "reason": why_not(errors.first() if errors.len() else "", chapter_reason),  # type: ignore[arg-type]
            "human": NotRun(NO_HUMAN_LABELS)}


def see_above(results: Iterable[describe.DescribeResult], chapter_reason: str) -> list[describe.DescribeResult]:
    """The comparisons, those that did not run for the chapter's reason (said once, :func:`llm_note`) saying
    :data:`SEE_ABOVE` instead."""
    return [r if r.status == "ok" else replace(r, note=why_not(r.note, chapter_reason)) for r in results]


def c1_tables(results: Iterable[describe.DescribeResult]) -> list[Table]:
    """SA-C1's table of each comparison that ran."""
    return [Table(describe.display_table(r), f"Properties more common in {r.name_a} than in {r.name_b} (models: "
                  + ", ".join(f"{step} {model}" for step, model in r.models.items()) + ")")
            for r in results if r.status == "ok"]


def c2_label(arena: str, intent: str, result: describe.DescribeResult) -> str:
    """A C.2 comparison by name: ``Text Arena, Factual Lookup: search vs non-search``."""
    return f"{arena.replace('_', ' ').title()}, {intent}: {result.name_a} vs {result.name_b}"


def external(loaders: Mapping[str, Callable[[], pl.DataFrame]]) -> tuple[dict[str, pl.DataFrame], dict[str, Any]]:
    """SA-G: each external dataset that loads, and by its name in lower case its mean ``turns`` and
    ``prompt_words`` (a one-row frame) or, when it cannot be loaded, the reason
    (:class:`~analysis_lib.search_arena.prompt_sets.ExternalDataUnavailable`)."""
    frames: dict[str, pl.DataFrame] = {}
    means: dict[str, Any] = {}
    for name, load in loaders.items():
        try:
            frames[name] = load()
        except prompt_sets.ExternalDataUnavailable as err:
            means[name.lower()] = {"turns": None, "prompt_words": None, "reason": str(err)}
            continue
        means[name.lower()] = frames[name].select(pl.col("turns", "prompt_words").mean())
    return frames, means


# ----------------------------------------------------------------------------------------------- chapter 05

#: The note of a per-intent p-value (SA-33T, SA-33S; :func:`vote_notes`).
INTENT_NOTE = ("one-sided in the observed direction; two-sided {p_two_sided:.3g}, Holm over 8 intents "
               "{p_two_sided_holm:.3g}")
#: The note of the tie-share difference (SA-F8; :func:`run_notes`).
TIE_NOTE = "Text Arena {overall_first:.1%}, Search Arena {overall_second:.1%}"
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


def totals_table(totals: pl.DataFrame) -> Table:
    """The published vote totals of both arenas, headers without underscores."""
    return Table(totals.rename({c: c.replace("_", " ") for c in totals.columns}), "Published vote totals (SA §3.3)")


def _readable(table: pl.DataFrame, columns: Mapping[str, str]) -> pl.DataFrame:
    """The ``columns`` of a vote or test table under readable headers, shares as percentages (fits the page)."""
    shown = table.select(list(columns)).rename(dict(columns))
    return shown.with_columns(pl.selectors.starts_with("% ").mul(100).round(1))


def vote_tables(arena: str, by_intent: pl.DataFrame, tests: pl.DataFrame) -> list[Table]:
    """One arena's per-intent vote table and binomial tests, readable (``arena``: the name in the captions)."""
    return [Table(_readable(by_intent, VOTE_COLUMNS), f"{arena} votes by intent (% of each intent's battles)"),
            Table(_readable(tests, TEST_COLUMNS), f"{arena} binomial tests by intent", 4)]


def vote_notes(analysis_id: str, votes: Mapping[str, Any], simulated: bool) -> dict[str, str]:
    """``notes=`` of SA-33T / SA-33S (:func:`run_notes`): the counts and p-value of the battle data (``overall``)
    are calibration targets on the simulator, each per-intent p-value (``tests``) says its two-sided and Holm values
    (and, on the Search Arena simulator, that it plants no per-intent effect)."""
    text = analysis_id == "SA-33T"
    target = (TEXT_TARGET if text else SEARCH_TARGET) if simulated else ""
    intent = ("; " + (TEXT_TARGET if text else "no per-intent effect is planted in the Search Arena simulator")
              if simulated else "")
    return run_notes(analysis_id, votes, {"overall": target, "tests.p_value": INTENT_NOTE + intent})


def sa33s_missing(cross: pl.DataFrame) -> str:
    """Why the Search Arena battles of the non-search Gemini have no per-intent table: :data:`NO_BATTLES`,
    :data:`NO_INTENTS`, or ``""`` when they have one."""
    if cross.height == 0:
        return NO_BATTLES
    return NO_INTENTS if cross["primary_intent"].null_count() == cross.height else ""


def tie_table(ties: TieShareComparison) -> Table:
    """The tie shares by intent in both arenas (percent) and their difference (points)."""
    table = ties.by_intent.with_columns(
        pl.col("share_tie_first", "share_tie_second", "difference").mul(100).round(1)
    ).rename({"share_tie_first": "% tie Text Arena", "share_tie_second": "% tie Search Arena",
              "difference": "difference (points)", "n_first": "n Text Arena", "n_second": "n Search Arena"})
    return Table(table, "Tie shares by intent")


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
    sqa = corr.row(by_predicate=(pl.col("benchmark_x") == "search_arena") & (pl.col("benchmark_y") == "simpleqa"),
                   named=True)
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
