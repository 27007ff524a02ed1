"""Checked battles: the one battles type every fit takes, built once from a frame (:meth:`Battles.from_frame`).

:meth:`Battles.from_frame` accepts a polars frame or a pandas frame (converted with ``polars.from_pandas``;
anything else is refused with a ``TypeError``), checks the columns of its :class:`~analysis_lib.ranking.votes.
BattleFormat`, and sorts out the rows a Bradley–Terry fit cannot use:

- ``missing model``: a null competitor name;
- ``no vote``: a null ``winner`` (or a null outcome with ``BattleFormat(outcome=…)``);
- ``unknown outcome``: a label outside the format's vocabulary (e.g. ``both_bad`` under LMArena's), or an
  outcome outside ``[0, 1]``;
- ``self-battle``: ``model_a == model_b`` (no information about any rating difference);
- ``missing feature``: a null or non-finite style feature value (when ``features`` are given).

A row counts under the first reason that applies. By default any such row is an error
(:class:`~analysis_lib.ranking.votes.InvalidBattlesError`) giving the count per reason and the first offending rows
and values; with ``drop_invalid=True`` they are dropped and counted. Battles of models listed in ``exclude`` are
dropped and counted as ``excluded model``. Nothing is dropped silently: the counts travel into every result.

The checked battles keep every input column, so subsets (:meth:`Battles.where`, e.g. one category) and further
exclusions (:meth:`Battles.without`, :meth:`Battles.drop`) stay checked without a second screen.
:meth:`Battles.fit_frame` gives a fit what it reads: ``model_a``, ``model_b`` (strings), ``y`` (outcome for A)
and the ``<f>_a``, ``<f>_b`` columns of the fit's style features as floats.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import polars as pl

from analysis_lib.ranking.votes import LMARENA, BattleFormat, InvalidBattlesError

#: Reasons a row is dropped, in the order they are checked (a row counts under the first that applies).
REASONS: tuple[str, ...] = ("missing model", "no vote", "unknown outcome", "self-battle", "missing feature")
EXCLUDED = "excluded model"
_SHOW = 5  # offending rows quoted in an error
#: How each reason reads in a message: (singular, plural).
_LABEL = {
    "missing model": ("row without a model name", "rows without a model name"),
    "no vote": ("row without a vote (null winner)", "rows without a vote (null winner)"),
    "unknown outcome": ("row with an unknown outcome label", "rows with an unknown outcome label"),
    "self-battle": ("self-battle (model_a == model_b)", "self-battles (model_a == model_b)"),
    "missing feature": ("row with a missing or non-finite style feature",
                        "rows with a missing or non-finite style feature"),
}


def plural(n: int, singular: str, many: str | None = None) -> str:
    """``"1 row"``, ``"2 rows"``, ``"1,200 rows"`` (``many`` defaults to ``singular + "s"``)."""
    return f"{n:,} {singular if n == 1 else (many or singular + 's')}"


def closest(name: str, names: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` for the name of ``names`` closest to ``name`` (difflib), or ``""``."""
    match = difflib.get_close_matches(name, [str(n) for n in names], n=1, cutoff=0.6)
    return f"; did you mean {match[0]!r}?" if match else ""


def as_polars(frame: object, what: str = "battles") -> pl.DataFrame:
    """``frame`` as a polars frame: polars as is, pandas converted (``polars.from_pandas``), anything else refused."""
    if isinstance(frame, pl.DataFrame):
        return frame
    if type(frame).__module__.split(".")[0] == "pandas" and type(frame).__name__ == "DataFrame":
        return pl.from_pandas(frame)  # type: ignore[arg-type]
    raise TypeError(f"{what} must be a polars or pandas DataFrame, not {type(frame).__name__}")


def _where(source: str | None) -> str:
    return f"{source}: " if source else ""


def check_columns(frame: pl.DataFrame, columns: Sequence[str], source: str | None = None) -> None:
    """Raise :class:`InvalidBattlesError` naming the first of ``columns`` missing from ``frame``."""
    for c in columns:
        if c not in frame.columns:
            raise InvalidBattlesError(
                f"{_where(source)}column {c!r} not found{closest(c, frame.columns)} "
                f"(columns: {', '.join(frame.columns) or 'none'})"
            )


def check_features(features: object) -> tuple[str, ...]:
    """``features`` as a tuple of base names; a single string is refused ("pass a list")."""
    if isinstance(features, str):
        raise TypeError(f"features must be a list of base names, not the string {features!r}: pass a list, "
                        f"features=[{features!r}] (columns '{features}_a' and '{features}_b')")
    return tuple(features)  # type: ignore[arg-type]


def feature_columns(features: Sequence[str]) -> list[str]:
    """``<f>_a, <f>_b`` for each base name in ``features``."""
    return [f"{f}_{s}" for f in features for s in ("a", "b")]


def _reason_exprs(fmt: BattleFormat, features: Sequence[str]) -> dict[str, pl.Expr]:
    a, b, w = pl.col(fmt.model_a), pl.col(fmt.model_b), pl.col(fmt.vote_column)
    if fmt.outcome is None:
        unknown = ~w.is_in(list(fmt.outcome_of_label))
    else:
        y = w.cast(pl.Float64)
        unknown = ~(y.is_finite() & (y >= 0.0) & (y <= 1.0))
    exprs = {"missing model": a.is_null() | b.is_null(), "no vote": w.is_null(), "unknown outcome": unknown,
             "self-battle": a == b}
    cols = feature_columns(features)
    if cols:
        exprs["missing feature"] = pl.any_horizontal(
            [pl.col(c).cast(pl.Float64).is_null() | ~pl.col(c).cast(pl.Float64).is_finite() for c in cols]
        )
    return exprs


def _describe(frame: pl.DataFrame, reason: str, mask: np.ndarray, fmt: BattleFormat, features: Sequence[str]) -> str:
    rows = np.flatnonzero(mask)
    shown = rows[:_SHOW]
    numbers = shown + 1  # rows counted from 1
    if reason in ("no vote", "unknown outcome"):
        vals = frame[fmt.vote_column].gather(shown).to_list()
        quoted = ", ".join(f"{v!r} (row {r})" for r, v in zip(numbers, vals, strict=True))
        what = f"column {fmt.vote_column!r}: {quoted}"
    elif reason == "missing feature":
        cols = feature_columns(features)
        sub = frame.select(cols).gather(shown)
        bad = [next(c for c in cols if sub[c][i] is None or not np.isfinite(float(sub[c][i])))
               for i in range(len(shown))]
        what = ", ".join(f"column {c!r} (row {r})" for r, c in zip(numbers, bad, strict=True))
    else:
        pa = frame[fmt.model_a].gather(shown).to_list()
        pb = frame[fmt.model_b].gather(shown).to_list()
        what = ", ".join(f"({x!r}, {y!r}) (row {r})" for r, x, y in zip(numbers, pa, pb, strict=True))
    more = f", … {len(rows) - len(shown):,} more" if len(rows) > len(shown) else ""
    return f"{plural(len(rows), *_LABEL[reason])}: {what}{more}"


def _screen(frame: pl.DataFrame, fmt: BattleFormat, features: Sequence[str], exclude: Sequence[str],
            drop_invalid: bool, source: str | None) -> tuple[pl.DataFrame, np.ndarray, dict[str, int]]:
    """``(frame with the name and label columns as strings, rows to keep, rows dropped per reason)``."""
    check_columns(frame, [fmt.model_a, fmt.model_b, fmt.vote_column, *feature_columns(features)], source)
    n0 = frame.height
    for c in (fmt.model_a, fmt.model_b, *([] if fmt.outcome else [fmt.winner])):
        if frame[c].dtype not in (pl.String, pl.Categorical, pl.Enum, pl.Null):
            frame = frame.with_columns(pl.col(c).cast(pl.String))
    numeric = feature_columns(features) + ([fmt.outcome] if fmt.outcome else [])
    for c in numeric:
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
        expected = ""
        if {"no vote", "unknown outcome"} & per_reason.keys():
            labels = ", ".join(repr(v) for v in fmt.outcome_of_label)
            expected = (f". Expected {fmt.winner!r} in {labels}" if fmt.outcome is None
                        else f". Expected {fmt.outcome!r} between 0 and 1")
        raise InvalidBattlesError(
            f"{_where(source)}{int(claimed.sum()):,} of {plural(n0, 'battle')} cannot be fitted (rows numbered from "
            f"0): {parts}{expected}; pass drop_invalid=True (command line: --drop-invalid) to drop such rows (they "
            "are counted)."
        )
    dropped = {r: int(m.sum()) for r, m in per_reason.items()}
    keep = ~claimed
    if exclude:
        out = frame.select(
            (pl.col(fmt.model_a).is_in(list(exclude)) | pl.col(fmt.model_b).is_in(list(exclude))).fill_null(False)
        ).to_series().to_numpy() & keep
        dropped[EXCLUDED] = int(out.sum())
        keep &= ~out
    return frame, keep, dropped


@dataclass(frozen=True)
class Battles:
    """Battles checked once and ready for any fit (module docstring).

    ``frame``: the rows a fit can use, with every input column (the name and label columns as strings);
    ``fmt``: their column names and labels; ``n_input``: rows of the frame the battles were built from;
    ``dropped``: rows left out per reason (``missing model``, ``no vote``, ``unknown outcome``, ``self-battle``,
    ``missing feature``, ``excluded model``, and any reason of :meth:`drop`); ``source``: a file name for messages.
    """

    frame: pl.DataFrame
    fmt: BattleFormat = LMARENA
    n_input: int = 0
    dropped: Mapping[str, int] = field(default_factory=dict)
    source: str | None = None

    @classmethod
    def from_frame(
        cls,
        battles: object,
        fmt: BattleFormat = LMARENA,
        *,
        features: Sequence[str] = (),
        exclude: Sequence[str] = (),
        drop_invalid: bool = False,
        source: str | None = None,
    ) -> Battles:
        """Check ``battles`` (a polars or pandas frame; module docstring). Row numbers in an error are 0-based
        positions in the frame; ``source`` (a file name) prefixes the message. ``features``: base names whose
        ``<f>_a``, ``<f>_b`` columns are checked too (a null or non-finite value is a ``missing feature``)."""
        frame, keep, dropped = _screen(as_polars(battles), fmt, check_features(features), exclude, drop_invalid,
                                       source)
        kept = frame if keep.all() else frame.filter(pl.Series(keep))
        return cls(kept, fmt, frame.height, dropped, source)

    @property
    def n_battles(self) -> int:
        """Battles kept (rows of :attr:`frame`)."""
        return self.frame.height

    @property
    def models(self) -> tuple[str, ...]:
        """Sorted names of every competitor on either side."""
        a, b = self.fmt.model_a, self.fmt.model_b
        names = pl.concat([self.frame[a].cast(pl.String), self.frame[b].cast(pl.String)]).unique().to_list()
        return tuple(sorted(names))

    def where(self, predicate: pl.Expr) -> Battles:
        """The battles for which ``predicate`` holds (e.g. ``pl.col("category") == "coding"``): still checked;
        ``n_input`` and ``dropped`` stay those of the check."""
        return replace(self, frame=self.frame.filter(predicate))

    def drop(self, predicate: pl.Expr, reason: str) -> Battles:
        """The battles for which ``predicate`` does not hold; those left out are added to ``dropped[reason]``."""
        out = predicate.fill_null(False)
        n_out = int(self.frame.select(out.sum()).item())
        dropped = {**self.dropped, reason: self.dropped.get(reason, 0) + n_out}
        return replace(self, frame=self.frame.filter(~out), dropped=dropped)

    def without(self, models: Sequence[str]) -> Battles:
        """The battles of none of ``models``; those left out are added to the ``excluded model`` count."""
        if not models:
            return self
        out = pl.col(self.fmt.model_a).is_in(list(models)) | pl.col(self.fmt.model_b).is_in(list(models))
        if not self.frame.select(out.fill_null(False).any()).item():
            return self
        return self.drop(out, EXCLUDED)

    def fit_frame(self, features: Sequence[str] = ()) -> pl.DataFrame:
        """What a fit reads: ``model_a``, ``model_b`` (strings), ``y`` (outcome for A: 1, 0 or 0.5 from the labels,
        or the ``outcome`` column) and the ``<f>_a``, ``<f>_b`` columns of ``features`` as floats.

        A missing feature column, or a null or non-finite value in one (features not checked when the battles were
        built), is an :class:`~analysis_lib.ranking.votes.InvalidBattlesError` naming the column and the rows
        (numbered from 0 in :attr:`frame`)."""
        features = check_features(features)
        cols = feature_columns(features)
        check_columns(self.frame, cols, self.source)
        if cols:
            bad = self.frame.select(
                **{c: (pl.col(c).cast(pl.Float64).is_null() | ~pl.col(c).cast(pl.Float64).is_finite()).fill_null(True)
                   for c in cols})
            rows = np.flatnonzero(bad.select(pl.any_horizontal(cols)).to_series().to_numpy())
            if rows.size:
                shown = ", ".join(f"column {next(c for c in cols if bad[c][int(r)])!r} (row {r})" for r in rows[:5])
                raise InvalidBattlesError(
                    f"{_where(self.source)}{rows.size:,} of {plural(self.frame.height, 'battle')} "
                    f"{'has' if rows.size == 1 else 'have'} a missing or non-finite style feature: "
                    f"{shown}{', …' if rows.size > 5 else ''}")
        fmt = self.fmt
        if fmt.outcome is None:
            y = pl.col(fmt.winner).replace_strict(fmt.outcome_of_label, return_dtype=pl.Float64).alias("y")
        else:
            y = pl.col(fmt.outcome).cast(pl.Float64).alias("y")
        return self.frame.select(pl.col(fmt.model_a).cast(pl.String).alias("model_a"),
                                 pl.col(fmt.model_b).cast(pl.String).alias("model_b"), y,
                                 *(pl.col(c).cast(pl.Float64) for c in cols))

    def summary(self) -> str:
        """One line: battles kept of the input and the rows left out per reason."""
        d = self.dropped
        text = (f"{self.frame.height:,} battles kept of {self.n_input:,}: dropped {d.get('no vote', 0):,} without a "
                f"vote, {d.get(EXCLUDED, 0):,} with an excluded model, {d.get('self-battle', 0):,} self-battles")
        shown = {"no vote", EXCLUDED, "self-battle"}
        extra = [f"{v:,} {_SUMMARY_TEXT.get(k, k)}" for k, v in d.items() if k not in shown and v]
        return text + "".join(f", {e}" for e in extra)


_SUMMARY_TEXT = {"unknown outcome": "with an unknown winner label", "missing model": "without a model name",
                 "missing feature": "with a missing style feature", "tie (decided only)": "ties (decided battles only)"}
