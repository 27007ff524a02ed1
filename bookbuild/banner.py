"""The data banner at the top of a chapter page, and the safe ways to put a user's input names into Markdown.

A banner says which data the numbers on a page come from. Everything in it that comes from a user (a file name,
a folder, a text read from an input) is untrusted: a file named ``ta_<img src=x onerror=alert(1)>.jsonl`` must
show as that name, not as a live ``<img>``. Three rules:

- :func:`md_code` puts any text in an inline code span whose backtick fence is longer than any backtick run in the
  text, so nothing in it can close the span (Markdown renders a code span's content as text, HTML-escaped);
- :func:`sanitize` makes an authored Markdown paragraph (a banner's ``detail``, often built by a library from a
  user's file) inert: outside code spans ``<``, ``>`` and ``&`` become entities and ``[``, ``]``, ``$`` are
  backslash-escaped (no raw HTML, no links or images, no maths); a backtick in a user's name that breaks a span
  only moves text out of code, where it is escaped in turn;
- :func:`scrub` replaces a user's absolute path in a text with its display name (no page shows the build
  machine's folders).

:func:`user_input` names a user's input as the user's file, with its hash and size as the runner recorded them
(:mod:`bookbuild.inputs` writes ``$BOOKBUILD_INPUTS``), never as "real public data": the build cannot know what a
user's file holds.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from analysis_lib import sources
from analysis_lib.search_arena import hub, loader

#: The runner's description of this build's inputs (absolute path -> name, sha256, rows), for the kernels.
INPUTS_ENV = "BOOKBUILD_INPUTS"

SEARCH_ARENA_RERUN = "make book DATA=path/to/search-arena-chat-24k.parquet"

_BACKTICKS = re.compile(r"`+")


def md_code(text: object) -> str:
    """``text`` as a Markdown inline code span that nothing in it can close (newlines folded to spaces)."""
    s = " ".join(str(text).split())
    fence = "`" * (max((len(m) for m in _BACKTICKS.findall(s)), default=0) + 1)
    pad = " " if s.startswith("`") or s.endswith("`") or not s else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def _escape_text(text: str) -> str:
    out = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return out.replace("[", "\\[").replace("]", "\\]").replace("$", "\\$")  # a $ pair would be maths (dollarmath)


def _closing_run(text: str, start: int, n: int) -> int:
    """Where the next backtick run of exactly ``n`` backticks at or after ``start`` begins (-1: none)."""
    for m in _BACKTICKS.finditer(text, start):
        if len(m.group(0)) == n:
            return m.start()
    return -1


def sanitize(markdown: str) -> str:
    """Authored Markdown made inert: outside code spans no raw HTML (``<``, ``>``, ``&`` as entities) and no
    link or image brackets; code spans (rendered as text by Markdown) are kept.

    Code spans are found by CommonMark's rule: a run of n backticks (not backslash-escaped) opens a span that the
    next run of exactly n backticks closes; a run with no closer is literal text. Since every ``<`` outside the
    spans is escaped, no HTML can start before a span, and none starts inside one."""
    out, i, n = [], 0, len(markdown)
    while i < n:
        ch = markdown[i]
        if ch == "\\" and i + 1 < n and markdown[i + 1] in "`\\":
            out.append(markdown[i:i + 2])
            i += 2
        elif ch == "`":
            run = _BACKTICKS.match(markdown, i)
            assert run is not None
            width = len(run.group(0))
            close = _closing_run(markdown, run.end(), width)
            if close < 0:
                out.append(run.group(0))
                i = run.end()
            else:
                out.append(markdown[i:close + width])
                i = close + width
        else:
            out.append(_escape_text(ch))
            i += 1
    return "".join(out)


def display_name(value: str | Path) -> str:
    """How a page names an input: ``sample``, ``hf``... as given, a path by its last component."""
    text = str(value)
    if not text or sources.is_named(text):
        return text
    return Path(text).name or text


def scrub(text: str, values: Iterable[str | Path]) -> str:
    """``text`` with every absolute path in ``values`` (and its resolved form) replaced by its display name."""
    for value in values:
        text_value = str(value)
        if not text_value or not Path(text_value).is_absolute():
            continue
        for form in {text_value, str(Path(text_value).resolve())}:
            text = text.replace(form, display_name(form))
    return text


def recorded_inputs() -> dict[str, dict[str, Any]]:
    """What the runner recorded about this build's inputs (absolute path -> description); empty outside a build."""
    path = os.environ.get(INPUTS_ENV)
    if not path:
        return {}
    try:
        payload = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return {}
    return payload if isinstance(payload, dict) else {}


def describe(value: str | Path) -> dict[str, Any]:
    """A user's input as the runner recorded it (``name``, ``sha256``, ``rows``, ``kind``); outside a build (papermill
    by hand) its name only."""
    text = str(value)
    info = recorded_inputs().get(text) or recorded_inputs().get(str(Path(text).expanduser().resolve()))
    return dict(info) if info else {"name": display_name(text)}


def user_input(value: str | Path, what: str = "file") -> str:
    """Markdown naming a user's input: "the user's file `name` (sha256 1a2b3c4d5e6f…, 24,069 rows)"."""
    info = describe(value)
    facts = []
    if info.get("sha256"):
        facts.append(f"sha256 {str(info['sha256'])[:12]}…")
    if info.get("rows") is not None:
        facts.append(f"{int(info['rows']):,} {info.get('unit', 'rows')}")
    return f"the user's {what} {md_code(info['name'])}" + (f" ({', '.join(facts)})" if facts else "")


def kind_of(source: str | Path) -> str:
    """The banner kind of a data source: ``simulated`` (``sample``, ``sample:N``), ``real`` (``hf``, the pinned
    public release, or a file whose sha256 is in the data manifest), ``user`` (any other file or folder, another
    hub revision: the build cannot know what it holds); :func:`analysis_lib.search_arena.loader.data_kind`. An
    empty source (an input not given) is the chapter's simulator."""
    text = str(source).strip()
    return loader.data_kind(text) if text else "simulated"


def source_line(source: str | Path, what: str = "Battle data") -> str:
    """One sentence naming a data source for a banner: the user's file by name, sha256 and rows; ``hf`` by its
    pinned revision; ``hf:REF`` naming another revision or file by both, as not the pinned release; nothing for
    the simulator (its banner names it)."""
    text = str(source)
    if not text or sources.is_sample(text):
        return ""
    if sources.is_named(text):
        where = hub.target(sources.parse(text).ref)
        if where.pinned:
            return (f"{what}: the pinned public release {md_code(text)} ({md_code(hub.HF_DATASET)}, revision "
                    f"{where.revision[:12]}). ")
        return (f"{what}: {md_code(text)}, {md_code(where.filename)} of {md_code(hub.HF_DATASET)} at revision "
                f"{md_code(where.revision)}: not the project's pinned release, so its numbers count as the user's "
                "data. ")
    return f"{what}: {user_input(text)}. "


def data_banner(
    kind: str,
    detail: str = "",
    *,
    simulator: str = "Search Arena simulator",
    rerun: str = SEARCH_ARENA_RERUN,
    paths: Iterable[str | Path] = (),
) -> str:
    """Markdown banner for the top of a page: says which data the numbers on it come from.

    ``kind``: ``simulated`` (names the ``simulator`` and the command, ``rerun``, that runs the page on real
    inputs), ``user`` (a user's input: the build does not know whether it is the real release), ``published``
    (the papers' aggregates), ``real`` (inputs whose sha256 is in ``data_manifest.csv``: the mirrored files, the
    pinned hub revision; a chapter whose data is a user's file passes ``user``), ``llm`` (an LLM's outputs).
    ``detail`` is sanitised (:func:`sanitize`) after the absolute ``paths`` in it are replaced by their names
    (:func:`scrub`). Rendered by the book as an admonition
    (MyST syntax, enabled in ``_config.yml``).
    """
    body = sanitize(scrub(detail, paths)) if detail else ""
    if kind == "simulated":
        return (
            ":::{admonition} Simulated data\n:class: warning\n"
            f"The numbers on this page come from the project's **{sanitize(simulator)}**, not from the real "
            "data: they show that the analysis runs and what it recovers, not the paper's findings. "
            f"Run {md_code(rerun)} to reproduce the paper.\n"
            + (f"\n{body}\n" if body else "")
            + ":::"
        )
    label = {"real": "the project's pinned public inputs", "user": "the user's input",
             "published": "published aggregates", "llm": "an LLM's outputs",
             "llm-cache": "an LLM's outputs"}.get(kind, sanitize(kind))
    return f":::{{admonition}} Data: {label}\n:class: note\n{body}\n:::"
