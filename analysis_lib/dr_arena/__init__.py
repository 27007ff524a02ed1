"""DR-Arena: information trees, the evolvement loop, match logs, the Swiss tournament, match-level diagnostics,
a latent-skill simulation study and the LLM examiner.

- Loaders: the information trees and their ``summary.json`` (:mod:`.trees`), match logs (:mod:`.match_log`), a
  folder of logs or the simulation study as one :class:`MatchSource` (:mod:`.source`), the framework's released
  traces, and the paper's published tables (Tables 3-5, 7) as data (:mod:`.human_studies`, :mod:`.trees`).
- Analyses: tree shapes and topology (:mod:`.trees`); the loop of Tables 1/2 and Appendix C and the replay of a
  logged match (:mod:`.loop`); Swiss pairing and Bradley–Terry ratings (:mod:`.tournament`); correlation by
  rounds used, rounds against the Elo gap, failure profiles, verdict shares (:mod:`.diagnostics`); the arithmetic
  checks of the published human-study tables (:mod:`.human_studies`).
- Plots (:mod:`.plots`), the simulation study (:mod:`.simulate`), and the method through the LLM layer
  (:mod:`.examiner`, with the framework's own prompts read by :mod:`.framework_prompts`).
"""

from analysis_lib.dr_arena.diagnostics import (
    correlation_by_rounds,
    end_summary,
    failure_profile,
    match_ends,
    reference_agreement,
    reference_models,
    rounds_vs_gap,
    tournament_summary,
    verdict_shares,
    verdict_summary,
)
from analysis_lib.dr_arena.examiner import llm_tournament
from analysis_lib.dr_arena.human_studies import (
    table4,
    table5,
    table5_check,
    table7,
    table7_check,
)
from analysis_lib.dr_arena.loader import load_match_source
from analysis_lib.dr_arena.loop import (
    FRAMEWORK,
    LoopConfig,
    Verdict,
    config_table,
    replay_trace,
    step,
    transition,
    transition_table,
)
from analysis_lib.dr_arena.match_log import (
    load_match_logs,
    matches,
    replay_cases_trace,
    replay_published_traces,
    replay_summary,
)
from analysis_lib.dr_arena.plots import (
    correlation_by_rounds_plot,
    domain_plot,
    failure_profile_plot,
    leaderboard_plot,
    leaderboards_scatter,
    match_end_plot,
    rounds_vs_gap_plot,
    state_diagram,
    trace_plot,
    tree_shape_plots,
    verdict_share_plot,
)
from analysis_lib.dr_arena.tournament import ratings
from analysis_lib.dr_arena.trees import (
    all_nodes,
    domain_table,
    load_summary,
    load_trees,
    missing_trees,
    root_domains,
    sibling_group_sizes,
    summary_check,
    topic_table,
    topology_summary,
    tree_table,
)

__all__ = [
    "load_match_logs", "load_match_source", "load_summary", "load_trees", "table4", "table5", "table7", "all_nodes",
    "domain_table", "missing_trees", "root_domains", "sibling_group_sizes", "summary_check", "topic_table",
    "topology_summary", "tree_table", "FRAMEWORK", "LoopConfig", "Verdict", "config_table", "replay_cases_trace",
    "replay_published_traces", "replay_summary", "replay_trace", "step", "transition", "transition_table",
    "correlation_by_rounds", "end_summary", "failure_profile", "match_ends", "matches", "ratings",
    "reference_agreement", "reference_models", "rounds_vs_gap", "tournament_summary", "verdict_shares",
    "verdict_summary", "table5_check", "table7_check", "correlation_by_rounds_plot", "domain_plot",
    "failure_profile_plot", "leaderboard_plot", "leaderboards_scatter", "match_end_plot", "rounds_vs_gap_plot",
    "state_diagram", "trace_plot", "tree_shape_plots", "verdict_share_plot", "llm_tournament",
]
