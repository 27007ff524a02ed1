"""Figures of the DR-Arena analyses, in the compendium's style (:mod:`analysis_lib.plotting`): the evolvement
loop's state diagram (Table 2), a match trace, Fig 4 (correlation by rounds), Fig 5 (rounds vs Elo gap), Fig 6
(failure profiles) and Fig 7 (verdict and failure-type shares). Every function returns the ``Figure``."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import polars as pl
from matplotlib.figure import Figure

from analysis_lib.dr_arena.loop import (
    FRAMEWORK,
    Action,
    FailureType,
    LoopConfig,
    Verdict,
    transition,
)
from analysis_lib.dr_arena.match_log import FAILURE_CODES
from analysis_lib.plotting import barh, count_histograms, forest, scatter_fit
from analysis_lib.plotting.style import ACCENT, OUTCOME_COLORS

FAILURE_COLORS = {"DEEP": "#4c72b0", "WIDE": "#dd8452", "BOTH": "#c44e52", "NONE": "#8c8c8c"}
ACTION_COLORS = {Action.PRESSURE_TEST: "#c44e52", Action.BACKTRACK: "#55a868", Action.PROBE_DEPTH: "#4c72b0",
                 Action.PROBE_WIDTH: "#dd8452"}


def _action_text(action: Action, config: LoopConfig) -> str:
    if action is Action.BACKTRACK:
        w = f"width reset to {config.start_width}" if config.backtrack_width == "reset" else "width kept"
        return f"Backtrack: depth − 1, {w}\n(at the root: width reset)"
    fallback = "\n(no child: width + 1)" if config.no_child == "widen" else "\n(no child: stay)"
    return {Action.PRESSURE_TEST: "Pressure test: depth + 1, width + 1" + fallback.replace("width + 1", "width only"),
            Action.PROBE_DEPTH: "Probe depth: depth + 1" + fallback,
            Action.PROBE_WIDTH: "Probe width: width + 1"}[action]


def state_diagram(config: LoopConfig = FRAMEWORK) -> Figure:
    """Table 2 as a diagram drawn from ``config``: each (verdict, loser's failure type) signal on the left, an
    arrow to its action on the right (computed by :func:`~analysis_lib.dr_arena.loop.transition`), and the
    start state, scoring and stop rules of ``config`` underneath."""
    signals = [("Tie (high quality)", Verdict.TIE_HIGH, None), ("Tie (low quality)", Verdict.TIE_LOW, None),
               ("Win, loser failed Deep", Verdict.A_BETTER, FailureType.DEEP),
               ("Win, loser failed Wide", Verdict.A_BETTER, FailureType.WIDE),
               ("Win, loser failed Both", Verdict.A_BETTER, FailureType.BOTH),
               ("Win, loser failed None", Verdict.A_BETTER, FailureType.NONE)]
    actions = [Action.PRESSURE_TEST, Action.BACKTRACK, Action.PROBE_DEPTH, Action.PROBE_WIDTH]
    fig, ax = plt.subplots(figsize=(9.0, 5.2))
    ax.set_xlim(0, 10)
    ax.set_ylim(-2.4, len(signals) + 0.2)
    ax.axis("off")
    ys = {a: len(signals) - 0.5 - i * 1.45 for i, a in enumerate(actions)}
    for i, (label, v, f) in enumerate(signals):
        y = len(signals) - 0.5 - i
        ax.text(0.1, y, label, va="center", ha="left", fontsize=9,
                bbox={"boxstyle": "round,pad=0.3", "facecolor": "#f2f2f2", "edgecolor": "#999999"})
        a = transition(v, f)
        ax.annotate("", xy=(5.6, ys[a]), xytext=(2.7, y),
                    arrowprops={"arrowstyle": "->", "color": ACTION_COLORS[a], "lw": 1.4})
    for a, y in ys.items():
        ax.text(5.7, y, _action_text(a, config), va="center", ha="left", fontsize=9,
                bbox={"boxstyle": "round,pad=0.3", "facecolor": "white", "edgecolor": ACTION_COLORS[a], "lw": 1.5})
    stop = (f"stop when |score gap| ≥ {config.gap_threshold:g} (after ≥ {config.min_rounds} round), "
            + ("or on a Much Better verdict, " if config.stop_on_much_better else "")
            + f"else after {config.max_rounds} rounds")
    ax.text(0.1, -1.1, f"Start: depth {config.start_depth} (root = 1), width {config.start_width}.   Points: Much "
            f"Better {config.much_better_points:g}, Better {config.better_points:g}, tie {config.tie_points:g}.\n"
            f"Stop rule: {stop}.", fontsize=8.5, va="top")
    ax.set_title(f"Table 2: evolvement loop state machine — rules: {config.name}")
    return fig


def trace_plot(trace: pl.DataFrame, title: str) -> Figure:
    """A match trace (:func:`~analysis_lib.dr_arena.loop.trace_table`): depth and width per round (top) and the
    cumulative scores with each round's verdict (bottom)."""
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7.5, 5.0), sharex=True)
    r = trace["round"].to_numpy()
    top.step(r, trace["depth"].to_numpy(), where="mid", label="depth (root = 1)", color="#4c72b0", lw=2)
    top.step(r, trace["width"].to_numpy() + 0.05, where="mid", label="width constraint", color="#dd8452", lw=2)
    top.set_ylabel("task level")
    top.legend(loc="upper right", fontsize=8)
    bottom.plot(r, trace["score_a"].to_numpy(), marker="o", color=OUTCOME_COLORS["model_a"], label="score A")
    bottom.plot(r, trace["score_b"].to_numpy(), marker="s", color=OUTCOME_COLORS["model_b"], label="score B")
    labels = [f"{x}\n{v}" + ("" if f is None else f"\nloser: {f}")
              for x, v, f in zip(r, trace["verdict"], trace["failure_type"], strict=True)]
    bottom.set_ylabel("cumulative score (points)")
    bottom.set_xlabel("round and verdict")
    bottom.set_xticks(r, labels, fontsize=7)
    top.yaxis.get_major_locator().set_params(integer=True)
    bottom.legend(loc="upper left", fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def correlation_by_rounds_plot(by_k: pl.DataFrame, title: str, reference: str) -> Figure:
    """Fig 4: Spearman's rho and Pearson's r with ``reference`` when matches are cut after ``k`` rounds."""
    fig, ax = plt.subplots()
    ax.plot(by_k["k"], by_k["spearman"], marker="o", color=ACCENT, label="Spearman ρ")
    ax.plot(by_k["k"], by_k["pearson"], marker="s", color="#dd8452", label="Pearson r")
    ax.set_xlabel("rounds used per match (k)")
    ax.set_ylabel(f"correlation with {reference}")
    ax.set_xticks(by_k["k"].to_list())
    ax.legend(loc="lower right")
    ax.set_title(title)
    return fig


def rounds_vs_gap_plot(pairs: pl.DataFrame, pearson: float, p_value: float, title: str) -> Figure:
    """Fig 5: mean rounds per match of each model pair against the pair's absolute Elo gap, with the
    least-squares line."""
    fig, ax = plt.subplots()
    x, y = pairs["elo_gap"].to_numpy(), pairs["mean_rounds"].to_numpy()
    ax.scatter(x, y, color=ACCENT, zorder=3)
    if len(x) >= 2 and np.ptp(x) > 0:
        b, a = np.polyfit(x, y, 1)
        grid = np.linspace(x.min(), x.max(), 50)
        ax.plot(grid, a + b * grid, color="grey", label=f"Pearson r = {pearson:.2f} (p = {p_value:.2g})")
        ax.legend(loc="upper right")
    ax.set_xlabel("|Elo gap| of the pair (Elo)")
    ax.set_ylabel("mean rounds per match")
    ax.set_title(title)
    return fig


def failure_profile_plot(profile: pl.DataFrame, title: str) -> Figure:
    """Fig 6: per model (ordered by failure rate), the shares of each failure type among its lost rounds as a
    stacked bar, with the failure rate (non-winning rounds / rounds) written beside it."""
    fig, ax = plt.subplots(figsize=(7.5, 0.45 * profile.height + 1.6))
    y = np.arange(profile.height)[::-1]
    left = np.zeros(profile.height)
    for f in FAILURE_CODES:
        share = profile[f"share_{f}"].fill_null(0).to_numpy() * 100
        ax.barh(y, share, left=left, color=FAILURE_COLORS[f], label=f.title())
        left += share
    for yi, rate in zip(y, profile["failure_rate"], strict=True):
        ax.text(101, yi, f"{100 * rate:.1f}%", va="center", fontsize=8)
    ax.set_yticks(y, profile["model"].to_list())
    ax.set_xlim(0, 115)
    ax.set_xlabel("% of the model's lost rounds (failure rate at right)")
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=4, fontsize=8, frameon=False)
    ax.set_title(title, pad=24)
    fig.tight_layout()
    return fig


def tick_label(category: str) -> str:
    """A Fig 7 category as its tick label: one word a line (``Much Better`` → ``Much\\nBetter``)."""
    return category.replace(" ", "\n")


def verdict_share_plot(shares: pl.DataFrame, title: str) -> Figure:
    """Fig 7: shares of the verdict tiers over all rounds (left) and of the failure types over decided rounds
    (right), in percent with the counts."""
    fig, axes = plt.subplots(1, 2, figsize=(9.0, 3.6))
    for ax, kind in zip(axes, ("verdict", "failure type"), strict=True):
        part = shares.filter(pl.col("kind") == kind)
        colors = [FAILURE_COLORS.get(c, ACCENT) for c in part["category"]]
        ax.bar([tick_label(c) for c in part["category"]], 100 * part["share"].to_numpy(), color=colors)
        for i, (s, n) in enumerate(zip(part["share"], part["n"], strict=True)):
            ax.annotate(f"{100 * s:.1f}%\n(n={n})", (i, 100 * s), ha="center", va="bottom", fontsize=7)
        ax.set_ylabel(f"% of {'rounds' if kind == 'verdict' else 'decided rounds'}")
        ax.set_xlabel(kind)
        ax.set_ylim(0, 130 * float(part.select(pl.col("share").max()).item()) if part.height else 1)
        ax.tick_params(axis="x", labelsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def leaderboard_plot(board: pl.DataFrame, title: str) -> Figure:
    """The tournament's Bradley–Terry leaderboard (:func:`~analysis_lib.dr_arena.tournament.ratings`) as a forest
    plot: each model's Elo with its 95% bootstrap interval, 1000 (the mean) marked."""
    return forest(board["model"].to_list(), board["rating"].to_numpy(), board["ci_lower"].to_numpy(),
                  board["ci_upper"].to_numpy(), xlabel="Elo (Bradley-Terry, 95% bootstrap interval)", title=title,
                  reference=1000.0)


def leaderboards_scatter(boards: pl.DataFrame, title: str) -> Figure:
    """Two leaderboards of the same models (``model``, ``search_arena_elo``, ``dr_arena_elo``) against each other,
    labelled, with the least-squares line."""
    return scatter_fit(boards["search_arena_elo"].to_numpy(), boards["dr_arena_elo"].to_numpy(),
                       labels=boards["model"].to_list(), xlabel="Search Arena Elo", ylabel="DR-Arena Elo", title=title)


def domain_plot(domains: pl.DataFrame, title: str) -> Figure:
    """Trees per source domain (``domain``, ``count``; :func:`~analysis_lib.dr_arena.trees.domain_table`)."""
    return barh(domains["domain"].to_list(), domains["count"].to_numpy(), xlabel="trees", title=title,
                annotate="{:.0f}")


def tree_shape_plots(shapes: pl.DataFrame, nodes: pl.DataFrame, groups: np.ndarray,
                     titles: tuple[str, str]) -> tuple[Figure, Figure]:
    """Depth and width of information trees, log count axes: per tree (``shapes``:
    :func:`~analysis_lib.dr_arena.trees.tree_table`; depth and largest sibling group) and over all nodes
    (``nodes``: node depth; ``groups``: sibling group sizes)."""
    per_tree = count_histograms([(shapes["depth"].to_numpy(), "tree depth (root = 0)"),
                                 (shapes["max_branching"].to_numpy(), "largest sibling group")],
                                ylabel="trees", log_y=True, title=titles[0])
    per_node = count_histograms([(nodes["depth"].to_numpy(), "node depth (root = 0)"),
                                 (groups, "sibling group size (children per internal node)")],
                                ylabel="nodes / sibling groups", log_y=True, title=titles[1])
    return per_tree, per_node


def match_end_plot(ends: pl.DataFrame, title: str) -> Figure:
    """Depth and width constraint of each match's last round (:func:`~analysis_lib.dr_arena.diagnostics.
    match_ends`), log count axes."""
    return count_histograms([(ends["depth"].to_numpy(), "depth of the last round (root = 1)"),
                             (ends["width"].to_numpy(), "width constraint of the last round")],
                            ylabel="matches", log_y=True, title=title)
