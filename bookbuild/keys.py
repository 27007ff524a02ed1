"""What a notebook's executed copy depends on, hashed into one rebuild key.

The key (:func:`notebook_key`) covers the notebook's bytes, the injected parameters, the identity of every
input they name (:func:`input_identity`: a file's or folder's sha256, the string itself for ``sample``,
``sample:N``, ``hf`` and ``hf:REF``), the kernel name, the library's source (:func:`library_hash`), the
installed environment (:func:`bookbuild.identity.environment_key`: a hash of every installed package's version,
Python's and the offline encoder's precision) and, for a chapter that uses the LLM layer, the LLM endpoint's
identity, model and offline mode (:func:`analysis_lib.llm.identity`, never a secret). What the endpoint serves (an
embedding model, another chat model) is not: a key cannot see it without asking the endpoint, so a chapter that fell
back for want of it is rerun with ``--force`` once the endpoint serves it (its page and the runner say so).

A key that matches is not enough for a chapter to be skipped when its last run left work unfinished
(:func:`unfinished`): any number recorded ``not run`` with a reason that starts with ``request budget``,
``deadline`` (``request deadline``, ``run deadline``) or ``endpoint`` (after ``not run:`` and ``the ``), or that
says items are pending in a Batch API batch. Such a chapter reruns on a plain rebuild, without ``--force``, and
resumes from the LLM cache; "no endpoint configured" or "offline" reasons do not count (nothing a rebuild could
finish).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from analysis_lib import paths, sources
from analysis_lib.cache_keys import digest, file_digest

#: The book package, whose modules the chapters import (part of the code a rebuild key covers).
BOOK_DIR = Path(__file__).resolve().parent


#: sha256 hex of a file's bytes (the library's :func:`analysis_lib.cache_keys.file_digest`).
sha256_file = file_digest


def write_json(path: Path, payload: Any) -> None:
    """Write JSON atomically (temp file in the same folder, then rename)."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(payload, indent=1, sort_keys=True))
    tmp.replace(path)


def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def input_identity(value: str) -> str:
    """What identifies an input: the string for named sources and empty values, else ``sha256:<hex>`` of the
    file's bytes (``sha256-tree:`` over a folder's files, by relative name and sha256), hashed on every build:
    never a file's size and mtime, which a rewrite can keep."""
    if not value or sources.is_named(value):
        return value
    path = Path(value)
    if path.is_file():
        return "sha256:" + sha256_file(path)
    files = sorted(p for p in path.rglob("*") if p.is_file())
    digests = [f"{f.relative_to(path).as_posix()}:{sha256_file(f)}" for f in files]
    return "sha256-tree:" + hashlib.sha256("\n".join(digests).encode()).hexdigest()


def library_hash() -> str:
    """sha256 over the code a chapter runs: every ``analysis_lib/**/*.py`` and ``analysis_lib/resources/**`` file,
    and the book plumbing the chapters import (``bookbuild/**/*.py``, ``bookbuild/resources/**``), names and bytes."""
    h = hashlib.sha256()
    for pkg in (paths.package_dir(), BOOK_DIR):
        files = {p for p in pkg.rglob("*.py") if "__pycache__" not in p.parts}
        resources_dir = pkg / "resources"
        if resources_dir.is_dir():
            files |= {p for p in resources_dir.rglob("*") if p.is_file() and "__pycache__" not in p.parts}
        for p in sorted(files):
            h.update(f"{pkg.name}/{p.relative_to(pkg).as_posix()}".encode() + b"\0")
            h.update(hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()


def uses_llm(notebook: Path) -> bool:
    """Whether a notebook uses the LLM layer (its results then depend on the endpoint and model)."""
    return "LLMClient" in notebook.read_text(errors="replace")


def notebook_key(notebook: Path, parameters: dict, inputs: dict[str, str], lib_hash: str, kernel: str,
                 llm_identity: dict | None = None, environment: object = "") -> str:
    """The hash of everything a notebook's executed copy depends on (see the module docstring): the library's
    cache key, :func:`analysis_lib.cache_keys.digest` (sha256 of the canonical JSON) of those parts by name."""
    payload = {
        "environment": environment,
        "notebook": file_digest(notebook),
        "parameters": parameters,
        "inputs": inputs,
        "library": lib_hash,
        "kernel": kernel,
        "llm": llm_identity,
    }
    return digest(payload)


#: Files of the state folder that are the runner's own caches, not what the status page reads.
NOT_BOOK_STATE = frozenset({"validated.json", "inputs.json", "book.json", "identity_cells.json"})


def book_state_digest(results_dir: Path, state_dir: Path, exclude: str = "") -> str:
    """sha256 over what the status page reads: every results file (``_failed.json`` and ``_build.json`` included)
    and every chapter's build state, ``exclude`` (the status page's own) left out."""
    h = hashlib.sha256()
    for folder in (results_dir, state_dir):
        for p in sorted(folder.glob("*.json")):
            if p.stem == exclude or p.name in NOT_BOOK_STATE:
                continue
            h.update(f"{folder.name}/{p.name}".encode() + b"\0")
            h.update(hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()


#: Beginnings of a not-run reason that a rebuild can finish (matched after a leading "not run:" and "the "):
#: the request budget ran out, a deadline passed, the endpoint failed part-way. "no LLM endpoint configured" is
#: not one (a rebuild without an endpoint would change nothing; configuring one changes the key anyway).
UNFINISHED_REASONS = ("request budget", "deadline", "request deadline", "run deadline", "endpoint")
#: A Batch API batch still being processed: a rebuild collects it.
_PENDING_BATCH = re.compile(r"^[\d,]+ items? pending in a batch api batch")


def unfinished_reason(reason: str) -> bool:
    """Whether a not-run reason says the work can be finished by a rebuild (:data:`UNFINISHED_REASONS`, or items
    pending in a Batch API batch); case is ignored."""
    text = " ".join(str(reason).split()).lower()
    text = text.removeprefix("not run:").strip().removeprefix("the ").strip()
    return text.startswith(UNFINISHED_REASONS) or bool(_PENDING_BATCH.match(text))


def unfinished(results: Path) -> list[str]:
    """The numbers of a chapter's results file (``<book>/_results/<stem>.json``) that its last run left
    unfinished: rows with ``status == "not run"`` whose ``reason`` (or, without one, ``note``) satisfies
    :func:`unfinished_reason`, as ``"<analysis_id>: <quantity>"``. A chapter with any is not unchanged: a plain
    rebuild resumes it (its finished LLM replies come from the cache). No file or an unreadable one: none."""
    payload = read_json(results)
    rows = payload.get("results", []) if isinstance(payload, dict) else []
    return [f"{r.get('analysis_id', '?')}: {r.get('quantity', '?')}" for r in rows
            if isinstance(r, dict) and r.get("status") == "not run"
            and unfinished_reason(r.get("reason") or r.get("note") or "")]
