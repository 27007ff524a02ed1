"""The values a chapter parameter accepts, read from its ``parameters`` cell: checked before any chapter runs.

A chapter declares a parameter with a default and a comment (papermill's ``help``); a numeric parameter states its
range in the comment as ``[lo, hi]`` (``n_agents = 12  # latent-skill agents [2, 200]``; ``_`` and ``,`` allowed in
the numbers). A ``--set NAME=VALUE`` is checked against it (:func:`problem`):

- the kind of value the default has: a whole number for an integer default (``1e999`` or ``2.5`` is refused), a
  finite number for a float default, text for a text default (a ``None`` default takes ``None`` or any value of the
  kind its range states; ``None`` is taken where the default is ``None`` or the comment says what it means);
- the declared range, inclusive;
- for a text parameter whose comment lists its values in quotes (``encoder_precision = "auto"  # "auto" (…),
  "float32", "bfloat16"``: quoted values, notes in parentheses, commas and "or" only, after an optional label), one
  of those values (:func:`allowed_values`).

So a value the chapter cannot use stops the build at once with one line naming the parameter, instead of failing
inside the chapter minutes later.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Mapping
from typing import Any

_NUMBER = r"-?[\d_,]+(?:\.\d+)?"
_RANGE = re.compile(rf"\[\s*({_NUMBER})\s*,\s*({_NUMBER})\s*\]")


def declared_range(help_text: str) -> tuple[float, float] | None:
    """The ``[lo, hi]`` a parameter's comment states, or ``None``."""
    m = _RANGE.search(help_text or "")
    if not m:
        return None
    lo, hi = (float(x.replace("_", "").replace(",", "")) for x in m.groups())
    return lo, hi


_QUOTED = re.compile(r'"([^"]*)"|\'([^\']*)\'')


def allowed_values(help_text: str) -> tuple[str, ...] | None:
    """The values a text parameter's comment enumerates (two or more quoted values and nothing else but notes in
    parentheses, commas, "or" and a leading ``label:``), or ``None`` when it does not enumerate them."""
    text = re.sub(r"\([^)]*\)", "", help_text or "")
    values = tuple(a or b for a, b in _QUOTED.findall(text))
    rest = re.sub(r"^[^\"':]*:", "", _QUOTED.sub("", text).strip())
    return values if len(values) >= 2 and not re.sub(r"[\s,]|\bor\b", "", rest) else None


def _default(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


def problem(name: str, value: Any, spec: Mapping[str, Any]) -> str:
    """Why ``value`` does not suit the parameter ``name`` (``spec``: papermill's inspection of it: ``default`` as
    source text, ``help``); empty when it does."""
    default = _default(str(spec.get("default", "")))
    bounds = declared_range(str(spec.get("help", "")))
    whole = isinstance(default, int) and not isinstance(default, bool)
    if value is None:  # allowed where the default is None or the comment says what None means
        if default is None or "None" in str(spec.get("help", "")):
            return ""
        return f"--set {name}=None: not allowed (default {_shown(default)})"
    if whole or (default is None and bounds is not None and float(bounds[0]).is_integer()):
        if isinstance(value, bool) or not isinstance(value, int):
            return f"--set {name}={_shown(value)}: expected a whole number" + _range_text(bounds)
    elif isinstance(default, float) or (default is None and bounds is not None):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            return f"--set {name}={_shown(value)}: expected a finite number" + _range_text(bounds)
    elif isinstance(default, str) and not isinstance(value, str):
        return f"--set {name}={_shown(value)}: expected text (default {_shown(default)})"
    elif isinstance(default, str) and (allowed := allowed_values(str(spec.get("help", "")))) and value not in allowed:
        return f"--set {name}={_shown(value)}: expected one of {', '.join(map(repr, allowed))}"
    if bounds is not None and isinstance(value, (int, float)) and not bounds[0] <= value <= bounds[1]:
        return f"--set {name}={_shown(value)}: out of range" + _range_text(bounds)
    return ""


def _range_text(bounds: tuple[float, float] | None) -> str:
    if bounds is None:
        return ""
    lo, hi = (f"{int(b):,}" if float(b).is_integer() else f"{b:g}" for b in bounds)
    return f" from {lo} to {hi}"


def check(settings: Mapping[str, Any], declared: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> str:
    """The first reason the ``--set`` values cannot run (a name no notebook of this build declares: a typo would
    otherwise be ignored; then :func:`problems`), or empty."""
    if not settings:
        return ""
    unknown = sorted(set(settings) - set().union(*(set(p) for p in declared.values())))
    if unknown:
        return (f"--set {', '.join(unknown)}: no notebook of this build declares "
                f"{'it' if len(unknown) == 1 else 'them'} in its parameters cell")
    bad = problems(settings, declared)
    return bad[0] if bad else ""


def problems(settings: Mapping[str, Any], declared: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> list[str]:
    """Every ``--set`` value that some notebook declaring it cannot take (``declared``: each notebook's parameters
    by stem, as :func:`bookbuild.kernels.declared_parameters` gives them)."""
    out = []
    for name, value in settings.items():
        for params in declared.values():
            if name in params and (why := problem(name, value, params[name])):
                out.append(why)
                break
    return out
