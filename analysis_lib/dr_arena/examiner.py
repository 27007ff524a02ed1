"""The DR-Arena Examiner and agents through the project's LLM layer (DR-X): task generation from a tree path and
its sibling pool, answers by two agents (any OpenAI-compatible model names), rubric judging with a structured
verdict, tie quality and the loser's failure type, and the evolvement loop around them, writing match logs.

Three :class:`~analysis_lib.llm.Task` steps per round, each cached on disk by the LLM layer:

- ``dr_question`` (the Examiner, ``resources/prompts/dr_task_generation.txt``): from the logic chain (root →
  active node: titles and descriptions) and ``width`` sibling units (the active node and its siblings, then its
  children when the siblings run out; title, description and the start of the content), a question with its
  Checklist-Depth and Checklist-Width;
- ``dr_answer`` (each agent, ``dr_agent_answer.txt``): free text;
- ``dr_judge`` (the Examiner, ``dr_judge.txt``): ``verdict`` (a log code), ``tie_quality``, ``failure_type``,
  ``rationale``; a reply whose fields do not fit together (a tie without quality, a win without failure type) is
  re-asked, then recorded as failed.

A match replays deterministically: the path choices come from a generator seeded by ``(seed, match_id)``, so a
rerun sends the same requests and is served from the cache — an interrupted match resumes at the round it
stopped. The match log (:mod:`analysis_lib.dr_arena.match_log` format) is rewritten after every round; answer ids
are the LLM cache keys of the answers.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from analysis_lib import llm
from analysis_lib.dr_arena import match_log
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

CONTENT_CHARS = 1200

QUESTION_SCHEMA = {
    "type": "object",
    "properties": {"question": {"type": "string", "minLength": 1},
                   "checklist_depth": {"type": "array", "items": {"type": "string"}},
                   "checklist_width": {"type": "array", "items": {"type": "string"}},
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


def answer_words(depth: int, width: int) -> str:
    """Requested answer length (ours: the paper scales it with depth and width but prints no formula):
    ``100 + 50·width`` to ``200 + 50·width`` words, i.e. 200–300 at width 2 as in the released replays."""
    return f"{100 + 50 * width}-{200 + 50 * width}"


def _unit(node: Mapping, n_chars: int = CONTENT_CHARS) -> str:
    content = llm.clip_text(node.get("content") or "", n_chars, collapse=True)
    return f"- {node.get('title') or '(untitled)'}: {node.get('description') or ''}\n  {content}".rstrip()


def task_context(tree: Mapping, path: tuple[int, ...], width: int) -> dict[str, str]:
    """The template values for one round: the logic chain along ``path`` and ``width`` sibling units."""
    chain = [node_at(tree, path[:i]) for i in range(len(path) + 1)]
    active = chain[-1]
    pool = list(node_at(tree, path[:-1])["children"]) if path else [active]
    pool += [c for c in active["children"] if c not in pool]
    units = pool[: max(1, width)]
    return {
        "LOGIC_CHAIN": "\n".join(f"{i + 1}. {n.get('title') or '(untitled)'}: {n.get('description') or ''}"
                                 for i, n in enumerate(chain)),
        "SIBLINGS": "\n".join(_unit(u) for u in units),
        "WIDTH": str(len(units)), "DEPTH": str(len(path) + 1), "ANSWER_WORDS": answer_words(len(path) + 1, width),
    }


def _judge_parse(content: str) -> Any:
    out = llm.parse_json(content)
    if isinstance(out, dict):
        v = out.get("verdict")
        if v == "TIE" and out.get("tie_quality") not in ("high", "low"):
            raise llm.ReplyError("TIE verdict without tie_quality high/low")
        if v in match_log.VERDICT_CODES and v != "TIE" and out.get("failure_type") not in match_log.FAILURE_CODES:
            raise llm.ReplyError("decided verdict without the loser's failure_type")
    return out


def question_task(model: str | None = None) -> llm.Task:
    template = llm.load_prompt("dr_task_generation")
    return llm.Task("dr_question", QUESTION_SCHEMA,
                    lambda ctx: [{"role": "user", "content": llm.fill(template, **ctx)}],
                    model=model, params={"temperature": 0})


def answer_task() -> llm.Task:
    template = llm.load_prompt("dr_agent_answer")
    return llm.Task("dr_answer", ANSWER_SCHEMA, lambda q: [{"role": "user", "content": llm.fill(template, QUESTION=q)}],
                    parse=lambda text: {"answer": text}, json_mode=False, params={"temperature": 0})


def judge_task(model: str | None = None) -> llm.Task:
    template = llm.load_prompt("dr_judge")
    return llm.Task("dr_judge", JUDGE_SCHEMA, lambda ctx: [{"role": "user", "content": llm.fill(template, **ctx)}],
                    parse=_judge_parse, model=model, params={"temperature": 0})


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


def play_llm_match(client: llm.LLMClient, tree: Mapping, tree_id: str, model_a: str, model_b: str, *,
                   examiner_model: str | None = None, config: LoopConfig = FRAMEWORK,
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
    qt, at, jt = question_task(examiner), answer_task(), judge_task(examiner)
    records: list[dict[str, Any]] = []
    while state.stopped is None:
        ctx = task_context(tree, state.path, state.width)
        q = _one(client, qt, ctx)
        if q is None:
            return LLMMatch(records, f"round {state.round + 1}: question generation failed")
        answers, ids = [], []
        for model in (model_a, model_b):
            a = _one(client, at, q["question"], model)
            if a is None:
                return LLMMatch(records, f"round {state.round + 1}: {model} did not answer")
            answers.append(a["answer"])
            ids.append(llm.request_key(model, at.build(q["question"]), at.request_params()))
        j = _one(client, jt, {"QUESTION": q["question"], "CHECKLIST_DEPTH": "\n".join(q["checklist_depth"]),
                               "CHECKLIST_WIDTH": "\n".join(q["checklist_width"]),
                               "ANSWER_A": answers[0], "ANSWER_B": answers[1]})
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


def llm_tournament(client: llm.LLMClient, trees: Mapping[str, Mapping], models: Sequence[str], log_dir: str | Path, *,
                   examiner_model: str | None = None, n_rounds: int = 4, trees_per_match: int = 1, seed: int = 0,
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
            m = play_llm_match(client, tree, tid, a, b, examiner_model=examiner_model, config=config, seed=seed,
                               tournament_round=t, log_path=log_dir / f"R{t}_{_safe(a)}_vs_{_safe(b)}_{tid}.jsonl")
            if m.failed:
                failures.append(f"{tid} {a} vs {b}: {m.failed}")
            elif m.records:
                out.extend(m.records)
        return out

    rounds, pairings = run_swiss(list(models), play, n_rounds=n_rounds, seed=seed)
    (log_dir / "failures.json").write_text(json.dumps(failures, indent=1))
    return rounds, pairings, failures
