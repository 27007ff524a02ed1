"""Nesting depth, measured without parsing or recursion: of a JSON text (:func:`json_depth`, numpy over its few
structural bytes) and of a polars dtype (:func:`dtype_depth`). :mod:`analysis_lib.reading` bounds both before
Python's parser (which recurses) or polars (which crashes on deep nesting) sees a user's file."""

from __future__ import annotations

import numpy as np

#: The bytes that decide JSON nesting: newline, quote, backslash and the four brackets.
_SPECIAL = np.zeros(256, dtype=bool)
_SPECIAL[[0x0A, 0x22, 0x5B, 0x5C, 0x5D, 0x7B, 0x7D]] = True


def json_depth(text: bytes) -> int:
    """Deepest nesting of ``[`` / ``{`` in one JSON text, brackets inside strings not counted (numpy over the few
    structural bytes, no recursion and no parsing: safe for any depth). A quote after an odd run of backslashes
    is text."""
    a = np.frombuffer(text, dtype=np.uint8)
    pos = np.flatnonzero(_SPECIAL[a])
    kind = a[pos]
    n = pos.size
    j = np.arange(n, dtype=np.int64)
    backslash = kind == 0x5C
    touching = np.zeros(n, dtype=bool)  # entry i sits right after entry i - 1 in the text
    touching[1:] = (pos[1:] - pos[:-1]) == 1
    continues = backslash & np.concatenate([[False], backslash[:-1]]) & touching
    run_start = np.maximum.accumulate(np.where(backslash & ~continues, j, -1))
    run = np.where(backslash, j - run_start + 1, 0)
    before = np.zeros(n, dtype=np.int64)  # backslashes right before each entry
    before[1:] = np.where(backslash[:-1] & touching[1:], run[:-1], 0)
    inside = np.cumsum((kind == 0x22) & (before % 2 == 0), dtype=np.int64) % 2 == 1
    opens = ((kind == 0x5B) | (kind == 0x7B)) & ~inside
    closes = ((kind == 0x5D) | (kind == 0x7D)) & ~inside
    depth = np.cumsum(opens.astype(np.int64) - closes, dtype=np.int64)
    return int(depth.max()) if depth.size else 0


def dtype_depth(dtype: object) -> int:
    """Nesting depth of a polars dtype (List and Struct levels; iterative)."""
    deepest = 0
    stack = [(dtype, 0)]
    while stack:
        item, level = stack.pop()
        inner = getattr(item, "inner", None)
        fields = getattr(item, "fields", None)
        if inner is not None:
            stack.append((inner, level + 1))
        if fields:
            stack.extend((f.dtype, level + 1) for f in fields)
        if inner is not None or fields:
            deepest = max(deepest, level + 1)
    return deepest
