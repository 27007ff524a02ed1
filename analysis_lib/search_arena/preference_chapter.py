"""Sections of the preference chapters (03: SA §3.1, App. D; 04 shares :func:`coefficient_tables`) that need more
than a call: each returns a :class:`~bookbuild.sections.Section` (numbers to record, figures with the
paper's values to draw, tables with readable columns, reader text). The claim checks and their thresholds live
here (:func:`d6_checks`), and so do the sentences that say where a simulated result differs from the paper.

- :func:`subset_section`: Table D.1's four subsets, ours against the paper's (SA-D5s).
- :func:`score_feature_section`: Fig 4, BT score against mean response length and citation count (SA-F4).
- :func:`intent_distribution_section`: Fig 5, length and citations by intent with the paper's means (SA-F5).
- :func:`per_model_section`: Fig D.6 and the five comparisons the paper reads off it (SA-D6).
- :func:`length_by_intent_section`: Fig D.7, the length coefficient per intent (SA-D7).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import polars as pl

from analysis_lib import plotting
from analysis_lib.plotting import Reference
from analysis_lib.search_arena import bt, plots, preference
from analysis_lib.search_arena.models import provider_of
from bookbuild import paper_values
from bookbuild.sections import Figure, Number, Section, Table

CI_COLUMNS = ("estimate", "ci_lower", "ci_upper")
TARGET = "calibration target: the simulator is built to reproduce this paper value"
SUBSET_NAMES = {"english": "English", "non_english": "non-English", "factual": "Factual", "non_factual": "non-Factual"}
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


def subset_section(d1: pl.DataFrame, published: pl.DataFrame, kind: str) -> Section:
    """SA-D5s: every subset rating and rank recorded, the ratings against Table D.1's on one scatter, and a
    side-by-side table (ours / paper, rounded Elo)."""
    subsets = [c.removeprefix("rating_") for c in d1.columns if c.startswith("rating_")]
    ours = d1.unpivot(index="model", on=[f"rating_{s}" for s in subsets])
    paper = published.unpivot(index="model", on=[f"rating_{s}" for s in subsets])
    both = ours.join(paper, on=["model", "variable"], suffix="_paper")
    fig = plotting.error_scatter(
        both["value_paper"].to_numpy(), both["value"].to_numpy(), identity=True,
        groups=both["variable"].str.replace("rating_", "").replace(SUBSET_NAMES).to_list(),
        xlabel="Table D.1 subset rating (Elo)", ylabel="this build (Elo)",
        title="Subset ratings against Table D.1 (Table D.1 columns)")
    numbers = [Number("SA-D5s", f"{row['model']} {col}", row[col]) for row in d1.iter_rows(named=True)
               for col in d1.columns if col.startswith(("rating_", "rank_"))]
    paper_cols = published.select("model", *[pl.col(f"rating_{s}").alias(f"paper_{s}") for s in subsets])
    side_by_side = d1.join(paper_cols, on="model", how="left").select(
        "model",
        *[pl.format("{} / {}", *[pl.col(f"{p}_{s}").round(0).cast(pl.Int64) for p in ("rating", "paper")])
          .alias(f"{SUBSET_NAMES[s]}: ours / paper (Elo)") for s in subsets])
    absent = [SUBSET_NAMES[s] for s in SUBSET_NAMES if s not in subsets]
    notes = ([f"Not run: the {', '.join(absent)} subsets (no battle of these data carries their label: "
              "`primary_intent` or `languages`)."] if absent else [])
    return Section(numbers, [Figure(fig, kind)], [Table(side_by_side, "Subset ratings, this build / Table D.1")],
                   notes)


FIG4 = [("response_length", "mean response length (words)", "left"),
        ("citation_count", "mean citations per turn (responses that cite)", "right")]


def score_feature_section(voted: pl.DataFrame, kind: str, *, n_bootstrap: int, seed: int) -> Section:
    """SA-F4: per-model BT score against mean response length and citation count with the OLS line and band. The
    paper shows both relationships as positive and gives no slope or R²: the slope is recorded against "positive",
    R² in its note (the paper's values are not drawn: it has none)."""
    figures, numbers = [], []
    for column, label, panel in FIG4:
        merged, line = preference.score_vs_feature(voted, column, n_bootstrap=n_bootstrap, seed=seed)
        colors, legend = plots.provider_colors(
            merged["model"].to_list(), merged.select(provider_of(pl.col("model")).alias("p"))["p"].to_list())
        figures.append(Figure(plotting.scatter_fit(
            merged["mean"].to_numpy(), merged["score"].to_numpy(), merged["model"].to_list(), xlabel=label,
            ylabel="BT score (Elo)", band=line.band, colors=colors, legend=legend,
            title=f"Score against {label.split(' (')[0]} (Fig 4, {panel})"), kind))
        numbers.append(Number("SA-F4", f"OLS slope, score on mean {column} (Elo per unit)", line.slope,
                              note=f"R² = {line.r2:.2f}, p = {line.p_value:.3g}"))
    return Section(numbers, figures)


FIG5 = [("response_length", "response length (words)", "{:.0f}", "left"),
        ("citation_count", "citations per turn", "{:.1f}", "right")]


def paper_means(column: str, intents: list[str]) -> dict[str, float]:
    """The paper's Fig 5 mean of ``column`` for each intent that has one (``resources/paper_values/sa.csv``)."""
    table = paper_values.table()
    found = {i: table.get(("SA-F5", f"mean {column}, {i}")) for i in intents}
    return {i: float(pv.paper) for i, pv in found.items() if pv is not None and isinstance(pv.paper, (int, float))}


def intent_distribution_section(voted: pl.DataFrame, kind: str) -> Section:
    """SA-F5: the distribution per intent of response length and citation count (both sides of every voted
    battle, *Other* excluded), with the paper's means drawn where the text gives them; the means with a paper value
    are recorded (on the simulator they are planted: calibration targets)."""
    per_response = preference.responses(voted, ["response_length", "citation_count"])
    figures, numbers = [], []
    for column, label, fmt, panel in FIG5:
        by_intent = preference.mean_ci(voted, column, by="primary_intent", skip=["Other"])
        paper = paper_means(column, by_intent["primary_intent"].to_list())
        reference = Reference.at_marks(paper, axis="x", label="paper's mean") if paper else None
        figures.append(Figure(plots.distribution_by_group(
            per_response, "primary_intent", column, by_intent, xlabel=label, fmt=fmt, reference=reference,
            title=f"{label.capitalize()} by intent (Fig 5, {panel})"), kind))
        numbers += [Number("SA-F5", f"mean {column}, {i}", m, note=TARGET if kind == "simulated" else "")
                    for i, m in zip(by_intent["primary_intent"], by_intent["mean"], strict=True) if i in paper]
    return Section(numbers, figures)


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


def per_model_section(voted: pl.DataFrame, kind: str) -> Section:
    """SA-D6: mean ± 95% t-interval of response length and citation count per model (``gpt-4o-search-high-loc``
    left out, as in the figure), coloured by provider, and the five comparisons of :data:`D6_CLAIMS`."""
    figures, means = [], {}
    for column, label in [("response_length", "response length (words)"), ("citation_count", "citations per turn")]:
        per_model = preference.mean_ci(voted, column).filter(pl.col("model") != "gpt-4o-search-high-loc")
        providers = per_model.select(provider_of(pl.col("model")).alias("p"))["p"].to_list()
        colors, legend = plots.provider_colors(per_model["model"].to_list(), providers)
        figures.append(Figure(plotting.barh(
            per_model["model"].to_list(), per_model["mean"].to_numpy(),
            xerr=np.vstack([per_model["ci"].to_numpy()] * 2), xlabel=label,
            color=colors, legend=legend, title=f"{label.capitalize()} per model (Fig D.6)"), kind))
        means[column] = dict(zip(per_model["model"], per_model["mean"], strict=True))
    numbers = [Number("SA-D6", claim, holds) if holds is not None else
               Number("SA-D6", claim, reason="a model of the comparison has no voted battle in this data")
               for claim, holds in d6_checks(means).items()]
    return Section(numbers, figures)


def length_by_intent_section(voted: pl.DataFrame, kind: str, *, n_bootstrap: int, seed: int) -> Section:
    """SA-D7: the length model fitted on each primary intent, the paper's *Factual Lookup* value drawn; on the
    simulator (one planted length coefficient for every intent) a smallest coefficient elsewhere is said once."""
    by_intent = bt.style_by_subset(voted, bt.LENGTH, n_bootstrap=n_bootstrap, seed=seed).sort("estimate")
    fig = plotting.forest(by_intent["subset"].to_list(), *(by_intent[c].to_numpy() for c in CI_COLUMNS),
                          xlabel="length coefficient (per SD of normalised difference)",
                          title="Length coefficient by intent (Fig D.7)")
    paper = paper_values.lookup("SA-D7", "beta_length, Factual Lookup").paper
    if not isinstance(paper, float):
        raise ValueError(f"sa.csv, SA-D7 'beta_length, Factual Lookup': expected a number, got {paper!r}")
    coef = dict(zip(by_intent["subset"], by_intent["estimate"], strict=True))
    smallest = by_intent["subset"][0] if by_intent.height else None
    numbers = [Number("SA-D7", "beta_length, Factual Lookup", coef.get("Factual Lookup")),
               Number("SA-D7", "intent with the smallest length coefficient", smallest)]
    text = ""
    if kind == "simulated" and smallest not in (None, "Factual Lookup"):
        text = (f"On this simulated release the smallest coefficient is on *{smallest}*, not on *Factual Lookup* as "
                "in the paper: the simulator plants one length coefficient for every intent, so the order of the "
                "intents here is sampling noise.")
    reference = Reference.at_marks({"Factual Lookup": float(paper)}, axis="x") if "Factual Lookup" in coef else None
    return Section(numbers, [Figure(fig, kind, reference)], notes=[text] if text else [])
