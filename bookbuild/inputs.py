"""Inputs validated at the door: the release and every user input, read by the library's own loader before any
notebook runs, and described for the build's identity.

:func:`check_all` resolves and validates the data source (``DATA``) and each user input given (``NUGGETS``,
``MATCH_LOGS``, ``ANSWERS``, ``ANSWER_LABELS``, ``ATTRIBUTION``, ``TEXT_ARENA``) and returns their descriptions
(:class:`Described`); a missing, unreadable or invalid input raises :class:`InputError` with one line naming the
option, the file and the loader's message (the runner exits 2). Each input is read by the loader its chapter uses:

======================  =====================================================================  ============
input                   loader                                                                 counts
======================  =====================================================================  ============
``data_source``         :func:`analysis_lib.search_arena.loader.load_battles_report`           conversations
``attribution_source``  :func:`analysis_lib.search_arena.attribution_io.load_attribution`        conversations
``nugget_records``      :func:`analysis_lib.nuggets.records.load_nugget_records`                battles
``match_logs``          :func:`analysis_lib.dr_arena.match_log.validate_match_logs`             rounds
``answer_records``      :func:`analysis_lib.answer_engine.records.load_answer_records`          answer records
``answer_labels``       :func:`analysis_lib.answer_engine.agreement.load_answer_labels`         labels
``text_arena_source``   :func:`analysis_lib.search_arena.cross_arena.text_arena.load_text_arena_report`  battles
======================  =====================================================================  ============

A file must be a regular file (a folder only where the loader reads folders: nugget records, match logs). An input
with no rows is refused. Beyond each loader's own checks, what the chapters rely on is checked here too
(:func:`derived_problem`): a release needs model names of at most :data:`MAX_NAME_CHARS` characters and what the
chapters can compute from, at least :data:`MIN_SAMPLE` conversations, two models with a vote and one decided
battle; a ``sample:N`` outside :data:`MIN_SAMPLE`–:data:`MAX_SAMPLE` is refused. A file's description is its name
(never its folder), sha256 and rows; validated files are remembered in ``<state>/validated.json`` by input, reader
(the file's suffix, which picks the reader), content (sha256, hashed on every build) and library hash, so an
unchanged input is read once and a rewritten or renamed one is read again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from analysis_lib import sources
from analysis_lib.answer_engine import agreement as ae_agreement
from analysis_lib.answer_engine import records as ae_records
from analysis_lib.dr_arena import match_log
from analysis_lib.nuggets import records as ng_records
from analysis_lib.reading import DataValidationError, quote
from analysis_lib.search_arena import attribution_io, hub, loader, release
from analysis_lib.search_arena.cross_arena import text_arena
from bookbuild import fields, keys

#: notebook parameter -> the make variable / option that sets it (for messages)
OPTION = {"data_source": "DATA", "nugget_records": "NUGGETS", "match_logs": "MATCH_LOGS", "answer_records": "ANSWERS",
          "answer_labels": "ANSWER_LABELS", "attribution_source": "ATTRIBUTION", "text_arena_source": "TEXT_ARENA"}
#: inputs whose loader also reads a folder
FOLDERS_ALLOWED = {"nugget_records", "match_logs"}
#: inputs that also take the simulator's names (sample, sample:N)
NAMED_ALLOWED = {"data_source", "attribution_source", "text_arena_source"}


class InputError(ValueError):
    """An input that is missing, not a regular file, unreadable or invalid; the message is one line."""


@dataclass(frozen=True)
class Described:
    """An input as the notebooks get it (``value``: a named source or an absolute path) and its description."""

    value: str
    info: dict[str, Any]


#: ``sample:N`` sizes a build accepts (below 10 conversations a chapter's fit has too few models; above a million the
#: simulator's texts outgrow the machine).
MIN_SAMPLE, MAX_SAMPLE = 10, 1_000_000
#: Longest model name accepted (figures cut longer labels; a 10,000-character name stopped chapter 03).
MAX_NAME_CHARS = match_log.MAX_NAME_CHARS


def derived_problem(tidy: pl.DataFrame) -> str | None:
    """What the chapters need of a loaded release beyond its schema, checked on the loader's tidy frame: model
    names of at most :data:`MAX_NAME_CHARS` characters, at least :data:`MIN_SAMPLE` conversations (as
    ``sample:N``), two models with a vote between them and one decided battle (the fits have nothing to rank
    otherwise). ``None`` when it passes. (Timestamps that are all null or unreadable are an optional field the
    release lacks: the analysis that counts days says it did not run, and :func:`optional_fields_line` names it at
    the door.)"""
    for side in ("a", "b"):
        column = f"raw_model_{side}" if f"raw_model_{side}" in tidy.columns else f"model_{side}"
        if column not in tidy.columns:
            continue
        long = tidy.with_row_index("record", 1).filter(pl.col(column).str.len_chars() > MAX_NAME_CHARS)
        if long.height:
            row = long.row(0, named=True)
            return (f"record {row['record']} (conv_id {quote(row.get('conv_id'))}), field 'model_{side}': "
                    f"a name of {len(row[column]):,} characters {quote(row[column])}; expected at most "
                    f"{MAX_NAME_CHARS}")
    voted = tidy.filter(pl.col("winner").is_not_null() & (pl.col("model_a") != pl.col("model_b")))
    models = pl.concat([voted["model_a"], voted["model_b"]]).n_unique()
    decided = voted.filter(pl.col("winner").is_in(["model_a", "model_b"])).height
    if tidy.height < MIN_SAMPLE or models < 2 or decided == 0:
        return (f"{tidy.height:,} conversation(s), {models} model(s) with a vote, {decided:,} decided battle(s) (not "
                f"a tie); the chapters need at least {MIN_SAMPLE} conversations, two models with a vote and one "
                "decided battle")
    return None


def _release_rows(path: str, seed: int, cache_dir: Path | None) -> tuple[int, str]:
    tidy, _ = loader.load_battles_report(path, seed=seed, cache_dir=cache_dir)
    problem = derived_problem(tidy)
    if problem:
        raise DataValidationError(f"{Path(path).name}, {problem}" if problem.startswith("record ")
                                  else f"{Path(path).name}: {problem}")
    return tidy.height, "conversations"


def _explained(path: Path, exc: BaseException) -> str:
    """The loader's failure as one line, the file named by its name (never its folder)."""
    message = one_line(exc)
    return path.name + message[len(str(path)):] if message.startswith(str(path)) else message


def _loaders(seed: int, cache_dir: Path | None) -> dict[str, Callable[[str], tuple[int, str]]]:
    return {
        "data_source": lambda p: _release_rows(p, seed, cache_dir),
        "attribution_source": lambda p: (attribution_io.load_attribution(p, seed=seed, cache_dir=cache_dir).tidy.height,
                                         "conversations"),
        "nugget_records": lambda p: (ng_records.load_nugget_records(p).n_battles, "battles"),
        "match_logs": lambda p: (match_log.validate_match_logs(p), "rounds"),
        "answer_records": lambda p: (len(ae_records.load_answer_records(p)), "answer records"),
        "answer_labels": lambda p: (ae_agreement.load_answer_labels(p).height, "labels"),
        "text_arena_source": lambda p: (text_arena.load_text_arena_report(p, seed=seed)[0].height, "battles"),
    }


def one_line(text: object, limit: int = 400) -> str:
    s = " ".join(str(text).split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


def resolve(name: str, value: str, root: Path) -> str:
    """A named source as given; else an existing regular file (or folder where allowed), absolute."""
    option = OPTION.get(name, name)
    if name in NAMED_ALLOWED:
        try:
            if sources.parse(value).named:
                return value
        except ValueError as exc:
            raise InputError(f"{option}: {one_line(exc)}") from exc
    path = Path(value).expanduser()
    path = path if path.is_absolute() else (root / path)
    try:
        path = Path(str(path.resolve()))
    except (OSError, RuntimeError) as exc:  # RuntimeError: Python 3.11's "Symlink loop from ..."
        raise InputError(f"{option}: {one_line(repr(value), 120)} cannot be resolved ({one_line(exc, 200)})") from None
    if not path.exists():
        raise InputError(f"{option}: {value!r} does not exist ({path})")
    if path.is_dir():
        if name not in FOLDERS_ALLOWED:
            raise InputError(f"{option}: {path} is a folder; expected a file")
    elif not path.is_file():
        raise InputError(f"{option}: {path} is not a regular file (a device, pipe or socket cannot be hashed and "
                         "read twice)")
    return str(path)


def _named(name: str, value: str, seed: int) -> dict[str, Any]:
    parsed = sources.parse(value)
    if parsed.kind == "sample":
        n = loader.sample_size(value) if name == "data_source" else sources.sample_size(value, 0) or None
        if n is not None and not MIN_SAMPLE <= n <= MAX_SAMPLE:
            raise InputError(f"{OPTION.get(name, name)}: {one_line(value, 60)} asks for {n:,} simulated rows; expected "
                             f"sample:N with N from {MIN_SAMPLE} to {MAX_SAMPLE:,}")
        return {"kind": "simulator", "name": value, "seed": seed, "rows": n, "unit": "conversations",
                "id": f"{value}|seed={seed}"}
    where = hub.target(parsed.ref)  # hf:REF names a revision, or a file of the pinned revision
    other_file = "" if where.filename == release.HF_FILE else f"/{where.filename}"
    return {"kind": "hf", "name": value, "dataset": release.HF_DATASET, "revision": where.revision,
            "file": where.filename, "pinned": where.pinned,
            "id": f"hf:{release.HF_DATASET}@{where.revision}{other_file}"}


def check(name: str, value: str, *, root: Path, state_dir: Path, seed: int, cache_dir: Path | None,
          lib_hash: str) -> Described:
    """Resolve, validate and describe one input (see the module docstring); raises :class:`InputError`."""
    option = OPTION.get(name, name)
    resolved = resolve(name, value, root)
    loaders = _loaders(seed, cache_dir)
    if name in NAMED_ALLOWED and sources.is_named(resolved):
        info = _named(name, resolved, seed)
        if info["kind"] == "hf":  # the pinned release through the hub: read (and cached) now, or refused now
            try:
                info["rows"], info["unit"] = loaders[name](resolved)
            except Exception as exc:  # noqa: BLE001 - any loader failure is a bad input
                raise InputError(f"{option}: {one_line(exc)}") from exc
        return Described(resolved, info)
    identity = keys.input_identity(resolved)
    path = Path(resolved)
    info = {"kind": "folder" if path.is_dir() else "file", "name": path.name, "id": identity}
    if identity.startswith("sha256:"):
        info["sha256"] = identity.removeprefix("sha256:")
    else:
        info["tree_sha256"] = identity.removeprefix("sha256-tree:")
    memo_path = state_dir / "validated.json"
    memo = keys.read_json(memo_path) or {}
    reader = "folder" if path.is_dir() else path.suffix.lower()  # the suffix picks the reader
    memo_key = f"{name}|{reader}|{identity}|{lib_hash}"
    if memo_key in memo:
        info["rows"], info["unit"] = memo[memo_key]
        return Described(resolved, info)
    try:
        rows, unit = loaders[name](resolved)
    except Exception as exc:  # noqa: BLE001 - any loader failure is a bad input
        message = one_line(_explained(path, exc))
        shown = message if (str(path) in message or path.name in message) else f"{path}: {message}"
        raise InputError(f"{option}: {shown}") from exc
    if rows == 0:
        raise InputError(f"{option}: {path}: holds no {unit} (an empty input)")
    info["rows"], info["unit"] = rows, unit
    memo[memo_key] = [rows, unit]
    state_dir.mkdir(parents=True, exist_ok=True)
    keys.write_json(memo_path, memo)
    return Described(resolved, info)


def optional_fields_line(data: Described, *, seed: int = 0, cache_dir: Path | None = None) -> str:
    """One console line for a release file without some optional fields (absent, or null or unreadable in every
    row: the loader's report, read back from its cache): which fields, and which analyses will say "not run" for
    want of them (:data:`bookbuild.fields.NEEDS`, and ``ID in part``: :data:`~bookbuild.fields.PART_NEEDS`); empty
    when it has them all. Only what every chapter needs is
    refused (:data:`analysis_lib.search_arena.release.REQUIRED_COLUMNS`)."""
    if data.info.get("kind") != "file":
        return ""
    _, report = loader.load_battles_report(data.value, seed=seed, cache_dir=cache_dir)
    if not report.absent:
        return ""
    skipped = fields.skipped_by(report.absent, report.derived)
    parts = [f"{f} ({', '.join(skipped[f])})" if f in skipped else
             f"{f} ({'derived: ' + report.derived[f] if f in report.derived else 'no analysis skipped'})"
             for f in report.absent]
    return f"the release lacks optional field(s): {'; '.join(parts)}; those analyses record 'not run', the rest run"


def check_all(data: str, inputs: Mapping[str, str], *, root: Path, state_dir: Path, seed: int,
              cache_dir: Path | None, lib_hash: str) -> tuple[Described, dict[str, Described]]:
    """The data source and the user inputs given (``inputs``: parameter -> value, ``""`` = not given), validated;
    a release without some optional fields is named on the console with the analyses it skips."""
    kw = {"root": root, "state_dir": state_dir, "seed": seed, "cache_dir": cache_dir, "lib_hash": lib_hash}
    described_data = check("data_source", data, **kw)  # type: ignore[arg-type]
    line = optional_fields_line(described_data, seed=seed, cache_dir=cache_dir)
    if line:
        print(line, flush=True)
    given = {name: check(name, value, **kw) for name, value in inputs.items() if value}  # type: ignore[arg-type]
    return described_data, given


def write_for_kernels(path: Path, described: list[Described]) -> None:
    """``{absolute path: description}`` for :func:`bookbuild.banner.describe` in the kernels."""
    keys.write_json(path, {d.value: d.info for d in described})


def default_input() -> dict[str, Any]:
    """The description of a user input that was not given: the chapter runs on its own simulator."""
    return {"kind": "default", "name": "", "id": ""}
