"""The reproduction-status page's rendering: the summary of verdicts, the build banner, the status table (with its
filter and sorting), the figure index, and the verdict badges the chapters show under their section headings.

The table logic (one row per analysis ID, the status rule, reading a build) is :mod:`bookbuild.status`; this
module only draws it. The page opens with one summary (:func:`counts_html`: every verdict class counted, explained in
a line, with an example), then one row per ID: its verdict badge (:func:`verdict_badge`, the same colours wherever a
verdict is shown), a one-line summary with the numbers folded in a ``<details>`` (the paper's numbers from the
catalogue and from :mod:`bookbuild.paper_values`), and links named by the chapter's title to the sections that
compute it (:func:`bookbuild.navigation.section_href`). Only chapters of the build are linked; a failed chapter's IDs
show no number and no link. The table is complete without JavaScript; :func:`table_script` adds a filter by words,
paper, verdict and evidence, and sorting by column.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from pathlib import Path

import polars as pl

from analysis_lib import sources
from bookbuild import markup, navigation, paper_values
from bookbuild.catalogue import PAPERS
from bookbuild.evidence import STATUS_LABEL, Result
from bookbuild.evidence import STATUSES as NUMBER_STATUSES
from bookbuild.navigation import Chapter, IndexEntry
from bookbuild.section_tables import format_paper
from bookbuild.status import (
    BASES,
    STATUS_MEANING,
    VERDICT_PHRASE,
    VERDICT_TABLE,
    VERDICTS,
    reproduced_on_data,
    status_by_paper,
    status_counts,
)

#: Each verdict's badge colours (text, background), from the one verdict table.
VERDICT_STYLE: dict[str, tuple[str, str]] = {v: t.colours for v, t in VERDICT_TABLE.items()}


_CSS = """<style>
table.repro-status, table.figure-index, table.verdict-counts {border-collapse: collapse; font-size: 0.82em;
  width: 100%; table-layout: fixed;}
table.repro-status th, table.repro-status td, table.figure-index th, table.figure-index td,
table.verdict-counts th, table.verdict-counts td {
  border-bottom: 1px solid #d0d7de; padding: 3px 5px; vertical-align: top; text-align: left;
  overflow-wrap: anywhere;}
table.repro-status td.id {font-weight: 600; white-space: nowrap;}
table.repro-status tr.paper th, table.figure-index tr.paper th {padding-top: 12px; font-size: 1.05em;
  border-bottom: 2px solid #8c959f;}
table.repro-status .basis, table.repro-status .why, table.verdict-counts .basis {display: block; color: #57606a;
  font-size: 0.92em;}
table.repro-status details summary {cursor: pointer;}
table.repro-status details ul {margin: 2px 0 4px 0; padding-left: 1.2em;}
table.repro-status code {font-size: 0.95em; overflow-wrap: anywhere;}
table.figure-index td.no {color: #57606a;}
table.verdict-counts tr.none {color: #6e7781;}
table.verdict-counts td.n {text-align: right; white-space: nowrap;}
.status-filter {display: flex; flex-wrap: wrap; gap: 6px; align-items: center; margin: 0.4em 0; font-size: 0.85em;}
.status-filter input, .status-filter select {font-size: 1em; padding: 1px 4px;}
.status-filter input {flex: 1 1 12em;}
table.repro-status th button {all: unset; cursor: pointer; font-weight: 600;}
table.repro-status th button::after {content: " \u2195"; color: #8c959f;}
</style>"""

#: (header, width): the status table's columns.
_COLUMNS = (("ID", "9%"), ("what", "26%"), ("verdict", "18%"), ("numbers by evidence (click for them)", "31%"),
            ("section", "16%"))


def verdict_badge(verdict: str, title: str = "") -> str:
    """A verdict as a small coloured label (HTML, the text escaped): the same on the status page, in the figure index
    and under each section heading. ``title``: a tooltip (escaped)."""
    fg, bg = VERDICT_STYLE.get(verdict, ("#24292f", "#ffffff"))
    hint = f' title="{html.escape(title, quote=True)}"' if title else ""
    return (f'<span class="verdict-badge" data-verdict="{html.escape(verdict, quote=True)}"{hint} '
            f'style="color:{fg};background:{bg};border:1px solid {fg}33;border-radius:3px;padding:0 6px;'
            f'font-weight:600;white-space:nowrap">{html.escape(verdict)}</span>')


def basis_text(status: str, basis: str | None) -> str:
    """What a verdict rests on, in words (``on published data``, ``worked example, no data``, ``on real data, the
    rest simulated``); empty where the verdict says it already (``simulated``, ``checked``, ``user data``, ...)."""
    if not basis or status not in ("reproduced", "assumption", "differs", "computed", "paper inconsistent",
                                   "partly simulated"):
        return ""
    if basis == "no data":
        return "worked example, no data"
    return f"on {basis} data" + (", the rest simulated" if status == "partly simulated" else "")


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
    """The verdict cell: the verdict's badge with its reason (``assumption (unpublished n)``), what it rests on
    (:func:`basis_text`), the paper's inconsistency where there is one, and for ``not run`` the reason."""
    status = row["status"] or "not yet"
    out = [verdict_badge(status)]
    if row["reason"] and status in ("assumption", "paper inconsistent"):
        out.append(f'<span class="why">{html.escape(row["reason"])}</span>')
    if basis := basis_text(status, row["basis"]):
        out.append(f'<span class="basis">{html.escape(basis)}</span>')
    if row["inconsistent"] and status != "paper inconsistent":
        out.append(f'<span class="why">paper inconsistent ({html.escape(row["inconsistent"])})</span>')
    if status == "not run" and row["reason"]:
        out.append(f'<span class="why">{html.escape(row["reason"])}</span>')
    return " ".join(out)


def _data(name: str, value: str) -> str:
    return f' data-{name}="{html.escape(value, quote=True)}"'


def status_html(table: pl.DataFrame, chapters: Mapping[str, Chapter] | None = None) -> str:
    """The status table as one HTML table (with a little CSS), for ``IPython.display.HTML``: complete and readable
    without JavaScript (:func:`table_script` adds the filter and the sorting).

    One header row per paper; one row per ID (``<tr id="status-<id>">``, with its paper, verdict, the verdict's rank
    in :data:`bookbuild.status.VERDICTS` and its evidence groups as ``data-`` attributes for the filter): ID, what,
    the verdict (:func:`verdict_html`), the ID's numbers counted by evidence with the numbers folded in a
    ``<details>``, and links to the sections that compute it, named by the chapter's title. Only chapters in
    ``chapters`` (the built, non-failed ones) are linked. Every text is escaped.
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
        verdict = row["status"] or "not yet"
        rank = VERDICTS.index(verdict) if verdict in VERDICTS else len(VERDICTS)
        attrs = (_data("paper", row["paper"] or "?") + _data("verdict", verdict) + _data("rank", str(rank))
                 + _data("evidence", "|".join((row["groups"] or "").split(", ")) if row["groups"] else ""))
        out += [
            f'<tr id="{html.escape(navigation.status_anchor(row["id"]), quote=True)}"{attrs}>',
            f'<td class="id">{html.escape(row["id"])}</td>',
            f"<td>{_inline(row['what'])}</td>",
            f"<td>{verdict_html(row)}</td>",
            f"<td>{build}</td>",
            f"<td>{links}</td>",
            "</tr>",
        ]
    out.append("</tbody></table>")
    return "\n".join(out)


def section_badge(row: Mapping[str, str | None]) -> str:
    """What a chapter shows under a section heading, linked to the ID's status row: the ID's verdict badge and what it
    rests on (:func:`basis_text`: ``reproduced`` on published data, ``simulated``), from its row of the status table."""
    status = row["status"] or "not yet"
    basis = basis_text(status, row["basis"])
    return verdict_badge(status) + (f' <span class="section-basis">{html.escape(basis)}</span>' if basis else "")


#: The data a section's verdict rests on, as the chapter's line names it (:func:`chapter_data_line`).
_SECTION_DATA = {
    "simulated": "the simulator", "checked": "checks of the paper", "transcribed": "the paper, as transcribed",
    "user data": "a user's data", "LLM output": "an LLM's output", "not run": "nothing: not run in this build",
    "not yet": "nothing yet", "failed": "nothing: its chapter failed",
}


def section_data(row: Mapping[str, str | None]) -> str:
    """What one section's numbers ran on, in a word or three (``published data``, ``real data and the simulator``,
    ``the simulator``), from its ID's row of the status table."""
    status, basis = row["status"] or "not yet", row["basis"] or ""
    if status in _SECTION_DATA:
        return _SECTION_DATA[status]
    if basis == "no data":
        return "no data (worked examples)"
    return f"{basis} data" + (" and the simulator" if status == "partly simulated" else "")


def chapter_data_line(rows: list[Mapping[str, str | None]]) -> markup.Html:
    """A chapter's line saying what its sections ran on, where they ran on different data (``rows``: the status rows
    of its section IDs, in page order): each kind of data with its sections, linked (the badge under each heading
    says the same). Empty when every section that ran ran on the same data."""
    groups: dict[str, list[str]] = {}
    for row in rows:
        groups.setdefault(section_data(row), []).append(str(row["id"]))
    if len([what for what in groups if not what.startswith("nothing")]) < 2:  # sections that did not run aside
        return markup.Html("")
    parts = []
    for what, ids in groups.items():
        links = ", ".join(f'<a href="#{html.escape(aid.lower(), quote=True)}">{html.escape(aid)}</a>' for aid in ids)
        parts.append(f"<li><strong>{html.escape(what)}</strong>: {links}</li>")
    return markup.Html('<div class="admonition note chapter-data"><p class="admonition-title">What the sections of '
                       "this page ran on</p><p>This page mixes data: each section's badge, under its heading, says "
                       f"which (and links its status).</p><ul>{''.join(parts)}</ul></div>")


def table_script() -> str:
    """The status table's script (``resources/status_table.js``), for ``IPython.display.HTML`` after the table: a
    filter box (ID or any word of a row), a choice of paper, verdict and evidence, a count of the rows shown, and
    headers that sort the rows (the ID's header restores the papers' order). It holds no data; without JavaScript
    the table is shown whole, as :func:`status_html` writes it."""
    return f"<script>\n{(Path(__file__).parent / 'resources' / 'status_table.js').read_text(encoding='utf-8')}</script>"


def index_html(entries: list[IndexEntry], verdicts: Mapping[str, str] | None = None) -> str:
    """The index of every figure and table of the papers (:func:`bookbuild.navigation.paper_figure_index`) as
    HTML: one header row per paper, then per figure its number (for NG also its number in the earlier version), its
    caption, and the sections that reproduce it (linked), each with its ID's verdict badge (from ``verdicts``,
    :func:`verdict_badge`), or the reason it cannot be reproduced. Each row has an id (``fig-ng-fig-2``) to link to.
    Every text is escaped."""
    verdicts = verdicts or {}
    cols = "".join(f'<col style="width: {w}">' for w in ("15%", "45%", "40%"))
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
            links = []
            for aid, href, text in e.links:
                name = (f'<a href="{html.escape(href, quote=True)}">{html.escape(text)}</a>' if href
                        else html.escape(text))
                links.append(name + (f" {verdict_badge(verdicts[aid])}" if aid in verdicts else ""))
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


#: How the papers are counted where the page counts them: four studies, one (NG) in two versions.
PAPERS_IN_WORDS = "The four papers (NG in two versions, counted once)"


def index_summary(entries: list[IndexEntry], verdicts: Mapping[str, str] | None = None) -> str:
    """One Markdown paragraph: how many figures and tables the papers have, how many cannot be reproduced, and the
    others counted by :func:`figure_verdict` (from the same verdicts as the status table)."""
    verdicts = verdicts or {}
    reproducible = [e for e in entries if e.reason is None]
    per: dict[str, int] = {}
    for e in reproducible:
        v = figure_verdict(e, verdicts) or "not yet"
        per[v] = per.get(v, 0) + 1
    shown = [f"**{per['reproduced']} reproduced**"] if per.get("reproduced") else ["**none reproduced**"]
    shown += [f"{per[v]} {v}" for v in reversed(FIGURE_ORDER) if v != "reproduced" and per.get(v)]
    return (f"{PAPERS_IN_WORDS} have **{len(entries)} numbered figures and tables** (AE Figure 8 has one caption "
            f"for two panels, 8a and 8b, listed here as two rows); {len(entries) - len(reproducible)} cannot be "
            "reproduced (diagrams, screenshots, prompt text, examples, data not released), each with its reason. "
            f"Of the other {len(reproducible)}, in this build: " + " · ".join(shown) + ". A figure counts as "
            "reproduced only when every analysis behind it is (the rule above); otherwise it takes the verdict of its "
            "least reproduced analysis.")


def _count(n: int, phrase: tuple[str, str]) -> str:
    return f"{n} {phrase[0] if n == 1 else phrase[1]}"


def _listed(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _reproduced_detail(table: pl.DataFrame) -> list[str]:
    """What the IDs reproduced from real or published data rest on, and in how many the paper contradicts itself."""
    row = status_counts(table).filter(pl.col("status") == "reproduced").row(0, named=True)
    words = {"real": "on real data", "published": "on published aggregates", "real + published": "on both"}
    out = [f"{row[b]} {words[b]}" for b in BASES if row[b]]
    inconsistent = table.filter(pl.col("inconsistent").is_not_null() & (pl.col("status") == "reproduced")
                                & pl.col("basis").is_in(list(BASES))).height
    if inconsistent:
        out.append(f"in {inconsistent} of them the paper contradicts itself and ours agrees with one side")
    return out


def summary_sentence(table: pl.DataFrame) -> str:
    """One Markdown sentence (no closing period) counting every ID by verdict class: first the IDs reproduced from
    real or published data (what they rest on, and in how many the paper contradicts itself), then each other class
    with IDs (:data:`bookbuild.status.VERDICT_PHRASE`), then the total, which the counts add up to."""
    counts = dict(zip(status_counts(table)["status"], status_counts(table)["ids"]))
    reproduced = reproduced_on_data(table)
    head = (f"Of {table.height} analysis IDs, **{reproduced} {'is' if reproduced == 1 else 'are'} reproduced from "
            "real or published data**")
    detail = _reproduced_detail(table) if reproduced else []
    head += f" ({'; '.join(detail)})" if detail else ""
    rest = [_count(counts["reproduced"] - reproduced, VERDICT_PHRASE["reproduced"])] if (
        counts["reproduced"] > reproduced) else []
    rest += [_count(counts[v], VERDICT_PHRASE[v]) for v in VERDICTS if v != "reproduced" and counts.get(v)]
    return head + (f"; {_listed(rest)}" if rest else "") + f": {table.height} in all"


def counts_html(table: pl.DataFrame) -> markup.Html:
    """The page's summary: :func:`summary_sentence`, then every verdict class in one table (its badge, its IDs in
    this build, what it means in one line, :data:`bookbuild.status.STATUS_MEANING`, and the first ID that has it as
    an example, linked to its row of the status table), the total last. Every text is escaped."""
    first: dict[str, dict] = {}
    for row in table.iter_rows(named=True):
        first.setdefault(row["status"], row)
    rows = []
    for v, n in status_counts(table).select("status", "ids").iter_rows():
        example = "—"
        if v in first:
            ex = first[v]
            example = (f'<a href="#{html.escape(navigation.status_anchor(ex["id"]), quote=True)}" '
                       f'title="{html.escape(ex["what"] or "", quote=True)}">{html.escape(ex["id"])}</a>')
        rows.append(f'<tr class="{"some" if n else "none"}"><td>{verdict_badge(v)}</td><td class="n">{n}</td>'
                    f"<td>{html.escape(STATUS_MEANING[v])}</td><td>{example}</td></tr>")
    cols = "".join(f'<col style="width: {w}">' for w in ("19%", "7%", "62%", "12%"))
    return markup.Html(
        _CSS + markup.html(summary_sentence(table) + ".") + f'<table class="verdict-counts"><colgroup>{cols}'
        "</colgroup><thead><tr><th>verdict</th><th>IDs</th><th>what it means</th><th>e.g.</th></tr></thead>"
        f"<tbody>{''.join(rows)}<tr><td>total</td><td class=\"n\">{table.height}</td><td></td><td></td></tr>"
        "</tbody></table>")


#: The rule that decides "reproduced", as the page states it.
REPRODUCED_RULE = ("An analysis counts as **reproduced** only when its own numbers are computed in this build from "
                   "real public data (inputs whose sha256 is in the data manifest) or published aggregates and match "
                   "the paper's; numbers from a user's file, an LLM's output, the simulator, checks of the paper "
                   "against itself and transcriptions are counted in classes of their own and never make it so.")


def rule_markdown() -> str:
    """The rule that decides an ID's verdict (:data:`REPRODUCED_RULE`, then the order of
    :func:`bookbuild.status.verdict`), as the page states it."""
    return (REPRODUCED_RULE + " Its numbers on real or published data decide first (`differs` if one differs, "
            "else `assumption`, else `reproduced`, else `computed`; `partly simulated` instead of `reproduced` or "
            "`computed` when some of its numbers ran only on the simulator); an ID without such numbers reads "
            "`user data`, `LLM output`, `simulated`, `checked`, `transcribed` or `not run`, the first that applies. "
            "`not yet` means no chapter of this build records the ID; `failed`, that its chapter failed in this "
            "build.")


#: The status page's summary (:func:`counts_html`): its anchor, which the front page links.
SUMMARY_ANCHOR = "summary"


def front_page_counts(table: pl.DataFrame, status_doc: str) -> markup.Html:
    """The front page's line of counts (HTML): the status page's :func:`summary_sentence`, every class counted in
    words, with a link to the summary where each class is explained with an example (``status_doc``: the status
    page's address from the front page, no ``.html``)."""
    return markup.Html("<p>" + markup.concat(
        summary_sentence(table) + " (", markup.link("each class explained, with an example",
                                                    f"{status_doc}.html#{SUMMARY_ANCHOR}"), ").") + "</p>")


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
