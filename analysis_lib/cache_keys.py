"""The one way a cache turns what its result depends on into a key: :func:`digest`.

``digest(value)`` is the sha256 (hex, 64 characters) of the value's canonical bytes:

- a ``str``: its UTF-8 bytes (a text is its own canonical form);
- anything else JSON holds (dict, list or tuple, number, bool, None, nested): its canonical JSON
  (:func:`canonical_json`: keys sorted, no spaces, non-ASCII characters kept as they are, UTF-8).

So a dict's parts are told apart by name, in any order, and a list's parts by position: ``digest([a, b])`` and
``digest([b, a])`` differ. Each cache keys one shape of value (a text, or a dict of named parts), so a text and a
JSON value with the same bytes never meet in one cache. A value JSON cannot hold (a path, a set, an object) is a
``TypeError`` naming its type: a cache states what identifies its inputs (a file by :func:`file_digest`, by
its path, size and mtime, ...).

The four caches that use it, each with the bytes it had before this module (so existing entries still hit),
except where the key's own inputs changed with it:

- the LLM records (:func:`analysis_lib.llm.records.request_key`): ``digest({model, messages, params[, endpoint]})``;
- the embeddings (:func:`analysis_lib.search_arena.embedding_cache.text_hash`): ``digest(text)``;
- the release loader (``analysis_lib.search_arena.loader``): ``digest({source, match, code})[:24]``, where
  ``code`` is the digest of the reader's files by name; keyed before as a "|"-joined string, so an old file is a
  miss (never a wrong hit: no JSON text is such a string), and the loader's own bytes are part of the key anyway;
- a build's rebuild keys of its notebooks: ``digest({notebook, parameters, inputs, ...})``, hashed before with
  ``json.dumps``' default spaced separators: an old key is a miss and is computed once more.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any


def canonical_json(value: Any) -> str:
    """JSON with sorted keys, no spaces and non-ASCII characters kept (``ensure_ascii=False``): equal values (dicts
    in any key order, tuples as lists) give equal text."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def digest(value: Any) -> str:
    """sha256 hex of ``value``'s canonical bytes: a ``str``'s UTF-8 bytes, else :func:`canonical_json`'s (module
    docstring)."""
    text = value if isinstance(value, str) else canonical_json(value)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def file_digest(path: str | Path) -> str:
    """sha256 hex of a file's bytes, read in 1 MiB chunks."""
    h = hashlib.sha256()
    with Path(path).open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
