"""LLM-only analyses of the nugget paper: the GPT-4.1 judge (NG-F6), the language-quality rubric (NG-T3) and
second-model assignment agreement (NG-F7).

- **NG-F6 judge** (Appendix D, ``prompts/ng_judge.txt``): the query and the two responses, *randomly ordered* per
  battle (seeded) to mitigate position bias; the verdict ``[[A]]`` / ``[[B]]`` / ``[[Tie]]`` is read from the end of
  the reply and mapped back to ``model_a`` / ``model_b`` / ``tie``. Compared with the human vote by
  :func:`analysis_lib.nuggets.agreement.confusion` (κ, agreements, tie share, inversions).
- **NG-T3 rubric** (Appendix E, ``prompts/ng_language_quality.txt``, GPT-4.1-nano in the paper): three 1–5 scores
  per response (fluency and coherence, grammar and syntax, readability and presentation). On decided battles,
  the per-criterion score difference ``B − A`` is correlated with the human preference (+1 model_b, −1 model_a)
  by Kendall's τ-b and Spearman's ρ (scipy).
- **NG-F7**: κ (quadratic weights over the ordered labels not_support < partial_support < support) between the
  assignments of two models for the same (battle, side, nugget); the second model's assignments come from
  :func:`analysis_lib.nuggets.pipeline.run_pipeline` with another ``model`` on the same nuggets.
- **NG-Q query classes** (§4.1, Appendix A.2, Figure 10): the Researchy-Questions attribute prompt of the authors'
  ``src/analysis/query_categorization.py`` (castorini/lmsys_nuggetize; ``prompts/ng_query_categorization.txt``),
  one user message, GPT-4.1 at temperature 0.7 with at most 512 completion tokens, one request per distinct
  query text (the authors classify each query once and copy the scores to every battle that asks it). The reply
  is a Python dict of eight 0–10 scores (:func:`parse_attributes`); a battle belongs to the class(es) of its
  highest score when that score is at least 7, ties counted in every tied class (:func:`query_classes`, the rule
  of the authors' ``inversions_by_category.py``).

The steps on nugget records: :func:`response_pairs` (the battles whose records carry both responses' texts),
:func:`judge` (NG-F6's verdicts and their confusion with the vote), :func:`rubric` (NG-T3 on a random
:data:`RUBRIC_BATTLES` decided battles, as the paper: "we randomly sampled 1,000 battles with a clear winner") and
:func:`classify_queries` (NG-Q on a random ``limit`` of the battles). Items the client could not answer keep
their ``status`` and ``error`` in the returned frames.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import polars as pl
from scipy import stats as sps

from analysis_lib.llm import LLMClient, ReplyError, Step, Task, fill, load_prompt, parse_json
from analysis_lib.nuggets.agreement import NuggetConfusion, confusion
from analysis_lib.nuggets.records import NuggetRecords
from analysis_lib.nuggets.sampling import sample_rows
from analysis_lib.nuggets.scores import ASSIGNMENT_ORDER
from analysis_lib.stats import cohen_kappa

JUDGE_MODEL = "gpt-4.1"
RUBRIC_MODEL = "gpt-4.1-nano"
CRITERIA = ("Criterion 1: Fluency and Coherence", "Criterion 2: Grammar and Syntax",
            "Criterion 3: Readability and Presentation")
CRITERION_NAMES = ("fluency", "grammar", "readability")
QUERY_CLASS_MODEL = "gpt-4.1"
#: the eight Researchy-Questions attributes, in the order of the authors' prompt
ATTRIBUTES = ("ambiguous", "incompleteness", "assumptive", "multi-faceted", "knowledge-intensive", "subjective",
              "reasoning-intensive", "harmful")
#: the authors' ``--class_threshold`` default: a query is classified when its highest score reaches it
CLASS_THRESHOLD = 7
#: NG-T3's sample of decided battles (the paper's 1,000)
RUBRIC_BATTLES = 1000
_VERDICT = re.compile(r"\[\[(A|B|Tie)\]\]", re.IGNORECASE)


def parse_verdict(content: str) -> dict[str, str]:
    """The last ``[[A]]`` / ``[[B]]`` / ``[[Tie]]`` of a judge reply, as ``{"verdict": "A" | "B" | "Tie"}``."""
    found = _VERDICT.findall(content)
    if not found:
        raise ValueError("no [[A]], [[B]] or [[Tie]] verdict in the reply")
    v = found[-1].lower()
    return {"verdict": {"a": "A", "b": "B", "tie": "Tie"}[v]}


def judge_task(model: str | None = None) -> Task:
    """NG-F6: the Appendix D judge prompt; an item is ``(query, first_answer, second_answer)``."""
    template = load_prompt("ng_judge")
    return Task(
        name="ng_judge",
        schema={"type": "object", "properties": {"verdict": {"type": "string", "enum": ["A", "B", "Tie"]}},
                "required": ["verdict"]},
        build=lambda item: [{"role": "user",
                             "content": fill(template, query=item[0], answer_a=item[1], answer_b=item[2])}],
        parse=parse_verdict, params={"temperature": 0}, json_mode=False, model=model)


def judge_items(battles: pl.DataFrame, seed: int = 0) -> tuple[list[tuple[str, str, str]], np.ndarray]:
    """The judge's items ``(query, first, second)`` with B shown first where ``swapped`` (a fair coin per battle)."""
    swapped = np.random.default_rng(seed).uniform(size=battles.height) < 0.5
    items = [(q, b, a) if s else (q, a, b) for q, a, b, s in
             zip(battles["query"], battles["answer_a"], battles["answer_b"], swapped, strict=True)]
    return items, swapped


def judge_step(battles: pl.DataFrame, *, seed: int = 0, model: str = JUDGE_MODEL) -> Step:
    """NG-F6's requests (:func:`run_judge`): one per battle."""
    return Step("NG-F6", judge_task(model), judge_items(battles, seed)[0], model)


def rubric_steps(decided: pl.DataFrame, *, model: str = RUBRIC_MODEL) -> list[Step]:
    """NG-T3's requests: the rubric on side A's and side B's answer of each decided battle (``query``,
    ``answer_a``, ``answer_b``)."""
    task = rubric_task(model)
    return [Step("NG-T3", task, list(zip(decided["query"], decided[f"answer_{s}"], strict=True)), model,
                 note=f"side {s}") for s in ("a", "b")]


def query_battles(sides: pl.DataFrame, limit: int | None = None, seed: int = 0) -> pl.DataFrame:
    """The battles NG-Q classifies: one row per battle (``qid``, ``query``, side A's row of
    ``sides``) with a non-blank query, by ``qid``; a random ``limit`` of them (``seed``,
    :func:`analysis_lib.nuggets.sampling.sample_rows`) when ``limit`` is less."""
    q = sides.filter(pl.col("side") == "a").select("qid", "query").sort("qid")
    q = q.filter(pl.col("query").is_not_null() & (pl.col("query").str.strip_chars() != ""))
    return sample_rows(q, limit, seed)


def query_class_step(battles: pl.DataFrame, *, model: str = QUERY_CLASS_MODEL) -> Step:
    """NG-Q's requests (:func:`run_query_classes`): one per distinct stripped query text."""
    distinct = battles["query"].fill_null("").str.strip_chars().unique(maintain_order=True)
    return Step("NG-Q", query_class_task(model), distinct.to_list(), model)


def run_judge(battles: pl.DataFrame, client: LLMClient, *, seed: int = 0, model: str | None = None) -> pl.DataFrame:
    """Judge verdicts for ``battles`` (columns ``qid``, ``query``, ``answer_a``, ``answer_b``): ``qid``,
    ``swapped`` (B shown first), ``judge`` (model_a / model_b / tie, null unless ok), ``status``, ``error``."""
    items, swapped = judge_items(battles, seed)
    out = client.run(judge_task(model or client.paper_model(JUDGE_MODEL)), items, desc="NG-F6 judge")
    first, second = np.where(swapped, "model_b", "model_a"), np.where(swapped, "model_a", "model_b")
    verdict = out["verdict"].to_numpy()
    # numpy's stubs reject None as a np.where branch; at run time it gives an object array with None
    tie_or_none = np.where(verdict == "Tie", "tie", None)  # type: ignore[call-overload]
    judge = np.where(verdict == "A", first, np.where(verdict == "B", second, tie_or_none))
    return pl.DataFrame({"qid": battles["qid"], "swapped": swapped, "judge": judge.tolist(),
                         "status": out["status"], "error": out["error"]})


def parse_rubric(content: str) -> dict[str, Any]:
    """The three 1–5 scores of a rubric reply (keys exactly as in the prompt's example)."""
    data = parse_json(content)
    out = {}
    for key, name in zip(CRITERIA, CRITERION_NAMES, strict=True):
        score = data[key]["score"]
        if not isinstance(score, int) or not 1 <= score <= 5:
            raise ValueError(f"{name} score must be an integer 1-5")
        out[name] = score
    return out


def rubric_task(model: str | None = None) -> Task:
    """NG-T3: the Appendix E rubric; an item is ``(query, response)``."""
    template = load_prompt("ng_language_quality")
    props = {n: {"type": "integer", "minimum": 1, "maximum": 5} for n in CRITERION_NAMES}
    return Task(name="ng_language_quality", schema={"type": "object", "properties": props, "required": list(props)},
                build=lambda item: [{"role": "user", "content": fill(template, query=item[0], response=item[1])}],
                parse=parse_rubric, params={"temperature": 0}, json_mode=False, model=model)


def rubric_correlations(scores_a: pl.DataFrame, scores_b: pl.DataFrame, winner: Sequence[str]) -> pl.DataFrame:
    """NG-T3: Kendall τ-b and Spearman ρ between the score difference B − A of each criterion and the human
    preference (+1 model_b, −1 model_a) on decided battles with both sides scored (rows in the same order)."""
    w = np.asarray(winner, dtype=object)
    y = np.where(w == "model_b", 1.0, np.where(w == "model_a", -1.0, np.nan))
    rows = []
    for name in CRITERION_NAMES:
        d = (scores_b[name].cast(pl.Float64) - scores_a[name].cast(pl.Float64)).to_numpy()
        keep = np.isfinite(d) & np.isfinite(y)
        rows.append({"criterion": name, "battles": int(keep.sum()),
                     "kendall_tau": float(sps.kendalltau(d[keep], y[keep]).statistic),
                     "spearman_rho": float(sps.spearmanr(d[keep], y[keep]).statistic)})
    return pl.DataFrame(rows)


def assignment_agreement(first: pl.DataFrame, second: pl.DataFrame) -> tuple[float, np.ndarray, int]:
    """NG-F7: quadratic-weighted κ between two models' assignments joined on (qid, side, position); returns
    κ, the 3 × 3 confusion (rows ``first``, order :data:`analysis_lib.nuggets.scores.ASSIGNMENT_ORDER`) and the number
    of unmatched rows."""
    keys = ["qid", "side", "position"]
    j = first.select(*keys, pl.col("assignment").alias("a1")).join(
        second.select(*keys, pl.col("assignment").alias("a2")), on=keys, how="inner")
    ok = j.filter(pl.col("a1").is_in(ASSIGNMENT_ORDER) & pl.col("a2").is_in(ASSIGNMENT_ORDER))
    unmatched = first.height + second.height - 2 * ok.height
    a1, a2 = ok["a1"].to_list(), ok["a2"].to_list()
    table = np.zeros((3, 3), dtype=np.int64)
    idx = {x: k for k, x in enumerate(ASSIGNMENT_ORDER)}
    np.add.at(table, ([idx[x] for x in a1], [idx[x] for x in a2]), 1)
    return cohen_kappa(a1, a2, labels=list(ASSIGNMENT_ORDER), weights="quadratic"), table, unmatched


def parse_attributes(content: str) -> dict[str, int]:
    """The eight 0–10 attribute scores of a query-classification reply: a Python dict literal, read as the
    authors read it (code fences removed, ``ast.literal_eval``); every attribute present with an integer 0–10,
    no other key (a stray key would take part in the authors' maximum)."""
    text = content.replace("```python", "").replace("```", "").strip()
    try:
        data = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as err:
        raise ReplyError(f"reply is not a Python literal ({type(err).__name__})") from None
    if not isinstance(data, dict):
        raise ReplyError("reply is not a dictionary")
    missing = [a for a in ATTRIBUTES if a not in data]
    if missing:
        raise ReplyError(f"attributes missing: {', '.join(missing)}")
    if len(data) != len(ATTRIBUTES):
        raise ReplyError(f"{len(data) - len(ATTRIBUTES)} keys besides the eight attributes")
    for a in ATTRIBUTES:
        v = data[a]
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 10:
            raise ReplyError(f"{a} must be an integer 0-10")
    return {a: int(data[a]) for a in ATTRIBUTES}


def query_class_task(model: str | None = None) -> Task:
    """NG-Q: the authors' Researchy-Questions prompt; an item is the query text."""
    template = load_prompt("ng_query_categorization")
    props = {a: {"type": "integer", "minimum": 0, "maximum": 10} for a in ATTRIBUTES}
    return Task(name="ng_query_categorization",
                schema={"type": "object", "properties": props, "required": list(ATTRIBUTES),
                        "additionalProperties": False},
                build=lambda query: [{"role": "user", "content": fill(template, question=query)}],
                parse=parse_attributes, params={"temperature": 0.7, "max_completion_tokens": 512},
                json_mode=False, model=model)


def query_classes(scores: Mapping[str, int], threshold: int = CLASS_THRESHOLD) -> list[str]:
    """The classes of one query, by the authors' rule: every attribute whose score equals the highest score (ties
    give several classes), provided that score is at least ``threshold``; none otherwise."""
    top = max(scores.values())
    if top < threshold:
        return []
    return [a for a, v in scores.items() if v == top]


def run_query_classes(battles: pl.DataFrame, client: LLMClient, *, model: str | None = None) -> pl.DataFrame:
    """NG-Q for ``battles`` (columns ``qid``, ``query``): one request per distinct query text (stripped, as the
    authors key it); returns ``qid``, the eight scores and ``classes`` (both null unless ok; ``classes`` empty
    below the threshold), ``status`` and ``error``."""
    queries = battles["query"].fill_null("").str.strip_chars()
    distinct = queries.unique(maintain_order=True)
    out = client.run(query_class_task(model or client.paper_model(QUERY_CLASS_MODEL)), distinct.to_list(),
                     desc="NG-Q query classes")
    classes = [query_classes({a: r[a] for a in ATTRIBUTES}) if r["status"] == "ok" else None
               for r in out.iter_rows(named=True)]
    out = out.select(*ATTRIBUTES, "status", "error").with_columns(
        query=distinct, classes=pl.Series(classes, dtype=pl.List(pl.String)))
    return (battles.select("qid", query=queries).join(out, on="query", how="left", maintain_order="left")
            .select("qid", *ATTRIBUTES, "classes", "status", "error"))


def class_counts(classified: pl.DataFrame) -> pl.DataFrame:
    """Battles per class (a battle with tied top scores counts in each of its classes), in :data:`ATTRIBUTES`
    order, over the battles classified ``ok``; ``battles`` 0 for a class nobody reaches."""
    ok = classified.filter(pl.col("status") == "ok")
    counts = dict(ok.select(pl.col("classes").explode().drop_nulls().value_counts()).unnest("classes")
                  .iter_rows())
    return pl.DataFrame({"query_class": list(ATTRIBUTES), "battles": [int(counts.get(a, 0)) for a in ATTRIBUTES]})


def rating_histogram(classified: pl.DataFrame) -> pl.DataFrame:
    """Figure 10's data: for each attribute and score 0–10, the number of battles classified ``ok`` with it."""
    ok = classified.filter(pl.col("status") == "ok")
    return pl.DataFrame([{"attribute": a, "score": s, "battles": int((ok[a] == s).sum())}
                         for a in ATTRIBUTES for s in range(11)])


def response_pairs(records: NuggetRecords) -> pl.DataFrame | None:
    """The battles of ``records`` with both responses' texts, one row each (``qid``, ``query``, ``winner``,
    ``answer_a``, ``answer_b``); None when the records carry no response text (``answer_text``)."""
    if records.sides["answer_text"].null_count() == records.sides.height:
        return None
    pairs = records.sides.pivot(on="side", index=["qid", "query", "winner"], values="answer_text")
    return pairs.rename({"a": "answer_a", "b": "answer_b"})


@dataclass(frozen=True)
class Judged:
    """NG-F6: the verdicts of every battle sent (:func:`run_judge` with the human ``winner``) and the confusion of
    the ``ok`` ones with the vote (None when no verdict came back)."""

    verdicts: pl.DataFrame
    confusion: NuggetConfusion | None


def judge(pairs: pl.DataFrame, client: LLMClient, *, seed: int = 0) -> Judged:
    """NG-F6: the Appendix D judge on ``pairs`` (:func:`response_pairs`) and the human vote × judge confusion."""
    verdicts = run_judge(pairs, client, seed=seed).join(pairs.select("qid", "winner"), on="qid")
    ok = verdicts.filter(pl.col("status") == "ok")
    if ok.height == 0:
        return Judged(verdicts, None)
    return Judged(verdicts, replace(confusion(ok["winner"].to_numpy(), ok["judge"].to_numpy()),
                                    preference="LLM judge"))


@dataclass(frozen=True)
class Rubric:
    """NG-T3: the decided battles scored (a sample of ``population``), the rubric's replies for sides A and B
    (:meth:`LLMClient.run` frames) and the correlations (:func:`rubric_correlations`; None unless both sides have
    a usable reply)."""

    decided: pl.DataFrame
    population: int
    scores_a: pl.DataFrame
    scores_b: pl.DataFrame
    correlations: pl.DataFrame | None


def rubric(pairs: pl.DataFrame, client: LLMClient, *, seed: int = 0, n_battles: int = RUBRIC_BATTLES) -> Rubric:
    """NG-T3: the Appendix E rubric on both responses of a random ``n_battles`` of the decided battles of
    ``pairs`` (by ``qid``, :func:`analysis_lib.nuggets.sampling.sample_rows`), correlated with the vote."""
    every = pairs.filter(pl.col("winner").is_in(["model_a", "model_b"])).sort("qid")
    decided = sample_rows(every, n_battles, seed)
    task = rubric_task(client.paper_model(RUBRIC_MODEL))
    ra = client.run(task, list(zip(decided["query"], decided["answer_a"], strict=True)))
    rb = client.run(task, list(zip(decided["query"], decided["answer_b"], strict=True)))
    usable = (ra["status"] == "ok").any() and (rb["status"] == "ok").any()
    corr = rubric_correlations(ra, rb, decided["winner"].to_list()) if usable else None
    return Rubric(decided, every.height, ra, rb, corr)


def classify_queries(records: NuggetRecords, client: LLMClient, *, limit: int | None = None,
                     seed: int = 0) -> pl.DataFrame:
    """NG-Q on the battles of ``records`` with a query (:func:`query_battles`: a random ``limit`` of them; None:
    all): :func:`run_query_classes`'s frame, one row per battle (empty when no battle has a query)."""
    battles = query_battles(records.sides, limit, seed=seed)
    if battles.height == 0:
        return pl.DataFrame(schema={"qid": pl.String, **dict.fromkeys(ATTRIBUTES, pl.Int64),
                                    "classes": pl.List(pl.String), "status": pl.String, "error": pl.String})
    return run_query_classes(battles, client)
