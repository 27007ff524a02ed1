"""The book's side of the DR-Arena chapter's DR-X section: the whole method through the LLM layer
(:func:`analysis_lib.dr_arena.llm_tournament`) when an endpoint, two or more agents and the framework's prompts are
available, else not run with the reason (:func:`examiner_prompts`); what is recorded (:func:`x_result`, by path:
``bookbuild/resources/paper_values/dr.csv``), the table and the notes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from analysis_lib import llm
from analysis_lib.dr_arena import framework_prompts, matches
from analysis_lib.dr_arena.framework_prompts import PromptSet
from bookbuild.recorder import NotRun
from bookbuild.sections import Table

#: Folder of the LLM tournament's match logs, under the results folder.
LOG_FOLDER = "dr_arena_llm_logs"
AGREEMENT_REASON = ("needs human or reference verdicts for the same rounds (the paper's Table 7 audit); the unit tests "
                    "check the pipeline against scripted verdicts")


def agent_names(dr_agents: str) -> list[str]:
    """The comma-separated agent names of the ``dr_agents`` parameter, stripped, empty ones dropped."""
    return [a.strip() for a in dr_agents.split(",") if a.strip()]


def why_not_run(client: llm.LLMClient, agents: list[str]) -> str | None:
    """Why DR-X cannot run before the prompts are fetched (no endpoint, fewer than two agents), else None."""
    if not client.available:
        return client.not_run_reason()
    if len(agents) < 2:
        return "no agent models given (parameter dr_agents, two or more names)"
    return None


def examiner_prompts(client: llm.LLMClient, agents: list[str], *,
                     cache_dir: str | Path | None = None) -> tuple[PromptSet | None, str | None]:
    """The framework's prompts when DR-X can run, else None and why (:func:`why_not_run`, or the prompts cannot be
    read)."""
    why = why_not_run(client, agents)
    if why is not None:
        return None, why
    prompts, why = framework_prompts.try_load(cache_dir=cache_dir)
    return prompts, None if prompts is not None else why or "the framework's prompts are not available"


def x_result(client: llm.LLMClient, rounds: pl.DataFrame | None) -> dict[str, Any]:
    """DR-X as recorded: the rounds judged and the share (%) of LLM replies parsed (``rounds``:
    :func:`analysis_lib.dr_arena.llm_tournament`; None when it did not run). The agreement with human verdicts is
    never run here (Table 7's annotations are not released)."""
    if rounds is None:
        return {"run": None, "agreement": NotRun(AGREEMENT_REASON)}
    st = client.total_stats
    return {"run": {"rounds": rounds.height, "parsed": 100 * st.ok / max(1, st.ok + st.failed)},
            "agreement": NotRun(AGREEMENT_REASON)}


def x_row_notes(client: llm.LLMClient, failures: list[str] | None) -> dict[str, str]:
    """The notes beside the numbers of a run: where the logs are, the failed matches and the LLM steps."""
    st = client.total_stats
    return {"examiner rounds judged": f"logs in {LOG_FOLDER}/ of the results folder; {len(failures or [])} matches "
                                      "failed",
            "examiner replies parsed (%)": f"all LLM steps: {st.ok} ok, {st.failed} failed, {st.parse_retries} "
                                           "re-asked"}


def x_tables(rounds: pl.DataFrame | None) -> list[Table]:
    """The matches the LLM agents played (none when DR-X did not run)."""
    return [] if rounds is None else [Table(matches(rounds), "Matches played by the LLM agents.", 1)]


def x_notes(client: llm.LLMClient, prompts: PromptSet | None, agents: list[str], examiner_model: str) -> list[str]:
    """Who examined, who played, where the prompts came from, and the chapter's LLM usage line (none when DR-X
    did not run)."""
    if prompts is None:
        return []
    return [f"Examiner `{examiner_model or client.model}`, agents {', '.join(f'`{a}`' for a in agents)}; prompts: "
            f"{prompts.source}.", f"LLM usage of this chapter: {client.total_stats.summary()}."]
