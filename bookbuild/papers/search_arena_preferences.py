"""Search Arena chapters 03 (preferences: SA §3.1, App. D) and 04 (citations: SA §3.2, App. E), the book's side:
the numbers recorded against the paper (:class:`~bookbuild.sections.Number`), the paper's values drawn on the
figures, the claims the paper reads off a figure and their checks, readable tables and reader notes. The analyses
are :mod:`analysis_lib.search_arena.bt` and :mod:`analysis_lib.search_arena.preference`, called in the cells.

- Chapter 03: :func:`record_ratings` (SA-D5 against Table D.1), :func:`d5s_against_paper`, :func:`d5s_numbers`,
  :func:`d5s_table`, :func:`d5s_notes` (Table D.1's subsets), :func:`coefficient_tables` (SA-32L, SA-32C),
  :func:`f4_numbers`, :func:`f5_paper_means`, :func:`f5_numbers`, :func:`d6_checks` / :func:`d6_numbers`,
  :func:`d7_section`.
- Chapter 04: :func:`e1_section`, :func:`e4_section`, :func:`f6r_section`.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from analysis_lib.plotting import Reference
from analysis_lib.ranking import Ranking
from analysis_lib.search_arena import bt, methods_validation
from analysis_lib.search_arena.attribution_io import AttributionSubset
from analysis_lib.search_arena.preference import LineFit
from analysis_lib.search_arena.schema import ATTRIBUTION_COUNTS
from bookbuild import paper_values
from bookbuild.recorder import Recorder
from bookbuild.sections import Figure, Number, Section, Table, not_run

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


def record_ratings(rec: Recorder, d1: pl.DataFrame, board: pl.DataFrame, published: pl.DataFrame, *,
                   anchor: str | None, simulated: bool, target: str) -> None:
    """SA-D5: ``<model> rating`` (with its 95% interval from ``board``, the leaderboard's frame, so that a miss
    beyond the tolerance says whether the interval covers the paper's value: :func:`bookbuild.evidence.miss_note`)
    and ``<model> rank`` of every model of ``d1`` (:func:`analysis_lib.search_arena.preference.table_d1`)."""
    note = rating_note(d1, published, anchor=anchor, simulated=simulated, target=target)
    interval = {m: (lo, hi) for m, lo, hi in board.select("model", "ci_lower", "ci_upper").iter_rows()}
    for row in d1.iter_rows(named=True):
        rec.number("SA-D5", f"{row['model']} rating", row["rating"], note=note, interval=interval.get(row["model"]))
        rec.number("SA-D5", f"{row['model']} rank", row["rank"])


SUBSET_NAMES = {"english": "English", "non_english": "non-English", "factual": "Factual", "non_factual": "non-Factual"}


def _subsets(d1: pl.DataFrame) -> list[str]:
    return [c.removeprefix("rating_") for c in d1.columns if c.startswith("rating_")]


def d5s_against_paper(d1: pl.DataFrame, published: pl.DataFrame) -> pl.DataFrame:
    """Each subset rating of ``d1`` beside Table D.1's (``published``): ``model, subset`` (readable name),
    ``ours``, ``paper`` (Elo); models or subsets the paper lacks are not in it."""
    cols = [f"rating_{s}" for s in _subsets(d1)]
    both = d1.unpivot(index="model", on=cols).join(published.unpivot(index="model", on=cols),
                                                     on=["model", "variable"], suffix="_paper")
    return both.select("model", pl.col("variable").str.replace("rating_", "").replace(SUBSET_NAMES).alias("subset"),
                       pl.col("value").alias("ours"), pl.col("value_paper").alias("paper"))


def d5s_numbers(d1: pl.DataFrame) -> list[Number]:
    """SA-D5s: every subset rating and rank of ``d1``."""
    return [Number("SA-D5s", f"{row['model']} {col}", row[col]) for row in d1.iter_rows(named=True)
            for col in d1.columns if col.startswith(("rating_", "rank_"))]


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


# ---------------------------------------------------------------------------------------- SA-F4, SA-F5, SA-D6


def f4_numbers(fig4: Mapping[str, tuple[pl.DataFrame, LineFit]]) -> list[Number]:
    """SA-F4: the OLS slope of score on each feature's mean (the paper shows both relationships as positive and
    gives no slope or R²: the slope is recorded against "positive", R² and p in its note)."""
    return [Number("SA-F4", f"OLS slope, score on mean {column} (Elo per unit)", line.slope,
                   note=f"R² = {line.r2:.2f}, p = {line.p_value:.3g}") for column, (_, line) in fig4.items()]


def f5_paper_means(column: str, intents: list[str]) -> dict[str, float]:
    """The paper's Fig 5 mean of ``column`` for each intent that has one (``resources/paper_values/sa.csv``)."""
    table = paper_values.table()
    found = {i: table.get(("SA-F5", f"mean {column}, {i}")) for i in intents}
    return {i: float(pv.paper) for i, pv in found.items() if pv is not None and isinstance(pv.paper, (int, float))}


def f5_numbers(by_intent: pl.DataFrame, column: str, *, simulated: bool) -> list[Number]:
    """SA-F5: the mean of ``column`` per intent (``by_intent``: :func:`~analysis_lib.search_arena.preference.mean_ci`
    by ``primary_intent``) for the intents with a paper value; on the simulator they are planted (targets)."""
    paper = f5_paper_means(column, by_intent["primary_intent"].to_list())
    return [Number("SA-F5", f"mean {column}, {i}", m, note=TARGET if simulated else "")
            for i, m in zip(by_intent["primary_intent"], by_intent["mean"], strict=True) if i in paper]


#: The five comparisons the paper reads off Fig D.6 (App. D.2, E.1): (claim, feature, larger model, smaller model).
D6_CLAIMS = [
    ("sonar-pro-high answers longer than sonar-pro", "response_length", "sonar-pro-high", "sonar-pro"),
    ("sonar-pro-high cites more than sonar-pro", "citation_count", "sonar-pro-high", "sonar-pro"),
    ("sonar-reasoning-pro-high cites fewer than sonar-pro-high", "citation_count", "sonar-pro-high",
     "sonar-reasoning-pro-high"),
    ("sonar-reasoning cites fewer than sonar", "citation_count", "sonar", "sonar-reasoning"),
    ("gemini-2.5-pro-grounding cites fewer than gemini-2.5-flash-grounding", "citation_count",
     "gemini-2.5-flash-grounding", "gemini-2.5-pro-grounding"),
]


def d6_checks(means: Mapping[str, Mapping[str, float]]) -> dict[str, str | None]:
    """Each Fig D.6 claim: ``"yes"`` when the larger model's mean is strictly above the smaller one's, ``"no"``
    otherwise, ``None`` (not run) when either model is missing. ``means``: feature -> model -> mean."""
    out: dict[str, str | None] = {}
    for claim, feature, larger, smaller in D6_CLAIMS:
        m = means.get(feature, {})
        out[claim] = None if larger not in m or smaller not in m else ("yes" if m[larger] > m[smaller] else "no")
    return out


def d6_numbers(means: Mapping[str, Mapping[str, float]]) -> list[Number]:
    """SA-D6: the five claims of :data:`D6_CLAIMS` checked on ``means`` (feature -> model -> mean)."""
    return [Number("SA-D6", claim, holds) if holds is not None else
            Number("SA-D6", claim, reason="a model of the comparison has no voted battle in this data")
            for claim, holds in d6_checks(means).items()]


# ------------------------------------------------------------------------------------------------ SA-D7, SA-E1


def d7_section(by_intent: pl.DataFrame, figure: Figure) -> Section:
    """SA-D7 from the length coefficient per intent (:func:`~analysis_lib.search_arena.bt.style_by_subset`): the
    *Factual Lookup* coefficient and the intent with the smallest one, the paper's value drawn on ``figure``; on
    the simulator (one planted length coefficient for every intent) a smallest coefficient elsewhere is said once."""
    paper = paper_values.lookup("SA-D7", "beta_length, Factual Lookup").paper
    if not isinstance(paper, float):
        raise ValueError(f"sa.csv, SA-D7 'beta_length, Factual Lookup': expected a number, got {paper!r}")
    ordered = by_intent.sort("estimate")
    coef = dict(zip(ordered["subset"], ordered["estimate"], strict=True))
    smallest = ordered["subset"][0] if ordered.height else None
    numbers = [Number("SA-D7", "beta_length, Factual Lookup", coef.get("Factual Lookup")),
               Number("SA-D7", "intent with the smallest length coefficient", smallest)]
    text = ""
    if figure.kind == "simulated" and smallest not in (None, "Factual Lookup"):
        text = (f"On this simulated release the smallest coefficient is on *{smallest}*, not on *Factual Lookup* as "
                "in the paper: the simulator plants one length coefficient for every intent, so the order of the "
                "intents here is sampling noise.")
    reference = Reference.at_marks({"Factual Lookup": float(paper)}, axis="x") if "Factual Lookup" in coef else None
    return Section(numbers, [figure._replace(reference=reference)], notes=[text] if text else [])


#: The paper's reading of Fig E.1 (App. E.1).
E1_LARGEST, E1_NULL = "Analysis", "Guidance"


def e1_section(by_intent: pl.DataFrame, figure: Figure) -> Section:
    """SA-E1 from the citation coefficient per intent: the intent with the largest coefficient and whether
    *Guidance*'s 95% interval covers 0 (not run without Guidance battles). On the simulator, where every intent
    shares one planted coefficient, a disagreement with the paper is said in one sentence."""
    ordered = by_intent.sort("estimate")
    largest = ordered["subset"][-1] if ordered.height else None
    guidance = ordered.filter(pl.col("subset") == E1_NULL)
    covers = None if guidance.height == 0 else (
        "yes" if guidance["ci_lower"][0] <= 0 <= guidance["ci_upper"][0] else "no")
    numbers = [Number("SA-E1", "intent with the largest citation coefficient", largest),
               Number("SA-E1", "Guidance interval covers 0", covers)]
    differs = [what for what, bad in [(f"the largest coefficient is on *{largest}*, not *{E1_LARGEST}*",
                                       largest not in (None, E1_LARGEST)),
                                      (f"*{E1_NULL}*'s interval excludes 0", covers == "no")] if bad]
    text = ""
    if figure.kind == "simulated" and differs:
        text = (f"On this simulated release {' and '.join(differs)}, unlike the paper: the simulator plants one "
                "citation coefficient for every intent, so the differences between intents here are sampling noise.")
    return Section(numbers, [figure], notes=[text] if text else [])


# ------------------------------------------------------------------------------------------------ SA-E4, SA-F6R


def e4_section(effect: bt.ControlEffect, plain: pl.DataFrame, n_voted: int, figure: Figure) -> Section:
    """SA-E4 from :func:`~analysis_lib.search_arena.bt.control_effect`: the SD of the ratings before and after
    control, its change with the paired bootstrap interval, whether they converge; and the SD of the authors'
    "before" ratings (``plain``: the unpenalised leaderboard of all ``n_voted`` voted battles, as their Fig E.4)
    over the same models as the two fits."""
    before = dict(plain.select("model", "rating_ml").iter_rows())
    shown = [before[m] for m in effect.ratings["model"].to_list() if m in before]
    numbers = [
        Number("SA-E4", "SD of ratings before control (Elo)", effect.sd_before,
               note=f"{effect.n_battles:,} decided battles where both sides cite"),
        Number("SA-E4", "SD of ratings after control (Elo)", effect.sd_after, note="same battles"),
        Number("SA-E4", "change in SD after control (Elo)", effect.change,
               note=f"paired bootstrap 95% CI {effect.change_ci[0]:.1f} to {effect.change_ci[1]:.1f}"),
        Number("SA-E4", "ratings converge after control", "yes" if effect.converge else "no"),
        Number("SA-E4", "SD of ratings before control, the authors' battles (Elo)", float(bt.rating_spread(shown)),
               note=f"unpenalised BT on all {n_voted:,} voted battles, as the authors' Fig E.4; {len(shown)} models"),
    ]
    return Section(numbers, [figure])


NO_COUNTS = "needs the citation-attribution subset (support/irrelevant/contradict counts); not in this data"


def f6r_paper() -> dict[str, float]:
    """The paper's SA-F6R coefficients that are numbers (feature -> β)."""
    table = paper_values.table()
    found = {f: table.get(("SA-F6R", f"beta {f}")) for f in ATTRIBUTION_COUNTS}
    return {f: float(pv.paper) for f, pv in found.items() if pv is not None and isinstance(pv.paper, (int, float))}


def f6r_section(subset: AttributionSubset, n_fitted: int, fit: Ranking | None, figure: Figure | None) -> Section:
    """SA-F6R from the attribution fit (``fit`` on ``n_fitted`` decided battles where both sides cite; ``None``
    when the data have no counts: every coefficient not run): planted values drawn on the simulated subset (what the
    fit should recover), the paper's on a real file; the records left out for a missing count said."""
    if fit is None or figure is None:
        return Section(not_run("SA-F6R", [f"beta {f}" for f in ATTRIBUTION_COUNTS], NO_COUNTS))
    coef = fit.coefficients()
    planted = subset.planted.betas if subset.planted is not None else {}
    marks = planted or f6r_paper()
    reference = Reference.at_marks(marks, label="planted" if planted else "paper") if marks else None
    numbers = [Number("SA-F6R", "conversations in the attribution subset", subset.tidy.height, data=subset.kind),
               Number("SA-F6R", "decided battles where both sides cite", n_fitted, data=subset.kind)]
    numbers += [Number("SA-F6R", f"beta {r['feature']}", r["estimate"], data=subset.kind,
                       planted=planted.get(r["feature"]), note=f"95% CI {r['ci_lower']:.3f} to {r['ci_upper']:.3f}")
                for r in coef.iter_rows(named=True)]
    text = ""
    if subset.check is not None and subset.check.n_unlabelled:
        text = (f"{subset.check.n_unlabelled:,} of the file's {subset.check.n_records:,} conversations lack one of "
                "the six attribution counts and are left out of the fit.")
    return Section(numbers, [figure._replace(reference=reference)], notes=[text] if text else [])
