"""Where the match-level analyses get their match logs: a folder or file of logs or, by default, the simulation
study over the mirrored trees. One loader, one returned record."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import polars as pl

from analysis_lib import fetch
from analysis_lib.dr_arena import match_log, simulate
from analysis_lib.fetch import published

REFERENCE_TABLE = "dr_arena_table3_leaderboards"


@dataclass(frozen=True)
class MatchSource:
    """Rounds of every match, the reference leaderboard to correlate with, and what they are.

    ``kind`` is ``"simulated"`` or ``"real"``; ``reference`` maps model → reference rating (the planted strength in
    the simulation, Table 3's Search Arena Elo for user logs, restricted to the models in the logs); ``agents``
    holds the simulated agents (empty for user logs). User logs: ``files`` read and ``skipped`` (the folder's other
    files, not read); the simulation: its Swiss ``n_rounds``, ``n_trees`` and ``sim`` settings."""

    rounds: pl.DataFrame
    pairings: pl.DataFrame | None
    reference: dict[str, float]
    reference_name: str
    kind: str
    agents: tuple[simulate.SimAgent, ...] = ()
    files: int = 0
    skipped: tuple[str, ...] = ()
    n_rounds: int = 0
    n_trees: int = 0
    sim: simulate.SimConfig | None = None

    @property
    def models(self) -> list[str]:
        """The models (agents) of the rounds, sorted."""
        return sorted(set(self.rounds["model_a"]) | set(self.rounds["model_b"]))

    @property
    def n_matches(self) -> int:
        return int(self.rounds["match_id"].n_unique())


def search_arena_reference(models: list[str]) -> dict[str, float]:
    """Table 3's Search Arena Elo of the logged models whose names appear in its ``model`` column."""
    t3 = pl.read_csv(published(REFERENCE_TABLE))
    return {m: float(e) for m, e in zip(t3["model"], t3["search_arena_elo"], strict=True) if m in models}


def load_match_source(match_logs: str, trees: Mapping[str, Mapping], *, n_agents: int = 12, n_rounds: int = 4,
                      seed: int = 0, sim: simulate.SimConfig = simulate.DEFAULT_SIM) -> MatchSource:
    """User match logs when ``match_logs`` is a path, else a simulated Swiss tournament (``n_agents`` latent-skill
    agents, ``n_rounds`` Swiss rounds, one match per pair and tree)."""
    if match_logs:
        rounds = match_log.load_match_logs(match_logs)
        files, skipped = match_log.log_files(match_logs)
        models = sorted(set(rounds["model_a"]) | set(rounds["model_b"]))
        return MatchSource(rounds, None, search_arena_reference(models), "Search Arena Elo (Table 3)",
                           fetch.provenance(match_logs), files=len(files), skipped=tuple(map(str, skipped)))
    tour = simulate.simulate_tournament(simulate.make_agents(n_agents, seed=seed), trees, n_rounds=n_rounds, seed=seed,
                                        sim=sim)
    return MatchSource(tour.rounds, tour.pairings, tour.planted, "planted strength", "simulated", tour.agents,
                       n_rounds=n_rounds, n_trees=len(trees), sim=sim)
