"""Search Arena chapters 03 (preferences: SA §3.1, App. D) and 04 (citations: SA §3.2, App. E), the book's side:
the paper's values drawn on the figures, the claims the paper reads off a figure and their checks, readable tables
and reader notes. The analyses are :mod:`analysis_lib.search_arena.bt` and
:mod:`analysis_lib.search_arena.preference`, called in the cells; each chapter records their results with
``rec.record(analysis_id, result)`` (the paths are the ``result`` cells of ``resources/paper_values/sa.csv``).

- Chapter 03: :func:`rating_note` (SA-D5), :func:`d5s_against_paper`, :func:`d5s_table`, :func:`d5s_notes`
  (Table D.1's subsets), :func:`coefficient_tables` (SA-32L, SA-32C), :func:`f5_paper_means`,
  :func:`d6_comparisons`, :func:`d7_section`.
- Chapter 04: :func:`covers_zero` and :func:`e1_section`, :func:`e4_result`, :func:`f6r_section`.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from analysis_lib.plotting import Reference
from analysis_lib.search_arena import bt, methods_validation
from analysis_lib.search_arena.attribution_io import AttributionSubset
from analysis_lib.search_arena.schema import ATTRIBUTION_COUNTS
from bookbuild import paper_values
from bookbuild.sections import Figure, Section, Table

TARGET = "calibration target: the simulator is built to reproduce this paper value"

# ----------------------------------------------------------------------------------------------- SA-D5, SA-D5s


def rating_note(d1: pl.DataFrame, published: pl.DataFrame, *, anchor: str | None, simulated: bool,
                target: str) -> str:
    """The note every SA-D5 rating carries: the calibration target and the offset all ratings share from Table D.1
    on the simulator (the anchor's estimation error:
    :func:`analysis_lib.search_arena.methods_validation.error_decomposition`); the scale when the release has no
    anchor (the ratings' mean is 1000 then)."""
    if anchor is None:
        return "Elo rating with the mean at 1000: this release has no gpt-4o-search, the paper's anchor"
    if not simulated:
        return ""
    offset = methods_validation.error_decomposition(dict(zip(d1["model"], d1["rating"], strict=True)),
                                                    dict(zip(published["model"], published["rating"], strict=True)))
    return (f"{target}; the ratings here share an offset of {offset['shared_offset'][0]:+.1f} Elo from Table D.1 "
            "(the anchor's estimation error; the methods-validation chapter measures it)")


SUBSET_NAMES = {"english": "English", "non_english": "non-English", "factual": "Factual", "non_factual": "non-Factual"}


def _subsets(d1: pl.DataFrame) -> list[str]:
    """The subsets fitted (a subset no battle carries the label of has null columns)."""
    return [s for s in SUBSET_NAMES if d1[f"rating_{s}"].is_not_null().any()]


def d5s_against_paper(d1: pl.DataFrame, published: pl.DataFrame) -> pl.DataFrame:
    """Each subset rating of ``d1`` beside Table D.1's (``published``): ``model, subset`` (readable name),
    ``ours``, ``paper`` (Elo); models or subsets the paper lacks are not in it."""
    cols = [f"rating_{s}" for s in _subsets(d1)]
    both = d1.unpivot(index="model", on=cols).join(published.unpivot(index="model", on=cols),
                                                     on=["model", "variable"], suffix="_paper")
    return both.select("model", pl.col("variable").str.replace("rating_", "").replace(SUBSET_NAMES).alias("subset"),
                       pl.col("value").alias("ours"), pl.col("value_paper").alias("paper"))


def d5s_table(d1: pl.DataFrame, published: pl.DataFrame) -> Table:
    """Ours / the paper's rounded Elo, one column per subset."""
    subsets = _subsets(d1)
    paper_cols = published.select("model", *[pl.col(f"rating_{s}").alias(f"paper_{s}") for s in subsets])
    side_by_side = d1.join(paper_cols, on="model", how="left").select(
        "model",
        *[pl.format("{} / {}", *[pl.col(f"{p}_{s}").round(0).cast(pl.Int64) for p in ("rating", "paper")])
          .alias(f"{SUBSET_NAMES[s]}: ours / paper (Elo)") for s in subsets])
    return Table(side_by_side, "Subset ratings, this build / Table D.1")


def d5s_notes(d1: pl.DataFrame) -> list[str]:
    """The subsets not fitted, and why (no battle carries their label)."""
    absent = [SUBSET_NAMES[s] for s in SUBSET_NAMES if s not in _subsets(d1)]
    return ([f"Not run: the {', '.join(absent)} subsets (no battle of these data carries their label: "
             "`primary_intent` or `languages`)."] if absent else [])


# ---------------------------------------------------------------------------------------------- SA-32L, SA-32C

#: Readable headers of the coefficient tables (:func:`coefficient_tables`).
COEFFICIENT_COLUMNS = {"feature": "feature", "estimate": "estimate (bootstrap mean)", "ci_lower": "95% CI low",
                       "ci_upper": "95% CI high", "estimate_ml": "full-data estimate"}
SHIFT_COLUMNS = {"feature": "feature", "paper": "int32 storage (the authors')", "float": "exact values",
                 "shift": "shift (exact − int32)"}


def coefficient_tables(coef: pl.DataFrame, shift: pl.DataFrame, what: str) -> list[Table]:
    """The bootstrap coefficient table and the storage-convention table of SA-32L / SA-32C, readable headers (the
    column the library calls ``paper`` is the authors' int32 storage of the feature, not the paper's value)."""
    shown = coef.select([c for c in COEFFICIENT_COLUMNS if c in coef.columns]).rename(COEFFICIENT_COLUMNS)
    return [Table(shown, f"{what} coefficient (bootstrap)", 4),
            Table(shift.rename(SHIFT_COLUMNS), "The authors' integer storage against exact feature values "
                                               "(full-data fits)", 4)]


# ------------------------------------------------------------------------------------------------ SA-F5, SA-D6


def f5_paper_means(column: str, intents: list[str]) -> dict[str, float]:
    """The paper's Fig 5 mean of ``column`` for each intent that has one (``resources/paper_values/sa.csv``)."""
    table = paper_values.table()
    found = {i: table.get(("SA-F5", f"mean {column}, {i}")) for i in intents}
    return {i: float(pv.paper) for i, pv in found.items() if pv is not None and isinstance(pv.paper, (int, float))}


def d6_comparisons(means: pl.DataFrame) -> pl.DataFrame:
    """SA-D6: the comparisons the paper reads off Fig D.6 (App. D.2, E.1), for every feature and ordered pair of
    models: ``feature, larger, smaller, holds`` (``"yes"`` when ``larger``'s mean is strictly above ``smaller``'s,
    else ``"no"``); ``means``: ``feature, model, mean``. The paper's five claims select their pair (the ``result``
    cells of SA-D6); a model the data lack has no pair, and its claim does not run."""
    pairs = means.join(means, on="feature", suffix="_smaller").filter(pl.col("model") != pl.col("model_smaller"))
    return pairs.select("feature", pl.col("model").alias("larger"), pl.col("model_smaller").alias("smaller"),
                        pl.when(pl.col("mean") > pl.col("mean_smaller")).then(pl.lit("yes")).otherwise(pl.lit("no"))
                        .alias("holds"))


# ------------------------------------------------------------------------------------------------ SA-D7, SA-E1


def d7_section(by_intent: pl.DataFrame, figure: Figure) -> Section:
    """SA-D7's figure and note, from the length coefficient per intent
    (:func:`~analysis_lib.search_arena.bt.style_by_subset`, ascending): the paper's *Factual Lookup* coefficient
    drawn on ``figure``; on the simulator (one planted length coefficient for every intent) a smallest coefficient
    elsewhere is said once."""
    paper = paper_values.lookup("SA-D7", "beta_length, Factual Lookup").paper
    if not isinstance(paper, float):
        raise ValueError(f"sa.csv, SA-D7 'beta_length, Factual Lookup': expected a number, got {paper!r}")
    smallest = by_intent.sort("estimate")["subset"][0] if by_intent.height else None
    text = ""
    if figure.kind == "simulated" and smallest not in (None, "Factual Lookup"):
        text = (f"On this simulated release the smallest coefficient is on *{smallest}*, not on *Factual Lookup* as "
                "in the paper: the simulator plants one length coefficient for every intent, so the order of the "
                "intents here is sampling noise.")
    present = "Factual Lookup" in by_intent["subset"].to_list()
    reference = Reference.at_marks({"Factual Lookup": float(paper)}, axis="x") if present else None
    return Section(figures=[figure._replace(reference=reference)], notes=[text] if text else [])


#: The paper's reading of Fig E.1 (App. E.1).
E1_LARGEST, E1_NULL = "Analysis", "Guidance"


def covers_zero(by_subset: pl.DataFrame, subset: str) -> str | None:
    """Whether the 95% interval of ``subset``'s coefficient covers 0 (``"yes"``/``"no"``, as the paper values state a
    claim); ``None`` when ``by_subset`` (:func:`~analysis_lib.search_arena.bt.style_by_subset`) has no such subset."""
    row = by_subset.filter(pl.col("subset") == subset)
    return None if row.height == 0 else ("yes" if row["ci_lower"][0] <= 0 <= row["ci_upper"][0] else "no")


def e1_section(by_intent: pl.DataFrame, covers: str | None, figure: Figure) -> Section:
    """SA-E1's figure and note, from the citation coefficient per intent and whether *Guidance*'s interval
    ``covers`` 0 (:func:`covers_zero`): on the simulator, where every intent shares one planted coefficient, a
    disagreement with the paper is said in one sentence."""
    largest = by_intent.sort("estimate")["subset"][-1] if by_intent.height else None
    differs = [what for what, bad in [(f"the largest coefficient is on *{largest}*, not *{E1_LARGEST}*",
                                       largest not in (None, E1_LARGEST)),
                                      (f"*{E1_NULL}*'s interval excludes 0", covers == "no")] if bad]
    text = ""
    if figure.kind == "simulated" and differs:
        text = (f"On this simulated release {' and '.join(differs)}, unlike the paper: the simulator plants one "
                "citation coefficient for every intent, so the differences between intents here are sampling noise.")
    return Section(figures=[figure], notes=[text] if text else [])


# ------------------------------------------------------------------------------------------------ SA-E4, SA-F6R


def e4_result(effect: bt.ControlEffect, plain: pl.DataFrame, n_voted: int) -> dict[str, Any]:
    """What SA-E4 records: ``effect`` (:func:`~analysis_lib.search_arena.bt.control_effect`), whether the ratings
    ``converge`` (``"yes"``/``"no"``, the paper's reading of Fig E.4) and the authors' "before" spread,
    ``authors_sd``: the SD of ``plain`` (the unpenalised leaderboard of all ``n_voted`` voted battles, as their
    Fig E.4) over the ``n_models`` models of the two fits."""
    before = dict(plain.select("model", "rating_ml").iter_rows())
    shown = [before[m] for m in effect.ratings["model"].to_list() if m in before]
    return {"effect": effect, "converge": "yes" if effect.converge else "no",
            "authors_sd": float(bt.rating_spread(shown)), "n_models": len(shown), "n_voted": n_voted}


NO_COUNTS = "needs the citation-attribution subset (support/irrelevant/contradict counts); not in this data"


def f6r_paper() -> dict[str, float]:
    """The paper's SA-F6R coefficients that are numbers (feature -> β)."""
    table = paper_values.table()
    found = {f: table.get(("SA-F6R", f"beta {f}")) for f in ATTRIBUTION_COUNTS}
    return {f: float(pv.paper) for f, pv in found.items() if pv is not None and isinstance(pv.paper, (int, float))}


def f6r_section(subset: AttributionSubset, figure: Figure | None) -> Section:
    """SA-F6R's figure and note (``figure`` ``None``: the data have no counts, nothing to show): the planted values
    drawn on the simulated subset (what the fit should recover), the paper's on a real file; the records left out
    for a missing count said."""
    if figure is None:
        return Section()
    planted = subset.planted.betas if subset.planted is not None else {}
    marks = planted or f6r_paper()
    reference = Reference.at_marks(marks, label="planted" if planted else "paper") if marks else None
    text = ""
    if subset.check is not None and subset.check.n_unlabelled:
        text = (f"{subset.check.n_unlabelled:,} of the file's {subset.check.n_records:,} conversations lack one of "
                "the six attribution counts and are left out of the fit.")
    return Section(figures=[figure._replace(reference=reference)], notes=[text] if text else [])
