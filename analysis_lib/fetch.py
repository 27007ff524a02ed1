"""Inputs by URL and sha256: the data manifest, a hash-checked download cache, and a local mirror.

``data_manifest.csv`` (repository root) names every input: ``id``, canonical ``url`` pinned to a commit or
revision, ``sha256``, ``bytes``, ``licence``, ``mirror_path`` (its path inside a local mirror), the analyses
that use it and a note. :func:`fetch` returns a local path for an id:

1. If the file is already in the cache with the manifest's hash, use it.
2. Else, if the mirror directory (:func:`mirror_dir`: ``$ANALYSIS_DATA_MIRROR``, else ``../shared/data`` beside the
   repository checkout when that folder exists) holds ``mirror_path`` with the right hash, copy it into the cache (a
   mirror file with the wrong hash is an error, never used).
3. Else download ``url`` with pooch, which checks the hash.

``package:`` URLs name files that ship inside ``analysis_lib`` (the published aggregates); they are checked
against the manifest hash too. An empty ``sha256`` (real releases whose hash is not known here) downloads
without a check and says so in a warning.
"""

from __future__ import annotations

import csv
import hashlib
import logging
import os
import shutil
import warnings
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Literal

from analysis_lib import paths

# pooch imports tqdm.auto, which in a Jupyter kernel without ipywidgets (a notebook's) warns "IProgress not
# found" on stderr, with the installation's path; the plain text bar is what runs there: the warning goes to the log
with warnings.catch_warnings(record=True) as _import_warnings:
    warnings.simplefilter("always")
    import pooch

log = logging.getLogger(__name__)
for _warning in _import_warnings:
    log.info("importing pooch: %s: %s", _warning.category.__name__, _warning.message)

MANIFEST_ENV = "ANALYSIS_DATA_MANIFEST"
CACHE_ENV = "ANALYSIS_DATA_CACHE"
MIRROR_ENV = "ANALYSIS_DATA_MIRROR"
MANIFEST_COLUMNS = ("id", "url", "sha256", "bytes", "licence", "mirror_path", "analyses", "note")


def default_mirror(root: str | Path | None = None) -> Path | None:
    """The mirror used when ``$ANALYSIS_DATA_MIRROR`` is unset: ``<root>/../shared/data`` when it is a folder, else
    None; ``root`` defaults to the repository checkout that holds the package (:func:`analysis_lib.paths.repo_root`;
    None when the package is installed elsewhere). The one default: a notebook run by plain papermill or JupyterLab,
    the book runner (which applies it to its ``--root`` for its kernels) and ``make book`` all find the same data."""
    base = Path(root) if root is not None else paths.repo_root()
    if base is None:
        return None
    mirror = base.parent / "shared" / "data"
    try:
        return mirror if mirror.is_dir() else None
    except OSError:
        return None


def mirror_dir(mirror: str | Path | None = None) -> str | Path | None:
    """The mirror :func:`fetch` reads: ``mirror`` when given, else ``$ANALYSIS_DATA_MIRROR``, else
    :func:`default_mirror` (None: no mirror)."""
    if mirror is not None:
        return mirror
    return os.environ.get(MIRROR_ENV) or default_mirror()


class DataFetchError(RuntimeError):
    """An input could not be obtained or failed its hash check. The message says what to do."""


@dataclass(frozen=True)
class ManifestEntry:
    id: str
    url: str
    sha256: str
    bytes: int | None
    licence: str
    mirror_path: str
    analyses: tuple[str, ...]
    note: str

    @property
    def filename(self) -> str:
        """Cache file name: the id with path separators flattened, keeping the URL's extension."""
        suffix = "".join(Path(self.url.split("?")[0]).suffixes[-1:])
        stem = self.id.replace("/", "__")
        return stem if stem.endswith(suffix) else stem + suffix


def default_manifest_path() -> Path:
    env = os.environ.get(MANIFEST_ENV)
    if env:
        return Path(env)
    root = paths.repo_root()
    return (root if root is not None else paths.package_dir().parent) / "data_manifest.csv"


def default_cache_dir() -> Path:
    """``$ANALYSIS_DATA_CACHE``, else ``data/`` in the cache folder (:func:`analysis_lib.paths.cache_dir`)."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env)
    return paths.cache_dir("data")


def read_manifest(path: str | Path | None = None) -> dict[str, ManifestEntry]:
    """Parse and validate the manifest; errors name the file, row and column."""
    path = Path(path) if path else default_manifest_path()
    if not path.exists():
        raise DataFetchError(f"data manifest not found at {path} (set ${MANIFEST_ENV} to its location)")
    entries: dict[str, ManifestEntry] = {}
    with path.open(newline="") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in MANIFEST_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise DataFetchError(f"{path}: missing column(s) {missing}; expected {list(MANIFEST_COLUMNS)}")
        for line, row in enumerate(reader, start=2):
            sha = (row["sha256"] or "").strip().lower()
            if sha and (len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha)):
                raise DataFetchError(f"{path}, row {line}, column sha256: expected 64 hex digits, got {sha!r}")
            if not row["id"] or not row["url"]:
                raise DataFetchError(f"{path}, row {line}: id and url must not be empty")
            if row["id"] in entries:
                raise DataFetchError(f"{path}, row {line}, column id: duplicate id {row['id']!r}")
            size = row["bytes"].strip()
            entries[row["id"]] = ManifestEntry(
                id=row["id"],
                url=row["url"],
                sha256=sha,
                bytes=int(size) if size else None,
                licence=row["licence"],
                mirror_path=row["mirror_path"],
                analyses=tuple(row["analyses"].split()),
                note=row["note"],
            )
    return entries


def sha256_of(path: str | Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with Path(path).open("rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


#: Where an input comes from, as far as the project can vouch: ``real`` (its sha256 is an entry of the manifest),
#: ``user`` (a file the manifest does not vouch for), ``simulated`` (the project's simulators).
Provenance = Literal["real", "user", "simulated"]

_PUBLIC: dict[tuple[str, int, int, int], str | None] = {}


def public_entry(path: str | Path, manifest: str | Path | None = None) -> str | None:
    """The id of the manifest entry whose sha256 the file at ``path`` has, or ``None`` (a folder, a missing file, or
    a file the manifest does not vouch for). Only a file whose size equals an entry's ``bytes`` is hashed, and each
    (path, size, mtime, ctime) once per process (a rewrite that restores size and mtime still changes ctime)."""
    p = Path(path).expanduser()
    try:
        st = p.stat()
    except OSError:
        return None
    if not p.is_file():
        return None
    key = (str(p.resolve()), st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    if key not in _PUBLIC:
        candidates = [e for e in read_manifest(manifest).values() if e.sha256 and e.bytes == st.st_size]
        sha = sha256_of(p) if candidates else ""
        _PUBLIC[key] = next((e.id for e in candidates if e.sha256 == sha), None)
    return _PUBLIC[key]


def provenance(path: str | Path, manifest: str | Path | None = None) -> Provenance:
    """``real`` when the file's sha256 equals a manifest entry's (:func:`public_entry`), else ``user``: the project
    cannot know what a user's file holds, however it is named."""
    return "real" if public_entry(path, manifest) is not None else "user"


def fetch(
    data_id: str,
    *,
    cache_dir: str | Path | None = None,
    mirror: str | Path | None = None,
    manifest: str | Path | None = None,
) -> Path:
    """Local path of the input ``data_id``, downloading or copying from the mirror as needed."""
    entries = read_manifest(manifest)
    if data_id not in entries:
        raise DataFetchError(f"unknown data id {data_id!r}; the manifest lists: {', '.join(sorted(entries))}")
    entry = entries[data_id]
    if entry.url.startswith("package:"):
        return _packaged(entry)

    cache = Path(cache_dir) if cache_dir else default_cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    target = cache / entry.filename
    if target.exists() and (not entry.sha256 or sha256_of(target) == entry.sha256):
        return target

    folder = mirror_dir(mirror)
    if folder and entry.mirror_path:
        candidate = Path(folder) / entry.mirror_path
        if candidate.exists():
            got = sha256_of(candidate)
            if entry.sha256 and got != entry.sha256:
                raise DataFetchError(
                    f"{data_id}: the mirror copy {candidate} has sha256 {got}, but the manifest expects "
                    f"{entry.sha256}. The mirror is stale or corrupt: replace it from {entry.url}, or unset "
                    f"${MIRROR_ENV} to download."
                )
            # a name of this process's own, then a rename: processes fetching it at once never clash
            paths.atomic_write(target, lambda tmp: shutil.copyfile(candidate, tmp))
            log.info("%s: seeded cache from mirror %s", data_id, candidate)
            return target

    return _download(entry, cache)


def _download(entry: ManifestEntry, cache: Path) -> Path:
    if not entry.sha256:
        warnings.warn(
            f"{entry.id}: the manifest has no sha256 for {entry.url}; the download is not verified. "
            "Add its hash to data_manifest.csv once known.",
            stacklevel=3,
        )
    try:
        path = pooch.retrieve(
            entry.url,
            known_hash=f"sha256:{entry.sha256}" if entry.sha256 else None,
            fname=entry.filename,
            path=cache,
            progressbar=False,
        )
    except ValueError as err:  # pooch reports hash mismatches as ValueError
        raise DataFetchError(
            f"{entry.id}: the file downloaded from {entry.url} does not match the manifest's sha256 "
            f"{entry.sha256}: {err}. The upstream file changed or the manifest is wrong; do not use it."
        ) from err
    except Exception as err:  # network errors come in many types (requests, OSError, ...)
        raise DataFetchError(
            f"{entry.id}: could not download {entry.url} ({type(err).__name__}: {err}). "
            f"Download it by hand and point ${MIRROR_ENV} at a directory holding it as "
            f"{entry.mirror_path or entry.filename!r}, "
            f"or place it in the cache {cache} as {entry.filename!r}."
        ) from err
    return Path(path)


def _packaged(entry: ManifestEntry) -> Path:
    rel = entry.url.removeprefix("package:")
    package, _, inner = rel.partition("/")
    path = Path(str(resources.files(package).joinpath(inner)))
    if not path.exists():
        raise DataFetchError(f"{entry.id}: packaged file {rel} is missing from the installed analysis_lib")
    if entry.sha256 and sha256_of(path) != entry.sha256:
        raise DataFetchError(f"{entry.id}: packaged file {path} does not match the manifest's sha256 {entry.sha256}")
    return path


def published(name: str) -> Path:
    """Path of a published-aggregates file, e.g. ``published("search_arena_table_d1_leaderboard")``."""
    return fetch(f"published/{name}")
