"""What the prompt chapter records from its steps (SA App. B.2, C.1, C.2, G), decided here rather than in the
notebook: the quantities, their notes, the minimum sample a κ needs, and why a step did not run.

Each function returns :class:`~analysis_lib.search_arena.recorded.Row` objects (and what the page shows beside
them); :func:`analysis_lib.search_arena.recorded.record` hands them to the book's recorder.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import polars as pl

from analysis_lib.search_arena import describe, intents, prompt_sets
from analysis_lib.search_arena.recorded import Row, why_not

#: Fewest annotated prompts for which the chapter reports a κ (below this a κ says little).
MIN_ANNOTATED = 10
KAPPAS = ("κ primary, LLM labels vs release labels", "κ top-2, LLM labels vs release labels")
HUMAN_KAPPAS = ("human inter-annotator κ, primary", "human inter-annotator κ, top-2")
NO_HUMAN_LABELS = "the authors' human labels are not released"
TEXT_ARENA_C1 = ("Search Arena vs Text Arena: properties with p < 0.001",
                 "the Text Arena prompt sample is not released with the describing-differences inputs")


#: The data kind of a number computed from an LLM's outputs (its own evidence class: the model is named).
LLM = "llm"

def intent_rows(annotated: pl.DataFrame, model: str, chapter_reason: str) -> tuple[list[Row], pl.DataFrame | None]:
    """SA-B5 from an :func:`~analysis_lib.search_arena.intents.annotate_sample` frame: prompts not sent, failed
    annotations, the two κ against the release's labels (with at least :data:`MIN_ANNOTATED` annotated prompts;
    else not run, with the first error or the chapter's reason), the human κ (not released); and the primary
    intents of our labels for the figure (None without κ)."""
    status = annotated["status"]
    rows = [
        Row("sampled prompts not sent (missing or moderation placeholder)", int((status == intents.SKIPPED).sum()),
            f"of {annotated.height} sampled conversations"),
        Row("failed annotations", int((status == "failed").sum())),
    ]
    distribution = None
    if int((status == "ok").sum()) >= MIN_ANNOTATED:
        agree = intents.sample_agreement(annotated.filter(pl.col("status") == "ok"))
        run = f"n={int(agree['n'])}; LLM labels ({model})"
        rows += [Row(KAPPAS[0], agree["kappa_primary"], run, LLM), Row(KAPPAS[1], agree["kappa_top2"], run, LLM)]
        distribution = intents.intent_distribution(annotated["primary_intent"].to_list())
    else:
        errors = annotated.filter(pl.col("status") != intents.SKIPPED)["error"].drop_nulls()
        reason = why_not(errors.first() if errors.len() else "", chapter_reason)  # type: ignore[arg-type]
        rows += [Row(q, None, reason) for q in KAPPAS]
    rows += [Row(q, None, NO_HUMAN_LABELS) for q in HUMAN_KAPPAS]
    return rows, distribution


def prompt_comparison_rows(
    results: Mapping[tuple[str, str], describe.DescribeResult], chapter_reason: str
) -> tuple[list[Row], list[tuple[str, pl.DataFrame]]]:
    """SA-C1: per direction, the properties with p < 0.001 (or why not run), the Text Arena direction (not
    released), and the tables to show (caption, frame)."""
    rows, tables = [], []
    for (a, b), res in results.items():
        quantity = f"{a} vs {b}: properties with p < 0.001"
        if res.status == "ok":
            used = ", ".join(f"{step} {model}" for step, model in res.models.items())
            tables.append((f"Properties more common in {a} than in {b} (models: {used})", describe.display_table(res)))
            rows.append(Row(quantity, res.significant().height, f"models: {used}", LLM))
        else:
            rows.append(Row(quantity, None, why_not(res.note, chapter_reason)))
    rows.append(Row(TEXT_ARENA_C1[0], None, TEXT_ARENA_C1[1]))
    return rows, tables


def response_comparison_rows(
    results: Mapping[tuple[str, str, str], describe.DescribeResult], chapter_reason: str
) -> tuple[list[Row], list[tuple[str, pl.DataFrame]]]:
    """SA-C2: per comparison, the top property's shares in the two answer sets and its p-value (or why not
    run), and the tables to show."""
    rows, tables = [], []
    for (arena, intent, _), res in results.items():
        label = f"{arena.replace('_', ' ').title()}, {intent}: {res.name_a} vs {res.name_b}"
        quantities = (f"{label}: top property, % {res.name_a}", f"{label}: top property, % {res.name_b}",
                      f"{label}: top property p-value")
        if res.status == "ok" and res.validation.height:
            tables.append((label, describe.display_table(res)))
            best = res.validation.row(0, named=True)
            values = (100 * best["share_a"], 100 * best["share_b"], best["p_value"])
            rows += [Row(q, v, f"ours: {best['property']}", LLM) for q, v in zip(quantities, values, strict=True)]
        else:
            rows += [Row(q, None, why_not(res.note, chapter_reason)) for q in quantities]
    return rows, tables


def external_rows(
    loaders: Mapping[str, Callable[[], pl.DataFrame]],
) -> tuple[dict[str, pl.DataFrame], list[Row]]:
    """SA-G: each external dataset that loads (mean turns and mean first-prompt length), or not run with the
    reason it could not be loaded (:class:`~analysis_lib.search_arena.prompt_sets.ExternalDataUnavailable`)."""
    frames, rows = {}, []
    for name, load in loaders.items():
        quantities = (f"{name} mean turns", f"{name} mean prompt length (words)")
        try:
            frames[name] = load()
        except prompt_sets.ExternalDataUnavailable as err:
            rows += [Row(q, None, str(err)) for q in quantities]
            continue
        values = (frames[name]["turns"].mean(), frames[name]["prompt_words"].mean())
        rows += [Row(q, v, "", "real") for q, v in zip(quantities, values, strict=True)]  # type: ignore[arg-type]
    return frames, rows
