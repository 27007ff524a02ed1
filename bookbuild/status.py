"""The reproduction-status table: one row per analysis ID of the catalogue, with this build's numbers.

The catalogue (:mod:`bookbuild.catalogue`) lists every analysis in the source papers (four studies, NG in two
versions). A build records
its numbers with :class:`bookbuild.recorder.Recorder` (one JSON file per notebook under ``results_dir``);
:func:`load_build` reads them and :func:`status_table` joins the two.

Each recorded number has an evidence class (``real``, ``published``, ``user``, ``llm``, ``checked``,
``transcribed``, ``simulated``, or ``none``: a worked example that needs no data, or a number that did not run;
:mod:`bookbuild.recorder`) and a status (``match``, ``differs``, ``inconsistent``, ``assumption``, ``simulated``,
``computed``, ``not run``). An ID's row counts its numbers by evidence and status, so what ran on real or published
data and what on a user's file, an LLM or the simulator are shown apart (``published: 30 match · 1 computed;
simulated: 2``), and gives one **verdict** (:func:`verdict`). The rule, stated on the status page too: **an ID is
reproduced only when its own numbers are computed from real or published data and match**; checks of the paper,
transcriptions, a user's data and an LLM's output never make it so.

1. Its numbers on real or published data decide, when it has any besides checks of the paper against itself
   (``inconsistent`` numbers alone do not make an ID "run"): ``differs`` if one of them differs from the paper
   (ours vs the paper), else ``assumption`` if one differs at an assumption the paper does not publish, else
   ``reproduced`` if one matches, else ``computed`` (no paper number to compare with); but ``partly simulated``
   instead of ``reproduced`` or ``computed`` when some of its numbers ran only on the simulator (SA Table 1: the
   benchmarks' rows are real, the Search Arena row simulated). The verdict's *basis* says which data: ``real``,
   ``published`` or both. Where the paper contradicts itself (an ``inconsistent``
   number: its text vs its figure, a mistyped list) the verdict says so beside it (``reproduced · paper
   inconsistent (text vs figure)``): ours agrees with one side of the paper, and nothing more can match.
2. Else, numbers on a user's data: verdict ``user data`` (basis ``user``): the analysis ran on data the build
   cannot vouch for; its numbers stand beside the paper's, and the chapter says how they compare.
3. Else an LLM's output: ``LLM output`` (basis ``llm``), the model named in the row.
4. Else ``simulated``, when the simulator ran: the analysis runs; it does not reproduce the paper's finding.
5. Else ``checked`` or ``transcribed``, when only checks of the paper (a published p that follows from a
   published D) or transcriptions ran.
6. Else ``paper inconsistent`` when only checks of the paper against itself ran (NG-F6: 838 vs 817), whatever did
   not run beside them.
7. Else ``not run``, when some number could not run (no endpoint, no data, a field the release lacks), with the
   reason; else, for worked examples that need no data, ``reproduced`` / ``computed`` on basis ``no data``.

Simulated and not-run numbers beside a verdict on real or published data are counted in the row, not hidden.
``not yet`` when no notebook recorded anything for the ID; an ID whose chapter failed in this build
(``<results_dir>/_failed.json``, written by the runner) reads ``failed``: its partial numbers are not shown, and
nothing links to the failed page. ``assumption`` and the paper's inconsistency carry their reason in a word (the
paper-values row's ``discrepancy``), ``not run`` the reason its numbers did not run.

The page (:mod:`bookbuild.status_page`) shows one row per ID: its verdict, its counts by evidence with the numbers
folded under them, and a link, named by the chapter's title, to the section that computes it
(``03_preferences.html#sa-d5``, see :mod:`bookbuild.navigation`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import polars as pl

from bookbuild import navigation
from bookbuild.catalogue import PROJECT_CHECKS
from bookbuild.evidence import STATUS_LABEL, Result
from bookbuild.navigation import Chapter
from bookbuild.section_tables import format_paper, note_parts, note_text
from bookbuild.tables import format_value


class VerdictDisplay(NamedTuple):
    """How a verdict (:class:`Verdict`) is shown: what it means in one line (the status page's table;
    :func:`verdict` is the rule), how a count of IDs with it reads in a sentence, for one and for several ("1
    differs from the paper", "2 differ from the paper": the status page's summary and the front page's line), and
    its badge colours (text, background: the same badge on the status page, in the figure index and under each
    section heading)."""

    meaning: str
    one: str
    several: str
    colours: tuple[str, str]


#: The verdicts, in the order the page lists them (``reproduced`` on real or published data is said first in the
#: summary, with its bases; the phrase here is ``reproduced`` without data, as worked examples).
VERDICT_TABLE: dict[str, VerdictDisplay] = {
    "reproduced": VerdictDisplay(
        "computed on real or published data, within tolerance of the paper's numbers",
        "is a worked example reproduced without data", "are worked examples reproduced without data",
        ("#116329", "#dafbe1")),
    "assumption": VerdictDisplay(
        "computed on real or published data at a number the paper does not publish (an implied group size)",
        "rests on a number the paper does not publish", "rest on a number the paper does not publish",
        ("#7d4e00", "#fff8c5")),
    "differs": VerdictDisplay(
        "computed on real or published data, outside tolerance of the paper; the chapter says why",
        "differs from the paper", "differ from the paper",
        ("#a40e26", "#ffebe9")),
    "computed": VerdictDisplay(
        "computed on real or published data; the paper gives no number to compare with",
        "is computed where the paper gives no number", "are computed where the paper gives no number",
        ("#0550ae", "#ddf4ff")),
    "paper inconsistent": VerdictDisplay(
        "only checks of the paper against itself ran, and the paper contradicts itself",
        "only shows the paper contradicting itself", "only show the paper contradicting itself",
        ("#7d4e00", "#fff8c5")),
    "partly simulated": VerdictDisplay(
        "its real or published numbers agree with the paper, the others ran only on the simulator",
        "is partly simulated", "are partly simulated",
        ("#6639ba", "#f3e8ff")),
    "user data": VerdictDisplay(
        "computed on a user's file only, which the build cannot vouch for: never a reproduction",
        "ran on a user's data only", "ran on a user's data only",
        ("#0a5c63", "#d8f3f6")),
    "LLM output": VerdictDisplay(
        "computed from an LLM's output only (the model named): never a reproduction",
        "rests on an LLM's output only", "rest on an LLM's output only",
        ("#0a5c63", "#d8f3f6")),
    "simulated": VerdictDisplay(
        "only the simulator ran: the analysis runs, the paper's finding is not reproduced",
        "ran only on the simulator", "ran only on the simulator",
        ("#6639ba", "#fbefff")),
    "checked": VerdictDisplay(
        "only checks of the paper's numbers against each other ran (a p-value from its statistic)",
        "is a check of the paper against itself", "are checks of the paper against itself",
        ("#424a53", "#eaeef2")),
    "transcribed": VerdictDisplay(
        "the paper's numbers are shown as transcribed, not computed",
        "is transcribed from the paper", "are transcribed from the paper",
        ("#424a53", "#eaeef2")),
    "not run": VerdictDisplay(
        "none of its numbers ran in this build (no LLM endpoint, no data); the reason is given",
        "did not run", "did not run",
        ("#424a53", "#eaeef2")),
    "not yet": VerdictDisplay(
        "no chapter of this build records the analysis yet",
        "is in no chapter yet", "are in no chapter yet",
        ("#57606a", "#f6f8fa")),
    "failed": VerdictDisplay(
        "the chapter that computes it failed in this build; its partial numbers are not shown",
        "is in a chapter that failed", "are in a chapter that failed",
        ("#a40e26", "#ffebe9")),
}
VERDICTS: tuple[str, ...] = tuple(VERDICT_TABLE)
STATUS_MEANING: dict[str, str] = {v: t.meaning for v, t in VERDICT_TABLE.items()}
VERDICT_PHRASE: dict[str, tuple[str, str]] = {v: (t.one, t.several) for v, t in VERDICT_TABLE.items()}

#: The evidence groups of an ID's counts, in display order (``no data``: worked examples; ``not run``: nothing).
EVIDENCE_GROUPS: tuple[str, ...] = (
    "real", "published", "user", "llm", "checked", "transcribed", "no data", "simulated", "not run",
)
#: Evidence that can reproduce a figure, and the bases and verdicts of the other classes, in the rule's order.
REPRODUCING: tuple[str, ...] = ("real", "published")
_OTHER_BASES: tuple[tuple[str, str], ...] = (("user", "user data"), ("llm", "LLM output"))
_CHECK_BASES: tuple[tuple[str, str], ...] = (("checked", "checked"), ("transcribed", "transcribed"))
#: A reader's name for an evidence group in the counts (the others are named as they are).
GROUP_LABEL: dict[str, str] = {"user": "user data", "llm": "LLM output"}
#: A number's status on real or published data, worst first, and the verdict it gives.
_RAN_ORDER: tuple[tuple[str, str], ...] = (
    ("differs", "differs"), ("assumption", "assumption"), ("match", "reproduced"), ("computed", "computed"),
    ("inconsistent", "paper inconsistent"),
)

#: The order of statuses within an evidence group of the counts (the issue's "30 match · 2 differs").
_COUNT_ORDER: tuple[str, ...] = ("match", "differs", "inconsistent", "assumption", "computed")

DATA_USED_LABEL: dict[str, str] = {
    "real": "real",
    "published": "published",
    "simulated": "simulated",
    "user": "user data",
    "llm": "LLM output",
    "llm-cache": "LLM output",
    "checked": "check of the paper",
    "transcribed": "transcribed",
    "none": "none",
}

TABLE_COLUMNS = (
    "id", "paper", "what", "paper_value", "this_build", "data_class", "data_used", "evidence", "groups", "status",
    "reason", "inconsistent", "basis", "notebooks", "summary",
)


@dataclass(frozen=True)
class Verdict:
    """An ID's verdict (one of :data:`VERDICTS`); the data it rests on (``basis``: ``real``, ``published``,
    ``real + published``, ``simulated``, ``no data`` or ``""``); its reason (``unpublished n`` for ``assumption``,
    the reason its numbers did not run for ``not run``); and ``inconsistent``, the reason in a word where the
    paper contradicts itself in this ID (``text vs figure``), whatever the verdict."""

    status: str
    basis: str = ""
    reason: str = ""
    inconsistent: str = ""

    @property
    def label(self) -> str:
        """The verdict in a reader's words: ``reproduced · paper inconsistent (text vs figure)``,
        ``assumption (unpublished n)``, ``not run``."""
        text = self.status
        if self.reason and self.status in ("assumption", "paper inconsistent"):
            text += f" ({self.reason})"
        if self.inconsistent and self.status != "paper inconsistent":
            text += f" · paper inconsistent ({self.inconsistent})"
        return text


def evidence_group(r: Result) -> str:
    """The group a number is counted in (:data:`EVIDENCE_GROUPS`)."""
    if r.status == "not run":
        return "not run"
    return {"none": "no data"}.get(r.evidence, r.evidence)


def evidence_groups(rs: Iterable[Result]) -> list[str]:
    """The evidence groups an ID's numbers fall in, in :data:`EVIDENCE_GROUPS` order, in a reader's words
    (``published``, ``simulated``, ``LLM output``): what the status page filters its rows by."""
    present = {evidence_group(r) for r in rs}
    return [GROUP_LABEL.get(g, g) for g in EVIDENCE_GROUPS if g in present]


def evidence_counts(rs: Iterable[Result]) -> str:
    """An ID's numbers counted by evidence and status: ``published: 30 match · 2 differs; simulated: 2``
    (statuses in the reader's words; simulated and not-run numbers are only counted)."""
    groups: dict[str, dict[str, int]] = {}
    for r in rs:
        per = groups.setdefault(evidence_group(r), {})
        per[r.status] = per.get(r.status, 0) + 1
    parts = []
    for group in EVIDENCE_GROUPS:
        if group not in groups:
            continue
        if group in ("simulated", "not run"):
            parts.append(f"{GROUP_LABEL.get(group, group)}: {sum(groups[group].values())}")
            continue
        order = list(_COUNT_ORDER)
        counts = sorted(groups[group].items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order))
        label = GROUP_LABEL.get(group, group)
        parts.append(f"{label}: " + " · ".join(f"{n} {STATUS_LABEL.get(s, s)}" for s, n in counts))
    return "; ".join(parts)


def _most_common(texts: list[str]) -> str:
    counts: dict[str, int] = {}
    for t in texts:
        if t:
            counts[t] = counts.get(t, 0) + 1
    return max(counts, key=lambda t: counts[t]) if counts else ""


def _ran_verdict(rs: list[Result], basis: str, inconsistent: str) -> Verdict:
    for status, name in _RAN_ORDER:
        hit = [r for r in rs if r.status == status]
        if hit:
            reason = _most_common([r.reason for r in hit]) if status in ("inconsistent", "assumption") else ""
            return Verdict(name, basis, reason, inconsistent)
    raise ValueError(f"no verdict for statuses {sorted({r.status for r in rs})}")


def verdict(rs: Iterable[Result], failed: Iterable[str] = ()) -> Verdict:
    """The verdict of one analysis ID from its numbers (rule in the module docstring); ``failed``: the failed
    chapters that compute it (used when none of its numbers survived). ``ValueError`` for an unknown status."""
    rs = list(rs)
    unknown = {r.status for r in rs} - set(STATUS_LABEL)
    if unknown:
        raise ValueError(f"unknown result status {sorted(unknown)}; expected one of {list(STATUS_LABEL)}")
    if not rs:
        return Verdict("failed" if list(failed) else "not yet")
    ran = [r for r in rs if r.status not in ("not run", "simulated")]
    on_data = [r for r in ran if r.evidence in REPRODUCING]
    kinds = [k for k in REPRODUCING if any(r.evidence == k for r in on_data)]
    basis = " + ".join(kinds)
    inconsistent = _most_common([r.reason for r in rs if r.status == "inconsistent"])
    if any(r.status != "inconsistent" for r in on_data):
        ran_verdict = _ran_verdict(on_data, basis, inconsistent)
        if ran_verdict.status in ("reproduced", "computed") and any(r.status == "simulated" for r in rs):
            return Verdict("partly simulated", basis, "", inconsistent)
        return ran_verdict
    for kind, name in _OTHER_BASES:
        if any(r.evidence == kind for r in ran):
            return Verdict(name, kind, "", inconsistent)
    if any(r.status == "simulated" for r in rs):
        return Verdict("simulated", "simulated", "", inconsistent)
    for kind, name in _CHECK_BASES:
        if any(r.evidence == kind for r in ran):
            return Verdict(name, kind, "", inconsistent)
    if on_data:  # only checks of the paper against itself ran, and it contradicts itself: said, even beside not-run
        return _ran_verdict(on_data, basis, inconsistent)
    not_run = [r for r in rs if r.status == "not run"]
    if not_run:
        reason = _most_common([r.reason or (note_parts(r.note) or [""])[-1] for r in not_run])
        return Verdict("not run", "", reason.removeprefix("not run: ") or "no reason recorded", inconsistent)
    if on_data:
        return _ran_verdict(on_data, basis, inconsistent)
    return _ran_verdict(rs, "no data", inconsistent)


def data_used(kinds: Iterable[str]) -> str:
    """The data kinds behind an ID's numbers, readable (``simulated + published``); ``none`` when nothing ran."""
    order = list(DATA_USED_LABEL)
    seen = sorted(set(kinds), key=lambda k: order.index(k) if k in order else len(order))
    ran = [k for k in seen if k != "none"]
    if not ran:
        return "none"
    return " + ".join(DATA_USED_LABEL.get(k, k) for k in ran)


def describe_result(r: Result, digits: int = 3) -> str:
    """One number readably: ``quantity = ours (planted p; paper x) — note`` or ``quantity: not run (reason)``.

    The note travels with the number (why it differs, or that a simulated number is a calibration target)."""
    if r.status == "not run" or r.ours is None:
        reason = f" ({note_text(r.note)})" if r.note else ""
        return f"{r.quantity}: not run{reason}"
    refs = [f"planted {format_value(r.planted, digits)}"] if r.planted is not None else []
    refs += [f"paper {format_paper(r, digits)}"] if r.paper is not None else []
    paper = f" ({'; '.join(refs)})" if refs else ""
    note = f" — {note_text(r.note)}" if r.note else ""
    by = f" [{r.llm}]" if r.llm else ""
    return f"{r.quantity} = {format_value(r.ours, digits)}{by}{paper}{note}"


def load_results_by_notebook(
    results_dir: str | Path, exclude: Iterable[str] = ()
) -> tuple[list[Result], dict[str, list[str]]]:
    """All results of a build, and for each analysis ID the notebooks (file stems) that recorded it.

    Notebooks in ``exclude`` (the failed chapters) are left out. Files starting with ``_`` (the runner's
    ``_failed.json``) are not results.
    """
    skip = set(exclude)
    results: list[Result] = []
    where: dict[str, list[str]] = {}
    for path in sorted(Path(results_dir).glob("*.json")):
        if path.name.startswith("_"):
            continue
        payload = json.loads(path.read_text())
        notebook = payload.get("notebook", path.stem)
        if notebook in skip:
            continue
        for raw in payload.get("results", []):
            r = Result(**raw)
            results.append(r)
            if notebook not in where.setdefault(r.analysis_id, []):
                where[r.analysis_id].append(notebook)
    return results, where


@dataclass
class Build:
    """What the status page needs from one build.

    ``results``/``where`` as :func:`load_results_by_notebook` (failed chapters left out); ``failed``: stem →
    one-line error of each failed chapter; ``failed_ids``: ID → failed chapters that compute it (from their
    results file and their section headings); ``chapters``: the built chapters (executed, not failed), by stem.
    """

    results: list[Result]
    where: dict[str, list[str]]
    failed: dict[str, str] = field(default_factory=dict)
    failed_ids: dict[str, list[str]] = field(default_factory=dict)
    chapters: dict[str, Chapter] = field(default_factory=dict)


def load_build(results_dir: str | Path, chapters_dir: str | Path | None = None) -> Build:
    """Read a build: its results, its failed chapters and its executed chapters.

    ``chapters_dir`` defaults to ``<results_dir>/../chapters`` (the runner writes both under the book folder).
    """
    results_dir = Path(results_dir)
    chapters_dir = Path(chapters_dir) if chapters_dir is not None else results_dir.parent / "chapters"
    failed = navigation.read_failed(results_dir)
    results, where = load_results_by_notebook(results_dir, exclude=failed)
    failed_ids: dict[str, list[str]] = {}
    for stem in failed:
        ids: list[str] = []
        path = results_dir / f"{stem}.json"
        if path.exists():
            ids += [raw["analysis_id"] for raw in json.loads(path.read_text()).get("results", [])]
        executed = chapters_dir / f"{stem}.ipynb"
        if executed.exists():
            ids += [s.analysis_id for s in navigation.read_chapter(executed).sections]
        for aid in dict.fromkeys(ids):
            failed_ids.setdefault(aid, []).append(stem)
    chapters = navigation.built_chapters(chapters_dir, exclude=failed)
    return Build(results, where, failed, failed_ids, chapters)


def status_table(
    results: Iterable[Result],
    catalogue: pl.DataFrame,
    where: Mapping[str, list[str]] | None = None,
    failed_ids: Mapping[str, list[str]] | None = None,
) -> pl.DataFrame:
    """One row per analysis ID: the catalogue's description and paper numbers beside this build's.

    Columns: ``id``, ``paper``, ``what``, ``paper_value`` (the catalogue's paper numbers), ``this_build`` (every
    recorded quantity of the ID, one per line, ``None`` when none), ``data_class`` (the catalogue's),
    ``data_used`` (``real``/``published``/``simulated``/``LLM cache``/``none``, joined with ``+``; ``None`` when
    nothing was recorded), ``evidence`` (:func:`evidence_counts`), ``groups`` (:func:`evidence_groups`, joined with
    ``, ``; ``None`` when nothing was recorded), ``status``, ``reason`` and ``basis`` (the
    :class:`Verdict` of :func:`verdict`; ``failed`` for an ID with no result whose chapter is in ``failed_ids``),
    ``notebooks`` (who recorded it, ``, ``-joined) and ``summary`` (one line: :func:`summary_line`).

    The project's own checks (:data:`PROJECT_CHECKS`, paper ``checks``) follow the papers' IDs; any other ID
    recorded by a notebook but missing from the catalogue is appended too (paper ``?``), so a typo in a
    notebook's ID shows up instead of vanishing.
    """
    by_id: dict[str, list[Result]] = {}
    for r in results:
        by_id.setdefault(r.analysis_id, []).append(r)
    where = where or {}
    failed_ids = failed_ids or {}

    rows = []
    known = set()

    def add(aid, paper, what, paper_numbers, data_class):
        rs = by_id.get(aid, [])
        rows.append(_row(aid, paper, what, paper_numbers, data_class, rs, where, failed_ids.get(aid, [])))

    for row in catalogue.iter_rows(named=True):
        known.add(row["analysis_id"])
        add(row["analysis_id"], row["paper"], row["what"], row["paper_numbers"], row["data_class"])
    for aid in sorted(set(by_id) - known):
        if aid in PROJECT_CHECKS:
            add(aid, "checks", PROJECT_CHECKS[aid], None, "simulation")
        else:
            add(aid, "?", "(not in the catalogue: check the ID)", None, None)
    return pl.DataFrame(rows, schema={c: pl.String for c in TABLE_COLUMNS}, orient="row")


def summary_line(rs: list[Result], failed: list[str] | None = None) -> str:
    """One line for an ID: its numbers counted by evidence (:func:`evidence_counts`) with the first one that
    differs from the paper named; the failed chapters when none of its numbers survived."""
    if not rs:
        if failed:
            return f"chapter {', '.join(failed)} failed in this build"
        return "no chapter of this build computes it"
    line = evidence_counts(rs)
    first = next((r for r in rs if r.status == "differs"), None)
    if first is None:
        return line
    paper = f" (paper {format_paper(first)})" if first.paper is not None else ""
    return line + f"; differs: {first.quantity} = {format_value(first.ours)}{paper}"


def _row(aid, paper, what, paper_numbers, data_class, rs: list[Result], where, failed: list[str]) -> tuple:
    v = verdict(rs, failed)
    return (
        aid,
        paper,
        what,
        paper_numbers,
        "\n".join(describe_result(r) for r in rs) if rs else None,
        data_class,
        data_used(r.data for r in rs) if rs else None,
        evidence_counts(rs) if rs else None,
        ", ".join(evidence_groups(rs)) or None,
        v.status,
        v.reason or None,
        v.inconsistent or None,
        v.basis or None,
        ", ".join(where.get(aid, [])) or None,
        summary_line(rs, failed),
    )


#: The bases a verdict on real or published data can have: the columns of :func:`status_counts`.
BASES: tuple[str, ...] = ("real", "published", "real + published")


def status_counts(table: pl.DataFrame) -> pl.DataFrame:
    """Number of IDs per verdict (every verdict listed, zeros included, in :data:`VERDICTS` order); of those, how
    many rest on real data, published data, or both (columns :data:`BASES`), and in how many the paper contradicts
    itself (column ``paper inconsistent``)."""
    rows = []
    for v in VERDICTS:
        sub = table.filter(pl.col("status") == v)
        bases = dict(sub.group_by("basis").len().iter_rows())
        rows.append([v, sub.height, *[int(bases.get(b, 0)) for b in BASES], sub["inconsistent"].drop_nulls().len()])
    schema = {"status": pl.String, "ids": pl.Int64, **{b: pl.Int64 for b in BASES}, "paper inconsistent": pl.Int64}
    return pl.DataFrame(rows, schema=schema, orient="row")


def reproduced_on_data(table: pl.DataFrame) -> int:
    """IDs that read ``reproduced`` on real or published data."""
    return table.filter((pl.col("status") == "reproduced") & pl.col("basis").is_in(list(BASES))).height


def status_by_paper(table: pl.DataFrame) -> pl.DataFrame:
    """IDs per paper (rows, catalogue order) and verdict (columns), with a total column."""
    papers = list(dict.fromkeys(table["paper"].to_list()))
    rows = []
    for p in papers:
        sub = table.filter(pl.col("paper") == p)
        counts = dict(sub.group_by("status").len().iter_rows())
        rows.append([p, *[int(counts.get(s, 0)) for s in VERDICTS], sub.height])
    schema = {"paper": pl.String, **{s: pl.Int64 for s in VERDICTS}, "total": pl.Int64}
    return pl.DataFrame(rows, schema=schema, orient="row")
