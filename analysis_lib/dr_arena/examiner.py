"""The DR-Arena Examiner and agents through the project's LLM layer (DR-X), with the released framework's own
prompts: :mod:`analysis_lib.dr_arena.framework_prompts` reads them from the framework's ``core/examiner.py`` and
``core/agents.py`` when DR-X runs (they are not stored in this project: the framework's repository has no licence).

Three :class:`~analysis_lib.llm.Task` steps per round, each cached on disk by the LLM layer. Each request is the
framework's: its system prompt, then its prompt filled as the framework fills it (``max_tokens`` 4096):

- ``dr_question`` (the Examiner, ``ExaminerAgent.generate_question``, temperature 0.7), from
  :func:`task_context`: the root page's title as the overall topic; the contents of the two nodes above the active
  node (the root alone when the active node is its child) as the reasoning chain; the active node and
  ``width − 1`` of its siblings drawn at random (non-empty, distinct titles) as the targets; the answer length
  from depth and width (:func:`word_limits`). Reply: question, Checklist-Width, Checklist-Depth, the word-limit
  instruction and a rationale.
- ``dr_answer`` (each agent, ``SearchAgent.research``, temperature 0.2): the question and the word-limit
  instruction of the Examiner's reply; free text.
- ``dr_judge`` (the Examiner, ``ExaminerAgent.judge_answers``, temperature 0.1): the question, the word maximum,
  both checklists as JSON, both answers and their citation counts (:func:`citation_count`). The framework's reply
  (``"[[A_BETTER]]"`` / ``"[[Tie]]"``, ``tie_quality`` ``HIGH`` / ``LOW`` / ``N/A``, ``loser_failure_type``,
  ``reasoning``) is normalised to the match-log contract: ``verdict`` (a log code), ``tie_quality`` (``high`` /
  ``low``, ties only), ``failure_type`` (wins only), ``rationale``.

Replies are free text, as in the framework, which asks for JSON in its prompts and reads the first ``{...}`` of
the reply (no structured-output request). Where this module departs from the framework:

- a judge reply whose fields do not fit together — a tie without ``HIGH``/``LOW``, a win without the loser's
  failure type — is re-asked, then recorded as failed (the framework reads the first as a high-quality tie and
  the second as failure type ``NONE``);
- each agent gets the round's question alone (the framework also passes the agent's own earlier questions and
  answers of the match, dropped again on a backtrack);
- the targets are what the tree holds: the framework crawls new siblings or children when the width constraint
  exceeds them (``_auto_expand_tree``), which needs the live web;
- node contents go into the prompt whole, as the framework sends them (some pages run to 200,000 characters).

A match replays deterministically: the path choices and the sibling draws come from a generator seeded by
``(seed, match_id)``, so a rerun sends the same requests and is served from the cache — an interrupted match
resumes at the round it stopped. The match log (:mod:`analysis_lib.dr_arena.match_log` format) is rewritten after
every round; answer ids are the LLM cache keys of the answers.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from analysis_lib import llm
from analysis_lib.dr_arena import match_log
from analysis_lib.dr_arena.framework_prompts import PromptSet
from analysis_lib.dr_arena.loop import (
    FRAMEWORK,
    FailureType,
    LoopConfig,
    Verdict,
    node_at,
    start_on_tree,
    step,
)
from analysis_lib.dr_arena.tournament import run_swiss

#: The framework's request settings per step (``_call_llm`` and ``SearchAgent.research``).
QUESTION_PARAMS = {"temperature": 0.7, "max_tokens": 4096}
JUDGE_PARAMS = {"temperature": 0.1, "max_tokens": 4096}
ANSWER_PARAMS = {"temperature": 0.2, "max_tokens": 4096}

QUESTION_SCHEMA = {
    "type": "object",
    "properties": {"question": {"type": "string", "minLength": 1},
                   "checklist_depth": {"type": "array", "items": {"type": "string"}},
                   "checklist_width": {"type": "array", "items": {"type": "string"}},
                   "word_limit_instruction": {"type": "string"},
                   "rationale": {"type": "string"}},
    "required": ["question", "checklist_depth", "checklist_width"],
}
ANSWER_SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
JUDGE_SCHEMA = {
    "type": "object",
    "properties": {"verdict": {"enum": list(match_log.VERDICT_CODES)},
                   "tie_quality": {"enum": ["high", "low", None]},
                   "failure_type": {"enum": [*match_log.FAILURE_CODES, None]},
                   "rationale": {"type": "string"}},
    "required": ["verdict"],
}

_OBJECT = re.compile(r"\{.*\}", re.DOTALL)
_REFERENCES = re.compile(r"##\s*(References|Reference|Sources)", re.IGNORECASE)
_REFERENCE_ITEM = re.compile(r"^(\[\d+\]|\d+\.)", re.MULTILINE)


def word_limits(depth: int, width: int) -> tuple[int, int]:
    """The framework's answer length (``generate_question``): from ``min(100 + 30·width + 20·depth, 300)`` words
    to 100 more, at most 400 (depth with the root = 1)."""
    low = min(100 + 30 * width + 20 * depth, 300)
    return low, min(low + 100, 400)


def word_limit_instruction(depth: int, width: int) -> str:
    """The instruction the framework puts in the task and passes to the agents."""
    low, high = word_limits(depth, width)
    return f"Answer length: {low}-{high} words."


def citation_count(text: str | None) -> int:
    """Citations of an answer as the framework counts them (``core/utils.py``, ``parse_citations``): the lines
    after a ``## References`` (or ``Reference``, ``Sources``) heading that start with ``[n]`` or ``n.``; 0 without
    such a heading."""
    heading = _REFERENCES.search(text or "")
    if heading is None or text is None:
        return 0
    return len(_REFERENCE_ITEM.findall(text[heading.end():].strip()))


def clean_title(title: str | None) -> str:
    """A page title without its site suffix (`` - Wikipedia``, `` | site``), as the framework shortens it."""
    return title.split(" - ")[0].split(" | ")[0] if title else "Unknown"


def _usable(node: Mapping) -> bool:
    """The framework's ``_is_valid_node``: some title, description or content, or children."""
    return any((node.get(k) or "").strip() for k in ("content", "description", "title")) or bool(
        node.get("children"))


def context_nodes(tree: Mapping, path: tuple[int, ...], width: int,
                  rng: np.random.Generator | None = None) -> tuple[list[Mapping], list[Mapping]]:
    """(reasoning chain, targets) for the active node at ``path``, as the framework's ``_get_context_nodes``
    picks them: the two nodes above the active one (the root alone at depth 2, none at the root); the active node
    and ``min(width − 1, available)`` of its siblings — other URLs, usable, titles not seen before — drawn with
    ``rng`` (the first ones in tree order without it)."""
    stack = [node_at(tree, path[:i]) for i in range(len(path) + 1)]
    reasoning = stack[-3:-1] if len(stack) >= 3 else stack[:1] if len(stack) == 2 else []
    active = stack[-1]
    if len(stack) < 2:
        return reasoning, [active]
    seen = {(active.get("title") or "").strip()}
    candidates = []
    for node in stack[-2].get("children") or []:
        title = (node.get("title") or "").strip()
        if node.get("url") != active.get("url") and (not title or title not in seen) and _usable(node):
            candidates.append(node)
            if title:
                seen.add(title)
    k = min(len(candidates), max(0, width - 1))
    picked = range(k) if rng is None else rng.choice(len(candidates), size=k, replace=False)
    return reasoning, [active, *(candidates[int(i)] for i in picked)]


def task_context(tree: Mapping, path: tuple[int, ...], width: int,
                 rng: np.random.Generator | None = None) -> dict[str, Any]:
    """The question prompt's slot values for one round (:func:`context_nodes`; node contents whole)."""
    reasoning, targets = context_nodes(tree, path, width, rng)
    return {
        "ROOT_TOPIC": clean_title(tree.get("title")),
        "REASONING": "\n".join(f"[Deep Logic - Ancestor {i}]: {n.get('content') or ''}"
                               for i, n in enumerate(reasoning)),
        "TARGETS": "\n".join(f"[Wide Logic - Target {i}]: {n.get('content') or ''}" for i, n in enumerate(targets)),
        "N_TARGETS": len(targets),
        "WORD_LIMIT": word_limit_instruction(len(path) + 1, width),
    }


def _first_object(content: str) -> Any:
    """The first ``{`` to the last ``}`` of a reply, parsed (the framework's reading of its JSON replies)."""
    found = _OBJECT.search(content)
    if found is None:
        raise llm.ReplyError("no JSON object in the reply")
    return llm.parse_json(found.group(0))


def normalise_verdict(reply: Mapping[str, Any]) -> dict[str, Any]:
    """A framework judge reply in the match-log contract: ``"[[B_MUCH_BETTER]]"`` → ``B_MUCH_BETTER``,
    ``"[[Tie]]"`` → ``TIE``; ``HIGH`` / ``LOW`` → ``high`` / ``low`` on ties (else None); ``loser_failure_type``
    → ``failure_type`` on wins (else None); ``reasoning`` → ``rationale``."""
    verdict = str(reply.get("verdict") or "").strip().strip("[]").strip().upper()
    quality = str(reply.get("tie_quality") or "").strip().upper()
    failure = reply.get("loser_failure_type")
    failure = str(failure).strip().upper() if failure is not None else None
    return {"verdict": verdict,
            "tie_quality": {"HIGH": "high", "LOW": "low"}.get(quality) if verdict == "TIE" else None,
            "failure_type": None if verdict == "TIE" or failure not in match_log.FAILURE_CODES else failure,
            "rationale": str(reply.get("reasoning") or "")}


def _judge_parse(content: str) -> Any:
    out = _first_object(content)
    if not isinstance(out, dict):
        return out  # the schema check reports it
    rec = normalise_verdict(out)
    if rec["verdict"] == "TIE" and rec["tie_quality"] is None:
        raise llm.ReplyError("tie verdict without tie_quality HIGH or LOW")
    if rec["verdict"] in match_log.VERDICT_CODES and rec["verdict"] != "TIE" and rec["failure_type"] is None:
        raise llm.ReplyError("decided verdict without the loser's failure type")
    return rec


def _messages(system: str, prompt: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": system}, {"role": "user", "content": prompt}]


def question_task(prompts: PromptSet, model: str | None = None) -> llm.Task:
    """The Examiner's task generation; items are :func:`task_context` dicts."""
    return llm.Task("dr_question", QUESTION_SCHEMA,
                    lambda ctx: _messages(prompts.examiner_system, prompts.question.render(**ctx)),
                    parse=_first_object, json_mode=False, model=model, params=QUESTION_PARAMS)


def answer_task(prompts: PromptSet) -> llm.Task:
    """An agent's answer; items are ``{"QUESTION": ..., "WORD_LIMIT": ...}``."""
    return llm.Task("dr_answer", ANSWER_SCHEMA,
                    lambda item: _messages(prompts.agent_system, prompts.agent.render(HISTORY="", **item)),
                    parse=lambda text: {"answer": text}, json_mode=False, params=ANSWER_PARAMS)


def judge_task(prompts: PromptSet, model: str | None = None) -> llm.Task:
    """The Examiner's verdict; items are the judge prompt's slot values."""
    return llm.Task("dr_judge", JUDGE_SCHEMA,
                    lambda item: _messages(prompts.examiner_system, prompts.judge.render(**item)),
                    parse=_judge_parse, json_mode=False, model=model, params=JUDGE_PARAMS)


def judge_item(question: Mapping[str, Any], answers: Sequence[str], depth: int, width: int) -> dict[str, Any]:
    """The judge prompt's slot values: the framework passes the word maximum of the task, the checklists as JSON
    and each answer's citation count."""
    return {"QUESTION": question["question"], "MAX_WORDS": word_limits(depth, width)[1],
            "CHECKLIST_WIDTH": json.dumps(question["checklist_width"]),
            "CHECKLIST_DEPTH": json.dumps(question["checklist_depth"]),
            "CITATIONS_A": citation_count(answers[0]), "CITATIONS_B": citation_count(answers[1]),
            "ANSWER_A": answers[0], "ANSWER_B": answers[1]}


@dataclass(frozen=True)
class LLMMatch:
    """One match played through the LLM layer: its round records and why it ended early (None if it finished)."""

    records: list[dict[str, Any]]
    failed: str | None


def _rng(seed: int, match_id: str) -> np.random.Generator:
    return np.random.default_rng(int.from_bytes(hashlib.sha256(f"{seed}:{match_id}".encode()).digest()[:8], "big"))


def _one(client: llm.LLMClient, task: llm.Task, item: Any, model: str | None = None) -> dict[str, Any] | None:
    row = client.run(task, [item], model=model).row(0, named=True)
    return row if row["status"] == "ok" else None


def play_llm_match(client: llm.LLMClient, prompts: PromptSet, tree: Mapping, tree_id: str, model_a: str,
                   model_b: str, *, examiner_model: str | None = None, config: LoopConfig = FRAMEWORK,
                   log_path: str | Path | None = None,
                   seed: int = 0, tournament_round: int | None = None) -> LLMMatch:
    """Run one match: Examiner question, two answers, Examiner verdict, loop step, until a stop rule fires or an
    LLM step fails (then the match is reported as failed, with the rounds that finished)."""
    match_id = f"{tree_id}:{model_a}:{model_b}" + ("" if tournament_round is None else f":R{tournament_round}")
    rng = _rng(seed, match_id)

    def choose(n: int) -> int:
        return int(rng.integers(n))

    state = start_on_tree(tree, config, choose)
    examiner = examiner_model or client.model
    qt, at, jt = question_task(prompts, examiner), answer_task(prompts), judge_task(prompts, examiner)
    records: list[dict[str, Any]] = []
    while state.stopped is None:
        q = _one(client, qt, task_context(tree, state.path, state.width, rng))
        if q is None:
            return LLMMatch(records, f"round {state.round + 1}: question generation failed")
        item = {"QUESTION": q["question"],
                "WORD_LIMIT": q.get("word_limit_instruction") or word_limit_instruction(state.depth, state.width)}
        answers, ids = [], []
        for model in (model_a, model_b):
            a = _one(client, at, item, model)
            if a is None:
                return LLMMatch(records, f"round {state.round + 1}: {model} did not answer")
            answers.append(a["answer"])
            ids.append(llm.request_key(model, at.build(item), at.request_params()))
        j = _one(client, jt, judge_item(q, answers, state.depth, state.width))
        if j is None:
            return LLMMatch(records, f"round {state.round + 1}: judging failed")
        verdict = Verdict.from_code(j["verdict"], j.get("tie_quality"))
        failure = None if verdict.is_tie else FailureType[j["failure_type"]]
        state = step(state, verdict, failure, config, tree=tree, choose=choose)
        r = state.history[-1]
        records.append({"match_id": match_id, "tournament_round": tournament_round, "tree_id": tree_id,
                        "model_a": model_a, "model_b": model_b, "round": r.round, "depth": r.depth, "width": r.width,
                        "question": q["question"], "answer_a_id": ids[0], "answer_b_id": ids[1],
                        "verdict": verdict.code, "tie_quality": verdict.tie_quality,
                        "failure_type": None if failure is None else failure.name, "score_a": r.score_a,
                        "score_b": r.score_b, "action": r.action.kind, "stop": None if r.stop is None else r.stop.name})
        if log_path is not None:
            match_log.write_match_log(log_path, records)
    return LLMMatch(records, None)


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-._" else "_" for c in name)


def tournament_steps(prompts: PromptSet, models: Sequence[str], *, examiner_model: str | None = None,
                     n_rounds: int = 4, trees_per_match: int = 1, config: LoopConfig = FRAMEWORK) -> list[llm.Step]:
    """DR-X's requests (:func:`llm_tournament`), bounded: a Swiss round pairs ``len(models) // 2`` matches, a
    match plays ``trees_per_match`` trees for at most ``config.max_rounds`` rounds, and a round sends one
    question, two answers and one verdict (each turn's items are the previous replies)."""
    games = n_rounds * (len(models) // 2) * trees_per_match * config.max_rounds
    note = f"bound: {games:,} match rounds at most; items come from earlier replies"
    return [llm.Step("DR-X", question_task(prompts, examiner_model), (), examiner_model, at_most=games, note=note),
            llm.Step("DR-X", answer_task(prompts), (), None, at_most=2 * games, note=note + "; agents' models"),
            llm.Step("DR-X", judge_task(prompts, examiner_model), (), examiner_model, at_most=games, note=note)]


def llm_tournament(client: llm.LLMClient, prompts: PromptSet, trees: Mapping[str, Mapping], models: Sequence[str],
                   log_dir: str | Path, *, examiner_model: str | None = None, n_rounds: int = 4,
                   trees_per_match: int = 1, seed: int = 0,
                   config: LoopConfig = FRAMEWORK) -> tuple[pl.DataFrame, pl.DataFrame, list[str]]:
    """A Swiss tournament of LLM agents: each pair plays on ``trees_per_match`` trees (drawn per pairing), one
    JSONL log per match under ``log_dir``. Returns ``(rounds, pairings, failures)``."""
    items = sorted(trees.items())
    failures: list[str] = []
    log_dir = Path(log_dir)

    def play(a: str, b: str, t: int) -> list[dict[str, Any]]:
        pick = _rng(seed, f"{a}|{b}|{t}").choice(len(items), size=min(trees_per_match, len(items)), replace=False)
        out: list[dict[str, Any]] = []
        for i in sorted(pick):
            tid, tree = items[i]
            m = play_llm_match(client, prompts, tree, tid, a, b, examiner_model=examiner_model, config=config,
                               seed=seed, tournament_round=t,
                               log_path=log_dir / f"R{t}_{_safe(a)}_vs_{_safe(b)}_{tid}.jsonl")
            if m.failed:
                failures.append(f"{tid} {a} vs {b}: {m.failed}")
            elif m.records:
                out.extend(m.records)
        return out

    rounds, pairings = run_swiss(list(models), play, n_rounds=n_rounds, seed=seed)
    # plain text, one failed match a line: a .json file here would be read as a match log
    (log_dir / "failures.txt").write_text("".join(f + "\n" for f in failures), encoding="utf-8")
    return rounds, pairings, failures
