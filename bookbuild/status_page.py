"""The reproduction-status page's rendering: the build banner, the status table and the figure index as HTML, the
counts as Markdown.

The table logic (one row per analysis ID, the status rule, reading a build) is :mod:`bookbuild.status`; this
module only draws it. One row per ID: its status, a one-line summary with the numbers folded in a ``<details>``
(the paper's numbers from the catalogue and from :mod:`bookbuild.paper_values`), and links named by the
chapter's title to the sections that compute it (:func:`bookbuild.navigation.section_href`). Only chapters of
the build are linked; a failed chapter's IDs show no number and no link.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from pathlib import Path

import polars as pl

from analysis_lib import sources
from bookbuild import catalogue, markup, navigation, paper_values
from bookbuild.catalogue import PAPERS
from bookbuild.navigation import Chapter, IndexEntry
from bookbuild.recorder import STATUS_LABEL, Result, format_paper
from bookbuild.recorder import STATUSES as NUMBER_STATUSES
from bookbuild.status import (
    BASES,
    STATUS_MEANING,
    VERDICTS,
    load_build,
    reproduced_on_data,
    status_by_paper,
    status_counts,
    status_table,
)

STATUS_COLOUR = {
    "reproduced": "#1a7f37",
    "assumption": "#9a6700",
    "differs": "#cf222e",
    "computed": "#0969da",
    "paper inconsistent": "#9a6700",
    "simulated": "#8250df",
    "not run": "#57606a",
    "not yet": "#57606a",
    "failed": "#cf222e",
}

_CSS = """<style>
/* the status page's tables take the width of the page-contents sidebar, which this page hides: the article takes
   the main area, and its full-width cells (the tables) the article's width, never more (the theme's 136% would
   overflow the window below 1200 px) */
.bd-sidebar-secondary {display: none !important;}
.bd-main .bd-content .bd-article-container {max-width: 100%;}
div.cell.tag_full_width {width: 100% !important; max-width: 100% !important;}
table.repro-status, table.figure-index {border-collapse: collapse; font-size: 0.82em; width: 100%;
  table-layout: fixed;}
table.repro-status th, table.repro-status td, table.figure-index th, table.figure-index td {
  border-bottom: 1px solid #d0d7de; padding: 3px 5px; vertical-align: top; text-align: left;
  overflow-wrap: anywhere;}
table.repro-status td.id {font-weight: 600; white-space: nowrap;}
table.repro-status tr.paper th, table.figure-index tr.paper th {padding-top: 12px; font-size: 1.05em;
  border-bottom: 2px solid #8c959f;}
table.repro-status .status {font-weight: 600;}
table.repro-status .basis, table.repro-status .why {display: block; color: #57606a; font-size: 0.92em;}
table.repro-status details summary {cursor: pointer;}
table.repro-status details ul {margin: 2px 0 4px 0; padding-left: 1.2em;}
table.repro-status code {font-size: 0.95em; overflow-wrap: anywhere;}
table.figure-index td.no {color: #57606a;}
</style>"""

#: (header, width): the status table's columns.
_COLUMNS = (("ID", "8%"), ("what", "27%"), ("verdict", "17%"), ("numbers by evidence (click for them)", "32%"),
            ("section", "16%"))


def _inline(text: str | None) -> str:
    """Escape for HTML; ``code`` spans become <code>; none becomes an em dash."""
    if text is None or text == "":
        return "—"
    escaped = html.escape(text).replace("\n", "<br>")
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", escaped)


def _paper_label(paper: str) -> str:
    if paper in PAPERS:
        return f"{paper} · {PAPERS[paper]}"
    return "Checks of this project's methods (not paper analyses)" if paper == "checks" else "IDs not in the catalogue"


def _section_links(aid: str, notebooks: str | None, chapters: Mapping[str, Chapter] | None) -> str:
    """Links to the ID's sections, named by the chapter titles; chapters not in the build are named, not linked."""
    if not notebooks:
        return "—"
    out = []
    for stem in notebooks.split(", "):
        chapter = (chapters or {}).get(stem)
        if chapter is None:
            out.append(html.escape(stem))
            continue
        section = chapter.section(aid)
        hint = f' title="{html.escape(f"{aid} · {section.title}", quote=True)}"' if section else ""
        out.append(f'<a href="{html.escape(navigation.section_href(chapter, aid), quote=True)}"{hint}>'
                   f"{html.escape(chapter.title)}</a>")
    return "<br>".join(out)


def _details(row: Mapping[str, str | None]) -> str:
    """The folded part of a row: the paper's numbers, this build's numbers, the data."""
    items = [f"<li>paper: {_inline(row['paper_value'])}</li>"]
    if row["this_build"]:
        items += [f"<li>{_inline(line)}</li>" for line in row["this_build"].split("\n")]
    else:
        # IDs that recorded nothing: what the paper-values table says the paper reports for them
        for (aid, quantity), v in paper_values.table().items():
            if aid == row["id"] and v.paper is not None:
                items.append(f"<li>{html.escape(quantity)}: paper {html.escape(format_paper(v))}</li>")
    used = row["data_used"]
    data_text = html.escape(row["data_class"] or "—") + (f" → {html.escape(used)}" if used else "")
    items.append(f"<li>data: {data_text}</li>")
    return f"<ul>{''.join(items)}</ul>"


def verdict_html(row: Mapping[str, str | None]) -> str:
    """The verdict cell: the verdict in its colour with its reason (``assumption (unpublished n)``), the data it
    rests on, the paper's inconsistency where there is one, and for ``not run`` the reason."""
    status = row["status"] or "not yet"
    colour = STATUS_COLOUR.get(status, "#000")
    head = status + (f" ({row['reason']})" if row["reason"] and status in ("assumption", "paper inconsistent") else "")
    out = [f'<span class="status" style="color:{colour}">{html.escape(head)}</span>']
    if row["basis"] and status not in ("simulated",):
        out.append(f'<span class="basis">on {html.escape(row["basis"])} data</span>'
                   if row["basis"] != "no data" else '<span class="basis">worked example, no data</span>')
    if row["inconsistent"] and status != "paper inconsistent":
        out.append(f'<span class="why">paper inconsistent ({html.escape(row["inconsistent"])})</span>')
    if status == "not run" and row["reason"]:
        out.append(f'<span class="why">{html.escape(row["reason"])}</span>')
    return " ".join(out)


def status_html(table: pl.DataFrame, chapters: Mapping[str, Chapter] | None = None) -> str:
    """The status table as one HTML table (with a little CSS), for ``IPython.display.HTML``.

    One header row per paper; one row per ID (``<tr id="status-<id>">``): ID, what, the verdict
    (:func:`verdict_html`), the ID's numbers counted by evidence with the numbers folded in a ``<details>``, and
    links to the sections that compute it, named by the chapter's title. Only chapters in ``chapters`` (the
    built, non-failed ones) are linked. Every text is escaped.
    """
    out = [_CSS, '<table class="repro-status">', "<colgroup>"]
    out += [f'<col style="width: {w}">' for _, w in _COLUMNS]
    out += ["</colgroup>", "<thead><tr>"]
    out += [f"<th>{html.escape(h)}</th>" for h, _ in _COLUMNS]
    out.append("</tr></thead><tbody>")
    paper = None
    for row in table.iter_rows(named=True):
        if row["paper"] != paper:
            paper = row["paper"]
            out.append(f'<tr class="paper"><th colspan="{len(_COLUMNS)}">{html.escape(_paper_label(paper))}</th></tr>')
        summary = _inline(row["summary"])
        folded = f"<details><summary>{summary}</summary>{_details(row)}</details>"
        build = summary if row["status"] == "failed" else folded
        links = "—" if row["status"] == "failed" else _section_links(row["id"], row["notebooks"], chapters)
        out += [
            f'<tr id="{html.escape(navigation.status_anchor(row["id"]), quote=True)}">',
            f'<td class="id">{html.escape(row["id"])}</td>',
            f"<td>{_inline(row['what'])}</td>",
            f"<td>{verdict_html(row)}</td>",
            f"<td>{build}</td>",
            f"<td>{links}</td>",
            "</tr>",
        ]
    out.append("</tbody></table>")
    return "\n".join(out)


def index_html(entries: list[IndexEntry]) -> str:
    """The index of every figure and table of the papers (:func:`bookbuild.navigation.paper_figure_index`) as
    HTML: one header row per paper, then per figure its number (for NG also its number in the earlier version), its
    caption, and the sections that reproduce it (linked) or the reason it cannot be reproduced. Each row has an id
    (``fig-ng-fig-2``) to link to. Every text is escaped."""
    cols = "".join(f'<col style="width: {w}">' for w in ("15%", "47%", "38%"))
    out = [_CSS, f'<table class="figure-index"><colgroup>{cols}</colgroup>',
           "<thead><tr><th>figure / table</th><th>caption</th><th>reproduced in · or why not</th></tr></thead>"
           "<tbody>"]
    paper = None
    for e in entries:
        if e.paper != paper:
            paper = e.paper
            n = sum(x.paper == paper for x in entries)
            extra = " (numbers of the later version; the earlier version's below them)" if paper == "NG" else ""
            out.append(f'<tr class="paper"><th colspan="3">{html.escape(_paper_label(paper))}: {n} figures and '
                       f"tables{html.escape(extra)}</th></tr>")
        number = html.escape(e.label) + (f"<br><small>earlier version: {html.escape(e.earlier)}</small>"
                                         if e.earlier else "")
        if e.reason is not None:
            where = f'<td class="no">not reproducible: {html.escape(e.reason)}</td>'
        else:
            links = [f'<a href="{html.escape(href, quote=True)}">{html.escape(text)}</a>' if href
                     else html.escape(text) for _, href, text in e.links]
            where = f"<td>{'<br>'.join(links)}</td>"
        out.append(f'<tr id="{html.escape(e.anchor, quote=True)}"><td>{number}</td>'
                   f"<td>{html.escape(e.caption)}</td>{where}</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


#: A figure is as reproduced as the least reproduced of its analyses: their verdicts, least reproduced first.
FIGURE_ORDER: tuple[str, ...] = (
    "failed", "not yet", "not run", "simulated", "partly simulated", "transcribed", "checked", "LLM output",
    "user data", "differs", "assumption", "paper inconsistent", "computed", "reproduced",
)


def figure_verdict(entry: IndexEntry, verdicts: Mapping[str, str]) -> str | None:
    """The verdict of one figure or table: the least reproduced verdict (:data:`FIGURE_ORDER`) of the analysis IDs
    behind it; ``None`` for one that cannot be reproduced."""
    if entry.reason is not None:
        return None
    got = [verdicts.get(aid, "not yet") for aid, _, _ in entry.links] or ["not yet"]
    return min(got, key=lambda v: FIGURE_ORDER.index(v) if v in FIGURE_ORDER else 0)


def index_summary(entries: list[IndexEntry], verdicts: Mapping[str, str] | None = None) -> str:
    """One Markdown paragraph: how many figures and tables the papers have, how many cannot be reproduced, and the
    others counted by :func:`figure_verdict` (from the same verdicts as the status table below)."""
    verdicts = verdicts or {}
    reproducible = [e for e in entries if e.reason is None]
    per: dict[str, int] = {}
    for e in reproducible:
        v = figure_verdict(e, verdicts) or "not yet"
        per[v] = per.get(v, 0) + 1
    shown = [f"**{per['reproduced']} reproduced**"] if per.get("reproduced") else ["**none reproduced**"]
    shown += [f"{per[v]} {v}" for v in reversed(FIGURE_ORDER) if v != "reproduced" and per.get(v)]
    return (f"The five papers have **{len(entries)} numbered figures and tables** (AE Figure 8 has one caption for "
            f"two panels, 8a and 8b, listed here as two rows); {len(entries) - len(reproducible)} cannot be "
            "reproduced (diagrams, screenshots, prompt text, examples, data not released), each with its reason. "
            f"Of the other {len(reproducible)}, in this build: " + " · ".join(shown) + ". A figure counts as "
            "reproduced only when every analysis behind it is (the rule above); otherwise it takes the verdict of its "
            "least reproduced analysis.")


def counts_markdown(table: pl.DataFrame) -> str:
    """IDs per verdict as a short Markdown table (verdict, IDs, and of those how many rest on real data, published
    data or both, and in how many the paper contradicts itself), then what each verdict means."""
    counts = status_counts(table)
    lines = ["| verdict | IDs | on real data | on published data | on both | the paper inconsistent |",
             "|---|---:|---:|---:|---:|---:|"]
    for row in counts.iter_rows(named=True):
        on = [str(row[b]) if row[b] else "" for b in BASES]
        flag = str(row["paper inconsistent"]) if row["paper inconsistent"] else ""
        lines.append(f"| **{row['status']}** | {row['ids']} | {' | '.join(on)} | {flag} |")
    lines.append(f"| total | {table.height} | | | | |")
    lines.append("")
    lines += [f"- **{v}**: {STATUS_MEANING[v]}." for v in counts["status"]]
    return "\n".join(lines)


#: The rule that decides "reproduced", as the page states it.
REPRODUCED_RULE = ("An analysis counts as **reproduced** only when its own numbers are computed in this build from "
                   "real public data (inputs whose sha256 is in the data manifest) or published aggregates and match "
                   "the paper's; numbers from a user's file, an LLM's output, the simulator, checks of the paper "
                   "against itself and transcriptions are counted in classes of their own and never make it so.")


def rule_markdown() -> str:
    """The rule that decides an ID's verdict (:data:`REPRODUCED_RULE`, then the order of
    :func:`bookbuild.status.verdict`), as the page states it; the meaning of each verdict follows the counts."""
    return (REPRODUCED_RULE + " Its numbers on real or published data decide first (`differs` if one differs, "
            "else `assumption`, else `reproduced`, else `computed`); an ID without such numbers reads `user data`, "
            "`LLM output`, `simulated`, `checked`, `transcribed` or `not run`, the first that applies. `not yet` "
            "means no chapter of this build records the ID; `failed`, that its chapter failed in this build.")


def summary_sentence(table: pl.DataFrame) -> str:
    """One sentence for the top of the page: how many IDs are reproduced from real or published data, and how many
    rest on a user's data, an LLM's output, the simulator, checks or transcriptions, differ, rest on an assumption or
    did not run (every class with IDs named; zeros left out)."""
    counts = dict(zip(status_counts(table)["status"], status_counts(table)["ids"]))
    inconsistent = table.filter(pl.col("inconsistent").is_not_null() & (pl.col("status") == "reproduced")).height
    words = {
        "assumption": "rest on a number the paper does not publish", "differs": "differ from the paper",
        "computed": "are computed where the paper gives no number", "user data": "ran on a user's data only",
        "LLM output": "rest on an LLM's output only", "simulated": "ran only on the simulator",
        "checked": "are checks of the paper only", "transcribed": "are transcribed only", "not run": "did not run",
        "not yet": "are not yet in a chapter", "failed": "failed",
    }
    rest = [f"{counts[v]} {w}" for v, w in words.items() if counts.get(v)]
    tail = (", ".join(rest[:-1]) + " and " + rest[-1]) if len(rest) > 1 else "".join(rest)
    return (f"Of {table.height} analysis IDs, **{reproduced_on_data(table)} are reproduced from real or published "
            f"data** (in {inconsistent} of them the paper contradicts itself, and ours agrees with one side)"
            + (f"; {tail}." if tail else "."))


def front_page_counts(table: pl.DataFrame, status_doc: str) -> markup.Html:
    """The front page's one line of counts (HTML): the IDs by verdict class, the same counts as the status page's
    (:func:`summary_sentence`), with a link to it (``status_doc``: its address from the front page, no ``.html``)."""
    counts = dict(zip(status_counts(table)["status"], status_counts(table)["ids"]))
    reproduced = reproduced_on_data(table)
    worked = counts.get("reproduced", 0) - reproduced  # worked examples that need no data
    parts = [f"{reproduced} reproduced from real or published data"]
    parts += [f"{worked} worked examples reproduced"] if worked else []
    parts += [f"{counts[v]} {v}" for v in VERDICTS if counts.get(v) and v != "reproduced"]
    return markup.Html("<p>" + markup.concat(f"**{table.height} analyses** in this build: " + " · ".join(parts) + " (",
                                             markup.link("how each is counted", f"{status_doc}.html"), ").") + "</p>")


def front_counts(results_dir: str | Path, status_doc: str, chapters_dir: str | Path | None = None) -> markup.Html:
    """:func:`front_page_counts` of the build whose results are in ``results_dir``."""
    build = load_build(results_dir, chapters_dir)
    table = status_table(build.results, catalogue.for_reader(catalogue.read()), build.where, build.failed_ids)
    return front_page_counts(table, status_doc)


def by_paper_markdown(table: pl.DataFrame) -> str:
    """IDs per paper and verdict as a Markdown table."""
    frame = status_by_paper(table)
    header = "| paper | " + " | ".join(VERDICTS) + " | total |"
    lines = [header, "|---|" + "---:|" * (len(VERDICTS) + 1)]
    for row in frame.iter_rows():
        lines.append("| " + " | ".join(str(v) for v in row) + " |")
    return "\n".join(lines)


def failed_markdown(failed: Mapping[str, str]) -> markup.Html:
    """A warning box naming the chapters that failed in this build and their one-line errors (as text)."""
    items = "".join(f"<li>{markup.code(stem)}: {markup.text(error) if error else 'no message'}</li>"
                    for stem, error in sorted(failed.items()))
    return markup.admonition("Chapters that failed in this build",
                             "Their analyses read `failed` below; their partial numbers are not shown.",
                             markup.Html(f"<ul>{items}</ul>"), kind="error")


def build_banner(
    data_source: str, seed: int, n_bootstrap: int, results: list[Result], where: Mapping[str, list[str]]
) -> markup.Html:
    """HTML for the top of the status page: what this build ran on, and a warning on simulated data."""
    source = str(data_source)
    shown = markup.code_span(source if sources.is_named(source) else Path(source).name)
    notebooks = sorted({n for ns in where.values() for n in ns})
    per_status = {s: sum(r.status == s for r in results) for s in NUMBER_STATUSES}
    tally = ", ".join(f"{n} {STATUS_LABEL[s]}" for s, n in per_status.items() if n)
    line = (
        f"This build: data source {shown}, seed {int(seed)}, {int(n_bootstrap)} bootstrap rounds; "
        f"{len(results)} numbers recorded by {len(notebooks)} chapter(s)" + (f" ({tally})." if tally else ".")
    )
    if sources.is_sample(source):
        return markup.Html(markup.admonition(
            "Simulated data",
            "This build ran on the project's Search Arena **simulator** (" + shown + "), not on the real release: "
            "analyses that need per-conversation data (class BATTLE) show `simulated`, which means the analysis "
            "runs, not that it reproduces the paper. Real public data and published aggregates (REAL, PUB) are used "
            "as usual. Run `make book DATA=path/to/search-arena-chat-24k.parquet` to reproduce on the release.",
            kind="warning") + markup.html(line))
    return markup.html(line)
