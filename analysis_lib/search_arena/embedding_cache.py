"""The on-disk cache of text embeddings: one folder per embedding source, ``vectors.npy`` (float32, one row per
text) beside ``index.json`` (the sha256 of each text, in row order), so a rerun embeds nothing it embedded before.

A source is keyed like the LLM layer's chat cache (:func:`source_key`): an endpoint's model by the endpoint's
identity (:func:`analysis_lib.llm.safe_url`: no credentials), the model name and the vector length asked for, so
one server's vectors are never used for another's; the offline encoder (no endpoint) by its model name alone.
``index.json`` also keeps the JSON bytes of one vector in the endpoint's replies (``vector_bytes``), from which
the estimate sizes the requests of a later run (:func:`analysis_lib.llm.client.embed_requests`).

Processes sharing a folder (the notebooks of one build: the prompts of SA-B4, the nuggets of NG-T2) read and write
it under an exclusive lock on ``<folder>/.lock`` (``filelock``). A writer first reads the rows others added since it
last looked, appends its own and replaces both files (each by a rename), so no process's rows are lost and no
reader pairs one writer's vectors with another's index.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from filelock import FileLock

from analysis_lib.cache_keys import digest
from analysis_lib.paths import atomic_write

log = logging.getLogger(__name__)


def source_key(model: str, endpoint: str = "", dimensions: int | None = None) -> str:
    """The folder of one embedding source: the model's name (characters other than letters, digits, ``_.-``
    replaced) for a local encoder (no ``endpoint``, its own dimension); for an endpoint's model, that name, ``@``
    and the first 16 hex digits of :func:`~analysis_lib.cache_keys.digest` of ``{endpoint, model, dimensions}``."""
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", model)
    if not endpoint and dimensions is None:
        return slug
    return f"{slug}@{digest({'endpoint': endpoint, 'model': model, 'dimensions': dimensions})[:16]}"


def text_hash(text: str) -> str:
    """A text's key: :func:`analysis_lib.cache_keys.digest`, the sha256 of its UTF-8 bytes."""
    return digest(text)


class EmbeddingCache:
    """Vectors of one embedding source under ``directory/<source_key>`` (:func:`source_key`): :meth:`lookup` rows
    by text hash, :meth:`add` new ones (see the module docstring for several processes at once)."""

    def __init__(self, directory: str | Path, model: str, endpoint: str = "", dimensions: int | None = None):
        self.dir = Path(directory) / source_key(model, endpoint, dimensions)
        self.model, self.endpoint, self.dimensions = model, endpoint, dimensions
        self._lock = threading.Lock()
        self.keys: dict[str, int] = {}
        self.vectors: np.ndarray | None = None
        #: the JSON bytes of one vector in the endpoint's replies, as last measured (None: not known)
        self.vector_bytes: int | None = None
        self.stamp: tuple[int, int] | None = None
        if (self.dir / "index.json").exists():
            with self._files_locked():
                self._read()

    def _files_locked(self) -> FileLock:
        self.dir.mkdir(parents=True, exist_ok=True)
        return FileLock(self.dir / ".lock")

    def _read(self) -> None:
        """The files' rows (none when they are missing, unreadable or disagree in length: a warning says so)."""
        self.keys, self.vectors = {}, None
        index, vecs = self.dir / "index.json", self.dir / "vectors.npy"
        if index.exists() and vecs.exists():
            try:
                meta = json.loads(index.read_text())
                arr = np.load(vecs)
                if len(meta["keys"]) == arr.shape[0]:
                    self.keys = {k: i for i, k in enumerate(meta["keys"])}
                    self.vectors = arr
                    self.vector_bytes = meta.get("vector_bytes") or self.vector_bytes
                else:
                    log.warning("embedding cache %s is inconsistent; ignoring it", self.dir)
            except (OSError, ValueError, KeyError):
                log.warning("embedding cache %s is unreadable; ignoring it", self.dir)
        self.stamp = self.file_stamp()

    def file_stamp(self) -> tuple[int, int] | None:
        try:
            st = (self.dir / "vectors.npy").stat()
        except OSError:
            return None
        return st.st_mtime_ns, st.st_size

    def lookup(self, hashes: Sequence[str]) -> list[int | None]:
        return [self.keys.get(h) for h in hashes]

    def add(self, hashes: Sequence[str], vectors: np.ndarray, vector_bytes: int | None = None) -> None:
        """Append the rows of ``hashes`` not yet cached (with what other processes added meanwhile) and write;
        ``vector_bytes``: the JSON bytes of one vector in the reply they came in (kept for the estimate)."""
        vectors = np.asarray(vectors, dtype=np.float32)
        with self._lock, self._files_locked():
            if self.file_stamp() != self.stamp:  # another process wrote since: take its rows, keep ours
                mine, mine_vectors = self.keys, self.vectors
                self._read()
                ours = [h for h in mine if h not in self.keys]
                if ours and mine_vectors is not None:
                    self._append(ours, mine_vectors[[mine[h] for h in ours]])
            new = [i for i, h in enumerate(hashes) if h not in self.keys]
            self._append([hashes[i] for i in new], vectors[new])
            vecs = self.vectors
            if vecs is None:  # nothing to keep
                return

            def save(tmp: Path) -> None:
                with tmp.open("wb") as fh:  # np.save on a name would add ".npy" to it
                    np.save(fh, vecs)

            atomic_write(self.dir / "vectors.npy", save)
            ordered = sorted(self.keys, key=self.keys.__getitem__)
            self.vector_bytes = vector_bytes or self.vector_bytes
            meta = {"model": self.model, "dim": int(vecs.shape[1])}
            if self.endpoint or self.dimensions is not None:
                meta |= {"endpoint": self.endpoint, "dimensions": self.dimensions, "vector_bytes": self.vector_bytes}
            index = json.dumps({**meta, "keys": ordered})
            atomic_write(self.dir / "index.json", lambda tmp: tmp.write_text(index))
            self.stamp = self.file_stamp()

    def _append(self, hashes: list[str], vectors: np.ndarray) -> None:
        if not hashes:
            return
        base = 0 if self.vectors is None else self.vectors.shape[0]
        self.vectors = vectors if self.vectors is None else np.vstack([self.vectors, vectors])
        self.keys.update({h: base + i for i, h in enumerate(hashes)})


_OPEN: dict[tuple[str, str], EmbeddingCache] = {}


def open_cache(directory: str | Path, model: str, endpoint: str = "", dimensions: int | None = None) -> EmbeddingCache:
    """The cache of one source (:func:`source_key`) under ``directory``, kept open in this process (BERTopic's
    keyword steps look up a few words per topic) and read again only when another process changed its files."""
    key = (str(Path(directory).resolve()), source_key(model, endpoint, dimensions))
    held = _OPEN.get(key)
    if held is None or held.stamp != held.file_stamp():
        held = _OPEN[key] = EmbeddingCache(directory, model, endpoint, dimensions)
    return held
