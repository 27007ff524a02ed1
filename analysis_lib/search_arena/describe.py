"""Describing differences between two text sets (Search Arena §2.2 and Appendix C; Zhong et al. 2022,
Dunlap et al. 2024): propose, reduce, validate-and-rank.

1. **Propose.** For each of ``rounds`` rounds, draw ``samples_per_group`` items from each group's proposal pool
   and ask the proposer model (paper: GPT-4.1) for three properties more common in group A than in group B
   (C.1 prompt for prompt sets, C.2 prompt for paired responses). C.1: 16 rounds × 32 prompts per group; C.2:
   32 rounds × 8 questions, each shown with both answers.
2. **Reduce.** All proposed properties go to the reducer model (paper: o3) with the C.1 reduction prompt, which
   returns the five most common distinct properties.
3. **Validate and rank.** The ranker model (paper: GPT-4.1-mini) checks each property on each validation sample
   (100 per group, held out from the proposal pool when the pool is large enough, else every sample: the C.2
   sets have 21–46 questions) with the C.1/C.2 Yes/No prompt. For each property we report the share of each
   group's samples satisfying it and a two-sided two-proportion z-test (pooled variance) of the difference;
   properties are ranked by the difference. Failed checks are excluded from both numerator and denominator
   and counted.

Every call goes through :class:`analysis_lib.llm.LLMClient`, so reruns hit the cache and, with no endpoint and
no cache, the result says "not run" (``DescribeResult.status``) and carries no numbers. The paper uses the
provider's default temperature (1.0): no sampling parameters are sent.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl
from scipy.stats import norm

from analysis_lib.llm import NOT_RUN, LLMClient, ReplyError, RunStats, Step, Task, clip_text, fill, load_prompt
from analysis_lib.search_arena import prompt_sets

#: The paper's three models (Appendix C.1 and C.2).
PAPER_MODELS = {"propose": "gpt-4.1", "reduce": "o3", "rank": "gpt-4.1-mini"}
#: Longest text shown to a model for one prompt or answer (characters); longer ones are cut with "…".
MAX_CHARS = 4000


@dataclass(frozen=True)
class Settings:
    """Pipeline settings. ``PROMPT_SETTINGS`` = Appendix C.1, ``RESPONSE_SETTINGS`` = C.2."""

    rounds: int
    samples_per_group: int
    n_validation: int = 100
    top_k: int = 5


PROMPT_SETTINGS = Settings(rounds=16, samples_per_group=32)
RESPONSE_SETTINGS = Settings(rounds=32, samples_per_group=8)


# ------------------------------------------------------------------------------------------- statistics


def two_proportion_test(k1: int, n1: int, k2: int, n2: int) -> tuple[float, float]:
    """Two-sided z-test of p1 = p2 with the pooled variance; returns ``(z, p_value)``.

    z = (k1/n1 - k2/n2) / sqrt(p (1 - p) (1/n1 + 1/n2)), p = (k1 + k2) / (n1 + n2). When the pooled share is 0
    or 1 the two samples are identical and the result is (0, 1). Same as ``statsmodels``' ``proportions_ztest``
    with its default pooled variance.
    """
    if min(n1, n2) <= 0:
        return float("nan"), float("nan")
    pooled = (k1 + k2) / (n1 + n2)
    if pooled in (0.0, 1.0):
        return 0.0, 1.0
    z = (k1 / n1 - k2 / n2) / math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    return float(z), float(2 * norm.sf(abs(z)))


# ------------------------------------------------------------------------------------------ parsing


def parse_bullets(content: str) -> dict[str, list[str]]:
    """Properties from a bulleted (``*``/``-``/``•``) or numbered list; surrounding quotes removed."""
    props = []
    for line in content.splitlines():
        m = re.match(r"^\s*(?:[-*•]|\d+[.)])\s+(?:[-*•]\s+)?(.+?)\s*$", line)
        if not m:
            continue
        text = m.group(1).strip().strip('"“”\'').strip()
        text = re.sub(r"^\*\*(.+?)\*\*:?\s*", r"\1 ", text).strip()
        if len(text) >= 3:
            props.append(text)
    if not props:
        raise ReplyError("no bulleted or numbered properties in the reply")
    return {"properties": props}


def parse_yes_no(content: str) -> dict[str, bool]:
    m = re.match(r"^\W*(yes|no)\b", content.strip(), flags=re.I)
    if not m:
        raise ReplyError(f"expected Yes or No, got a reply of {len(content)} characters")  # never quote it
    return {"satisfies": m.group(1).lower() == "yes"}


PROPERTIES_SCHEMA = {
    "type": "object",
    "properties": {"properties": {"type": "array", "items": {"type": "string", "minLength": 3}, "minItems": 1}},
    "required": ["properties"],
}
YES_NO_SCHEMA = {"type": "object", "properties": {"satisfies": {"type": "boolean"}}, "required": ["satisfies"]}


def propose_task(kind: str) -> Task:
    template = load_prompt("propose_prompts" if kind == "prompts" else "propose_responses")
    return Task(name=f"describe_propose_{kind}", schema=PROPERTIES_SCHEMA, parse=parse_bullets, json_mode=False,
                build=lambda item: [{"role": "user", "content": fill(template, text=item["text"])}])


def reduce_task() -> Task:
    template = load_prompt("reduce_properties")
    return Task(name="describe_reduce", schema=PROPERTIES_SCHEMA, parse=parse_bullets, json_mode=False,
                build=lambda item: [{"role": "user", "content": fill(template, properties=item["properties"])}])


def rank_task(kind: str) -> Task:
    if kind == "prompts":
        template = load_prompt("rank_prompts")

        def build(item: Mapping[str, str]) -> list[dict[str, str]]:
            return [{"role": "user", "content": fill(template, text=item["text"], hypothesis=item["hypothesis"])}]
    else:
        template = load_prompt("rank_responses")

        def build(item: Mapping[str, str]) -> list[dict[str, str]]:
            content = fill(template, question=item["question"], answer=item["answer"], hypothesis=item["hypothesis"])
            return [{"role": "user", "content": content}]

    return Task(name=f"describe_rank_{kind}", schema=YES_NO_SCHEMA, parse=parse_yes_no, json_mode=False, build=build)


# ---------------------------------------------------------------------------------------- pipeline


@dataclass
class DescribeResult:
    """Outcome of one direction (properties more common in ``name_a`` than in ``name_b``)."""

    name_a: str
    name_b: str
    status: str  # "ok", "not run", "failed"
    proposals: pl.DataFrame  # round, property
    properties: list[str]  # the reduced list, in the reducer's order
    validation: pl.DataFrame  # per property: share_a, share_b, diff, z, p_value, n_a, n_b, failed
    stats: RunStats = field(default_factory=RunStats)
    models: dict[str, str] = field(default_factory=dict)
    note: str = ""

    def significant(self, alpha: float = 0.001) -> pl.DataFrame:
        """Properties more common in A with p < alpha (the paper's C.1 filter)."""
        return self.validation.filter((pl.col("diff") > 0) & (pl.col("p_value") < alpha))

    @property
    def n_significant(self) -> int | None:
        """How many properties :meth:`significant` keeps; None when the comparison did not run (see ``reason``)."""
        return self.significant().height if self.status == "ok" else None

    @property
    def top(self) -> dict[str, Any] | None:
        """The validation row of the property most common in A relative to B (``property``, ``share_a``,
        ``share_b``, ``p_value``, ...); None when the comparison did not run (see ``reason``)."""
        return self.validation.row(0, named=True) if self.status == "ok" and self.validation.height else None

    @property
    def reason(self) -> str:
        """Why the comparison has no result (its ``note``); empty when it ran."""
        return "" if self.status == "ok" else self.note


def unusable_note(step: str, frame: pl.DataFrame) -> str:
    """"not run: no usable LLM reply at the <step> step (F of N failed, T timed out, U not run; first error:
    ...)": why a step gave nothing to compute with, with the counts (errors name a kind, never the input).
    When no item was even attempted (no endpoint, nothing cached), just that reason."""
    status = frame["status"]
    errors = frame["error"].drop_nulls()
    if frame.height and bool((status == NOT_RUN).all()) and errors.len():
        return str(errors.first())
    timed_out = int(errors.str.contains("deadline exceeded|timeout|deadline passed").sum())
    first = str(errors.first()) if errors.len() else ""
    return (f"not run: no usable LLM reply at the {step} step ({int((status == 'failed').sum())} of {frame.height} "
            f"failed, {timed_out} timed out, {int((status == NOT_RUN).sum())} not run"
            + (f"; first error: {first}" if first else "") + ")")


def resolve_models(client: LLMClient, models: Mapping[str, str] | None = None) -> dict[str, str]:
    """Models per stage: the explicit mapping, else the client's model when one was chosen (argument or
    ``$ANALYSIS_LLM_MODEL``), else the paper's three models."""
    base = {k: client.paper_model(v) for k, v in PAPER_MODELS.items()}
    base.update({k: v for k, v in (models or {}).items() if v})
    return base


def _split(n: int, settings: Settings, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, bool]:
    """(proposal pool, validation sample, overlap) indices for a group of n items."""
    order = rng.permutation(n)
    if n >= settings.n_validation + settings.samples_per_group:
        return order[settings.n_validation :], np.sort(order[: settings.n_validation]), False
    return order, np.sort(order[: settings.n_validation]), True


def _propose_items(kind: str, a: Sequence[Any], b: Sequence[Any], pool_a: np.ndarray, pool_b: np.ndarray,
                   settings: Settings, rng: np.random.Generator) -> list[dict[str, Any]]:
    items = []
    for r in range(settings.rounds):
        if kind == "prompts":
            sa = rng.choice(pool_a, size=min(settings.samples_per_group, len(pool_a)), replace=False)
            sb = rng.choice(pool_b, size=min(settings.samples_per_group, len(pool_b)), replace=False)
            text = ("Group A:\n" + "\n".join(f"{i + 1}. {clip_text(a[j], MAX_CHARS)}" for i, j in enumerate(sa))
                    + "\n\nGroup B:\n"
                    + "\n".join(f"{i + 1}. {clip_text(b[j], MAX_CHARS)}" for i, j in enumerate(sb)))
        else:  # paired responses: a[j] and b[j] answer the same question
            s = rng.choice(pool_a, size=min(settings.samples_per_group, len(pool_a)), replace=False)
            text = "\n\n".join(
                f"User question: {clip_text(a[j]['question'], MAX_CHARS)}\n\n"
                f"Model A: {clip_text(a[j]['answer'], MAX_CHARS)}\n\n"
                f"Model B: {clip_text(b[j]['answer'], MAX_CHARS)}" for j in s
            )
        items.append({"round": r, "text": text})
    return items


def describe_differences(
    group_a: Sequence[Any],
    group_b: Sequence[Any],
    client: LLMClient,
    *,
    kind: str = "prompts",
    name_a: str = "A",
    name_b: str = "B",
    settings: Settings | None = None,
    models: Mapping[str, str] | None = None,
    seed: int = 0,
) -> DescribeResult:
    """Properties more common in ``group_a`` than in ``group_b``, validated on held-out samples.

    ``kind="prompts"``: the groups are lists of prompt strings (C.1). ``kind="responses"``: the groups are
    aligned lists of ``{"question", "answer"}`` (``group_a[i]`` and ``group_b[i]`` answer the same question;
    C.2). ``settings`` defaults to C.1's or C.2's. Swap the groups for the other direction.
    """
    if kind not in ("prompts", "responses"):
        raise ValueError("kind must be 'prompts' or 'responses'")
    if kind == "responses" and len(group_a) != len(group_b):
        raise ValueError("response groups must be aligned question by question")
    settings = settings or (PROMPT_SETTINGS if kind == "prompts" else RESPONSE_SETTINGS)
    models = resolve_models(client, models)
    rng = np.random.default_rng(seed)
    pool_a, val_a, overlap_a = _split(len(group_a), settings, rng)
    if kind == "responses":
        pool_b, val_b, overlap_b = pool_a, val_a, overlap_a
    else:
        pool_b, val_b, overlap_b = _split(len(group_b), settings, rng)
    note = ("validation samples overlap the proposal pool (group too small to hold out "
            f"{settings.n_validation})" if (overlap_a or overlap_b) else "")
    empty_val = pl.DataFrame(schema={"property": pl.String, "share_a": pl.Float64, "share_b": pl.Float64,
                                     "diff": pl.Float64, "z": pl.Float64, "p_value": pl.Float64,
                                     "n_a": pl.Int64, "n_b": pl.Int64, "failed": pl.Int64})

    # 1. propose
    items = _propose_items(kind, group_a, group_b, pool_a, pool_b, settings, rng)
    prop = client.run(propose_task(kind), items, model=models["propose"], desc=f"propose {name_a} vs {name_b}")
    stats = client.last_stats
    rows = [{"round": r, "property": p} for r, ps, st in zip(prop["item"], prop["properties"], prop["status"],
                                                             strict=True) if st == "ok" for p in ps]
    proposals = pl.DataFrame(rows, schema={"round": pl.Int64, "property": pl.String})
    if proposals.is_empty():
        return DescribeResult(name_a, name_b, NOT_RUN, proposals, [], empty_val, stats, models,
                              note=partial_note({"propose": prop}) or unusable_note("propose", prop))

    # 2. reduce
    listing = "\n".join(f"- {p}" for p in dict.fromkeys(proposals["property"].to_list()))
    red = client.run(reduce_task(), [{"properties": listing}], model=models["reduce"], desc="reduce")
    stats = stats.merge(client.last_stats)
    if red["status"][0] != "ok":
        return DescribeResult(name_a, name_b, NOT_RUN, proposals, [], empty_val, stats, models,
                              note=partial_note({"reduce": red}) or unusable_note("reduce", red))
    properties = list(red["properties"][0])[: settings.top_k]

    # 3. validate and rank
    checks = []
    for h in properties:
        for group, idx, data in (("a", val_a, group_a), ("b", val_b, group_b)):
            for j in idx:
                item = ({"text": clip_text(data[j], MAX_CHARS)} if kind == "prompts"
                        else {"question": clip_text(data[j]["question"], MAX_CHARS),
                              "answer": clip_text(data[j]["answer"], MAX_CHARS)})
                checks.append({**item, "hypothesis": h, "_group": group})
    ranked = client.run(rank_task(kind), [{k: v for k, v in c.items() if k != "_group"} for c in checks],
                        model=models["rank"], desc="validate")
    stats = stats.merge(client.last_stats)
    judged = pl.DataFrame({
        "property": [c["hypothesis"] for c in checks],
        "group": [c["_group"] for c in checks],
        "satisfies": ranked["satisfies"],
        "status": ranked["status"],
    })
    out = []
    for h in properties:
        sub = judged.filter(pl.col("property") == h)
        ok = sub.filter(pl.col("status") == "ok")
        a_ = ok.filter(pl.col("group") == "a")["satisfies"]
        b_ = ok.filter(pl.col("group") == "b")["satisfies"]
        k1, n1, k2, n2 = int(a_.sum()), a_.len(), int(b_.sum()), b_.len()
        z, p = two_proportion_test(k1, n1, k2, n2)
        out.append({"property": h, "share_a": k1 / n1 if n1 else None, "share_b": k2 / n2 if n2 else None,
                    "diff": (k1 / n1 - k2 / n2) if n1 and n2 else None, "z": z, "p_value": p, "n_a": n1,
                    "n_b": n2, "failed": sub.height - ok.height})
    validation = pl.DataFrame(out, schema=empty_val.schema).sort("diff", descending=True, nulls_last=True)
    # a property without a usable judgement in either group has no share to report: left out, and counted
    unusable = validation.filter((pl.col("n_a") == 0) | (pl.col("n_b") == 0))
    validation = validation.filter((pl.col("n_a") > 0) & (pl.col("n_b") > 0))
    if validation.is_empty():
        return DescribeResult(name_a, name_b, NOT_RUN, proposals, properties, validation, stats, models,
                              note=partial_note({"propose": prop, "validate": ranked})
                              or unusable_note("validate", ranked))
    if unusable.height:
        note = "; ".join(filter(None, [note, f"{unusable.height} of {len(properties)} properties left out: no "
                                              "usable validation reply in one group"]))
    unfinished = partial_note({"propose": prop, "validate": ranked})
    if unfinished:  # shares from a part of the checks are kept in the result, never reported as the answer
        return DescribeResult(name_a, name_b, NOT_RUN, proposals, properties, validation, stats, models,
                              note=unfinished)
    return DescribeResult(name_a, name_b, "ok", proposals, properties, validation, stats, models, note=note)


def partial_note(steps: Mapping[str, pl.DataFrame]) -> str:
    """When a step left items unsent part-way (request budget, run deadline, a batch still pending) after others were
    sent, the not-run reason of the whole comparison: the first such item's reason (``"not run: request budget
    ..."``) and, per step, how many of its requests were not sent; ``""`` when every item was sent, or none."""
    counts, first = [], ""
    for step, frame in steps.items():
        unsent = frame.filter(pl.col("status") == NOT_RUN)
        if unsent.height:
            first = first or str(unsent["error"].drop_nulls().first() or "not run")
            counts.append(f"{unsent.height:,} of {frame.height:,} {step} requests not sent")
    if not counts or all(bool((f["status"] == NOT_RUN).all()) for f in steps.values()):
        return ""  # nothing sent at all: the one reason (:func:`unusable_note`), not a count
    return f"{first}; {', '.join(counts)}, so the properties and shares would be of a part (a rebuild finishes them)"


def display_table(result: DescribeResult) -> pl.DataFrame:
    """The validation table with percentages and group names as column headers, for a notebook."""
    v = result.validation
    return v.select(
        "property",
        (pl.col("share_a") * 100).round(1).alias(f"% {result.name_a}"),
        (pl.col("share_b") * 100).round(1).alias(f"% {result.name_b}"),
        pl.col("p_value"),
        pl.col("n_a"),
        pl.col("n_b"),
        pl.col("failed"),
    )


# ------------------------------------------------------------------------------- the paper's comparisons

#: The five comparisons of Appendix C.2 as (arena, intent, direction), in the direction the paper reports each:
#: "search" means properties more common in search answers. The paper's numbers for them (the top property's
#: shares and p-value) are the book's (rows SA-C2 of its paper values). (C.1's four directions are
#: :func:`prompt_comparisons`'s; Search Arena vs Text Arena is not reproducible here: the Text Arena prompts are
#: not released with the describing-differences inputs.)
C2_COMPARISONS: tuple[tuple[str, str, str], ...] = (
    ("text_arena", "Factual Lookup", "search"),
    ("text_arena", "Info Synthesis", "search"),
    ("text_arena", "Text Processing", "non-search"),
    ("search_arena", "Factual Lookup", "search"),
    ("search_arena", "Info Synthesis", "search"),
)


def comparison_steps(group_a: Sequence[Any], group_b: Sequence[Any], *, kind: str = "prompts",
                     settings: Settings | None = None, models: Mapping[str, str] | None = None, seed: int = 0,
                     analysis: str = "SA-C1", label: str = "") -> list[Step]:
    """The requests :func:`describe_differences` sends for one comparison: the propose step exactly (the same
    random draws), then the reduce step (one request) and the validation step, bounded by ``top_k`` properties
    times the two validation samples (their items are the reduce step's reply). ``models``: resolved names."""
    settings = settings or (PROMPT_SETTINGS if kind == "prompts" else RESPONSE_SETTINGS)
    models = {**PAPER_MODELS, **(models or {})}
    rng = np.random.default_rng(seed)
    pool_a, val_a, _ = _split(len(group_a), settings, rng)
    pool_b, val_b = (pool_a, val_a) if kind == "responses" else _split(len(group_b), settings, rng)[:2]
    items = _propose_items(kind, group_a, group_b, pool_a, pool_b, settings, rng)
    later = "items come from the previous step's reply"
    return [Step(analysis, propose_task(kind), items, models["propose"], note=label),
            Step(analysis, reduce_task(), (), models["reduce"], at_most=1, note=f"{label}; {later}".strip("; ")),
            Step(analysis, rank_task(kind), (), models["rank"], at_most=settings.top_k * (len(val_a) + len(val_b)),
                 note=f"{label}; at most {settings.top_k} properties; {later}".strip("; "))]


def prompt_steps(*, seed: int = 0, models: Mapping[str, str] | None = None,
                 cache_dir=None) -> list[Step]:
    """SA-C1's requests (:func:`prompt_comparisons`), built from the same mirrored prompt sets."""
    out: list[Step] = []
    for bench, display in (("simpleqa", "SimpleQA"), ("browsecomp", "BrowseComp")):
        sa = prompt_sets.search_arena_prompts(bench, dedup=True, cache_dir=cache_dir)
        other = prompt_sets.benchmark_prompts(bench, dedup=True, cache_dir=cache_dir)
        for a, b, name in ((sa, other, f"Search Arena vs {display}"), (other, sa, f"{display} vs Search Arena")):
            out += comparison_steps(a, b, kind="prompts", models=models, seed=seed, analysis="SA-C1", label=name)
    return out


def response_steps(*, seed: int = 0, models: Mapping[str, str] | None = None, cache_dir=None) -> list[Step]:
    """SA-C2's requests (:func:`response_comparisons`)."""
    out: list[Step] = []
    for arena, intent, direction in C2_COMPARISONS:
        pairs = prompt_sets.response_pairs(arena, intent, cache_dir=cache_dir)
        s = [{"question": q, "answer": a} for q, a in zip(pairs["question"], pairs["answer_search"], strict=True)]
        n = [{"question": q, "answer": a} for q, a in zip(pairs["question"], pairs["answer_non_search"], strict=True)]
        a, b = (s, n) if direction == "search" else (n, s)
        out += comparison_steps(a, b, kind="responses", models=models, seed=seed, analysis="SA-C2",
                                label=f"{arena} {intent} ({direction})")
    return out


def prompt_comparisons(client: LLMClient, *, seed: int = 0, models: Mapping[str, str] | None = None,
                       settings: Settings | None = None, cache_dir=None) -> dict[tuple[str, str], DescribeResult]:
    """The four C.1 directions on the mirrored prompt sets (each benchmark with its own Search Arena sample)."""
    out = {}
    for bench, display in (("simpleqa", "SimpleQA"), ("browsecomp", "BrowseComp")):
        sa = prompt_sets.search_arena_prompts(bench, dedup=True, cache_dir=cache_dir)
        other = prompt_sets.benchmark_prompts(bench, dedup=True, cache_dir=cache_dir)
        for a, b, name_a, name_b in ((sa, other, "Search Arena", display), (other, sa, display, "Search Arena")):
            out[(name_a, name_b)] = describe_differences(a, b, client, kind="prompts", name_a=name_a,
                                                         name_b=name_b, settings=settings, models=models, seed=seed)
    return out


def response_comparisons(client: LLMClient, *, seed: int = 0, models: Mapping[str, str] | None = None,
                         settings: Settings | None = None,
                         cache_dir=None) -> dict[tuple[str, str, str], DescribeResult]:
    """The five C.2 comparisons, in the paper's direction for each (see :data:`C2_COMPARISONS`)."""
    out = {}
    for arena, intent, direction in C2_COMPARISONS:
        pairs = prompt_sets.response_pairs(arena, intent, cache_dir=cache_dir)
        s = [{"question": q, "answer": a} for q, a in zip(pairs["question"], pairs["answer_search"], strict=True)]
        n = [{"question": q, "answer": a} for q, a in zip(pairs["question"], pairs["answer_non_search"], strict=True)]
        a, b, na, nb = (s, n, "search", "non-search") if direction == "search" else (n, s, "non-search", "search")
        out[(arena, intent, direction)] = describe_differences(a, b, client, kind="responses", name_a=na, name_b=nb,
                                                               settings=settings, models=models, seed=seed)
    return out
