"""The Text Arena deployment of the cross-arena comparison (SA §3.3): read and validate
``text_arena_battles.jsonl`` (or simulate it), one row per voted battle with its oriented ``vote``.

The loader reports what it read, dropped and flagged in a :class:`analysis_lib.search_arena.loader.LoadReport` (the one
report type of the project's loaders): ``n_raw`` = lines read, ``n_rows`` = battles kept, ``dropped`` by reason,
``flags`` = how many battles carried their conversations in each field pair (``conversation_a/b`` or
``messages_a/b``).

Validation (issue #25): every failure is a :class:`~analysis_lib.reading.DataValidationError` with one line
naming the file, the line, the field and what was expected, a bad value quoted by a short prefix. The file is read
by the one safe reader (:mod:`analysis_lib.reading`: a regular, non-empty JSON-lines file; UTF-8, JSON, nesting
depth, one object per line); model names are compared after :func:`~analysis_lib.reading.name_key`; a
``question_id`` (or, without one, an ``id``) seen on an earlier line, a ``turn`` that is not a positive
whole number (NaN, Inf, 1.5, "2") and a file without one voted battle are refused. A battle without ``question_id``
or ``id`` whose models and conversations an earlier one had (:func:`content_key`) is dropped and counted in the
report. :func:`validate_text_arena` is the check the book's runner calls before any notebook runs.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import polars as pl

from analysis_lib import fetch
from analysis_lib.reading import DataValidationError, check_file, json_lines, name_key, quote
from analysis_lib.search_arena.cross_arena.votes import orient_votes
from analysis_lib.search_arena.loader import LoadReport, sample_size
from analysis_lib.search_arena.models import TEXT_ARENA_SEARCH_MODEL
from analysis_lib.search_arena.schema import WINNERS
from analysis_lib.search_arena.simulate.text_arena_battles import N_BATTLES, simulate_text_arena

log = logging.getLogger(__name__)


MAX_TURN = 2**31 - 1
#: Largest Text Arena file read (the deployment's 544 battles are a few MB).
MAX_BYTES = 1024**3


def _turn(value: Any, where: str) -> int | None:
    """``turn`` as a positive whole number (``None`` when absent or null); NaN, Inf, fractions, strings and
    booleans are refused."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise DataValidationError(f"{where}, field 'turn': expected a positive whole number, got {quote(value)}")
    if isinstance(value, float) and not (value == value and abs(value) != float("inf") and value.is_integer()):
        raise DataValidationError(f"{where}, field 'turn': expected a positive whole number, got {value!r}")
    if not 1 <= value <= MAX_TURN:
        raise DataValidationError(
            f"{where}, field 'turn': expected a positive whole number up to {MAX_TURN:,}, got {quote(value)}")
    return int(value)


def _check_conversation(value: Any, where: str) -> str:
    if not isinstance(value, list) or not value:
        raise DataValidationError(
            f"{where}: expected a non-empty list of {{role, content}} messages, got {type(value).__name__}"
        )
    for i, msg in enumerate(value):
        if not isinstance(msg, Mapping) or "role" not in msg or "content" not in msg:
            raise DataValidationError(f"{where}[{i}]: expected a dict with 'role' and 'content', got {quote(msg)}")
    if value[0]["role"] != "user":
        raise DataValidationError(
            f"{where}[0]: the first message must be the user's, got role {quote(value[0]['role'])}")
    content = value[0]["content"]
    if isinstance(content, list):  # multimodal content: keep the text parts
        parts = [p.get("text", "") if isinstance(p, Mapping) else p for p in content]
        content = " ".join(p for p in parts if isinstance(p, str)) if all(isinstance(p, str) for p in parts) else None
    if not isinstance(content, str):  # a number is not read as text
        raise DataValidationError(f"{where}[0], field 'content': expected text (or a list of text parts), got "
                                  f"{quote(value[0]['content'])}")
    return content


def _parse_text_arena_row(row: Any, where: str, search_model: str) -> tuple[dict[str, Any] | None, str, str]:
    """One validated record, or ``None`` with a drop reason; also returns the conversation field used."""
    if not isinstance(row, Mapping):
        raise DataValidationError(f"{where}: not a JSON object (a {type(row).__name__})")
    for name in ("model_a", "model_b"):
        if not isinstance(row.get(name), str) or not name_key(row[name]):
            raise DataValidationError(f"{where}, field {name!r}: missing or not a string")
    if "winner" not in row:
        raise DataValidationError(f"{where}, field 'winner': missing")
    winner = row["winner"]
    if winner is not None and winner not in WINNERS:
        raise DataValidationError(f"{where}, field 'winner': {quote(winner)} is not one of {list(WINNERS)} or null")
    intent_field = "intent" if "intent" in row else "primary_intent" if "primary_intent" in row else None
    if intent_field is None or not isinstance(row[intent_field], str) or not row[intent_field]:
        raise DataValidationError(f"{where}, field 'intent' (or 'primary_intent'): missing or not a string")
    conv = "conversation" if "conversation_a" in row else "messages" if "messages_a" in row else None
    if conv is None:
        raise DataValidationError(
            f"{where}: no conversation field: expected 'conversation_a'/'conversation_b' or 'messages_a'/'messages_b'"
        )
    if f"{conv}_b" not in row:
        raise DataValidationError(f"{where}, field '{conv}_b': missing")
    prompt = _check_conversation(row[f"{conv}_a"], f"{where}, field '{conv}_a'")
    _check_conversation(row[f"{conv}_b"], f"{where}, field '{conv}_b'")
    a, b, search_model = name_key(row["model_a"]), name_key(row["model_b"]), name_key(search_model)
    if (a == search_model) == (b == search_model):
        what = "both sides are" if a == search_model else "neither side is"
        raise DataValidationError(
            f"{where}, fields 'model_a'/'model_b': {what} the search model {search_model!r} ({quote(a)} vs {quote(b)})"
        )
    turn = _turn(row.get("turn"), where)
    if row.get("language") is not None and not isinstance(row["language"], str):
        raise DataValidationError(f"{where}, field 'language': expected a string or null, got {quote(row['language'])}")
    if winner is None:
        return None, "no vote (winner null)", conv
    record = {
        "battle_id": str(row.get("question_id") or row.get("id") or where),
        "model_a": a,
        "model_b": b,
        "winner": winner,
        "search_side": "model_a" if a == search_model else "model_b",
        "non_search_model": b if a == search_model else a,
        "intent": row[intent_field],
        "prompt": prompt,
        "turn": turn,
        "language": row.get("language"),
    }
    return record, "", conv


#: The drop reason of a battle without an id whose :func:`content_key` an earlier battle had.
REPEATED = "repeated battles without question_id/id (same models and conversations; first kept)"


def content_key(row: Mapping[str, Any], conv: str) -> bytes:
    """The documented content key of a battle without ``question_id`` / ``id``: SHA-256 of ``model_a``,
    ``model_b`` and the two conversations (``<conv>_a``, ``<conv>_b``) as canonical JSON (keys sorted). Two such
    battles with one key are one battle read twice (a concatenated or re-exported file): the first is kept, the
    others dropped and counted (:data:`REPEATED`); the vote is not part of the key."""
    parts = [row.get("model_a"), row.get("model_b"), row.get(f"{conv}_a"), row.get(f"{conv}_b")]
    return hashlib.sha256(json.dumps(parts, sort_keys=True, ensure_ascii=False).encode()).digest()


_TEXT_ARENA_SCHEMA = {
    "battle_id": pl.String,
    "model_a": pl.String,
    "model_b": pl.String,
    "winner": pl.String,
    "search_side": pl.String,
    "non_search_model": pl.String,
    "intent": pl.String,
    "prompt": pl.String,
    "turn": pl.Int64,
    "language": pl.String,
}


def load_text_arena_report(
    source: str | Path | Iterable[Mapping[str, Any]],
    *,
    search_model: str = TEXT_ARENA_SEARCH_MODEL,
    seed: int = 0,
) -> tuple[pl.DataFrame, LoadReport]:
    """Read the Text Arena deployment and return (battles, report).

    ``source``: a path to the released ``text_arena_battles.jsonl`` (one JSON object per line), ``"sample"``
    (544 battles, the deployment's size) or ``"sample:N"`` for
    :func:`analysis_lib.search_arena.simulate.simulate_text_arena` (``seed`` applies; the rule is
    :func:`analysis_lib.search_arena.loader.sample_size`, so a file whose name merely starts with "sample", such as
    ``sample_real.jsonl``, is read as a file), or an iterable of row dicts in the same schema. Each row must have
    ``model_a``, ``model_b`` (exactly one of them ``search_model``), ``winner`` (``model_a``, ``model_b``, ``tie``,
    ``tie (bothbad)`` or null), ``intent`` (or ``primary_intent``) and the two conversations as
    ``conversation_a``/``conversation_b`` or ``messages_a``/``messages_b`` (lists of ``{role, content}``, user first). A
    malformed line raises :class:`DataValidationError` naming the file, the line and the field (see the module
    docstring); blank lines are skipped; rows with a null winner are dropped and counted in the report; a
    ``question_id`` repeated on a later line and a source without one voted battle are refused.

    The frame has one row per battle: ``battle_id``, ``model_a``, ``model_b``, ``winner``, ``search_side``,
    ``non_search_model``, ``intent``, ``prompt``, ``turn``, ``language`` and the oriented ``vote``.
    """
    n_sample = sample_size(source, default=N_BATTLES)
    if n_sample is not None:
        rows = simulate_text_arena(n=n_sample, seed=seed).rows
        items: Iterable[tuple[str, Any]] = ((f"sample row {i + 1}", r) for i, r in enumerate(rows))
        label = shown = str(source)
    elif isinstance(source, (str, Path)):
        path = _checked_path(Path(source))
        items = _jsonl_items(path)
        label, shown = path.name, str(path)
    else:
        items = ((f"row {i + 1}", r) for i, r in enumerate(source))
        label = shown = "rows"
    report = LoadReport(source=label)
    records = []
    first_seen: dict[str, str] = {}
    contents: set[bytes] = set()
    for where, row in items:
        report.n_raw += 1
        record, reason, conv = _parse_text_arena_row(row, where, search_model)
        id_field = "question_id" if row.get("question_id") is not None else "id" if row.get("id") is not None else ""
        if id_field:
            battle_id = str(row[id_field])
            if battle_id in first_seen:
                raise DataValidationError(
                    f"{where}, field {id_field!r}: {quote(row[id_field])} already on {first_seen[battle_id]} "
                    "(expected each battle once)")
            first_seen[battle_id] = where.rsplit(", ", 1)[-1]
        else:
            key = content_key(row, conv)
            if key in contents:
                report.dropped[REPEATED] = report.dropped.get(REPEATED, 0) + 1
                continue
            contents.add(key)
        flag = f"conversations read from {conv}_a/{conv}_b"
        report.flags[flag] = report.flags.get(flag, 0) + 1
        if record is None:
            report.dropped[reason] = report.dropped.get(reason, 0) + 1
            continue
        records.append(record)
    if not records:
        raise DataValidationError(
            f"{shown}: holds no voted battle ({report.n_raw} rows, {sum(report.dropped.values())} without a vote); "
            "expected the Text Arena battles with their votes")
    report.n_rows = len(records)
    frame = orient_votes(pl.DataFrame(records, schema=_TEXT_ARENA_SCHEMA))
    return frame, report


WHERE_TO_GET = ("it is data/text_arena_battles.jsonl in github.com/lmarena/search-arena (Git LFS); pass its local "
                "path, or 'sample' for the simulator")


def _checked_path(path: Path) -> Path:
    """``path`` when it is a regular, non-empty JSON-lines file (:func:`~analysis_lib.reading.check_file`); else
    :class:`~analysis_lib.reading.DataValidationError` naming it (a missing file says where to get it)."""
    if not path.exists() and not path.is_symlink():
        raise DataValidationError(f"Text Arena file {path}: not found ({WHERE_TO_GET})")
    return check_file(path, "the Text Arena battles", {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl"},
                      max_bytes=MAX_BYTES)[0]


def _jsonl_items(path: Path) -> Iterable[tuple[str, Any]]:
    """``(where, object)`` per non-blank line of a file :func:`_checked_path` accepted."""
    for lineno, value in json_lines(path):
        yield f"{path}, line {lineno}", value


def validate_text_arena(path: str | Path, *, search_model: str = TEXT_ARENA_SEARCH_MODEL) -> int:
    """The voted battles of a Text Arena file, read and checked in full as :func:`load_text_arena_report` reads it
    (the book's runner calls this before any notebook runs); raises :class:`DataValidationError`."""
    frame, _ = load_text_arena_report(Path(path), search_model=search_model)
    return frame.height


def load_text_arena(source: str | Path | Iterable[Mapping[str, Any]], **kwargs: Any) -> pl.DataFrame:
    """:func:`load_text_arena_report` without the report (which is logged)."""
    frame, report = load_text_arena_report(source, **kwargs)
    log.info("%s", report)
    return frame


def text_arena_kind(source: object) -> str:
    """Data kind of a Text Arena source for the Recorder: ``"simulated"`` for ``sample``/``sample:N`` (as
    :func:`analysis_lib.search_arena.loader.sample_size` reads them); else ``"real"`` for a file whose sha256 is in
    the data manifest and ``"user"`` for any other (:func:`analysis_lib.fetch.provenance`)."""
    if sample_size(source, default=N_BATTLES) is not None:
        return "simulated"
    return fetch.provenance(str(source))

