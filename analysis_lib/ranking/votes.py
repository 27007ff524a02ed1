"""The vote vocabulary and the checks every battle frame passes before a fit.

A battle is one row with the two competitors and the vote. By default the columns and labels are the LMArena
convention (:data:`LMARENA`): columns ``model_a``, ``model_b``, ``winner``; ``winner`` ∈ {``model_a``,
``model_b``, ``tie``, ``tie (bothbad)``}. The outcome for model A is ``y = 1`` (A won), ``0`` (B won) or ``0.5``
(either kind of tie: half a win, as LMArena and the Search Arena authors count it). :class:`BattleFormat` sets
other column names and labels.

:func:`clean_battles` is the one gate: it accepts a polars frame or a pandas frame (converted with
``polars.from_pandas``; anything else is refused with a ``TypeError``), checks the columns, and sorts out the
rows a Bradley–Terry fit cannot use:

- ``no vote``: a null ``winner``;
- ``unknown outcome``: a label outside the format's vocabulary (e.g. ``both_bad`` under LMArena's);
- ``missing model``: a null competitor name;
- ``self-battle``: ``model_a == model_b`` (no information about any rating difference);
- ``missing feature``: a null or non-finite style feature value (contextual fits only).

By default any such row is an error (:class:`InvalidBattlesError`) that gives the count per reason and the first
offending rows and values; with ``drop_invalid=True`` they are dropped and counted (the counts travel into the
result). Battles of models listed in ``exclude`` are dropped and counted as ``excluded model``. Nothing is
dropped silently. :func:`screen_battles` runs the same checks and returns which rows to keep instead of the
reshaped frame, for a caller that keeps its own columns (the Search Arena layer's battle filter).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import polars as pl

#: The LMArena ``winner`` labels (null = no vote): the one definition of the library's vote vocabulary (the Search
#: Arena schema, the nugget records and the simulators use these).
WINNERS: tuple[str, str, str, str] = ("model_a", "model_b", "tie", "tie (bothbad)")
#: The two labels of a decided battle.
DECISIVE: tuple[str, ...] = WINNERS[:2]
#: Outcome for model A of each LMArena label: 1, 0, or 0.5 for either kind of tie.
OUTCOME_OF_WINNER: dict[str, float] = dict(zip(WINNERS, (1.0, 0.0, 0.5, 0.5), strict=True))

#: Reasons a row is dropped, in the order they are checked (a row counts under the first that applies).
REASONS: tuple[str, ...] = ("missing model", "no vote", "unknown outcome", "self-battle", "missing feature")
EXCLUDED = "excluded model"
_SHOW = 5  # offending rows quoted in an error


class InvalidBattlesError(ValueError):
    """Battles that cannot be fitted as given (missing column, rows without a vote, unknown labels, …)."""


@dataclass(frozen=True)
class BattleFormat:
    """Column names and outcome labels of a battle frame (defaults: the LMArena convention).

    ``a_wins`` / ``b_wins`` / ``ties`` list the ``winner`` labels meaning "A won" (y = 1), "B won" (y = 0) and
    "tie" (y = 0.5).
    """

    model_a: str = "model_a"
    model_b: str = "model_b"
    winner: str = "winner"
    a_wins: tuple[str, ...] = WINNERS[:1]
    b_wins: tuple[str, ...] = WINNERS[1:2]
    ties: tuple[str, ...] = WINNERS[2:]

    def __post_init__(self) -> None:
        labels = [*self.a_wins, *self.b_wins, *self.ties]
        if len(set(labels)) != len(labels):
            raise ValueError(f"an outcome label is listed twice: {labels}")
        if not self.a_wins or not self.b_wins:
            raise ValueError("the format needs at least one label for 'A won' and one for 'B won'")

    @property
    def outcome_of_label(self) -> dict[str, float]:
        """``label -> y`` (outcome for A)."""
        return {**dict.fromkeys(self.a_wins, 1.0), **dict.fromkeys(self.b_wins, 0.0), **dict.fromkeys(self.ties, 0.5)}


LMARENA = BattleFormat()


def as_polars(frame: object, what: str = "battles") -> pl.DataFrame:
    """``frame`` as a polars frame: polars as is, pandas converted (``polars.from_pandas``), anything else refused."""
    if isinstance(frame, pl.DataFrame):
        return frame
    if type(frame).__module__.split(".")[0] == "pandas" and type(frame).__name__ == "DataFrame":
        return pl.from_pandas(frame)  # type: ignore[arg-type]
    raise TypeError(f"{what} must be a polars or pandas DataFrame, not {type(frame).__name__}")


def check_columns(frame: pl.DataFrame, columns: Sequence[str], source: str | None = None) -> None:
    """Raise :class:`InvalidBattlesError` naming the first of ``columns`` missing from ``frame``."""
    for c in columns:
        if c not in frame.columns:
            raise InvalidBattlesError(
                f"{_where(source)}column {c!r} not found (columns: {', '.join(frame.columns) or 'none'})"
            )


def _where(source: str | None) -> str:
    return f"{source}: " if source else ""


@dataclass(frozen=True)
class CleanBattles:
    """Battles ready for a fit: columns ``model_a``, ``model_b`` (strings), ``y`` (outcome for A, float) and the
    style feature columns ``<f>_a``, ``<f>_b`` (float); ``dropped`` counts the rows left out per reason."""

    frame: pl.DataFrame
    n_input: int
    dropped: Mapping[str, int] = field(default_factory=dict)


def feature_columns(features: Sequence[str]) -> list[str]:
    """``<f>_a, <f>_b`` for each base name in ``features``."""
    return [f"{f}_{s}" for f in features for s in ("a", "b")]


def _reason_exprs(fmt: BattleFormat, features: Sequence[str]) -> dict[str, pl.Expr]:
    a, b, w = pl.col(fmt.model_a), pl.col(fmt.model_b), pl.col(fmt.winner)
    exprs = {
        "missing model": a.is_null() | b.is_null(),
        "no vote": w.is_null(),
        "unknown outcome": ~w.is_in(list(fmt.outcome_of_label)),
        "self-battle": a == b,
    }
    cols = feature_columns(features)
    if cols:
        exprs["missing feature"] = pl.any_horizontal(
            [pl.col(c).cast(pl.Float64).is_null() | ~pl.col(c).cast(pl.Float64).is_finite() for c in cols]
        )
    return exprs


def _describe(frame: pl.DataFrame, reason: str, mask: np.ndarray, fmt: BattleFormat, features: Sequence[str]) -> str:
    rows = np.flatnonzero(mask)
    shown = rows[:_SHOW]
    if reason in ("no vote", "unknown outcome"):
        vals = frame[fmt.winner].gather(shown).to_list()
        quoted = ", ".join(f"{v!r} (row {r})" for r, v in zip(shown, vals, strict=True))
        what = f"column {fmt.winner!r}: {quoted}"
    elif reason == "missing feature":
        cols = feature_columns(features)
        sub = frame.select(cols).gather(shown)
        bad = [next(c for c in cols if sub[c][i] is None or not np.isfinite(float(sub[c][i])))
               for i in range(len(shown))]
        what = ", ".join(f"column {c!r} (row {r})" for r, c in zip(shown, bad, strict=True))
    else:
        pa = frame[fmt.model_a].gather(shown).to_list()
        pb = frame[fmt.model_b].gather(shown).to_list()
        what = ", ".join(f"({x!r}, {y!r}) (row {r})" for r, x, y in zip(shown, pa, pb, strict=True))
    more = f", … {len(rows) - len(shown):,} more" if len(rows) > len(shown) else ""
    return f"{len(rows):,} {_LABEL[reason]}: {what}{more}"


_LABEL = {
    "missing model": "rows without a model name",
    "no vote": "rows without a vote (null winner)",
    "unknown outcome": "rows with an unknown outcome label",
    "self-battle": "self-battles (model_a == model_b)",
    "missing feature": "rows with a missing or non-finite style feature",
}


@dataclass(frozen=True)
class Screen:
    """Which rows of a battle frame a fit can use: ``keep`` (a boolean per input row), ``dropped`` (rows left out
    per reason, :data:`REASONS` then ``excluded model``) and ``frame`` (the input as a polars frame, with the
    model and winner columns as strings)."""

    frame: pl.DataFrame
    keep: np.ndarray
    dropped: Mapping[str, int] = field(default_factory=dict)


def screen_battles(
    battles: object,
    fmt: BattleFormat = LMARENA,
    *,
    features: Sequence[str] = (),
    exclude: Sequence[str] = (),
    drop_invalid: bool = False,
    source: str | None = None,
) -> Screen:
    """The checks of :func:`clean_battles` without reshaping the frame: the rows to keep and the counts of the
    rows left out, for callers that keep their own columns (e.g. the Search Arena layer's battle filter).

    Raises :class:`InvalidBattlesError` for invalid rows unless ``drop_invalid`` (module docstring).
    """
    frame = as_polars(battles)
    check_columns(frame, [fmt.model_a, fmt.model_b, fmt.winner, *feature_columns(features)], source)
    n0 = frame.height
    for c in (fmt.model_a, fmt.model_b, fmt.winner):
        if frame[c].dtype not in (pl.String, pl.Categorical, pl.Enum, pl.Null):
            frame = frame.with_columns(pl.col(c).cast(pl.String))
    for c in feature_columns(features):
        if not (frame[c].dtype.is_numeric() or frame[c].dtype in (pl.Boolean, pl.Null)):
            raise InvalidBattlesError(f"{_where(source)}column {c!r} must be numeric, not {frame[c].dtype}")
    masks = frame.select(**{k: e.fill_null(False) for k, e in _reason_exprs(fmt, features).items()})
    claimed = np.zeros(n0, dtype=bool)
    per_reason: dict[str, np.ndarray] = {}
    for reason in REASONS:
        if reason in masks.columns:
            m = masks[reason].to_numpy() & ~claimed
            claimed |= m
            if m.any():
                per_reason[reason] = m
    if per_reason and not drop_invalid:
        parts = "; ".join(_describe(frame, r, m, fmt, features) for r, m in per_reason.items())
        expected = ", ".join(repr(v) for v in fmt.outcome_of_label)
        raise InvalidBattlesError(
            f"{_where(source)}{int(claimed.sum()):,} of {n0:,} battles cannot be fitted (rows numbered from 0): "
            f"{parts}. Expected {fmt.winner!r} in {expected}; pass drop_invalid=True (command line: --drop-invalid) "
            "to drop such rows (they are counted)."
        )
    dropped = {r: int(m.sum()) for r, m in per_reason.items()}
    keep = ~claimed
    if exclude:
        out = frame.select(
            (pl.col(fmt.model_a).is_in(list(exclude)) | pl.col(fmt.model_b).is_in(list(exclude))).fill_null(False)
        ).to_series().to_numpy() & keep
        dropped[EXCLUDED] = int(out.sum())
        keep &= ~out
    return Screen(frame, keep, dropped)


def clean_battles(
    battles: object,
    fmt: BattleFormat = LMARENA,
    *,
    features: Sequence[str] = (),
    exclude: Sequence[str] = (),
    drop_invalid: bool = False,
    source: str | None = None,
) -> CleanBattles:
    """Check ``battles`` (module docstring) and return them in the standard form of :class:`CleanBattles`.

    Row numbers in an error are 0-based positions in the frame; ``source`` (a file name) prefixes the message.
    """
    screen = screen_battles(battles, fmt, features=features, exclude=exclude, drop_invalid=drop_invalid,
                            source=source)
    frame = screen.frame
    kept = frame if screen.keep.all() else frame.filter(pl.Series(screen.keep))
    y = pl.col(fmt.winner).replace_strict(fmt.outcome_of_label, return_dtype=pl.Float64).alias("y")
    a, b = pl.col(fmt.model_a).cast(pl.String).alias("model_a"), pl.col(fmt.model_b).cast(pl.String).alias("model_b")
    cols = [a, b, y]
    cols += [pl.col(c).cast(pl.Float64) for c in feature_columns(features)]
    return CleanBattles(kept.select(cols), frame.height, screen.dropped)
