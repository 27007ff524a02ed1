"""Nugget records: one JSONL record per battle side, in castorini ``nuggetizer``'s layout, and a validating loader.

A record (one line of a ``.jsonl`` file) is one response of one battle with the battle's nuggets as nuggetizer's
``assign`` returns them (``dataclasses.asdict`` of ``AssignedScoredNugget``):

.. code-block:: json

    {"qid": "b-17", "side": "a", "winner": "model_a", "query": "who won the 2022 world cup",
     "model": "sonar-pro", "language": "English", "query_categories": ["knowledge-intensive"],
     "nuggets": [{"text": "Argentina won the 2022 World Cup", "importance": "vital", "assignment": "support"}]}

Required: ``qid`` (battle id, string or integer), ``side`` (``a`` / ``b``), ``winner`` (the human vote:
``model_a``, ``model_b``, ``tie``, ``tie (bothbad)``), ``nuggets`` (a list of objects with ``text``,
``importance`` ``vital`` / ``okay`` and ``assignment`` ``support`` / ``partial_support`` / ``not_support``).
Optional: ``query``, ``model``, ``language``, ``query_categories`` (list of NG-Q classes), ``answer_text``
(the response), ``chunks`` (list of strings: the retrieved chunks the battle's nuggets were created from, the
same on both sides; NG-F8 reads those of side a). Both sides of a battle must list the same nuggets in the same
order (they are the battle's nuggets; only the assignment differs).

The per-battle files of the authors' pipeline (github.com/castorini/lmsys_nuggetize: ``question_id``,
``winner``, ``assigned_nuggets_a``, ``assigned_nuggets_b``, ``completion_a``, ``completion_b``) are read too: each
line becomes the two side records.

nuggetizer writes ``"failed"`` as the importance or assignment of nuggets whose LLM reply it could not parse;
such battles are *excluded and counted* (the paper excludes 5 of 5,103), as are battles without a human vote
(``winner`` null or empty), with only one side or with differing nugget lists on the two sides. Anything else
malformed raises :class:`~analysis_lib.reading.DataValidationError` naming the file, line and field and what was
expected (a bad value is quoted by its first characters only); ``model`` is compared after
:func:`~analysis_lib.reading.name_key`. Battle ids are compared as text, so a file that gives the same id once
as a number (``7``) and once as a string (``"7"``) is refused: the two would silently become one battle.
Empty inputs (a file without records, a folder without ``.json`` / ``.jsonl`` files) and inputs that leave no
battle after the exclusions are refused at load; files are read by the one safe reader,
:mod:`analysis_lib.reading` (regular files only; a folder's ``.json`` / ``.jsonl`` files, not recursively; bounded
bytes and lines; UTF-8; no NaN, no whole number beyond 64 bits, no lone surrogate, in any field).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from analysis_lib import paths
from analysis_lib.nuggets.scores import Assignment, Importance
from analysis_lib.reading import Budget, DataValidationError, json_lines, list_files, name_key, quote
from analysis_lib.search_arena.schema import WINNERS

if TYPE_CHECKING:
    from polars._typing import PolarsDataType

FAILED = "failed"
_IMPORTANCE = frozenset(i.value for i in Importance) | {FAILED}
_ASSIGNMENT = frozenset(a.value for a in Assignment) | {FAILED}
_LABELS = {label: label for label in _IMPORTANCE | _ASSIGNMENT}  # one shared string per importance / assignment
#: battle sides collected as Python objects before they become a frame chunk (bounds the loader's peak memory)
CHUNK_SIDES = 2048
#: a collected side's column: the digest of its nugget list (:func:`_list_digest`), dropped by :func:`_exclude`
_DIGEST = "_nugget_list_digest"
NO_VOTE = "battles without a vote (winner null)"
#: the exclusion of a battle with a nuggetizer failure (the paper excludes 5 of 5,103)
FAILED_STEP = "battles with a failed nuggetizer step (importance or assignment 'failed')"
#: the most bytes one load reads, all files together (records with retrieved chunks run to ~100 kB a side)
MAX_BYTES = 8 * 1024**3
RECORD_SUFFIXES = (".json", ".jsonl")

NUGGET_SCHEMA: dict[str, PolarsDataType] = {
    "qid": pl.String, "side": pl.String, "position": pl.Int64, "text": pl.String,
    "importance": pl.String, "assignment": pl.String,
}
SIDE_SCHEMA: dict[str, PolarsDataType] = {
    "qid": pl.String, "side": pl.String, "winner": pl.String, "query": pl.String, "model": pl.String,
    "language": pl.String, "query_categories": pl.List(pl.String), "answer_text": pl.String,
    "chunks": pl.List(pl.String),
}


@dataclass
class NuggetRecords:
    """Nugget records in two tidy frames.

    ``sides``: one row per battle side (columns :data:`SIDE_SCHEMA`); ``nuggets``: one row per (battle, side,
    nugget) with the nugget's ``position`` in the battle's list (columns :data:`NUGGET_SCHEMA`);
    ``excluded``: battles left out, by reason (counts); ``origin``: where the records came from. A load from
    files also says what it read: ``files`` (the files read), ``not_read`` (folder entries left out, with the
    reason) and ``blank_lines`` (blank lines skipped).
    """

    sides: pl.DataFrame
    nuggets: pl.DataFrame
    excluded: dict[str, int] = field(default_factory=dict)
    origin: str = "in-memory records"
    files: tuple[str, ...] = ()
    not_read: tuple[str, ...] = ()
    blank_lines: int = 0

    @property
    def n_battles(self) -> int:
        return self.sides["qid"].n_unique()

    @property
    def n_failed(self) -> int:
        """Battles excluded for a failed nuggetizer step."""
        return self.excluded.get(FAILED_STEP, 0)

    def exclusion_text(self) -> str:
        """The exclusions in words (``"5 with a failed nuggetizer step …, 1 with only one side"``), or ``none``."""
        text = ", ".join(f"{v:,} {k.removeprefix('battles ')}" for k, v in self.excluded.items() if v)
        return text or "none"

    def input_text(self) -> str:
        """What a load from files read, in one sentence for a page (paths shown by
        :func:`analysis_lib.paths.display_path`)."""
        if not self.files:
            return f"{self.origin}."
        shown = ", ".join(paths.display_path(f) for f in self.files[:3]) + (", …" if len(self.files) > 3 else "")
        out = f"read {len(self.files):,} file{'s' * (len(self.files) != 1)} ({shown})"
        if self.not_read:
            out += (f"; not read: {len(self.not_read):,} other entr{'ies' if len(self.not_read) != 1 else 'y'} "
                    f"of the folder ({'; '.join(self.not_read[:3])}{'; …' if len(self.not_read) > 3 else ''})")
        if self.blank_lines:
            out += f"; {self.blank_lines:,} blank line{'s' * (self.blank_lines != 1)} skipped"
        return out + "."

    def battles(self) -> pl.DataFrame:
        """One row per battle: ``qid``, ``winner``, ``query``, ``language``, ``query_categories``, ``model_a``,
        ``model_b``."""
        a = self.sides.filter(pl.col("side") == "a").drop("side", "answer_text", "chunks").rename({"model": "model_a"})
        b = self.sides.filter(pl.col("side") == "b").select("qid", pl.col("model").alias("model_b"))
        return a.join(b, on="qid", how="inner", maintain_order="left")

    def battle_texts(self, *, both_responses: bool = True) -> pl.DataFrame:
        """One row per battle whose records carry retrieved chunks (and, with ``both_responses``, both responses'
        ``answer_text``): ``qid``, ``winner``, ``language``, ``chunks`` (side a's), ``text_a``, ``text_b``; NG-F8
        and NG-NLI read these."""
        a = self.sides.filter(pl.col("side") == "a").select("qid", "winner", "language", "chunks",
                                                            pl.col("answer_text").alias("text_a"))
        b = self.sides.filter(pl.col("side") == "b").select("qid", pl.col("answer_text").alias("text_b"))
        keep = pl.col("chunks").list.len() > 0
        if both_responses:
            keep = keep & pl.col("text_a").is_not_null() & pl.col("text_b").is_not_null()
        return a.join(b, on="qid", maintain_order="left").filter(keep)

    def to_jsonl(self, path: str | Path) -> Path:
        """Write the records as JSONL in the documented layout (one line per side)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        grouped = (self.nuggets.sort("qid", "side", "position")
                   .group_by("qid", "side", maintain_order=True)
                   .agg(pl.struct("text", "importance", "assignment").alias("nuggets")))
        joined = self.sides.join(grouped, on=["qid", "side"], how="left")
        with path.open("w", encoding="utf-8") as fh:
            for row in joined.iter_rows(named=True):
                row["nuggets"] = row["nuggets"] or []
                fh.write(json.dumps({k: v for k, v in row.items() if v is not None}, ensure_ascii=False) + "\n")
        return path


def _fail(origin: str, line: int, fieldname: str, problem: str) -> DataValidationError:
    return DataValidationError(f"{origin}, line {line}, field {fieldname!r}: {problem}")


def _side_records(obj: Mapping[str, Any], origin: str, line: int) -> list[dict[str, Any]]:
    """One record, or the two sides of an lmsys_nuggetize per-battle line."""
    if "assigned_nuggets_a" in obj or "assigned_nuggets_b" in obj:
        out = []
        for side in ("a", "b"):
            key = f"assigned_nuggets_{side}"
            if key not in obj:
                raise _fail(origin, line, key, "missing (per-battle layout needs both sides)")
            qid_field = "question_id" if "question_id" in obj else "qid"
            out.append({"qid": obj.get(qid_field), "side": side, "winner": obj.get("winner"),
                        "query": obj.get("query") or obj.get("prompt"), "model": obj.get(f"model_{side}"),
                        "language": obj.get("language"), "query_categories": obj.get("query_categories"),
                        "answer_text": obj.get(f"completion_{side}"), "nuggets": obj[key],
                        "_fields": {"qid": qid_field, "answer_text": f"completion_{side}", "nuggets": key}})
        return out
    return [dict(obj)]


def _text(value: Any, origin: str, line: int, where: str) -> None:
    """A string field (or null): its type, and text that can be stored (no lone UTF-16 surrogates)."""
    if value is None:
        return
    if not isinstance(value, str):
        raise _fail(origin, line, where, f"expected a string, got {quote(value)}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as err:
        raise _fail(origin, line, where, f"not storable text (a lone surrogate \\u{ord(value[err.start]):04x} at "
                                         f"character {err.start + 1:,})") from None


def _check(rec: Mapping[str, Any], origin: str, line: int) -> None:
    names = rec.get("_fields", {})

    def name(key: str) -> str:
        return names.get(key, key)

    for key in ("qid", "side", "nuggets"):
        if rec.get(key) is None:
            raise _fail(origin, line, name(key), "missing")
    qid = rec["qid"]
    if not isinstance(qid, (str, int)) or isinstance(qid, bool):
        raise _fail(origin, line, name("qid"), f"expected a string or integer battle id, got {quote(qid)}")
    if isinstance(qid, str):
        _text(qid, origin, line, name("qid"))
        if not qid.strip():
            raise _fail(origin, line, name("qid"), "empty battle id")
    if not isinstance(rec["side"], str) or rec["side"] not in ("a", "b"):
        raise _fail(origin, line, "side", f"expected 'a' or 'b', got {quote(rec['side'])}")
    winner = rec.get("winner")
    if winner is not None and winner != "" and (not isinstance(winner, str) or winner not in WINNERS):
        raise _fail(origin, line, "winner", f"expected one of {list(WINNERS)} (or null / empty for no vote), "
                                            f"got {quote(winner)}")
    nuggets = rec["nuggets"]
    if not isinstance(nuggets, list):
        raise _fail(origin, line, name("nuggets"), f"expected a list of nuggets, got {quote(nuggets)}")
    for k, n in enumerate(nuggets):
        where = f"{name('nuggets')}[{k}]"
        if not isinstance(n, Mapping):
            raise _fail(origin, line, where, f"expected an object with text, importance, assignment, got {quote(n)}")
        if not isinstance(n.get("text"), str):
            raise _fail(origin, line, f"{where}.text", f"expected a string, got {quote(n.get('text'))}")
        _text(n["text"], origin, line, f"{where}.text")
        imp, asg = n.get("importance"), n.get("assignment")
        if not isinstance(imp, str) or imp not in _IMPORTANCE:
            raise _fail(origin, line, f"{where}.importance", f"expected vital or okay, got {quote(imp)}")
        if not isinstance(asg, str) or asg not in _ASSIGNMENT:
            raise _fail(origin, line, f"{where}.assignment",
                        f"expected support, partial_support or not_support, got {quote(asg)}")
    for key in ("query_categories", "chunks"):
        items = rec.get(key)
        if items is None:
            continue
        if not (isinstance(items, list) and all(isinstance(c, str) for c in items)):
            raise _fail(origin, line, key, f"expected a list of strings, got {quote(items)}")
        for k, item in enumerate(items):
            _text(item, origin, line, f"{key}[{k}]")
    for key in ("query", "model", "language", "answer_text"):
        _text(rec.get(key), origin, line, name(key))


class _Collector:
    """Validated side records of one load (several files), with the checks that span records: a (battle, side)
    given twice, and a battle id given as a number in one place and as a string in another."""

    def __init__(self) -> None:
        # the columns of the records since the last flush; flushed into frame chunks every CHUNK_SIDES sides, so
        # that the Python objects of at most one chunk are alive beside the frames (the loader's peak memory)
        self.side_cols: dict[str, list[Any]] = {k: [] for k in (*SIDE_SCHEMA, _DIGEST)}
        self.nug: dict[str, list[Any]] = {k: [] for k in NUGGET_SCHEMA}
        self.side_chunks: list[pl.DataFrame] = []
        self.nug_chunks: list[pl.DataFrame] = []
        self.n_sides = 0
        self.seen: dict[tuple[str, str], tuple[str, int]] = {}
        self.id_type: dict[str, tuple[type, tuple[str, int]]] = {}

    @staticmethod
    def _where(first: tuple[str, int], origin: str) -> str:
        return f"on line {first[1]}" if first[0] == origin else f"in {first[0]}, line {first[1]}"

    def add(self, obj: Any, origin: str, line: int) -> None:
        if not isinstance(obj, Mapping):
            raise _fail(origin, line, "<record>", f"expected a JSON object, got {quote(obj)}")
        for rec in _side_records(obj, origin, line):
            _check(rec, origin, line)
            qid, side, here = str(rec["qid"]), rec["side"], (origin, line)
            kind, first = self.id_type.setdefault(qid, (type(rec["qid"]), here))
            if kind is not type(rec["qid"]):
                names = {str: "a string", int: "a number"}
                raise _fail(origin, line, rec.get("_fields", {}).get("qid", "qid"),
                            f"battle id {quote(rec['qid'])} is {names[type(rec['qid'])]} here but {names[kind]} "
                            f"{self._where(first, origin)}; as text both name one battle, so give every battle id "
                            "the same JSON type")
            if (qid, side) in self.seen:
                raise _fail(origin, line, "side", f"battle {quote(qid)} side {side!r} already given "
                                                  f"{self._where(self.seen[(qid, side)], origin)}")
            self.seen[(qid, side)] = here
            cols = self.side_cols
            for key, value in (("qid", qid), ("side", side), ("winner", rec.get("winner") or None)):
                cols[key].append(value)
            model = rec.get("model")
            cols["model"].append(name_key(model) if isinstance(model, str) else model)
            for key in ("query", "language", "query_categories", "answer_text", "chunks"):
                cols[key].append(rec.get(key))
            cols[_DIGEST].append(_list_digest(rec["nuggets"]))
            n = len(rec["nuggets"])
            self.nug["qid"] += [qid] * n
            self.nug["side"] += [side] * n
            self.nug["position"] += range(n)
            self.nug["text"] += [x["text"] for x in rec["nuggets"]]
            for col in ("importance", "assignment"):  # one string object per value, not one per nugget
                self.nug[col] += [_LABELS[x[col]] for x in rec["nuggets"]]
            self.n_sides += 1
            if len(cols["qid"]) >= CHUNK_SIDES:
                self._flush()

    def _flush(self) -> None:
        """Move the collected columns into one frame chunk each (sides, nuggets)."""
        if self.side_cols["qid"]:
            self.side_chunks.append(pl.DataFrame(self.side_cols, schema={**SIDE_SCHEMA, _DIGEST: pl.Binary}))
            self.nug_chunks.append(pl.DataFrame(self.nug, schema=NUGGET_SCHEMA))
            for columns in (self.side_cols, self.nug):
                for values in columns.values():
                    values.clear()

    def frames(self) -> tuple[pl.DataFrame, pl.DataFrame]:
        """The records as two frames (the chunks joined; the collector is left empty)."""
        self._flush()
        sides_chunks, nug_chunks = self.side_chunks, self.nug_chunks
        self.side_chunks, self.nug_chunks = [], []
        if not sides_chunks:
            return pl.DataFrame(schema={**SIDE_SCHEMA, _DIGEST: pl.Binary}), pl.DataFrame(schema=NUGGET_SCHEMA)
        return pl.concat(sides_chunks, rechunk=False), pl.concat(nug_chunks, rechunk=False)


def records_from_dicts(objects: Iterable[Mapping[str, Any]], origin: str = "in-memory records") -> NuggetRecords:
    """Validate side records (dicts in the documented layout) and build :class:`NuggetRecords`.

    ``line`` in error messages is the 1-based position of the object in ``objects``.
    """
    collector = _Collector()
    for line, obj in enumerate(objects, start=1):
        collector.add(obj, origin, line)
    return _exclude(*collector.frames(), origin)


def _list_digest(nuggets: list[Mapping[str, Any]]) -> bytes | None:
    """A side's nugget list as a 16-byte BLAKE2b digest of its (text, importance) pairs in order, each text
    length-prefixed (no two lists share an encoding); ``None`` for an empty list. Two sides list the same nuggets
    exactly when their digests agree (up to a collision of a cryptographic hash)."""
    if not nuggets:
        return None
    h = hashlib.blake2b(digest_size=16)
    for n in nuggets:
        h.update(f"{len(n['text'])}:{n['text']}{n['importance']};".encode())
    return h.digest()


def _differing_digests(sides: pl.DataFrame) -> pl.Series:
    """Battles whose two sides both list nuggets but not the same ones, from the sides' list digests."""
    return (sides.filter(pl.col(_DIGEST).is_not_null()).group_by("qid")
            .agg(pl.col(_DIGEST).n_unique().alias("k")).filter(pl.col("k") > 1)["qid"])


def _differing_lists(nuggets: pl.DataFrame) -> pl.Series:
    """Battles whose two sides both list nuggets but not the same (text, importance) at every position, or not as
    many: side a's nuggets joined to side b's on (battle, position), without building the lists themselves."""
    both = nuggets.group_by("qid").agg(pl.col("side").n_unique().alias("k")).filter(pl.col("k") == 2)["qid"]

    def side(s: str) -> pl.DataFrame:
        return nuggets.filter((pl.col("side") == s) & pl.col("qid").is_in(both.implode())).select(
            "qid", "position", "text", "importance")

    pairs = side("a").join(side("b"), on=["qid", "position"], how="full", coalesce=True, suffix="_b")
    return pairs.filter(pl.col("text").ne_missing(pl.col("text_b"))
                        | pl.col("importance").ne_missing(pl.col("importance_b")))["qid"]


def _exclude(sides: pl.DataFrame, nuggets: pl.DataFrame, origin: str) -> NuggetRecords:
    """Drop (and count) battles that cannot be scored: no vote, one side only, a disagreeing vote, differing nugget
    lists, nuggetizer failures, no nuggets."""
    excluded: dict[str, int] = {}

    def drop(reason: str, bad: pl.Series) -> None:
        nonlocal sides, nuggets
        bad_ids = bad.unique()
        excluded[reason] = int(bad_ids.len())
        if not excluded[reason]:
            return
        sides = sides.filter(~pl.col("qid").is_in(bad_ids.implode()))
        nuggets = nuggets.filter(~pl.col("qid").is_in(bad_ids.implode()))

    drop(NO_VOTE, sides.filter(pl.col("winner").is_null())["qid"])
    per = sides.group_by("qid").agg(pl.len().alias("n"), pl.col("winner").n_unique().alias("votes"))
    drop("battles with only one side", per.filter(pl.col("n") < 2)["qid"])
    drop("battles whose two sides give different winners", per.filter(pl.col("votes") > 1)["qid"])
    differ = _differing_digests(sides) if _DIGEST in sides.columns else _differing_lists(nuggets)
    drop("battles whose sides list different nuggets", differ)
    failed = nuggets.filter((pl.col("importance") == FAILED) | (pl.col("assignment") == FAILED))["qid"]
    drop(FAILED_STEP, failed)
    with_nuggets = nuggets["qid"].unique()
    drop("battles without nuggets", sides.filter(~pl.col("qid").is_in(with_nuggets.implode()))["qid"])
    return NuggetRecords(sides.drop(_DIGEST, strict=False), nuggets, excluded, origin)


def load_nugget_records(path: str | Path, *, max_bytes: int = MAX_BYTES) -> NuggetRecords:
    """Read and validate a JSONL file of nugget records, or a folder of ``.json`` / ``.jsonl`` files (e.g.
    lmsys_nuggetize's ``assignments/``); see the module docstring for the layout and what is excluded, and
    :mod:`analysis_lib.reading` for what is read (regular files only, at most ``max_bytes``).

    Raises :class:`~analysis_lib.reading.DataValidationError` for an input that cannot be used: missing,
    malformed, empty, or with no battle left after the exclusions."""
    try:
        files, not_read = list_files(path, "nugget records (JSON lines)", RECORD_SUFFIXES)
    except DataValidationError as err:
        lmsys = "assignments: a folder" in str(err)  # lmsys_nuggetize's output folder, not its assignments/
        raise DataValidationError(f"{err}{' (give its assignments/ folder)' if lmsys else ''}") from None
    budget = Budget(max_bytes)
    collector = _Collector()
    for file in files:
        before = collector.n_sides
        blank_before = budget.blank_lines
        for line, obj in json_lines(file, budget=budget):
            collector.add(obj, str(file), line)
        if collector.n_sides == before:
            blank = budget.blank_lines - blank_before
            raise DataValidationError(f"{file}: no nugget records (the file is empty"
                                      + (f": {blank:,} blank lines)" if blank else ")"))
    sides, nuggets = collector.frames()
    del collector  # its index of (battle, side) pairs is not needed past here
    records = _exclude(sides, nuggets, str(Path(path).expanduser()))
    del sides, nuggets
    if records.n_battles == 0:
        raise DataValidationError(f"{records.origin}: no battle left to score after the exclusions "
                                  f"({records.exclusion_text()})")
    records.files = tuple(str(f) for f in files)
    records.not_read = tuple(not_read)
    records.blank_lines = budget.blank_lines
    return records


def validate_nugget_records(path: str | Path, *, max_bytes: int = MAX_BYTES) -> str:
    """Check a nugget-records input before a build (the same checks as :func:`load_nugget_records`, which it
    calls); returns a one-line summary, or raises :class:`~analysis_lib.reading.DataValidationError`."""
    records = load_nugget_records(path, max_bytes=max_bytes)
    return (f"{paths.display_path(records.origin)}: {records.n_battles:,} battles; excluded: "
            f"{records.exclusion_text()}; {records.input_text()}")
