"""Compare two folders of Recorder results (``<notebook>.json``, as ``book/_results``) and list every difference.

    python scripts/compare_results.py BEFORE_DIR AFTER_DIR [--rel-tol 0] [--abs-tol 0]

Each results file holds ``{"notebook": ..., "results": [{"analysis_id", "quantity", "ours", "paper", ...}]}``;
rows are matched by ``(analysis_id, quantity)`` (a repeated key is matched by its occurrence number). Every field of
every row is compared: numbers equal within ``--rel-tol`` / ``--abs-tol`` (default: exactly equal; NaN equals NaN),
everything else exactly. Reported: notebooks present in only one folder, rows present on only one side, and each
differing field with both values. Exit status 0 when nothing differs, 1 otherwise, 2 on unreadable input.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter
from pathlib import Path
from typing import Any

Key = tuple[str, str, int]


def load_rows(path: Path) -> dict[Key, dict[str, Any]]:
    """Rows of one results file keyed by ``(analysis_id, quantity, occurrence)``; a bad file raises naming it."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise ValueError(f"{path}: cannot read results JSON ({err})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
        raise ValueError(f"{path}: expected an object with a 'results' list")
    seen: Counter[tuple[str, str]] = Counter()
    out: dict[Key, dict[str, Any]] = {}
    for i, row in enumerate(doc["results"]):
        if not isinstance(row, dict) or "analysis_id" not in row or "quantity" not in row:
            raise ValueError(f"{path}: results[{i}] lacks 'analysis_id' or 'quantity'")
        base = (str(row["analysis_id"]), str(row["quantity"]))
        out[(*base, seen[base])] = row
        seen[base] += 1
    return out


def same(a: Any, b: Any, rel_tol: float, abs_tol: float) -> bool:
    """Equal values: numbers within the tolerances (NaN == NaN, bools compared exactly), else ``==``."""
    numbers = (int, float)
    if isinstance(a, numbers) and isinstance(b, numbers) and not isinstance(a, bool) and not isinstance(b, bool):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=rel_tol, abs_tol=abs_tol)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y, rel_tol, abs_tol) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k], rel_tol, abs_tol) for k in a)
    return bool(a == b)


def compare(before: Path, after: Path, rel_tol: float = 0.0, abs_tol: float = 0.0) -> list[str]:
    """Every difference between the two folders, one line each (empty: identical)."""
    # the runner's own files (``_build.json``, ``_failed.json``) are not results
    files_b = {p.name: p for p in sorted(before.glob("*.json")) if not p.name.startswith("_")}
    files_a = {p.name: p for p in sorted(after.glob("*.json")) if not p.name.startswith("_")}
    diffs = [f"{name}: only in {before}" for name in files_b.keys() - files_a.keys()]
    diffs += [f"{name}: only in {after}" for name in files_a.keys() - files_b.keys()]
    for name in sorted(files_b.keys() & files_a.keys()):
        rows_b, rows_a = load_rows(files_b[name]), load_rows(files_a[name])
        for key in sorted(rows_b.keys() - rows_a.keys()):
            diffs.append(f"{name}: {key[0]} / {key[1]!r}: only before")
        for key in sorted(rows_a.keys() - rows_b.keys()):
            diffs.append(f"{name}: {key[0]} / {key[1]!r}: only after")
        for key in sorted(rows_b.keys() & rows_a.keys()):
            rb, ra = rows_b[key], rows_a[key]
            for field in sorted(rb.keys() | ra.keys()):
                vb, va = rb.get(field, "<missing>"), ra.get(field, "<missing>")
                if not same(vb, va, rel_tol, abs_tol):
                    diffs.append(f"{name}: {key[0]} / {key[1]!r}, field {field!r}: {vb!r} -> {va!r}")
    return diffs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--rel-tol", type=float, default=0.0)
    parser.add_argument("--abs-tol", type=float, default=0.0)
    args = parser.parse_args(argv)
    for folder in (args.before, args.after):
        if not folder.is_dir():
            print(f"{folder}: not a folder", file=sys.stderr)
            return 2
    try:
        diffs = compare(args.before, args.after, args.rel_tol, args.abs_tol)
    except ValueError as err:
        print(err, file=sys.stderr)
        return 2
    n_files = len([p for p in args.before.glob("*.json") if not p.name.startswith("_")])
    if diffs:
        print("\n".join(diffs))
        print(f"{len(diffs)} difference(s) between {args.before} and {args.after}")
        return 1
    print(f"identical: {n_files} results file(s) in {args.before} and {args.after}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
