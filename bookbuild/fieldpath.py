"""A paper-values row's ``result``: which field of a library result its number is.

Every row of ``resources/paper_values/<paper>.csv`` names the library result it compares with, so a chapter records
an analysis ID with one call, ``rec.record("SA-A2", traffic)``, and grepping a row's ID finds the line that records
it. The ``result`` cell is a **path** read from the object the chapter passes (the *root*):

- ``mean_per_day``: a field of a dataclass or named tuple (any attribute), a key of a mapping, or the one value of
  a column of a one-row polars frame;
- ``coefficient.beta``: one step after another (the root a mapping of several results, ``rec.record(aid, {"coefficient":
  c, "ratings": r})``, or a field holding a result);
- ``board[model=gpt-4o-search].rating``: the row of a frame (or of a list of records) whose ``model`` is
  ``gpt-4o-search``, then its ``rating``; several selectors with commas (``[group_1=tie,group_2=model_a]``); a value
  with a comma, a bracket or surrounding spaces in double quotes; ``[0]``: an item of a sequence;
- ``board[model=*].rating``: a **template**, one number per row of the frame: the row's quantity names the
  selected columns in braces (``{model} rating``) and each row of the frame gives one quantity (a model the paper
  does not have is a new row of the page, its paper value "—");
- ``[dataset=SimpleQA].conversations``: a path may start with a selection, from the rows of the root itself (a
  chapter passes a frame: ``rec.record("SA-T1", table1)``);
- ``share * 100``: a factor after the path (percent from a share).

A path that meets ``None`` or a selection with no row gives no value: the number is recorded as not run, with the
reason the result gives (a ``reason`` field beside the value) or the caller's. A path that names a field the result
does not have is an error naming the row (the book's test of every row: :func:`check`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

__all__ = ["Context", "Missing", "Path", "PathError", "Step", "expand", "parse", "resolve"]

_STEP = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)?\s*(?:\[([^\]]*)\])?\s*")
_FACTOR = re.compile(r"^(?P<path>.*?)\s*\*\s*(?P<factor>[0-9.eE+-]+)\s*$")
_SELECTOR = re.compile(r'\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*("(?:[^"\\]|\\.)*"|[^,]*?)\s*(?:,|$)')


class PathError(ValueError):
    """A ``result`` path that cannot be parsed, or a field the result does not have."""


@dataclass(frozen=True)
class Step:
    """One step of a path: a field name, then an optional selection (``[col=value, ...]`` or ``[index]``)."""

    name: str
    select: tuple[tuple[str, str], ...] = ()
    index: int | None = None

    @property
    def template(self) -> tuple[str, ...]:
        """The columns selected with ``*`` (one number per row)."""
        return tuple(c for c, v in self.select if v == "*")


@dataclass(frozen=True)
class Path:
    """A parsed ``result`` cell: its steps and the factor applied to the value."""

    text: str
    steps: tuple[Step, ...]
    factor: float = 1.0

    @property
    def template(self) -> tuple[str, ...]:
        return tuple(c for s in self.steps for c in s.template)


@dataclass(frozen=True)
class Missing:
    """No value at the end of a path: ``reason`` says why (``""``: the result gives none)."""

    reason: str = ""


def parse(text: str) -> Path:
    """Parse a ``result`` cell (see the module). ``PathError`` with the text for a malformed one."""
    m = _FACTOR.match(text)
    body, factor = (m.group("path"), float(m.group("factor"))) if m else (text, 1.0)
    steps = []
    for i, part in enumerate(_split_steps(body)):
        step = _STEP.fullmatch(part)
        if not step or not (step.group(1) or (i == 0 and step.group(2) is not None)):
            raise PathError(f"result path {text!r}: cannot read step {i + 1} ({part!r}); expected name or "
                            "name[column=value, ...]")
        name, inner = step.group(1), step.group(2)
        if inner is None:
            steps.append(Step(name))
        elif inner.strip().lstrip("-").isdigit():
            steps.append(Step(name, index=int(inner)))
        else:
            steps.append(Step(name, _selectors(text, inner)))
    if not steps:
        raise PathError(f"result path {text!r} is empty")
    return Path(text, tuple(steps), factor)


def _split_steps(body: str) -> list[str]:
    """``a.b[c=d.e].f`` -> ``["a", "b[c=d.e]", "f"]``: dots inside brackets or quotes do not split."""
    parts, depth, quoted, start = [], 0, False, 0
    for i, ch in enumerate(body):
        if ch == '"' and depth:
            quoted = not quoted
        elif not quoted and ch == "[":
            depth += 1
        elif not quoted and ch == "]":
            depth -= 1
        elif ch == "." and not depth and not quoted:
            parts.append(body[start:i])
            start = i + 1
    return [*parts, body[start:]]


def _selectors(text: str, inner: str) -> tuple[tuple[str, str], ...]:
    out, pos = [], 0
    while pos < len(inner):
        m = _SELECTOR.match(inner, pos)
        if not m or m.end() == pos:
            raise PathError(f"result path {text!r}: cannot read the selection [{inner}]; expected column=value")
        value = m.group(2)
        if value.startswith('"'):
            value = re.sub(r"\\(.)", r"\1", value[1:-1])
        out.append((m.group(1), value))
        pos = m.end()
    return tuple(out)


def _field(obj: Any, name: str, path: Path) -> Any:
    """``obj``'s field ``name``: a key of a mapping, the value of a column of a one-row frame, an attribute."""
    if isinstance(obj, Mapping):
        if name in obj:
            return obj[name]
        raise PathError(f"result path {path.text!r}: no key {name!r} (keys: {sorted(map(str, obj))[:12]})")
    if isinstance(obj, pl.DataFrame):
        if name not in obj.columns:
            raise PathError(f"result path {path.text!r}: no column {name!r} (columns: {obj.columns})")
        if obj.height != 1:
            raise PathError(f"result path {path.text!r}: column {name!r} of a frame of {obj.height} rows; select "
                            "one row with [column=value]")
        return obj[name][0]
    if hasattr(obj, name) and not name.startswith("_"):
        return getattr(obj, name)
    raise PathError(f"result path {path.text!r}: {type(obj).__name__} has no field {name!r}")


def _rows(obj: Any, step: Step, path: Path) -> list[Any]:
    """The items of ``obj`` a selection keeps (each a one-row frame or a record), in order."""
    if isinstance(obj, pl.DataFrame):
        for column, _ in step.select:
            if column not in obj.columns:
                raise PathError(f"result path {path.text!r}: no column {column!r} to select on (columns: "
                                f"{obj.columns})")
        mask = pl.lit(True)
        for column, value in step.select:
            if value != "*":
                mask = mask & (pl.col(column).cast(pl.String) == value)
        kept = obj.filter(mask)
        return [kept.slice(i, 1) for i in range(kept.height)]
    if isinstance(obj, Sequence) and not isinstance(obj, str):
        return [item for item in obj if all(v == "*" or str(_field(item, c, path)) == v for c, v in step.select)]
    raise PathError(f"result path {path.text!r}: {type(obj).__name__} {step.name!r} has no rows to select from")


def _reason(obj: Any) -> str:
    """The ``reason`` a result gives for a value it lacks (a non-empty text field ``reason``), else ``""``."""
    try:
        value = obj["reason"] if isinstance(obj, Mapping) else getattr(obj, "reason", "")
    except (KeyError, TypeError):
        return ""
    return value if isinstance(value, str) else ""


Found = tuple[dict[str, str], Any, Any]


def _walk(obj: Any, steps: Sequence[Step], path: Path, bound: dict[str, str], owner: Any = None) -> Iterator[Found]:
    """Every ``(bound template columns, value, owner)`` at the end of ``steps`` from ``obj``; ``owner`` is the
    object whose field the value is (a note's fields are read from it)."""
    if not steps:
        yield bound, obj, owner
        return
    step, rest = steps[0], steps[1:]
    if obj is None:
        yield bound, Missing(), owner
        return
    value = _field(obj, step.name, path) if step.name else obj
    if step.index is not None:
        try:
            value = value[step.index]
        except (IndexError, TypeError, KeyError):
            yield bound, Missing(_reason(obj)), obj
            return
    if value is None and step.select:  # nothing to select from: no value (the result may say why)
        yield bound, Missing(_reason(obj)), obj
        return
    if not step.select:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            yield bound, Missing(_reason(obj)), obj
            return
        yield from _walk(value, rest, path, bound, obj)
        return
    rows = _rows(value, step, path)
    if not step.template:
        if len(rows) > 1:
            raise PathError(f"result path {path.text!r}: {len(rows)} rows of {step.name!r} match; expected one")
        if not rows:
            what = ", ".join(f"{c} {v}" for c, v in step.select)
            yield bound, Missing(_reason(value) or f"the data have no {what}"), obj
            return
        yield from _walk(rows[0], rest, path, bound, rows[0])
        return
    for row in rows:
        keys = {c: str(_field(row, c, path)) for c in step.template}
        yield from _walk(row, rest, path, {**bound, **keys}, row)


def resolve(root: Any, path: Path) -> tuple[Any, Any]:
    """``(value, owner)`` at ``path`` in ``root``: the value (:class:`Missing` when there is none) and the object
    whose field it is; a template path is an error here."""
    if path.template:
        raise PathError(f"result path {path.text!r} is a template (one number per row): use expand()")
    ((_, value, owner),) = list(_walk(root, path.steps, path, {}, root))
    return _scaled(value, path.factor), owner


def expand(root: Any, path: Path) -> list[Found]:
    """Every ``(template columns -> value, value, owner)`` of a template path, in the frame's order."""
    return [(keys, _scaled(value, path.factor), owner) for keys, value, owner in _walk(root, path.steps, path, {},
                                                                                       root)]


class Context(Mapping[str, Any]):
    """The fields a note's ``{name}`` placeholders read (``str.format_map``): the template columns, then the
    fields of the value's owner, then those of the root."""

    def __init__(self, keys: Mapping[str, str], owner: Any, root: Any) -> None:
        self._keys, self._sources = keys, [s for s in (owner, root) if s is not None]

    def __getitem__(self, name: str) -> Any:
        if name in self._keys:
            return self._keys[name]
        for source in self._sources:
            try:
                return _field(source, name, Path(name, ()))
            except PathError:
                continue
        raise KeyError(name)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)


def _scaled(value: Any, factor: float) -> Any:
    if factor == 1.0 or isinstance(value, (Missing, str, bool)) or value is None:
        return value
    return value * factor
