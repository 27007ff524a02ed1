"""The adaptive evolvement loop of DR-Arena (§3.3, Tables 1 and 2, Appendix C) as a pure state machine.

One match is a sequence of rounds. In each round the Examiner asks a question at the current **depth** (the
active node's position on a root-to-node path; root = 1, the framework's convention in its match logs) under the
current **width constraint** (the number of sibling information units the answer must aggregate), judges the two
answers with a tiered verdict and tags the loser's failure type; the verdict scores points and Table 2 maps
(verdict, failure type) to an evolution action on (depth, width).

Rules of the released framework (``config.py`` and ``core/evolvement_loop.py`` of the DR-Arena framework, read
in the copy at commit 175901c8 of github.com/pmcconville-hub/DR-Arena, a fork of iNLP-Lab/DR-Arena; they agree
with the match traces of the upstream ``web/public/data/battle-index.json``), every one a field of
:class:`LoopConfig` whose defaults are these:

- scoring: Much Better 2 points to the winner, Better 1, a tie 0 (``much_better_points``, ``better_points``,
  ``tie_points``);
- stop (checked after each round): the absolute score gap ``|S_A − S_B| ≥ 2`` once at least ``min_rounds = 1``
  round was played (the "mercy rule", ``gap_threshold``; ``WIN_THRESHOLD = 2.0``, ``MIN_ROUNDS = 1``), else
  after ``max_rounds = 10`` rounds (``MAX_ROUNDS``). There is no separate stop on a Much Better verdict
  (``stop_on_much_better = False``);
- start: depth 2 (a child of the root), width constraint 2 (``start_depth``, ``start_width``);
- actions: a high-quality tie is a **pressure test** (width + 1 and descend one level); a low-quality tie
  **backtracks** to the parent and lowers the width constraint by one, to no less than 2
  (``backtrack_width="decrement"``: ``_backtrack`` sets ``max(2, width − 1)``; the released traces show
  (3, 3) → (2, 2) and (2, 3) → (1, 2)); at the root there is no parent and the width goes back to 2 (``start``:
  ``difficulty_nodes = 2`` when ``_backtrack`` fails). A decided round acts on the loser's failure type: DEEP
  **drills down** (descend one level), WIDE **widens** (width + 1), BOTH or NONE is a pressure test;
- a descent needs a child of the active node: when the tree has none there, the focus goes to width
  (``no_child="widen"``: width + 1 instead; a pressure test then changes the width only).

Without a tree (``tree=None``) every descent succeeds: the loop then only tracks numbers, which is how a
published trace is replayed. Other rules are other :class:`LoopConfig` values (``backtrack_width="reset"`` or
``"keep"``, ``stop_on_much_better=True``, another start or gap).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Literal

import polars as pl


class Verdict(Enum):
    """Tiered adjudication (§3.3): decisive or marginal wins, high- or low-quality ties."""

    A_MUCH_BETTER = "A much better"
    A_BETTER = "A better"
    TIE_HIGH = "Tie (high quality)"
    TIE_LOW = "Tie (low quality)"
    B_BETTER = "B better"
    B_MUCH_BETTER = "B much better"

    @property
    def is_tie(self) -> bool:
        return self in (Verdict.TIE_HIGH, Verdict.TIE_LOW)

    @property
    def is_decisive(self) -> bool:
        return self in (Verdict.A_MUCH_BETTER, Verdict.B_MUCH_BETTER)

    @property
    def winner(self) -> str | None:
        return None if self.is_tie else self.name[0]

    @property
    def code(self) -> str:
        """The framework's log code: ``A_MUCH_BETTER``, ``A_BETTER``, ``TIE``, ``B_BETTER``, ``B_MUCH_BETTER``."""
        return "TIE" if self.is_tie else self.name

    @property
    def tie_quality(self) -> str | None:
        return {Verdict.TIE_HIGH: "high", Verdict.TIE_LOW: "low"}.get(self)

    @classmethod
    def from_code(cls, code: str, tie_quality: str | None = None) -> Verdict:
        """Inverse of :attr:`code`; a tie needs ``tie_quality`` ``"high"`` or ``"low"``."""
        code = code.strip().upper()
        if code == "TIE":
            if tie_quality not in ("high", "low"):
                raise ValueError(f"a TIE verdict needs tie_quality 'high' or 'low', got {tie_quality!r}")
            return cls.TIE_HIGH if tie_quality == "high" else cls.TIE_LOW
        if code not in cls.__members__ or code.startswith("TIE_"):
            raise ValueError(f"unknown verdict code {code!r}; expected one of {list(VERDICT_CODES)}")
        return cls[code]


VERDICT_CODES: tuple[str, ...] = ("A_MUCH_BETTER", "A_BETTER", "TIE", "B_BETTER", "B_MUCH_BETTER")


class FailureType(Enum):
    """Table 1: the Examiner's diagnostic tag for the losing side."""

    DEEP = "Deep"  # logic failure: wrong core entity, broken reasoning chain
    WIDE = "Wide"  # coverage failure: missing attribute details (data gap)
    BOTH = "Both"  # systemic failure
    NONE = "None"  # soft gap: lost only on formatting / utility


FAILURE_CRITERIA: dict[FailureType, str] = {
    FailureType.DEEP: "Logic Failure. Failed to identify the correct core entity due to a broken reasoning chain.",
    FailureType.WIDE: "Coverage Failure. Failed to aggregate specific attribute details (Data Gap).",
    FailureType.BOTH: "Systemic Failure. Failed on both logical identification and factual completeness.",
    FailureType.NONE: "Soft Gap. The loss was determined solely by soft filters (formatting or utility preferences).",
}


class Action(Enum):
    """Table 2's evolution actions; ``kind`` is the framework's name for it in match logs."""

    PRESSURE_TEST = "Pressure test (depth+1 & width+1)"
    BACKTRACK = "Backtrack (move to parent)"
    PROBE_DEPTH = "Probe depth (depth+1)"
    PROBE_WIDTH = "Probe width (width+1)"

    @property
    def kind(self) -> str:
        return {Action.PRESSURE_TEST: "pressure_test", Action.BACKTRACK: "backtrack",
                Action.PROBE_DEPTH: "drill_down", Action.PROBE_WIDTH: "increase_width"}[self]

    @property
    def delta(self) -> tuple[int, int]:
        """Nominal change to (depth, width); the applied change also depends on the tree and the config."""
        return {Action.PRESSURE_TEST: (1, 1), Action.BACKTRACK: (-1, 0), Action.PROBE_DEPTH: (1, 0),
                Action.PROBE_WIDTH: (0, 1)}[self]


def transition(verdict: Verdict, failure: FailureType | None = None) -> Action:
    """Table 2. Ties ignore the failure type (N/A); a win needs one (the loser's)."""
    if verdict is Verdict.TIE_HIGH:
        return Action.PRESSURE_TEST
    if verdict is Verdict.TIE_LOW:
        return Action.BACKTRACK
    if failure is None:
        raise ValueError(f"verdict {verdict.value!r} decides a winner: the loser's failure type is required")
    return {FailureType.DEEP: Action.PROBE_DEPTH, FailureType.WIDE: Action.PROBE_WIDTH,
            FailureType.BOTH: Action.PRESSURE_TEST, FailureType.NONE: Action.PRESSURE_TEST}[failure]


class StopReason(Enum):
    SCORE_GAP = "score gap reached the threshold (mercy rule)"
    MUCH_BETTER = "decisive Much Better verdict"
    MAX_ROUNDS = "maximum number of rounds reached"


@dataclass(frozen=True)
class LoopConfig:
    """Every rule of the loop; the defaults are the released framework's (module docstring)."""

    name: str = "DR-Arena framework (released code)"
    much_better_points: float = 2.0
    better_points: float = 1.0
    tie_points: float = 0.0
    gap_threshold: float = 2.0
    min_rounds: int = 1
    max_rounds: int = 10
    stop_on_much_better: bool = False
    start_depth: int = 2
    start_width: int = 2
    min_depth: int = 1
    min_width: int = 2
    backtrack_width: Literal["decrement", "reset", "keep"] = "decrement"
    no_child: Literal["widen", "stay"] = "widen"

    def points(self, verdict: Verdict) -> tuple[float, float]:
        """Points to (A, B) for one verdict."""
        if verdict.is_tie:
            return (self.tie_points, self.tie_points)
        p = self.much_better_points if verdict.is_decisive else self.better_points
        return (p, 0.0) if verdict.winner == "A" else (0.0, p)


FRAMEWORK = LoopConfig()


@dataclass(frozen=True)
class RoundRecord:
    """One played round: the task's (depth, width), the verdict, the action taken and the scores after it."""

    round: int
    depth: int
    width: int
    verdict: Verdict
    failure: FailureType | None
    action: Action
    applied: str
    score_a: float
    score_b: float
    stop: StopReason | None


@dataclass(frozen=True)
class LoopState:
    """State of one match: active node (``path`` of child indices from the root, when a tree is used), depth
    (root = 1), width constraint, cumulative scores, rounds played and the history of rounds."""

    depth: int = 2
    width: int = 2
    path: tuple[int, ...] = ()
    score_a: float = 0.0
    score_b: float = 0.0
    round: int = 0
    stopped: StopReason | None = None
    history: tuple[RoundRecord, ...] = field(default=())

    @property
    def gap(self) -> float:
        return self.score_a - self.score_b

    @property
    def leader(self) -> str | None:
        return None if self.gap == 0 else ("A" if self.gap > 0 else "B")


def start_state(config: LoopConfig = FRAMEWORK, path: tuple[int, ...] = ()) -> LoopState:
    """The state before round 1 (``path``: the active node when a tree is used, ``start_depth - 1`` indices)."""
    return LoopState(depth=config.start_depth, width=config.start_width, path=path)


def node_at(tree: Mapping, path: tuple[int, ...]) -> Mapping:
    """The node reached from ``tree`` (a root node with ``children``) by the child indices ``path``."""
    node = tree
    for i in path:
        node = node["children"][i]
    return node


Chooser = Callable[[int], int]


def _first_child(n: int) -> int:
    return 0


def start_on_tree(tree: Mapping, config: LoopConfig = FRAMEWORK, choose: Chooser = _first_child) -> LoopState:
    """The start state on a tree: descend from the root ``start_depth - 1`` levels through children picked by
    ``choose(n_children)``, stopping early at a leaf (then the depth is lower than ``start_depth``)."""
    path: tuple[int, ...] = ()
    while len(path) < config.start_depth - 1:
        n = len(node_at(tree, path)["children"])
        if n == 0:
            break
        path = (*path, choose(n))
    return LoopState(depth=len(path) + 1, width=config.start_width, path=path)


def _apply(state: LoopState, action: Action, config: LoopConfig, tree: Mapping | None,
           choose: Chooser) -> tuple[int, int, tuple[int, ...], str]:
    """(depth, width, path, what was done) after ``action``."""
    d, w, path = state.depth, state.width, state.path

    def descend() -> tuple[int, tuple[int, ...]] | None:
        if tree is None:
            return d + 1, path
        n = len(node_at(tree, path)["children"])
        return (d + 1, (*path, choose(n))) if n else None

    if action is Action.BACKTRACK:
        w2 = {"reset": config.start_width, "keep": w, "decrement": max(config.min_width, w - 1)}[config.backtrack_width]
        if d > config.min_depth:
            return d - 1, w2, path[:-1], "backtrack to parent"
        return d, config.start_width, path, "at the root: width reset"
    if action is Action.PROBE_WIDTH:
        return d, w + 1, path, "width + 1"
    down = descend()
    if action is Action.PROBE_DEPTH:
        if down is not None:
            return down[0], w, down[1], "descend"
        return (d, w + 1, path, "no child: width + 1") if config.no_child == "widen" else (d, w, path, "no child: stay")
    # pressure test
    if down is not None:
        return down[0], w + 1, down[1], "descend & width + 1"
    return d, w + 1, path, "no child: width + 1"


def step(state: LoopState, verdict: Verdict, failure: FailureType | None = None, config: LoopConfig = FRAMEWORK,
         *, tree: Mapping | None = None, choose: Chooser = _first_child) -> LoopState:
    """One round: score the verdict, check the stop rules (score gap once ``min_rounds`` were played, then
    Much Better when that rule is on, then the round limit) and apply Table 2's action to (depth, width, node).
    A stopped state accepts no more rounds; the action of the last round is recorded but not applied."""
    if state.stopped is not None:
        raise ValueError(f"the match has already stopped ({state.stopped.value})")
    if not verdict.is_tie and failure is None:
        raise ValueError(f"round {state.round + 1}: verdict {verdict.value!r} needs the loser's failure type")
    action = transition(verdict, failure)
    pa, pb = config.points(verdict)
    sa, sb, rnd = state.score_a + pa, state.score_b + pb, state.round + 1
    reason: StopReason | None = None
    if rnd >= config.min_rounds and abs(sa - sb) >= config.gap_threshold:
        reason = StopReason.SCORE_GAP
    elif config.stop_on_much_better and verdict.is_decisive:
        reason = StopReason.MUCH_BETTER
    elif rnd >= config.max_rounds:
        reason = StopReason.MAX_ROUNDS
    if reason is None:
        d, w, path, applied = _apply(state, action, config, tree, choose)
    else:
        d, w, path, applied = state.depth, state.width, state.path, "stop"
    record = RoundRecord(rnd, state.depth, state.width, verdict, None if verdict.is_tie else failure, action,
                         applied, sa, sb, reason)
    return replace(state, depth=d, width=w, path=path, score_a=sa, score_b=sb, round=rnd, stopped=reason,
                   history=(*state.history, record))


def run_match(rounds: Iterable[tuple[Verdict, FailureType | None]], config: LoopConfig = FRAMEWORK,
              start: LoopState | None = None, *, tree: Mapping | None = None,
              choose: Chooser = _first_child) -> LoopState:
    """Feed verdicts until a stop rule fires (later verdicts are not used) or the sequence ends."""
    state = start or start_state(config)
    for verdict, failure in rounds:
        state = step(state, verdict, failure, config, tree=tree, choose=choose)
        if state.stopped is not None:
            break
    return state


def trace_table(state: LoopState) -> pl.DataFrame:
    """A match's rounds: the task's (depth, width) in that round, verdict, failure type, action, what was done,
    cumulative scores and the stop rule that fired."""
    return pl.DataFrame(
        [{"round": r.round, "depth": r.depth, "width": r.width, "verdict": r.verdict.value,
          "failure_type": None if r.failure is None else r.failure.value, "action": r.action.kind,
          "applied": r.applied, "score_a": r.score_a, "score_b": r.score_b,
          "stop": None if r.stop is None else r.stop.name} for r in state.history],
        schema={"round": pl.Int64, "depth": pl.Int64, "width": pl.Int64, "verdict": pl.String,
                "failure_type": pl.String, "action": pl.String, "applied": pl.String, "score_a": pl.Float64,
                "score_b": pl.Float64, "stop": pl.String},
    )


def transition_table(config: LoopConfig = FRAMEWORK) -> pl.DataFrame:
    """Table 2 expanded over the six tiered verdicts and the four failure types, with the points each verdict
    scores under ``config`` and whether it can stop the match on its own."""
    rows = []
    for v in Verdict:
        pa, pb = config.points(v)
        for f in [None] if v.is_tie else list(FailureType):
            a = transition(v, f)
            rows.append({"verdict": v.value, "failure_type": "N/A" if f is None else f.value, "action": a.value,
                         "kind": a.kind, "d_depth": a.delta[0], "d_width": a.delta[1], "points_a": pa,
                         "points_b": pb, "stops_match": bool(config.stop_on_much_better and v.is_decisive)
                         or max(pa, pb) >= config.gap_threshold})
    return pl.DataFrame(rows)


def config_table(config: LoopConfig = FRAMEWORK) -> pl.DataFrame:
    """The rules of one config as ``rule, value`` rows (the loop's rules beside Table 2)."""
    return pl.DataFrame({"rule": list(config.__dataclass_fields__),
                         "value": [str(getattr(config, k)) for k in config.__dataclass_fields__]})


# ---- replaying a logged trace

def replay_trace(trace: pl.DataFrame, config: LoopConfig = FRAMEWORK, *, tree: Mapping | None = None,
                 start: LoopState | None = None) -> pl.DataFrame:
    """Replay one logged match (rows ordered by ``round``; columns ``verdict`` (code), ``tie_quality``,
    ``failure_type`` (code or null)) through the loop with ``config``, on ``tree`` from ``start`` when given (else
    with no tree: every descent finds a child); returns :func:`trace_table` with the logged columns beside it
    (``logged_depth``, ``logged_width``, ``logged_score_a``, ``logged_score_b``; null where the trace has no
    scores)."""
    rounds = []
    for i, row in enumerate(trace.sort("round").iter_rows(named=True)):
        v = Verdict.from_code(row["verdict"], row.get("tie_quality"))
        f = None if v.is_tie or row.get("failure_type") is None else FailureType[row["failure_type"]]
        rounds.append((v, f))
    state = run_match(rounds, config, start, tree=tree)
    out = trace_table(state)
    score = {c: pl.col(c).cast(pl.Float64) if c in trace.columns else pl.lit(None, dtype=pl.Float64)
             for c in ("score_a", "score_b")}
    logged = trace.sort("round").head(out.height).select(
        pl.col("depth").alias("logged_depth"), pl.col("width").alias("logged_width"),
        score["score_a"].alias("logged_score_a"), score["score_b"].alias("logged_score_b"))
    return pl.concat([out, logged], how="horizontal")
