"""One parser for data-source strings (a leaf module: imports nothing from ``analysis_lib``).

Grammar (the ``data_source`` notebook parameter, ``make book DATA=...``)::

    source   := "sample" | "sample:" N | "hf" | "hf:" REF | PATH
    N        := digits, "_" or "," allowed as separators, > 0      (simulated conversations)
    REF      := a revision (commit, branch or tag), or a file (ending in .parquet, .jsonl or .json) of the pinned
                revision of the Hugging Face dataset

``sample`` is the simulator at its default size; ``hf`` the pinned release on the Hugging Face hub (``hf:REF``
naming another revision or file is not the pinned release: :func:`analysis_lib.search_arena.hub.is_pinned`);
anything else is a path to a file or folder (a path that happens to start with ``sample`` is a path, e.g.
``sample_release.parquet``; a string that starts with ``sample:`` or ``hf:`` never is).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Kind = Literal["sample", "hf", "path"]


@dataclass(frozen=True)
class Source:
    """A parsed data source: ``kind``; ``n`` for ``sample`` (``None``: the default size); ``ref`` for ``hf``
    (``None``: the pinned revision); ``path`` for a path (as given, not resolved)."""

    kind: Kind
    text: str
    n: int | None = None
    ref: str | None = None
    path: Path | None = None

    @property
    def named(self) -> bool:
        """True for ``sample[:N]`` and ``hf[:REF]``: the string itself names the data (``hf:BRANCH`` names a
        revision that can move)."""
        return self.kind != "path"


def parse(source: object) -> Source:
    """Parse ``source`` (see the module grammar); raise ``ValueError`` naming the string when it is malformed."""
    if isinstance(source, Path):
        return Source("path", str(source), path=source)
    if not isinstance(source, str):
        raise ValueError(f"data source {source!r}: expected a string (sample, sample:N, hf, hf:REF or a path)")
    text = source.strip()
    if not text:
        raise ValueError("data source '': expected sample, sample:N, hf, hf:REF or a path")
    if text == "sample":
        return Source("sample", text)
    if text.startswith("sample:"):
        digits = text.split(":", 1)[1].replace("_", "").replace(",", "")
        if not digits.isdigit():
            raise ValueError(f"data source {source!r}: expected 'sample' or 'sample:N' with an integer N")
        if int(digits) <= 0:
            raise ValueError(f"data source {source!r}: N must be positive")
        return Source("sample", text, n=int(digits))
    if text == "hf":
        return Source("hf", text)
    if text.startswith("hf:"):
        ref = text.split(":", 1)[1].strip()
        if not ref:
            raise ValueError(f"data source {source!r}: expected 'hf' or 'hf:REF' with a revision or file")
        return Source("hf", text, ref=ref)
    return Source("path", text, path=Path(text).expanduser())


def sample_size(source: object, default: int) -> int | None:
    """Simulated conversations a source asks for (``default`` for plain ``sample``); ``None`` if not a sample."""
    if not isinstance(source, str):
        return None
    parsed = parse(source) if source.strip() else None
    if parsed is None or parsed.kind != "sample":
        return None
    return parsed.n if parsed.n is not None else default


def is_sample(source: object) -> bool:
    """``sample`` or ``sample:N`` (well formed): the source is the project's simulator."""
    return sample_size(source, 0) is not None


def is_named(source: object) -> bool:
    """``sample[:N]`` or ``hf[:REF]`` (well formed); False for paths and malformed strings."""
    try:
        return parse(source).named
    except ValueError:
        return False
