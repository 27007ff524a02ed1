"""The catalogue of analyses: every analysis of the four source papers (NG in two versions), one row per ID.

``resources/analyses.csv`` (beside this module) is transcribed from the project's ``ANALYSES.md``:
``analysis_id``, ``paper`` (SA, NG, DR, AE), ``section`` (the heading of that paper's table in ``ANALYSES.md``),
``what``, ``paper_numbers`` (what the paper reports, as text) and ``data_class`` (REAL, PUB, BATTLE, LLM or a
combination, as in ``ANALYSES.md``). Only the book reads it: the status page lists every ID and the figure index
maps the papers' figures and tables to the sections that reproduce them.

``resources/figures.csv`` is the other catalogue: every numbered figure and table of the papers (88: AE Figure 8 has
one caption for two panels, which the analyses count as 8a and 8b), read by :func:`read_figures`, with the IDs that
reproduce each, or the reason it cannot be reproduced, and for NG the number it has in the earlier version.

The catalogue is written for the project's engineers and follows ``ANALYSES.md`` word for word (a test checks it);
where its wording is meant for them (file names, instructions such as "state it"), ``resources/catalogue_reader.csv``
(``analysis_id``, ``column``, ``text``) gives what a reader sees instead: :func:`for_reader` applies it.

``ANALYSES.md`` lists the IDs of its second pass after all the papers' first-pass IDs; :func:`read` returns the
catalogue in paper order instead (:func:`in_paper_order`): each second-pass ID beside the first-pass ID it follows in
its paper (:data:`PAPER_PLACE`), so every table listing the IDs has one block per paper.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import polars as pl

COLUMNS = ("analysis_id", "paper", "section", "what", "paper_numbers", "data_class")
READER_COLUMNS = ("analysis_id", "column", "text")
#: Columns of the catalogue a reader sees (and :func:`for_reader` may reword).
SHOWN = ("what", "paper_numbers", "data_class")

#: The papers of the catalogue, by code (NG has two versions among the sources, one study).
PAPERS: dict[str, str] = {
    "SA": "Search Arena: Analyzing Search-Augmented LLMs",
    "NG": "Search Arena Meets Nuggets: Towards Explanations and Diagnostics in the Evaluation of LLM Responses",
    "DR": "DR-Arena: an Automated Evaluation Framework for Deep Research Agents",
    "AE": "Search Engines in an AI Era: The False Promise of Factual and Verifiable Source-Cited Responses",
}

FIGURE_COLUMNS = ("paper", "kind", "number", "number_earlier_version", "caption", "analysis_ids", "reproducible",
                  "reason")
FIGURE_KINDS = ("Figure", "Table")

#: IDs of the project's own method checks (not analyses of the papers), shown after the papers' IDs.
PROJECT_CHECKS = {
    "VAL": "methods validation: the estimators recover the simulator's planted ratings and style coefficients; "
    "coverage of 95% intervals over replicate datasets",
}


#: Where each second-pass ID stands in its paper: the ID it follows (``None``: the first of its paper). SA: Fig 2's
#: prompt lengths and §2.2's prose; appendix A (Table A.1, Fig A.2, A.2's citation styles) before A.3. DR: Tables
#: 3 to 7 in their order. AE: Table 1 (the user study's findings) opens the paper; Fig 6 draws Table 3's hovers.
PAPER_PLACE: dict[str, str | None] = {
    "SA-22L": "SA-F2R",
    "SA-TA1": "SA-G",
    "SA-A2": "SA-TA1",
    "SA-A2C": "SA-A2",
    "DR-T4": "DR-T3",
    "DR-T5": "DR-T4",
    "DR-T7": "DR-T6",
    "AE-T1": None,
    "AE-F6": "AE-T34",
}


def in_paper_order(catalogue: pl.DataFrame) -> pl.DataFrame:
    """The catalogue's rows in paper order: the papers in :data:`PAPERS` order (others after, as they come), each
    paper's IDs in the catalogue's order with the IDs of :data:`PAPER_PLACE` moved to their place (after the ID named
    there, or first in their paper). An ID whose place names an ID of another paper or one not in the catalogue stays
    where it is (at the end of its paper's block)."""
    ids = list(catalogue["analysis_id"])
    paper_of = dict(zip(ids, catalogue["paper"]))
    moved = {aid: after for aid, after in PAPER_PLACE.items()
             if aid in paper_of and (after is None or paper_of.get(after) == paper_of[aid])}
    papers = list(dict.fromkeys([*(p for p in PAPERS if p in paper_of.values()), *paper_of.values()]))
    order: list[str] = []
    for paper in papers:
        block = [aid for aid in ids if paper_of[aid] == paper and aid not in moved]
        pending = [aid for aid in ids if paper_of[aid] == paper and aid in moved]
        while pending:  # place each moved ID once the ID it follows is placed (chains: DR-T4 then DR-T5)
            placeable = [aid for aid in pending if moved[aid] is None or moved[aid] in block]
            if not placeable:  # a cycle or an ID that follows a moved ID never placed: keep catalogue order
                block += pending
                break
            for aid in placeable:
                after = moved[aid]
                at = 0 if after is None else block.index(after) + 1
                while at < len(block) and block[at] in moved and moved[block[at]] == after:
                    at += 1  # two IDs after the same one keep the catalogue's order
                block.insert(at, aid)
                pending.remove(aid)
        order += block
    rank = {aid: i for i, aid in enumerate(order)}
    return catalogue.sort(pl.col("analysis_id").replace_strict(rank, return_dtype=pl.Int64), maintain_order=True)


def read(path: str | Path | None = None) -> pl.DataFrame:
    """The analysis catalogue (``resources/analyses.csv`` unless ``path`` is given), all columns strings, in paper
    order (:func:`in_paper_order`)."""
    schema = {c: pl.String for c in COLUMNS}
    if path is None:
        with resources.files("bookbuild").joinpath("resources/analyses.csv").open("rb") as fh:
            return in_paper_order(pl.read_csv(fh, schema=schema))
    return in_paper_order(pl.read_csv(path, schema=schema))


def reader_wording(path: str | Path | None = None) -> dict[tuple[str, str], str]:
    """``(analysis_id, column) -> text`` from ``resources/catalogue_reader.csv`` (or ``path``). ``ValueError``
    naming the file and line for an unknown column, an empty text or a repeated key."""
    schema = {c: pl.String for c in READER_COLUMNS}
    if path is None:
        with resources.files("bookbuild").joinpath("resources/catalogue_reader.csv").open("rb") as fh:
            frame = pl.read_csv(fh, schema=schema)
        where = "bookbuild/resources/catalogue_reader.csv"
    else:
        frame, where = pl.read_csv(path, schema=schema), str(path)
    out: dict[tuple[str, str], str] = {}
    for line, row in enumerate(frame.iter_rows(named=True), start=2):
        key = (row["analysis_id"] or "", row["column"] or "")
        if key[1] not in SHOWN:
            raise ValueError(f"{where}, line {line}: column {key[1]!r} is not one a reader sees {list(SHOWN)}")
        if not (row["text"] or "").strip():
            raise ValueError(f"{where}, line {line}: empty text for {key[0]} / {key[1]}")
        if key in out:
            raise ValueError(f"{where}, line {line}: {key[0]} / {key[1]} is reworded twice")
        out[key] = row["text"].strip()
    return out


def for_reader(catalogue: pl.DataFrame, wording: dict[tuple[str, str], str] | None = None) -> pl.DataFrame:
    """The catalogue with its engineer-facing wording replaced by the reader's (:func:`reader_wording`).
    ``ValueError`` when the wording names an ID the catalogue does not have."""
    wording = reader_wording() if wording is None else wording
    ids = set(catalogue["analysis_id"])
    unknown = sorted({aid for aid, _ in wording} - ids)
    if unknown:
        raise ValueError(f"the reader's wording names IDs the catalogue does not have: {unknown}")
    return catalogue.with_columns(
        pl.col("analysis_id").replace_strict(
            {aid: text for (aid, c), text in wording.items() if c == col}, default=pl.col(col), return_dtype=pl.String
        ).alias(col)
        for col in SHOWN
    )


def read_figures(path: str | Path | None = None) -> pl.DataFrame:
    """Every numbered figure and table of the papers (``resources/figures.csv`` unless ``path``): columns
    :data:`FIGURE_COLUMNS`, strings; ``analysis_ids`` separated by ``;``.

    ``ValueError`` naming the file and line for a paper outside :data:`PAPERS`, a kind other than
    :data:`FIGURE_KINDS`, ``reproducible`` other than ``yes`` / ``no``, a ``yes`` without IDs, a ``no`` without a
    reason or with IDs, an earlier-version number outside NG, or a figure listed twice."""
    schema = {c: pl.String for c in FIGURE_COLUMNS}
    if path is None:
        with resources.files("bookbuild").joinpath("resources/figures.csv").open("rb") as fh:
            frame = pl.read_csv(fh, schema=schema)
        where = "bookbuild/resources/figures.csv"
    else:
        frame, where = pl.read_csv(path, schema=schema), str(path)
    seen: dict[tuple[str, str, str], int] = {}
    for line, row in enumerate(frame.iter_rows(named=True), start=2):
        problem = _figure_problem(row)
        key = (row["paper"], row["kind"], row["number"])
        if problem is None and key in seen:
            problem = f"{row['paper']} {row['kind']} {row['number']} is listed twice (first at line {seen[key]})"
        if problem:
            raise ValueError(f"{where}, line {line}: {problem}")
        seen[key] = line
    return frame


def _figure_problem(row: dict) -> str | None:
    if row["paper"] not in PAPERS:
        return f"paper {row['paper']!r} is not one of {list(PAPERS)}"
    if row["kind"] not in FIGURE_KINDS:
        return f"kind {row['kind']!r} is not one of {list(FIGURE_KINDS)}"
    if not (row["number"] or "").strip() or not (row["caption"] or "").strip():
        return "a figure needs its number and caption"
    if row["reproducible"] not in ("yes", "no"):
        return f"reproducible must be 'yes' or 'no', got {row['reproducible']!r}"
    ids, reason = (row["analysis_ids"] or "").strip(), (row["reason"] or "").strip()
    if row["reproducible"] == "yes" and not ids:
        return "a reproducible figure names the analysis IDs that reproduce it"
    if row["reproducible"] == "no" and (ids or not reason):
        return "a figure that cannot be reproduced gives the reason, and no analysis ID"
    if row["number_earlier_version"] and row["paper"] != "NG":
        return "only NG has an earlier version"
    return None


def figure_ids(figures: pl.DataFrame) -> list[list[str]]:
    """The analysis IDs of each row of :func:`read_figures` (``;``-separated in the file)."""
    return [[a.strip() for a in (ids or "").split(";") if a.strip()] for ids in figures["analysis_ids"]]
