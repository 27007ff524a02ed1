"""User-intent annotation (Search Arena §2.2, Appendix B.2) and its agreement statistics.

:func:`classify_intents` labels prompts with the paper's GPT-4.1 prompt (``resources/prompts/
intent_classification.txt``, verbatim from B.2) whose few-shot block is Table B.1's examples, through the
LLM layer with a JSON schema restricting both labels to the nine categories (``Unassigned`` allowed for the
secondary). Replies that do not validate are re-asked, then recorded as failures.

Agreement between two annotators (human–human or model–human) is reported two ways, as in the paper:

- :func:`primary_kappa`: Cohen's κ on the primary labels;
- :func:`top2_kappa`: Cohen's κ after *top-2 matching*. For each item, let ``p1, s1`` and ``p2, s2`` be the two
  raters' primary and secondary labels (``Unassigned`` is not a label). The item is a top-2 match when
  ``p1 ∈ {p2, s2}`` or ``p2 ∈ {p1, s1}``. On a match both raters' resolved labels are set to the shared label
  (``p1`` when ``p1 ∈ {p2, s2}``, else ``p2``); otherwise each keeps its primary. κ is Cohen's κ over the
  resolved labels (so chance agreement is still corrected for with the resolved marginals).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, NamedTuple

import polars as pl

from analysis_lib.llm import LLMClient, Step, Task, fill, load_prompt
from analysis_lib.search_arena.descriptive import shares
from analysis_lib.search_arena.schema import INTENTS, MODERATION_PROMPT, UNASSIGNED
from analysis_lib.stats import cohen_kappa

#: Table B.1: category -> (description, examples), verbatim from the paper.
TAXONOMY: dict[str, tuple[str, tuple[str, ...]]] = {
    "Text Processing": (
        "Users request linguistic tasks such as summarizing, translating, paraphrasing, or refining text.",
        ("Summarize <website>.", "Translate this paragraph from Spanish to English.",
         "Rephrase this email professionally for an investment-banking application."),
    ),
    "Creative Generation": (
        "Users request original creative outputs, including fictional scenarios, satire, poetry, storytelling, "
        "or other forms of artistic language generation.",
        ("Compose a witty review of ITV’s Big Brother.", "Create a humorous poem about SpongeBob.",
         "Write a short fantasy story set on Mars."),
    ),
    "Factual Lookup": (
        "Users seek to retrieve a precise, objective fact or specific information (what/who/when-like questions).",
        ("Who invented lambda calculus?", "How many planets are in our Solar System?",
         "When was the Mona Lisa painted?"),
    ),
    "Info Synthesis": (
        "Users seek a concise, aggregated summary that combines facts or perspectives from multiple sources. "
        "The focus is on integrating factual content without requiring reasoning, subjective interpretation, "
        "or personalization.",
        ("List the key functions of the U.S. Congress.", "Summarize the main events of the French Revolution."),
    ),
    "Analysis": (
        "Users seek a reasoned judgment or breakdown of a topic, often involving comparison, evaluation, weighing "
        "different perspectives, and synthesizing material from many sources. Often open-ended.",
        ("Analyze the pros and cons of nuclear energy.", "When will we reach artificial general intelligence?",
         "What were the strategic implications of the Cuban Missile Crisis?"),
    ),
    "Recommendation": (
        "Users request suggestions or advice tailored to particular constraints, preferences, or specified "
        "criteria. Often implies personalization or ranking.",
        ("Best laptop for machine learning under $1500.", "I like literary fiction—what books should I read?",
         "What programming language should I learn for web development?"),
    ),
    "Explanation": (
        "Users seek detailed clarifications, educational insights, or thorough elaborations aimed at better "
        "understanding a concept, process, or phenomenon. May ask “why” or “how” something works without "
        "implying action.",
        ("What led to the fall of the Roman Empire?", "Can you explain the Heisenberg uncertainty principle?",
         "How does gradient-descent optimization work in machine learning?"),
    ),
    "Guidance": (
        "Users request instructions, procedures, or practical advice intended to accomplish specific tasks, "
        "typically involving sequential steps or troubleshooting. Usually framed as “how to” or involving action.",
        ("How do I install Docker on Ubuntu?", "How do I renew my passport online?",
         "How do I replace the battery in a MacBook Air?"),
    ),
    "Other": (
        "Prompts that don’t fit neatly into any of the categories above. Prompts may be malformed, declarative in "
        "nature, or lacking in meaningful user intent.",
        ("pizza.", "The table hit my head.", "Talk about something please."),
    ),
}

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "primary_intent": {"type": "string", "enum": list(INTENTS)},
        "secondary_intent": {"type": "string", "enum": [*INTENTS, UNASSIGNED]},
        "reasoning": {"type": "string"},
    },
    "required": ["primary_intent", "secondary_intent", "reasoning"],
    "additionalProperties": False,
}


def few_shot_block() -> str:
    """Table B.1 rendered for the prompt: one JSON line per example with its category and description."""
    lines = []
    for label in INTENTS:
        description, examples = TAXONOMY[label]
        lines.append(f"{label}: {description}")
        lines.extend(f"  - {json.dumps({'query': ex, 'primary_intent': label}, ensure_ascii=False)}"
                     for ex in examples)
    return "\n".join(lines)


def build_prompt(user_prompt: str) -> str:
    """The B.2 prompt for one user prompt."""
    return fill(load_prompt("intent_classification"), FEW_SHOT_EXAMPLES=few_shot_block(), USER_PROMPT=user_prompt)


def intent_task(max_tokens: int = 1000) -> Task:
    return Task(
        name="intent_classification",
        schema=SCHEMA,
        build=lambda p: [{"role": "user", "content": build_prompt(p)}],
        params={"max_tokens": max_tokens},
    )


def intent_step(prompts: Sequence[str], *, model: str | None = None, analysis: str = "SA-B5") -> Step:
    """The requests :func:`classify_intents` sends for ``prompts`` (one per prompt), for the estimate and the
    run alike; at release scale, the 24k release's 32,884 user turns."""
    return Step(analysis, intent_task(), list(prompts), model)


def sample_step(battles: pl.DataFrame, n: int = 150, *, seed: int = 0, model: str | None = None) -> Step:
    """The requests :func:`annotate_sample` sends: the first prompts of the same ``n`` drawn conversations, less
    the ones it skips (:func:`skip_reason`)."""
    prompts = _drawn(battles, n, seed)["prompt"].to_list()
    return intent_step([p for p in prompts if skip_reason(p) is None], model=model)


def _drawn(battles: pl.DataFrame, n: int, seed: int) -> pl.DataFrame:
    return battles.sample(n=min(n, battles.height), seed=seed, shuffle=True)


def classify_intents(prompts: Sequence[str], client: LLMClient, *, model: str | None = None) -> pl.DataFrame:
    """Primary and secondary intent of each prompt.

    Returns one row per prompt (input order): ``prompt``, ``primary_intent``, ``secondary_intent``
    (``Unassigned`` when none), ``reasoning``, ``status`` (``ok``/``failed``/``not run``) and ``error``. A
    secondary equal to the primary is set to ``Unassigned``. Accounting: ``client.last_stats``.
    """
    prompts = list(prompts)
    df = client.run(intent_task(), prompts, model=model, desc="intent labels")
    return pl.DataFrame({"prompt": prompts}, schema={"prompt": pl.String}).hstack(
        df.select(
            "primary_intent",
            pl.when(pl.col("secondary_intent") == pl.col("primary_intent"))
            .then(pl.lit(UNASSIGNED))
            .otherwise(pl.col("secondary_intent"))
            .alias("secondary_intent"),
            "reasoning",
            "status",
            "error",
        )
    )


def intent_distribution(labels: Sequence[str | None], *, exclude_other: bool = True) -> pl.DataFrame:
    """Share of each primary intent (Figure 1 excludes Other): columns intent, count, share (0–1), sorted.

    Counted by :func:`analysis_lib.search_arena.descriptive.shares` (nulls left out of the base).
    """
    frame = pl.DataFrame({"intent": list(labels)}, schema={"intent": pl.String})
    return shares(frame, "intent", exclude=("Other",) if exclude_other else ())


# ------------------------------------------------------------------------------------------ agreement


def primary_kappa(primary_1: Sequence[str], primary_2: Sequence[str]) -> float:
    """Cohen's κ on the primary labels of two raters (over the nine categories)."""
    _check_labels(primary_1, primary_2)
    return cohen_kappa(list(primary_1), list(primary_2), labels=list(INTENTS))


def top2_resolve(
    primary_1: Sequence[str], secondary_1: Sequence[str | None],
    primary_2: Sequence[str], secondary_2: Sequence[str | None],
) -> tuple[list[str], list[str], list[bool]]:
    """Resolved labels of both raters under top-2 matching (module docstring) and the per-item match flags."""
    n = len(primary_1)
    if not (len(secondary_1) == len(primary_2) == len(secondary_2) == n):
        raise ValueError("all four label sequences must have the same length")
    r1, r2, match = [], [], []
    for p1, s1, p2, s2 in zip(primary_1, secondary_1, primary_2, secondary_2, strict=True):
        set1 = {p1} | ({s1} if s1 and s1 != UNASSIGNED else set())
        set2 = {p2} | ({s2} if s2 and s2 != UNASSIGNED else set())
        if p1 in set2:
            r1.append(p1)
            r2.append(p1)
            match.append(True)
        elif p2 in set1:
            r1.append(p2)
            r2.append(p2)
            match.append(True)
        else:
            r1.append(p1)
            r2.append(p2)
            match.append(False)
    return r1, r2, match


def top2_kappa(
    primary_1: Sequence[str], secondary_1: Sequence[str | None],
    primary_2: Sequence[str], secondary_2: Sequence[str | None],
) -> float:
    """Cohen's κ after top-2 matching (definition in the module docstring)."""
    _check_labels(primary_1, primary_2)
    r1, r2, _ = top2_resolve(primary_1, secondary_1, primary_2, secondary_2)
    return cohen_kappa(r1, r2, labels=list(INTENTS))


class Agreement(NamedTuple):
    """Agreement between two annotators (:func:`agreement`): the items both labelled (``n``), Cohen's κ on the
    primary labels and after top-2 matching, and the raw shares of equal primaries and of top-2 matches."""

    n: int
    kappa_primary: float
    kappa_top2: float
    accuracy_primary: float
    accuracy_top2: float


def agreement(a: pl.DataFrame, b: pl.DataFrame) -> Agreement:
    """Agreement between two annotation frames aligned row by row (``primary_intent``, ``secondary_intent``).

    Rows where either rater has no primary label (failed / not run) are dropped; ``n`` says how many remain.
    """
    keep = a["primary_intent"].is_not_null() & b["primary_intent"].is_not_null()
    a, b = a.filter(keep), b.filter(keep)
    p1, s1 = a["primary_intent"].to_list(), a["secondary_intent"].to_list()
    p2, s2 = b["primary_intent"].to_list(), b["secondary_intent"].to_list()
    _, _, match = top2_resolve(p1, s1, p2, s2)
    return Agreement(
        n=len(p1),
        kappa_primary=primary_kappa(p1, p2),
        kappa_top2=top2_kappa(p1, s1, p2, s2),
        accuracy_primary=sum(x == y for x, y in zip(p1, p2, strict=True)) / len(p1) if p1 else float("nan"),
        accuracy_top2=sum(match) / len(match) if match else float("nan"),
    )


def _check_labels(*seqs: Sequence[str]) -> None:
    allowed = set(INTENTS)
    for seq in seqs:
        bad = sorted({str(x) for x in seq if x not in allowed})
        if bad:
            raise ValueError(f"labels {bad} are not among the nine intent categories {list(INTENTS)}")


#: ``status`` of an :func:`annotate_sample` row whose prompt was not sent (``error`` says why).
SKIPPED = "skipped"


def skip_reason(prompt: str | None) -> str | None:
    """Why a prompt is not sent for annotation, or None: a missing or blank prompt, or the release's moderation
    placeholder (:data:`analysis_lib.search_arena.schema.MODERATION_PROMPT`, which replaced the user's text)."""
    if prompt is None or not prompt.strip():
        return "skipped: no user prompt"
    if prompt.strip() == MODERATION_PROMPT:
        return "skipped: moderation placeholder"
    return None


def annotate_sample(battles: pl.DataFrame, client: LLMClient, n: int = 150, *, seed: int = 0,
                    model: str | None = None) -> pl.DataFrame:
    """Re-annotate ``n`` randomly drawn conversations' first prompts and put the release's labels beside ours.

    Returns one row per drawn conversation with columns ``conv_id``, ``prompt``, ``language``,
    ``release_primary``, ``release_secondary``, ``primary_intent``, ``secondary_intent``, ``reasoning``,
    ``status`` and ``error`` (as in :func:`classify_intents`). Prompts that are missing, blank or the moderation
    placeholder are not sent to the model: their row has ``status == "skipped"`` and the reason in ``error``
    (count them with ``status``). The release's labels are GPT-4.1's (the paper's pipeline), so agreement with
    them measures reproducibility of the pipeline, not agreement with humans.
    """
    sample = _drawn(battles, n, seed)
    prompts = sample["prompt"].to_list()
    reasons = [skip_reason(p) for p in prompts]
    send = [i for i, r in enumerate(reasons) if r is None]
    labelled = classify_intents([prompts[i] for i in send], client, model=model)
    rows = {i: r for i, r in zip(send, labelled.iter_rows(named=True), strict=True)}
    empty = {"primary_intent": None, "secondary_intent": None, "reasoning": None}
    ours = [rows.get(i) or {**empty, "status": SKIPPED, "error": reasons[i]} for i in range(len(prompts))]
    ours_frame = pl.DataFrame(
        [{k: r[k] for k in ("primary_intent", "secondary_intent", "reasoning", "status", "error")} for r in ours],
        schema={"primary_intent": pl.String, "secondary_intent": pl.String, "reasoning": pl.String,
                "status": pl.String, "error": pl.String},
    )
    return sample.select(
        "conv_id", pl.col("prompt").cast(pl.String), "language",
        pl.col("primary_intent").alias("release_primary"),
        pl.col("secondary_intent").alias("release_secondary"),
    ).hstack(ours_frame)


def sample_agreement(annotated: pl.DataFrame) -> Agreement:
    """:func:`agreement` between the release's labels and ours in an :func:`annotate_sample` frame."""
    release = annotated.select(pl.col("release_primary").alias("primary_intent"),
                               pl.col("release_secondary").alias("secondary_intent"))
    ours = annotated.select("primary_intent", "secondary_intent")
    known = release["primary_intent"].is_in(list(INTENTS))
    return agreement(release.filter(known), ours.filter(known))
