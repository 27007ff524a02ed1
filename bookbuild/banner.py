"""The data banner at the top of a chapter page, and the ways to name a user's input in it.

A banner says which data the numbers on a page come from. Everything in it that comes from a user (a file name,
a folder, a text read from an input) is untrusted: a file named ``ta_<img src=x onerror=alert(1)>.jsonl`` or
``x`{download}`/etc/hostname`.parquet`` must show as that name. A banner is therefore HTML made by
:mod:`bookbuild.markup`: its detail, authored Markdown with the names in code spans (:func:`md_code`), is rendered by
CommonMark alone (no roles, directives, maths, raw HTML or links), and :func:`scrub` replaces a user's absolute path
in it by its display name (no page shows the build machine's folders).

:func:`user_input` names a user's input as the user's file, with its hash and size as the runner recorded them
(:mod:`bookbuild.inputs` writes ``$BOOKBUILD_INPUTS``), never as "real public data": the build cannot know what a
user's file holds.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from analysis_lib import paths, sources
from analysis_lib.search_arena import hub, loader
from bookbuild import markup

#: The runner's description of this build's inputs (absolute path -> name, sha256, rows), for the kernels.
INPUTS_ENV = "BOOKBUILD_INPUTS"

SEARCH_ARENA_RERUN = "make book DATA=path/to/search-arena-chat-24k.parquet"

md_code = markup.code_span


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


def load_summary(load_report: loader.LoadReport, root: str | Path | None = None) -> str:
    """The battle data's line of a banner (Markdown, names in code spans): where the battles came from, rows read
    and kept, and every drop or flag with its count (nothing left out silently).

    A file source is shown relative to ``root`` (default: the repository root) when it lies inside it, else by its
    file name, so a page never shows the build machine's absolute paths.
    """
    source = load_report.source
    if Path(source).is_absolute():
        source = paths.display_path(Path(source), root)
    text = f"Battle data: {md_code(source)}: {load_report.n_raw:,} rows read, {load_report.n_rows:,} kept."
    dropped = [f"{v:,} {k}" for k, v in load_report.dropped.items() if v]
    flagged = [f"{v:,} {k}" for k, v in load_report.flags.items() if v]
    if dropped:
        text += f" Dropped: {'; '.join(dropped)}."
    if flagged:
        text += f" Flagged (kept, counted): {'; '.join(flagged)}."
    if load_report.unmapped_models:
        text += (" Model ids kept as-is (not in `resources/model_names.csv`): "
                 f"{', '.join(md_code(m) for m in load_report.unmapped_models)}.")
    return text


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
    scope: str = "",
) -> markup.Html:
    """The banner for the top of a page (HTML, :func:`bookbuild.markup.admonition`): says which data the numbers on
    it come from.

    ``kind``: ``simulated`` (names the ``simulator`` and the command, ``rerun``, that runs the page on real
    inputs; ``scope``, authored Markdown, names the sections it concerns where the page mixes data, "the match-log
    sections (DR-S, DR-T6)": without it, the numbers marked simulated, as each section's badge says), ``user`` (a
    user's input: the build does not know whether it is the real release), ``published`` (the papers' aggregates),
    ``real`` (inputs whose sha256 is in ``data_manifest.csv``: the mirrored files, the pinned hub revision; a chapter
    whose data is a user's file passes ``user``), ``llm`` (an LLM's outputs).
    ``detail`` (authored Markdown, names in code spans) is shown after the absolute ``paths`` in it are replaced by
    their names (:func:`scrub`).
    """
    body = scrub(detail, paths) if detail else ""
    if kind == "simulated":
        which = (f"The numbers of {scope} come" if scope
                 else "The numbers marked *simulated* on this page (each section's badge says which) come")
        return markup.admonition(
            "Simulated data",
            f"{which} from the project's **{simulator}**, not from the real data: they show that the analysis runs "
            f"and what it recovers, not the paper's findings. Run {md_code(rerun)} to reproduce the paper"
            + (". The page's other sections ran on the data their own banners name." if scope else "."),
            body, kind="warning")
    label = {"real": "the project's pinned public inputs", "user": "the user's input",
             "published": "published aggregates", "llm": "an LLM's outputs",
             "llm-cache": "an LLM's outputs"}.get(kind, kind)
    return markup.admonition(f"Data: {label}", body, kind="note")
