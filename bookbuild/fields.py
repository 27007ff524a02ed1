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
missing, so the chapter goes on. The runner's door check names the IDs a release will skip
(:func:`skipped_by`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

import polars as pl

from bookbuild import markup
from bookbuild.recorder import Recorder

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
    if not missing:
        return True
    why = reason(missing)
    rec.not_run(analysis_id, SKIPPED_QUANTITY, reason=why)
    try:
        from IPython.display import display  # noqa: PLC0415 - only inside a notebook
    except ImportError:
        return False
    markup.show(f"**Not run:** {why}; the other analyses of this chapter run as usual.")
    display(rec.section(analysis_id))
    return False


def skipped_by(absent: Iterable[str], derived: Iterable[str] = ()) -> dict[str, list[str]]:
    """For each absent field (not derived), the analysis IDs that will not run for want of it."""
    gone = set(absent) - set(derived)
    out: dict[str, list[str]] = {}
    for aid, needs in NEEDS.items():
        for f in needs:
            if f in gone:
                out.setdefault(f, []).append(aid)
    return out


def needs_frame() -> pl.DataFrame:
    """:data:`NEEDS` as a table for the status page: ``field`` and the IDs that need it."""
    per: dict[str, list[str]] = {}
    for aid, needs in NEEDS.items():
        for f in needs:
            per.setdefault(f, []).append(aid)
    return pl.DataFrame({"release field": list(per), "analyses that need it": [", ".join(v) for v in per.values()]})
