"""The DR-Arena chapter's DR-X section: the whole method through the LLM layer when an endpoint, two or more
agents and the framework's prompts are available, else not run with the reason (:func:`why_not_run`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from analysis_lib import llm
from bookbuild.sections import Number, Section, Table, not_run

from . import examiner, framework_prompts, match_log

#: Folder of the LLM tournament's match logs, under the results folder.
LOG_FOLDER = "dr_arena_llm_logs"
AGREEMENT_REASON = ("needs human or reference verdicts for the same rounds (the paper's Table 7 audit); the unit tests "
                    "check the pipeline against scripted verdicts")
RUN_QUANTITIES = ("examiner rounds judged", "examiner replies parsed (%)")


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


def examiner_section(client: llm.LLMClient, agents: list[str], trees: Mapping[str, Mapping[str, Any]],
                     results_dir: str | Path, *, examiner_model: str = "", cache_dir: str | Path | None = None,
                     n_rounds: int = 4, trees_per_match: int = 1, seed: int = 0) -> Section:
    """DR-X: a Swiss tournament of ``agents`` judged by the Examiner with the framework's prompts, logged under
    ``results_dir``/:data:`LOG_FOLDER`; the rounds judged and the share of LLM replies parsed. The agreement with
    human verdicts is never run here (Table 7's annotations are not released)."""
    why = why_not_run(client, agents)
    prompts = None
    if why is None:
        prompts, why = framework_prompts.try_load(cache_dir=cache_dir)
    agreement = not_run("DR-X", ["examiner verdict agreement with the scripted or human verdict (%)"],
                        AGREEMENT_REASON)
    if prompts is None:
        return Section([*not_run("DR-X", RUN_QUANTITIES, why or "the framework's prompts are not available"),
                        *agreement])
    rounds, _, failures = examiner.llm_tournament(
        client, prompts, trees, agents, Path(results_dir) / LOG_FOLDER, examiner_model=examiner_model or None,
        n_rounds=n_rounds, trees_per_match=trees_per_match, seed=seed)
    st = client.total_stats
    numbers = [
        Number("DR-X", "examiner rounds judged", rounds.height, data="llm-cache",
               note=f"logs in {LOG_FOLDER}/ of the results folder; {len(failures)} matches failed"),
        Number("DR-X", "examiner replies parsed (%)", 100 * st.ok / max(1, st.ok + st.failed), data="llm-cache",
               note=f"all LLM steps: {st.ok} ok, {st.failed} failed, {st.parse_retries} re-asked"),
        *agreement,
    ]
    intro = (f"Examiner `{examiner_model or client.model}`, agents {', '.join(f'`{a}`' for a in agents)}; prompts: "
             f"{prompts.source}.")
    return Section(numbers, [], [Table(match_log.matches(rounds), "Matches played by the LLM agents.", 1)], [intro])
