"""Sections of chapter 04 (citations: SA §3.2, App. E) that need more than a call; each returns a
:class:`~bookbuild.sections.Section` (numbers, figures with the paper's values, tables, reader text).

- :func:`citations_by_intent_section`: Fig E.1, the citation coefficient per intent (SA-E1), with the one sentence
  that says where a simulated release disagrees with the paper (the simulator plants no per-intent effect).
- :func:`control_effect_section`: Fig E.4, ratings before and after all controls (SA-E4).
- :func:`attribution_section`: Fig 6 right, the citation-attribution coefficients (SA-F6R) on the subset of
  :func:`analysis_lib.search_arena.attribution_io.load_attribution`, planted values beside the recovered ones on
  the simulated subset, the paper's otherwise; records with missing counts reported.
"""

from __future__ import annotations

import polars as pl

from analysis_lib import plotting
from analysis_lib.plotting import Reference
from analysis_lib.search_arena import bt, plots
from analysis_lib.search_arena.attribution_io import AttributionSubset
from analysis_lib.search_arena.models import provider_of
from bookbuild import paper_values
from bookbuild.sections import Figure, Number, Section, not_run

CI_COLUMNS = ("estimate", "ci_lower", "ci_upper")
#: The paper's reading of Fig E.1 (App. E.1).
E1_LARGEST, E1_NULL = "Analysis", "Guidance"


def citations_by_intent_section(voted: pl.DataFrame, kind: str, *, n_bootstrap: int, seed: int) -> Section:
    """SA-E1: the citation model fitted on each primary intent (all voted battles, as the authors); records the
    intent with the largest coefficient and whether *Guidance*'s 95% interval covers 0 (not run without Guidance
    battles). On the simulator, where every intent shares one planted coefficient, a disagreement with the paper
    is said in one sentence."""
    by_intent = bt.style_by_subset(voted, bt.CITATIONS, n_bootstrap=n_bootstrap, seed=seed).sort("estimate")
    fig = plotting.forest(by_intent["subset"].to_list(), *(by_intent[c].to_numpy() for c in CI_COLUMNS),
                          xlabel="citation-count coefficient (per SD of normalised difference)",
                          title="Citation coefficient by intent (Fig E.1)")
    largest = by_intent["subset"][-1] if by_intent.height else None
    guidance = by_intent.filter(pl.col("subset") == E1_NULL)
    covers = None if guidance.height == 0 else (
        "yes" if guidance["ci_lower"][0] <= 0 <= guidance["ci_upper"][0] else "no")
    numbers = [Number("SA-E1", "intent with the largest citation coefficient", largest),
               Number("SA-E1", "Guidance interval covers 0", covers)]
    differs = [what for what, bad in [(f"the largest coefficient is on *{largest}*, not *{E1_LARGEST}*",
                                       largest not in (None, E1_LARGEST)),
                                      (f"*{E1_NULL}*'s interval excludes 0", covers == "no")] if bad]
    text = ""
    if kind == "simulated" and differs:
        text = (f"On this simulated release {' and '.join(differs)}, unlike the paper: the simulator plants one "
                "citation coefficient for every intent, so the differences between intents here are sampling noise.")
    return Section(numbers, [Figure(fig, kind)], notes=[text] if text else [])


def control_effect_section(sources: pl.DataFrame, kind: str, *, n_bootstrap: int, seed: int,
                           voted: pl.DataFrame | None = None) -> Section:
    """SA-E4: plain (unpenalised, the authors' ``compute_bt``) and controlled ratings on the same battles (decided,
    both sides cite), the SD of the ratings before and after, its change with a paired bootstrap interval, and
    whether the ratings converge. With ``voted`` (all voted leaderboard battles), also the SD of the authors'
    "before" ratings: their Fig E.4 fits the plain model on all voted battles, not on the controlled fit's
    battles (the SD over the same models as the two fits)."""
    effect = bt.control_effect(sources, bt.ALL_CONTROLS, n_bootstrap=n_bootstrap, seed=seed)
    ratings = effect.ratings.with_columns(provider_of(pl.col("model")).alias("provider"))
    colors, legend = plots.provider_colors(ratings["model"].to_list(), ratings["provider"].to_list())
    fig = plotting.slope_chart(ratings["model"].to_list(), ratings["before"].to_numpy(), ratings["after"].to_numpy(),
                               colors=colors, legend=legend, ylabel="Elo rating (gpt-4o-search = 1000)",
                               names=("original", "controlled"), title="Ratings before and after control (Fig E.4)")
    numbers = [
        Number("SA-E4", "SD of ratings before control (Elo)", effect.sd_before,
               note=f"{effect.n_battles:,} decided battles where both sides cite"),
        Number("SA-E4", "SD of ratings after control (Elo)", effect.sd_after, note="same battles"),
        Number("SA-E4", "change in SD after control (Elo)", effect.change,
               note=f"paired bootstrap 95% CI {effect.change_ci[0]:.1f} to {effect.change_ci[1]:.1f}"),
        Number("SA-E4", "ratings converge after control", "yes" if effect.converge else "no"),
    ]
    if voted is not None:
        plain = dict(bt.leaderboard(voted, n_bootstrap=0).to_frame().select("model", "rating_ml").iter_rows())
        shown = [plain[m] for m in effect.ratings["model"].to_list() if m in plain]
        numbers.append(Number(
            "SA-E4", "SD of ratings before control, the authors' battles (Elo)", float(bt.rating_spread(shown)),
            note=f"unpenalised BT on all {voted.height:,} voted battles, as the authors' Fig E.4; {len(shown)} models"))
    return Section(numbers, [Figure(fig, kind)])


NO_COUNTS = "needs the citation-attribution subset (support/irrelevant/contradict counts); not in this data"


def paper_attribution() -> dict[str, float]:
    """The paper's SA-F6R coefficients that are numbers (feature -> β)."""
    table = paper_values.table()
    found = {f: table.get(("SA-F6R", f"beta {f}")) for f in bt.ATTRIBUTION}
    return {f: float(pv.paper) for f, pv in found.items() if pv is not None and isinstance(pv.paper, (int, float))}


def attribution_section(subset: AttributionSubset, *, n_bootstrap: int, seed: int) -> Section:
    """SA-F6R on the decided battles where both sides cite among the labelled records; planted values drawn on the
    simulated subset (what the fit should recover), the paper's on a real file; every coefficient not run when the
    data has no counts."""
    attr = bt.attribution_battles(bt.prepare_battles(subset.tidy).frame)
    if attr is None:
        return Section(not_run("SA-F6R", [f"beta {f}" for f in bt.ATTRIBUTION], NO_COUNTS))
    coef = bt.style_control(attr, bt.ATTRIBUTION, n_bootstrap=n_bootstrap, seed=seed).coefficients()
    planted = subset.planted.betas if subset.planted is not None else {}
    marks = planted or paper_attribution()
    fig = plotting.forest(coef["feature"].to_list(), *(coef[c].to_numpy() for c in CI_COLUMNS),
                          xlabel="coefficient (per SD of normalised difference)",
                          title="Citation attribution (Fig 6, right)")
    reference = Reference.at_marks(marks, label="planted" if planted else "paper") if marks else None
    numbers = [Number("SA-F6R", "conversations in the attribution subset", subset.tidy.height, data=subset.kind),
               Number("SA-F6R", "decided battles where both sides cite", attr.height, data=subset.kind)]
    numbers += [Number("SA-F6R", f"beta {r['feature']}", r["estimate"], data=subset.kind,
                       planted=planted.get(r["feature"]), note=f"95% CI {r['ci_lower']:.3f} to {r['ci_upper']:.3f}")
                for r in coef.iter_rows(named=True)]
    text = ""
    if subset.check is not None and subset.check.n_unlabelled:
        text = (f"{subset.check.n_unlabelled:,} of the file's {subset.check.n_records:,} conversations lack one of "
                "the six attribution counts and are left out of the fit.")
    return Section(numbers, [Figure(fig, subset.kind, reference)], notes=[text] if text else [])

