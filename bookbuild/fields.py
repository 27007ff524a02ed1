"""Which optional release fields each analysis needs: a release without one skips that analysis, never a chapter.

The Search Arena loader reads any release in the published schema; the fields an earlier export, another arena or a
later release may lack are :data:`analysis_lib.search_arena.loader.OPTIONAL_FIELDS`, and its
:class:`~analysis_lib.search_arena.loader.LoadReport` says which ones a release lacks (``absent``) and which the
loader derived instead (``derived``: the languages, detected offline from the prompt, as the paper labelled them).
:data:`NEEDS` is the one table, shown on the status page, of the fields each analysis ID cannot run without; a
field the loader derives is never missing. In a chapter::

    if fields.runs(rec, "SA-F1", load_report):
        ...  # the section

:func:`runs` records the ID as "not run: the release has no `primary_intent`" (and shows that line) when a field is
missing, so the chapter goes on. Where only some numbers of an ID need a field (:data:`PART_NEEDS`), the chapter
records ``fields.without(aid, result, load_report)``: those numbers not run with that reason, the others as
computed. A field that is present counts, rows or none: no matching row gives 0, never "not run". The runner's
door check names the IDs a release will skip (:func:`skipped_by`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

import polars as pl

from bookbuild import markup
from bookbuild.recorder import NotRun, Recorder

#: The optional release fields each analysis ID needs (IDs that need none are not listed). ``languages`` is never
#: missing (the loader detects it when the release has none); the IDs that read it are listed for the record.
NEEDS: dict[str, tuple[str, ...]] = {
    "SA-F1": ("primary_intent",),
    "SA-F2L": ("languages",),
    "SA-B2": ("primary_intent",),
    "SA-A2": ("timestamp",),
    "SA-A2C": ("citation_format_standardized",),
    "SA-F5": ("primary_intent",),
    "SA-D7": ("primary_intent",),
    "SA-E1": ("primary_intent",),
}
#: Fields some numbers of an analysis need, the others running without them: analysis ID -> the result's field ->
#: the release fields it needs. A field that is present with no matching rows gives 0; only an absent one skips.
PART_NEEDS: dict[str, dict[str, tuple[str, ...]]] = {
    "SA-TA1": {"context_high": ("llm_config",), "user_location": ("llm_config",),
               "standardized_sides_pct": ("citation_format_standardized",)},
}
#: The quantity a skipped analysis is recorded under (its numbers are not known when it does not run).
SKIPPED_QUANTITY = "every number of this analysis"


class Report(Protocol):
    """What :func:`lacking` reads of a load report (``LoadReport.has``)."""

    def has(self, name: str) -> bool: ...


def lacking(analysis_id: str, report: Report) -> list[str]:
    """The fields of :data:`NEEDS` that ``analysis_id`` needs and the release lacks (neither held nor derived)."""
    return [f for f in NEEDS.get(analysis_id, ()) if not report.has(f)]


def reason(missing: Iterable[str]) -> str:
    """``the release has no `primary_intent```: the not-run reason for the missing fields."""
    names = [f"`{f}`" for f in missing]
    return "the release has no " + " or ".join(names)


def runs(rec: Recorder, analysis_id: str, report: Report) -> bool:
    """True when the release has every field ``analysis_id`` needs; else record it as not run with the reason, show
    that line and the ID's status table (in a notebook), and return False."""
    missing = lacking(analysis_id, report)
    return True if not missing else _skip(rec, analysis_id, reason(missing))


def has_models(rec: Recorder, analysis_id: str, battles: pl.DataFrame, models: Iterable[str]) -> bool:
    """True when ``battles`` (``model_a``, ``model_b``) has every one of ``models`` (an analysis of named models, as
    Fig E.3's pair); else record ``analysis_id`` as not run ("the release has no model `sonar-pro-high`"), show
    that line and its status table, and return False."""
    present = set(battles["model_a"].unique()) | set(battles["model_b"].unique())
    missing = [f"`{m}`" for m in models if m not in present]
    return True if not missing else _skip(rec, analysis_id, "the release has no model " + " or ".join(missing))


def _skip(rec: Recorder, analysis_id: str, why: str) -> bool:
    """Record ``analysis_id`` as not run for ``why``; in a notebook, show the line and its status table. False."""
    rec.not_run(analysis_id, SKIPPED_QUANTITY, reason=why)
    try:
        from IPython.display import display  # noqa: PLC0415 - only inside a notebook
    except ImportError:
        return False
    markup.show(f"**Not run:** {why}; the other analyses of this chapter run as usual.")
    display(rec.section(analysis_id))
    return False


def without(analysis_id: str, result: Any, report: Report) -> Any:
    """``result`` (a dataclass or a mapping) as a dict whose fields listed in :data:`PART_NEEDS` for ``analysis_id``
    are :class:`~bookbuild.recorder.NotRun` ("the release has no `llm_config`") where the release lacks a field
    they need; ``result`` itself when it lacks none."""
    gone = {name: lacks for name, needs in PART_NEEDS.get(analysis_id, {}).items()
            if (lacks := [f for f in needs if not report.has(f)])}
    if not gone:
        return result
    values = dict(result) if isinstance(result, Mapping) else {f.name: getattr(result, f.name)
                                                                 for f in dataclasses.fields(result)}
    return values | {name: NotRun(reason(lacks)) for name, lacks in gone.items()}


def _needing() -> dict[str, list[str]]:
    """Release field -> the analysis IDs that need it, whole (:data:`NEEDS`) or in part (:data:`PART_NEEDS`,
    ``SA-TA1 in part``)."""
    per: dict[str, list[str]] = {}
    for aid, needs in NEEDS.items():
        for f in needs:
            per.setdefault(f, []).append(aid)
    for aid, parts in PART_NEEDS.items():
        for f in dict.fromkeys(f for needs in parts.values() for f in needs):
            per.setdefault(f, []).append(f"{aid} in part")
    return per


def skipped_by(absent: Iterable[str], derived: Iterable[str] = ()) -> dict[str, list[str]]:
    """For each absent field (not derived), the analysis IDs that will not run for want of it (``ID in part``: some
    of its numbers)."""
    gone = set(absent) - set(derived)
    return {f: ids for f, ids in _needing().items() if f in gone}


def needs_frame() -> pl.DataFrame:
    """:data:`NEEDS` and :data:`PART_NEEDS` as a table for the status page: ``field`` and the IDs that need it."""
    per = _needing()
    return pl.DataFrame({"release field": list(per), "analyses that need it": [", ".join(v) for v in per.values()]})
