"""DR-Arena (seed 003): information trees, the evolvement loop, match logs, the Swiss tournament, match-level
diagnostics, a latent-skill simulation study and the LLM examiner.

Submodules: :mod:`.trees` (trees, Tables 8/9, Fig 8), :mod:`.loop` (Tables 1/2, Appendix C state machine),
:mod:`.match_log` (the JSONL match-log format), :mod:`.tournament` (Swiss pairing, BT ratings),
:mod:`.diagnostics` (Table 6 / Fig 4, Figs 5-7), :mod:`.simulation` (latent-skill study), :mod:`.examiner`
(task generation and judging through the LLM layer), :mod:`.plots`. The names used by the chapter and the tests
are re-exported here.
"""

from analysis_lib.dr_arena.loop import (
    CHAPTER_V1,
    FAILURE_CRITERIA,
    FRAMEWORK,
    LOOP_VARIANTS,
    VERDICT_CODES,
    Action,
    FailureType,
    LoopConfig,
    LoopState,
    RoundRecord,
    StopReason,
    Verdict,
    config_table,
    replay_trace,
    run_match,
    start_state,
    step,
    trace_table,
    transition,
    transition_table,
)
from analysis_lib.dr_arena.trees import (
    N_TREES_PAPER,
    PAPER_TABLE8,
    PAPER_TABLE9,
    REQUIRED_FIELDS,
    TopologySummary,
    TreeShape,
    TreeValidationError,
    all_nodes,
    compare_counts,
    counts_table,
    domain_table,
    load_summary,
    load_tree,
    load_trees,
    root_domains,
    sibling_group_sizes,
    summary_check,
    topic_table,
    topology_summary,
    tree_ids,
    tree_nodes,
    tree_shape,
    tree_table,
    validate_tree,
)
from analysis_lib.stats import LeaderboardAgreement, leaderboard_correlations

__all__ = [
    "CHAPTER_V1", "FAILURE_CRITERIA", "FRAMEWORK", "LOOP_VARIANTS", "VERDICT_CODES", "Action", "FailureType",
    "LoopConfig", "LoopState", "RoundRecord", "StopReason", "Verdict", "config_table", "replay_trace", "run_match",
    "start_state", "step", "trace_table", "transition", "transition_table",
    "N_TREES_PAPER", "PAPER_TABLE8", "PAPER_TABLE9", "REQUIRED_FIELDS", "TopologySummary", "TreeShape",
    "TreeValidationError", "all_nodes", "compare_counts", "counts_table", "domain_table", "load_summary",
    "load_tree", "load_trees", "root_domains", "sibling_group_sizes", "summary_check", "topic_table",
    "topology_summary", "tree_ids", "tree_nodes", "tree_shape", "tree_table", "validate_tree",
    "LeaderboardAgreement", "leaderboard_correlations",
]
