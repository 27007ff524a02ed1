"""Where the match-level analyses get their match logs: a folder or file of logs (the book: ``MATCH_LOGS=dir``) or,
by default, the simulation study over the mirrored trees. One loader, one returned record."""

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
    holds the simulated agents (empty for user logs)."""

    rounds: pl.DataFrame
    pairings: pl.DataFrame | None
    reference: dict[str, float]
    reference_name: str
    kind: str
    detail: str
    agents: tuple[simulate.SimAgent, ...] = ()


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
        ref = search_arena_reference(models)
        n_matches = rounds["match_id"].n_unique()
        not_read = (f" {len(skipped)} other file(s) in the folder are not logs and were not read: "
                    f"{'; '.join(skipped[:5])}{', …' if len(skipped) > 5 else ''}." if skipped else "")
        return MatchSource(rounds, None, ref, "Search Arena Elo (Table 3)", fetch.provenance(match_logs),
                           f"{len(files)} log file(s): {n_matches} matches, {rounds.height} rounds, "
                           f"{len(models)} models ({len(ref)} of them in Table 3's Search Arena column).{not_read}")
    tour = simulate.simulate_tournament(simulate.make_agents(n_agents, seed=seed), trees, n_rounds=n_rounds, seed=seed,
                                        sim=sim)
    rounds = tour.rounds
    return MatchSource(rounds, tour.pairings, tour.planted, "planted strength", "simulated",
                       f"Simulated Swiss tournament: {n_agents} latent-skill agents, {n_rounds} rounds, one match per "
                       f"pair on each of the {len(trees)} mirrored trees ({rounds['match_id'].n_unique()} matches, "
                       f"{rounds.height} rounds), the framework's loop rules, examiner noise "
                       f"{sim.examiner_noise:g}.",
                       tour.agents)
