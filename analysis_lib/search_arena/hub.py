"""The Search Arena release on the Hugging Face hub: ``data_source="hf"`` and ``"hf:REF"``.

``hf`` is the pinned file :data:`HF_FILE` of :data:`HF_DATASET` at the pinned commit :data:`HF_REVISION`; ``hf:REF``
is another revision (a commit, branch or tag) of that file, or, when ``REF`` ends in ``.parquet`` / ``.jsonl`` /
``.json``, another file of the pinned revision (:func:`target`).

Reading (:func:`read`) takes three steps:

1. ``huggingface_hub.hf_hub_download`` finds the file in the hub cache (``$HF_HUB_CACHE``, default
   ``$HF_HOME/hub``), laid out as ``datasets--lmarena-ai--search-arena-24k/{refs,blobs,snapshots/<commit>/<file>}``.
   Online it downloads the file there first; with ``HF_HUB_OFFLINE=1`` it only looks there (a branch or tag is
   resolved through ``refs/``). ``datasets.load_dataset(HF_DATASET, ...)`` itself cannot do this offline: it asks
   the hub for the dataset card first and, offline, only reuses a dataset it prepared online before.
2. The file is checked against the hub's own hash: the cache names a Git LFS file's blob by its sha256, so the
   file's sha256 must equal its blob's name (a damaged or partial cache is refused, naming the blob).
3. ``datasets.load_dataset`` reads it with its ``parquet`` (or ``json``) builder, only the columns asked for, into
   its Arrow cache (``$HF_DATASETS_CACHE``), and the Arrow table becomes a polars frame.

Which revision is "the project's pinned public release" (:func:`is_pinned`) is decided here: only the pinned file
at the pinned commit. Another revision or file is not in the project's manifest, so the book treats it as user data.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import polars as pl

from analysis_lib import sources
from analysis_lib.extras import require
from analysis_lib.fetch import sha256_of
from analysis_lib.reading import DataValidationError, check_file, check_json_lines, parquet_columns, quote
from analysis_lib.search_arena.schema import MAX_RELEASE_BYTES, RELEASE_FORMATS

log = logging.getLogger(__name__)

HF_DATASET = "lmarena-ai/search-arena-24k"
HF_REVISION = "fac8dcf86146c8773ef020095c5694c9b2bc98d7"
HF_FILE = "data/search-arena-chat-24k.parquet"

#: Suffixes that make ``hf:REF`` a file of the pinned revision rather than a revision.
FILE_SUFFIXES = (".parquet", ".jsonl", ".json")
_SHA256 = re.compile(r"[0-9a-f]{64}")


class HubUnavailable(RuntimeError):
    """The file could not be found in the hub cache (offline) or downloaded from the hub (online)."""


@dataclass(frozen=True)
class HubTarget:
    """One file of :data:`HF_DATASET` at one revision."""

    revision: str
    filename: str

    @property
    def pinned(self) -> bool:
        """The pinned file at the pinned commit (the commit's full 40 hex digits, any case)."""
        return self.revision.lower() == HF_REVISION and self.filename == HF_FILE

    @property
    def label(self) -> str:
        """``lmarena-ai/search-arena-24k@fac8dcf8`` for the pinned release; the revision in full and the file
        when either differs from the pinned ones."""
        if self.pinned:
            return f"{HF_DATASET}@{HF_REVISION[:8]}"
        where = "" if self.filename == HF_FILE else f"/{self.filename}"
        return f"{HF_DATASET}{where}@{self.revision}"


def target(ref: str | None = None) -> HubTarget:
    """The revision and file ``hf[:REF]`` names: the pinned ones for ``None``; ``REF`` ending in a release suffix
    (:data:`FILE_SUFFIXES`) is a file of the pinned revision, any other ``REF`` a revision of :data:`HF_FILE`."""
    if not ref:
        return HubTarget(HF_REVISION, HF_FILE)
    if ref.lower().endswith(FILE_SUFFIXES):
        return HubTarget(HF_REVISION, ref)
    return HubTarget(ref, HF_FILE)


def is_pinned(source: object) -> bool:
    """``hf``, or ``hf:REF`` naming the pinned commit or the pinned file: the project's pinned public release.
    False for any other source (another revision or file of the dataset, a path, the simulator, a malformed
    string)."""
    try:
        parsed = sources.parse(source)
    except ValueError:
        return False
    return parsed.kind == "hf" and target(parsed.ref).pinned


@contextmanager
def _quiet(*modules: Any) -> Iterator[None]:
    """No progress bars from ``datasets`` / ``huggingface_hub`` (a notebook's kernel would print them into the
    page); each module's setting is put back afterwards."""
    off = [m for m in modules if not m.are_progress_bars_disabled()]
    for m in off:
        m.disable_progress_bars()
    try:
        yield
    finally:
        for m in off:
            m.enable_progress_bars()


def hub_file(where: HubTarget) -> Path:
    """The file's path in the hub cache (a ``snapshots/<commit>/<file>`` link to its blob), downloaded there first
    when online. Raises :class:`HubUnavailable` naming the dataset, revision and file, and what to do."""
    purpose = "the 'hf' data source"
    hub = require("huggingface_hub", "hf", purpose=purpose)
    utils = require("huggingface_hub.utils", "hf", purpose=purpose)
    constants = require("huggingface_hub.constants", "hf", purpose=purpose)
    named = f"{HF_DATASET} at revision {where.revision}, file {where.filename}"
    instead = f"download {where.filename} by hand and pass its path instead"
    try:
        with _quiet(utils):
            return Path(hub.hf_hub_download(HF_DATASET, where.filename, repo_type="dataset",
                                            revision=where.revision))
    except utils.LocalEntryNotFoundError:
        if constants.HF_HUB_OFFLINE:
            raise HubUnavailable(
                f"{named}: not in the Hugging Face hub cache {constants.HF_HUB_CACHE} and HF_HUB_OFFLINE is set "
                f"(read it once online into that cache, point HF_HUB_CACHE or HF_HOME at a cache that holds it, "
                f"or {instead})") from None
        raise HubUnavailable(f"{named}: the Hugging Face hub could not be reached and the file is not in the cache "
                             f"{constants.HF_HUB_CACHE} ({instead})") from None
    except utils.RevisionNotFoundError:
        raise HubUnavailable(f"{HF_DATASET} has no revision {quote(where.revision)} on the Hugging Face hub") from None
    except utils.EntryNotFoundError:
        raise HubUnavailable(f"{named}: the revision has no such file") from None
    except utils.RepositoryNotFoundError:
        raise HubUnavailable(f"{HF_DATASET} is not on the Hugging Face hub (or not readable with this token)") from None
    except Exception as err:  # noqa: BLE001 - network and HTTP errors of any kind: one message
        raise HubUnavailable(f"could not download {named} from the Hugging Face hub "
                             f"({type(err).__name__}: {quote(err, 200)}); {instead}") from err


def blob_name(path: Path) -> str | None:
    """The name of the blob a snapshot file links to (``snapshots/<commit>/<file>`` -> ``../../blobs/<etag>``): the
    hub's etag, which for a Git LFS file is the sha256 of its content. ``None`` when the file is not such a link (a
    cache made without symbolic links holds copies). Only this one link is read: the blob may itself link on to a
    store shared between repositories, whose entries are named otherwise."""
    if not path.is_symlink():
        return None
    linked = Path(os.readlink(path))
    return linked.name if linked.parent.name == "blobs" else None


def check_blob(path: Path) -> None:
    """Refuse a cached file whose content is not what the hub recorded: sha256(file) must equal its blob's name
    (:func:`blob_name`) when that name is a sha256. A blob named otherwise (a small file kept in Git itself, named
    by its Git hash) or a copy outside ``blobs/`` is not checked, and the log says so."""
    name = blob_name(path)
    if name is None or not _SHA256.fullmatch(name):
        log.info("%s: its blob (%s) is not named by a sha256; content not checked", path, name or "no link")
        return
    got = sha256_of(path)
    if got != name:
        raise DataValidationError(
            f"{path}: sha256 {got[:12]}… differs from the hub's {name[:12]}… (a damaged or partial Hugging Face "
            f"cache: delete {os.path.normpath(path.parent / os.readlink(path))} and read again)")


def read(
    ref: str | None = None, columns: Collection[str] | None = None, *, max_bytes: int = MAX_RELEASE_BYTES
) -> pl.DataFrame:
    """The release ``hf[:REF]`` names, through ``datasets`` (module docstring): only ``columns`` of it (default:
    all). The cached file must pass :func:`~analysis_lib.reading.check_file` (a regular
    file of at most ``max_bytes``) and :func:`check_blob`; a parquet file's columns are checked for nesting depth
    before any is read (as for a path). Raises :class:`HubUnavailable` or :class:`DataValidationError`."""
    where = target(ref)
    local = hub_file(where)
    path, fmt = check_file(local, "the pinned Search Arena release", RELEASE_FORMATS, max_bytes=max_bytes)
    check_blob(path)
    datasets = require("datasets", "hf", purpose="the 'hf' data source")
    options: dict[str, Any] = {}
    if fmt == "parquet":
        options["columns"] = list(parquet_columns(path, lambda c: columns is None or c in columns))
    else:
        check_json_lines(path, "the pinned Search Arena release")
    log.info("reading %s (%s) through datasets", where.label, path)
    with _quiet(datasets):
        ds = datasets.load_dataset("parquet" if fmt == "parquet" else "json", data_files=[str(path)],
                                   split="train", **options)
    frame = cast(pl.DataFrame, pl.from_arrow(ds.data.table))  # an Arrow table gives a frame
    return frame if columns is None else frame.select([c for c in frame.columns if c in columns])
