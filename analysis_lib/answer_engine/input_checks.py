"""Checks of a user's answer-engine inputs that a build can run before any notebook: each reads and validates one
file completely (the same readers :func:`.loader.load_answers` uses) and returns a one-line summary, or raises
:class:`~analysis_lib.reading.DataValidationError` naming the file, the record or line, the field and what was expected.

- :func:`validate_answers`: answer records (``make book ANSWERS=…``, the ``answer_records`` parameter), and the
  user's support judgements beside them when there are;
- :func:`validate_labels`: human labels (``ANSWER_LABELS=…``, ``answer_labels``);
- :func:`validate_support_results`: a support-results JSONL on its own.

Nothing is sent to an LLM and nothing is written.
"""

from __future__ import annotations

from pathlib import Path

from .agreement import MAX_LABELS_BYTES, read_label_rows
from .loader import sibling_support_path
from .records import MAX_ANSWERS_BYTES, MAX_SUPPORT_BYTES, load_answer_records, load_support_results


def validate_support_results(path: str | Path, limit: int = MAX_SUPPORT_BYTES) -> str:
    """Validate a support-results JSONL; ``"<file>: N support judgements (K pairs)"``."""
    frame = load_support_results(path, limit)
    return f"{Path(path).name}: {int(frame['n_lines'].sum()):,} support judgements ({frame.height:,} pairs)"


def validate_answers(path: str | Path, limit: int = MAX_ANSWERS_BYTES) -> str:
    """Validate an answer-records JSON file and, when it exists as a regular file, the user's support file
    beside it (``<name>_support_results.jsonl``); returns a summary of records, engines and judging state."""
    records = load_answer_records(path, limit)
    engines = sorted({r.engine for r in records})
    judged = sum(r.statements is not None and r.confidence is not None for r in records)
    line = (f"{Path(path).name}: {len(records):,} answer records from {len(engines)} engine(s) "
            f"({', '.join(engines)}); {judged:,} with statements and confidence, {len(records) - judged:,} to judge")
    sibling = sibling_support_path(path)
    if sibling.is_file():
        line += "; " + validate_support_results(sibling)
    return line


def validate_labels(path: str | Path, limit: int = MAX_LABELS_BYTES) -> str:
    """Validate a human-labels CSV (``task, item_id, human``); returns the rows per task."""
    rows = read_label_rows(path, limit)
    per_task = {t: sum(r[0] == t for r in rows) for t in dict.fromkeys(r[0] for r in rows)}
    return f"{Path(path).name}: {len(rows):,} label rows (" + ", ".join(f"{t} {n:,}" for t, n in per_task.items()) + ")"
