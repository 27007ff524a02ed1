"""The catalogue of analyses: every analysis of the five source papers, one row per analysis ID.

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


def read(path: str | Path | None = None) -> pl.DataFrame:
    """The analysis catalogue (``resources/analyses.csv`` unless ``path`` is given), all columns strings."""
    schema = {c: pl.String for c in COLUMNS}
    if path is None:
        with resources.files("bookbuild").joinpath("resources/analyses.csv").open("rb") as fh:
            return pl.read_csv(fh, schema=schema)
    return pl.read_csv(path, schema=schema)


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
