"""The reproduction-status table: one row per analysis ID of the catalogue, with this build's numbers.

The catalogue (``resources/analyses.csv``) is the list of every analysis in the five source papers, transcribed
from the project's ``ANALYSES.md``: ``analysis_id``, ``paper`` (SA, NG, DR, AE), ``section`` (the heading of that
paper's table in ``ANALYSES.md``), ``what``, ``paper_numbers`` (what the paper reports, as text) and
``data_class`` (REAL, PUB, BATTLE, LLM or a combination, as in ``ANALYSES.md``).

A build records its numbers with :class:`analysis_lib.report.Recorder` (one JSON file per notebook under
``results_dir``). :func:`status_table` joins the two. Each recorded number has one of the statuses of
:mod:`analysis_lib.report` (``match``, ``differs``, ``simulated``, ``computed``, ``not run``); an analysis ID
usually records several numbers, and its status is the **worst** of theirs, in this order:

1. ``differs``   at least one number was computed on real or published data and is outside the tolerance;
2. ``simulated`` else, at least one number comes from the simulator (the ID is not reproduced yet, only run);
3. ``not run``   else, at least one number could not be computed in this build (no endpoint or data);
4. ``match``     else, at least one number matches the paper's and every other one is ``computed``;
5. ``computed``  every number is new (the paper gives no value to compare with);

and ``not yet`` when no notebook recorded anything for the ID. So an ID reads ``match`` only when every
number it has that the paper reports was reproduced on real or published data, and nothing of it is simulated
or missing.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Mapping
from importlib import resources
from pathlib import Path

import polars as pl

from analysis_lib import data, sources
from analysis_lib.report import Result, format_value

#: Aggregate order, worst first (see the module docstring), then ``not yet``.
AGGREGATE_ORDER: tuple[str, ...] = ("differs", "simulated", "not run", "match", "computed")
STATUSES: tuple[str, ...] = ("match", "differs", "simulated", "computed", "not run", "not yet")

STATUS_MEANING: dict[str, str] = {
    "match": "reproduced: computed on real or published data and within tolerance of the paper's value",
    "differs": "computed on real or published data, outside tolerance; the chapter says why",
    "simulated": "computed on the project's simulator: shows the analysis runs, not the paper's finding",
    "computed": "computed on real or published data; the paper gives no number to compare with",
    "not run": "needs an LLM endpoint or data this build did not have; no number is shown",
    "not yet": "no notebook of this build records the analysis yet",
}

DATA_CLASS_MEANING: dict[str, str] = {
    "REAL": "real public data, mirrored locally",
    "PUB": "published aggregates transcribed from the papers and their repositories",
    "BATTLE": "per-conversation data: the real release when given, else the schema-identical simulator",
    "LLM": "needs a language model: cached outputs or a visible 'not run'",
}

DATA_USED_LABEL: dict[str, str] = {
    "real": "real",
    "published": "published",
    "simulated": "simulated",
    "llm-cache": "LLM cache",
    "none": "none",
}

#: The papers of the catalogue, by code (NG has two versions among the sources, one study).
PAPERS: dict[str, str] = {
    "SA": "Search Arena: Analyzing Search-Augmented LLMs",
    "NG": "Search Arena Meets Nuggets: Towards Explanations and Diagnostics in the Evaluation of LLM Responses",
    "DR": "DR-Arena: an Automated Evaluation Framework for Deep Research Agents",
    "AE": "Search Engines in an AI Era: The False Promise of Factual and Verifiable Source-Cited Responses",
}

CATALOGUE_COLUMNS = ("analysis_id", "paper", "section", "what", "paper_numbers", "data_class")

TABLE_COLUMNS = ("id", "paper", "what", "paper_value", "this_build", "data_class", "data_used", "status", "notebooks")


def catalogue(path: str | Path | None = None) -> pl.DataFrame:
    """The analysis catalogue (``resources/analyses.csv`` unless ``path`` is given), all columns strings."""
    schema = {c: pl.String for c in CATALOGUE_COLUMNS}
    if path is None:
        with resources.files("analysis_lib").joinpath("resources/analyses.csv").open("rb") as fh:
            return pl.read_csv(fh, schema=schema)
    return pl.read_csv(path, schema=schema)


def aggregate_status(statuses: Iterable[str]) -> str:
    """The status of one analysis ID from the statuses of its numbers (rule in the module docstring)."""
    seen = set(statuses)
    if not seen:
        return "not yet"
    unknown = seen - set(AGGREGATE_ORDER)
    if unknown:
        raise ValueError(f"unknown result status {sorted(unknown)}; expected one of {AGGREGATE_ORDER}")
    for status in AGGREGATE_ORDER:
        if status in seen:
            return status
    raise AssertionError("unreachable")


def data_used(kinds: Iterable[str]) -> str:
    """The data kinds behind an ID's numbers, readable (``simulated + published``); ``none`` when nothing ran."""
    order = list(DATA_USED_LABEL)
    seen = sorted(set(kinds), key=lambda k: order.index(k) if k in order else len(order))
    ran = [k for k in seen if k != "none"]
    if not ran:
        return "none"
    return " + ".join(DATA_USED_LABEL.get(k, k) for k in ran)


def describe_result(r: Result, digits: int = 3) -> str:
    """One number readably: ``quantity = ours (paper x)`` or ``quantity: not run — reason``."""
    if r.status == "not run" or r.ours is None:
        reason = f" ({r.note})" if r.note else ""
        return f"{r.quantity}: not run{reason}"
    paper = f" (paper {format_value(r.paper, digits)})" if r.paper is not None else ""
    note = f" — {r.note}" if r.note and r.status in ("differs",) else ""
    return f"{r.quantity} = {format_value(r.ours, digits)}{paper}{note}"


def load_results_by_notebook(results_dir: str | Path) -> tuple[list[Result], dict[str, list[str]]]:
    """All results of a build, and for each analysis ID the notebooks (file stems) that recorded it."""
    results: list[Result] = []
    where: dict[str, list[str]] = {}
    for path in sorted(Path(results_dir).glob("*.json")):
        payload = json.loads(path.read_text())
        notebook = payload.get("notebook", path.stem)
        for raw in payload.get("results", []):
            r = Result(**raw)
            results.append(r)
            if notebook not in where.setdefault(r.analysis_id, []):
                where[r.analysis_id].append(notebook)
    return results, where


#: IDs of the project's own method checks (not analyses of the papers), shown after the papers' IDs.
PROJECT_CHECKS = {
    "VAL": "methods validation: the estimators recover the simulator's planted ratings and style coefficients; "
    "coverage of 95% intervals over replicate datasets",
}


def status_table(
    results: Iterable[Result],
    catalogue: pl.DataFrame,
    where: Mapping[str, list[str]] | None = None,
) -> pl.DataFrame:
    """One row per analysis ID: the catalogue's description and paper numbers beside this build's.

    Columns: ``id``, ``paper``, ``what``, ``paper_value`` (the catalogue's paper numbers), ``this_build`` (every
    recorded quantity of the ID, one per line, ``None`` when none), ``data_class`` (the catalogue's),
    ``data_used`` (``real``/``published``/``simulated``/``LLM cache``/``none``, joined with ``+``; ``None`` when
    nothing was recorded), ``status`` (:func:`aggregate_status`) and ``notebooks`` (who recorded it, ``, ``-joined).

    The project's own checks (:data:`PROJECT_CHECKS`, paper ``checks``) follow the papers' IDs; any other ID
    recorded by a notebook but missing from the catalogue is appended too (paper ``?``), so a typo in a
    notebook's ID shows up instead of vanishing.
    """
    by_id: dict[str, list[Result]] = {}
    for r in results:
        by_id.setdefault(r.analysis_id, []).append(r)
    where = where or {}

    rows = []
    known = set()
    for row in catalogue.iter_rows(named=True):
        aid = row["analysis_id"]
        known.add(aid)
        rows.append(
            _row(aid, row["paper"], row["what"], row["paper_numbers"], row["data_class"], by_id.get(aid, []), where)
        )
    for aid in sorted(set(by_id) - known):
        if aid in PROJECT_CHECKS:
            rows.append(_row(aid, "checks", PROJECT_CHECKS[aid], None, "simulation", by_id[aid], where))
        else:
            rows.append(_row(aid, "?", "(not in the catalogue: check the ID)", None, None, by_id[aid], where))
    return pl.DataFrame(rows, schema={c: pl.String for c in TABLE_COLUMNS}, orient="row")


def _row(aid, paper, what, paper_numbers, data_class, rs: list[Result], where) -> tuple:
    return (
        aid,
        paper,
        what,
        paper_numbers,
        "\n".join(describe_result(r) for r in rs) if rs else None,
        data_class,
        data_used(r.data for r in rs) if rs else None,
        aggregate_status(r.status for r in rs),
        ", ".join(where.get(aid, [])) or None,
    )


def build_banner(
    data_source: str, seed: int, n_bootstrap: int, results: list[Result], where: Mapping[str, list[str]]
) -> str:
    """MyST Markdown for the top of the status page: what this build ran on, and a warning on simulated data."""
    source = str(data_source)
    shown = source if sources.is_named(source) else Path(source).name
    notebooks = sorted({n for ns in where.values() for n in ns})
    per_status = {s: sum(r.status == s for r in results) for s in STATUSES}
    tally = ", ".join(f"{n} {s}" for s, n in per_status.items() if n)
    line = (
        f"This build: data source `{shown}`, seed {seed}, {n_bootstrap} bootstrap rounds; "
        f"{len(results)} numbers recorded by {len(notebooks)} chapter(s)" + (f" ({tally})." if tally else ".")
    )
    if data.sample_size(source) is not None:
        return (
            ":::{admonition} Simulated data\n"
            ":class: warning\n"
            "This build ran on the project's Search Arena **simulator** (`" + shown + "`), not on the real release: "
            "analyses that need per-conversation data (class BATTLE) show `simulated`, which means the analysis "
            "runs, not that it reproduces the paper. Real public data and published aggregates (REAL, PUB) are used "
            "as usual. Run `make book DATA=path/to/search-arena-chat-24k.parquet` to reproduce on the release.\n"
            ":::\n\n" + line
        )
    return line


def status_counts(table: pl.DataFrame) -> pl.DataFrame:
    """Number of IDs per status (every status listed, zeros included), in :data:`STATUSES` order."""
    counts = dict(table.group_by("status").len().iter_rows())
    return pl.DataFrame(
        {"status": list(STATUSES), "ids": [int(counts.get(s, 0)) for s in STATUSES]},
        schema={"status": pl.String, "ids": pl.Int64},
    )


def status_by_paper(table: pl.DataFrame) -> pl.DataFrame:
    """IDs per paper (rows, catalogue order) and status (columns), with a total column."""
    papers = list(dict.fromkeys(table["paper"].to_list()))
    rows = []
    for p in papers:
        sub = table.filter(pl.col("paper") == p)
        counts = dict(sub.group_by("status").len().iter_rows())
        rows.append([p, *[int(counts.get(s, 0)) for s in STATUSES], sub.height])
    schema = {"paper": pl.String, **{s: pl.Int64 for s in STATUSES}, "total": pl.Int64}
    return pl.DataFrame(rows, schema=schema, orient="row")


# --- HTML rendering (the book shows the table as a plain HTML table: long, but it wraps and reads) ----------

STATUS_COLOUR = {
    "match": "#1a7f37",
    "differs": "#cf222e",
    "simulated": "#9a6700",
    "computed": "#0969da",
    "not run": "#6e7781",
    "not yet": "#6e7781",
}

_CSS = """<style>
table.repro-status {border-collapse: collapse; font-size: 0.8em; width: 100%; table-layout: fixed;}
table.repro-status th, table.repro-status td {border-bottom: 1px solid #d0d7de; padding: 4px 5px;
  vertical-align: top; text-align: left; overflow-wrap: anywhere;}
table.repro-status td.id {font-weight: 600;}
table.repro-status td.id a {font-weight: normal; font-size: 0.9em;}
table.repro-status tr.paper th {padding-top: 14px; font-size: 1.1em; border-bottom: 2px solid #8c959f;}
table.repro-status .status {font-weight: 600; white-space: nowrap;}
table.repro-status code {font-size: 0.95em; overflow-wrap: anywhere;}
</style>"""

#: (key, header, width): the HTML table's columns.
_COLUMNS = (
    ("id", "ID", "10%"),
    ("what", "what", "21%"),
    ("paper_value", "paper's value(s)", "22%"),
    ("this_build", "this build", "24%"),
    ("data", "data: class → used", "12%"),
    ("status", "status", "11%"),
)


def _inline(text: str | None) -> str:
    """Escape for HTML; ``code`` spans become <code>; none becomes an em dash."""
    if text is None or text == "":
        return "—"
    escaped = html.escape(text).replace("\n", "<br>")
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", escaped)


def _id_cell(aid: str, notebooks: str | None, link_chapters: bool) -> str:
    cell = html.escape(aid)
    if notebooks:
        names = notebooks.split(", ")
        if link_chapters:
            links = ", ".join(f'<a href="{html.escape(n)}.html">{html.escape(n)}</a>' for n in names)
        else:
            links = ", ".join(html.escape(n) for n in names)
        cell += f"<br>{links}"
    return f'<td class="id">{cell}</td>'


def status_html(table: pl.DataFrame, *, link_chapters: bool = True) -> str:
    """The status table as one HTML table (with a little CSS), for ``IPython.display.HTML``.

    One header row per paper; under each ID the chapters that recorded it, linked to ``<notebook>.html`` (the
    executed chapter's page beside the status page in the built book) when ``link_chapters``.
    """
    out = [_CSS, '<table class="repro-status">', "<colgroup>"]
    out += [f'<col style="width: {w}">' for _, _, w in _COLUMNS]
    out += ["</colgroup>", "<thead><tr>"]
    out += [f"<th>{html.escape(h)}</th>" for _, h, _ in _COLUMNS]
    out.append("</tr></thead><tbody>")
    paper = None
    for row in table.iter_rows(named=True):
        if row["paper"] != paper:
            paper = row["paper"]
            label = (
                f"{paper} · {PAPERS[paper]}"
                if paper in PAPERS
                else "Checks of this project's methods (not paper analyses)"
                if paper == "checks"
                else "IDs not in the catalogue"
            )
            out.append(f'<tr class="paper"><th colspan="{len(_COLUMNS)}">{html.escape(label)}</th></tr>')
        colour = STATUS_COLOUR.get(row["status"], "#000")
        used = row["data_used"]
        data = html.escape(row["data_class"] or "—") + (f" → {html.escape(used)}" if used else "")
        out += [
            f'<tr id="status-{html.escape(row["id"].lower())}">',
            _id_cell(row["id"], row["notebooks"], link_chapters),
            f"<td>{_inline(row['what'])}</td>",
            f"<td>{_inline(row['paper_value'])}</td>",
            f"<td>{_inline(row['this_build'])}</td>",
            f"<td>{data}</td>",
            f'<td><span class="status" style="color:{colour}">{html.escape(row["status"])}</span></td>',
            "</tr>",
        ]
    out.append("</tbody></table>")
    return "\n".join(out)


def counts_markdown(table: pl.DataFrame) -> str:
    """Counts per status as a short Markdown table (status, meaning, number of IDs)."""
    counts = status_counts(table)
    lines = ["| status | meaning | IDs |", "|---|---|---:|"]
    for status, n in counts.iter_rows():
        lines.append(f"| **{status}** | {STATUS_MEANING[status]} | {n} |")
    lines.append(f"| | total | {table.height} |")
    return "\n".join(lines)


def by_paper_markdown(table: pl.DataFrame) -> str:
    """IDs per paper and status as a Markdown table."""
    frame = status_by_paper(table)
    header = "| paper | " + " | ".join(STATUSES) + " | total |"
    lines = [header, "|---|" + "---:|" * (len(STATUSES) + 1)]
    for row in frame.iter_rows():
        lines.append("| " + " | ".join(str(v) for v in row) + " |")
    return "\n".join(lines)
