"""The book's side of the DR-Arena chapter's match-log sections (the simulation study by default, a user's logs
with ``MATCH_LOGS``): DR-S (Swiss tournament and ratings), DR-T6 / Fig 4 (correlation by rounds used), DR-F5
(rounds against the Elo gap), DR-F6 (failure profiles), DR-F7 (verdict shares): the paper's claims judged on the
analyses' results, the tables and notes as the page shows them, the paper's values drawn on the figures, and the
summary of the claims.

The analyses are :mod:`analysis_lib.dr_arena`'s and their numbers are recorded by path
(``bookbuild/resources/paper_values/dr.csv``). The claims' thresholds are here (:data:`ROUND2_MARGIN`,
:data:`BALANCE_POINTS`, :data:`ALPHA`); the paper's values drawn on the figures come from the paper values and
``published/``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import polars as pl

from analysis_lib.dr_arena.diagnostics import GapCorrelation, VerdictSummary
from analysis_lib.dr_arena.loader import MatchSource
from analysis_lib.dr_arena.match_log import FAILURE_CODES
from analysis_lib.dr_arena.plots import tick_label
from analysis_lib.dr_arena.tournament import leaderboard_table
from analysis_lib.fetch import published
from analysis_lib.plotting import Reference
from bookbuild import markup, paper_values
from bookbuild.recorder import NotRun, Result
from bookbuild.sections import Table

#: DR-T6: "by round 2 Spearman reaches the all-rounds value" within this margin.
ROUND2_MARGIN = 0.02
#: DR-F6: the lowest-failure model's Deep and Wide shares are "balanced" within this many points.
BALANCE_POINTS = 5
#: DR-F5: significance level of the negative correlation.
ALPHA = 0.05
#: Share of bootstrap resamples fitted with the ridge above which an interval end may be a ridge value.
RIDGE_SHARE_WARN = 0.025
#: The paper's named pairs of Fig 5 (§5.1).
FIG5_PAIRS = "dr_arena_fig5_named_pairs"
RUBRIC_REASON = ("needs the LLM Examiner judging the same answers without its checklists: an ablation no chapter "
                 "runs (DR-X judges with them), with an endpoint or without")


def logs_detail(logs: MatchSource) -> str:
    """The data banner's sentence on the match logs: a user's files read (and the folder's others, not read), or
    the simulated Swiss tournament and its settings."""
    n_models, n_rounds = len(logs.models), logs.rounds.height
    if logs.kind != "simulated":
        shown = "; ".join(logs.skipped[:5]) + (", …" if len(logs.skipped) > 5 else "")
        not_read = (f" {len(logs.skipped)} other file(s) in the folder are not logs and were not read: {shown}."
                    if logs.skipped else "")
        return (f"{logs.files} log file(s): {logs.n_matches} matches, {n_rounds} rounds, {n_models} models "
                f"({len(logs.reference)} of them in Table 3's Search Arena column).{not_read}")
    noise = logs.sim.examiner_noise if logs.sim is not None else float("nan")
    return (f"Simulated Swiss tournament: {n_models} latent-skill agents, {logs.n_rounds} rounds, one match per pair "
            f"on each of the {logs.n_trees} mirrored trees ({logs.n_matches} matches, {n_rounds} rounds), the "
            f"framework's loop rules, examiner noise {noise:g}.")


def holds(ok: bool) -> str:
    """A claim's recorded value."""
    return "holds" if ok else "does not hold"


def too_few(logs: MatchSource) -> str:
    """Why the correlations with the reference leaderboard are not run."""
    return f"fewer than 3 logged models have a reference rating ({logs.reference_name})"


def s_tables(board: pl.DataFrame, logs: MatchSource) -> list[Table]:
    """The tournament's leaderboard beside the reference ratings."""
    return [Table(leaderboard_table(board, logs.reference, logs.reference_name), "Leaderboard of the tournament.", 2)]


def mle_note(board: pl.DataFrame, n_bootstrap: int) -> str:
    """The text under the leaderboard (:func:`analysis_lib.dr_arena.ratings`): whether the MLE exists and how many
    of the ``n_bootstrap`` resamples needed the ridge."""
    has_mle, n_ridge = bool(board["mle"][0]), int(board["ridge_resamples"][0])
    if n_bootstrap > 0:
        warn = (": more than 2.5% of them, so an interval end can be a ridge value (read it as unbounded)."
                if n_ridge > RIDGE_SHARE_WARN * n_bootstrap else ".")
        resamples = f"{n_ridge} of {n_bootstrap} bootstrap resamples had no MLE and were fitted with the ridge{warn}"
    else:
        resamples = "No bootstrap (`n_bootstrap = 0`): no intervals."
    if has_mle:
        return f"The MLE exists for these matches (the beat graph is strongly connected). {resamples}"
    return markup.admonition(
        "No maximum-likelihood estimate for these matches", "The beat graph is not strongly connected: some group of "
        "models never beat or tied a model outside it. The ratings are the ridge fit "
        f"(reg = {board['ridge'][0]:g}); the gaps between the separated groups come from the ridge, not the data. "
        f"{resamples}", kind="warning")


def _paper(quantity: str) -> float:
    return float(paper_values.lookup("DR-T6", quantity).paper)  # type: ignore[arg-type]


def fig4_reference(last_k: int) -> list[Reference]:
    """Table 6's correlations at round 1, rounds 1–2 and all rounds (drawn at ``last_k``), as the paper's points."""
    ks = [1, 2, last_k]
    return [Reference.at_points(ks, [_paper(f"{m}, {w}") for w in ("round 1 only", "rounds 1-2 only", "all rounds")],
                                label=f"paper: {name}")
            for m, name in (("Spearman rho", "Spearman ρ"), ("Pearson r", "Pearson r"))]


def _t6_claims(by_k: pl.DataFrame) -> tuple[dict, dict, dict, bool, bool]:
    last, r1 = by_k.row(-1, named=True), by_k.row(0, named=True)
    r2 = by_k.filter(pl.col("k") == 2).row(0, named=True) if by_k.height >= 2 else last
    return last, r1, r2, r1["spearman"] < last["spearman"], r2["spearman"] >= last["spearman"] - ROUND2_MARGIN


def t6_result(by_k: pl.DataFrame | None) -> dict[str, Any]:
    """DR-T6 as recorded: the rows of ``by_k`` (:func:`analysis_lib.dr_arena.correlation_by_rounds`) for all rounds,
    round 1 and rounds 1–2, and the two claims on them (all None when fewer than 3 models have a reference rating:
    not run); the rubric ablation is not run (needs the LLM examiner)."""
    if by_k is None:
        return dict.fromkeys(("all", "round1", "rounds12", "round2_reaches", "round1_lower")) | {
            "rubric": NotRun(RUBRIC_REASON)}
    last, r1, r2, round1, round2 = _t6_claims(by_k)
    return {"all": last, "round1": r1, "rounds12": r2, "round2_reaches": holds(round2),
            "round1_lower": holds(round1), "rubric": NotRun(RUBRIC_REASON)}


def t6_tables(by_k: pl.DataFrame | None) -> list[Table]:
    """The correlations by rounds used, with readable columns (none when not run)."""
    if by_k is None:
        return []
    return [Table(by_k.rename({"n_models": "models", "spearman": "Spearman ρ", "pearson": "Pearson r"}),
                  "Correlation with the reference leaderboard when matches are cut after k rounds.")]


def fig4_notes(by_k: pl.DataFrame | None, kind: str) -> list[str]:
    """The sentence under Fig 4 when the logs contradict the paper's reading of it (none when they agree)."""
    if by_k is None:
        return []
    *_, round1, round2 = _t6_claims(by_k)
    return [] if round1 and round2 else [fig4_contradiction(round1, round2, kind)]


def fig4_contradiction(round1: bool, round2: bool, kind: str) -> str:
    """One sentence under Fig 4 when the logs contradict the paper's reading of it."""
    where = "this simulated tournament" if kind == "simulated" else "these match logs"
    parts = ([] if round1 else ["round 1 alone already ranks the models as well as all rounds do"]) + (
        [] if round2 else [f"by round 2 Spearman is still more than {ROUND2_MARGIN:g} below its all-rounds value"])
    return (f"**Unlike the paper's Fig 4**, in {where} {' and '.join(parts)}: the paper's points (marked *paper*) "
            "show the correlation rising with the rounds used.")


FIG5_NOTE = ("The points marked *paper (named pairs)* are the three pairs the paper names: GPT-5.1-Search vs Grok-4 "
             "(fewer than 2.0 rounds, drawn at 2.0), Gemini-2.5-Pro vs o3-Search (2.8) and GPT-5.1-Search vs "
             "o3-Search (3.07). The paper's text leaves their Elo gaps blank; we place them at the gaps of Table 3's "
             "DR-Arena Elo (126, 13 and 43).")


def fig5_reference() -> Reference:
    """The rounds of the three pairs the text names with Fig 5, at their gap in Table 3's DR-Arena Elo (the
    paper's gaps are not in its text; placing them there is our choice). "Fewer than 2.0" is drawn at 2.0."""
    pairs = pl.read_csv(published(FIG5_PAIRS))
    elo = dict(pl.read_csv(published("dr_arena_table3_leaderboards")).select("model", "dr_arena_elo").iter_rows())
    gaps = [abs(elo[a] - elo[b]) for a, b in zip(pairs["model_1"], pairs["model_2"], strict=True)]
    return Reference.at_points(gaps, pairs["mean_rounds"].to_list(), label="paper (named pairs)")


def f5_claim(gap: GapCorrelation) -> str:
    """DR-F5's claim that rounds fall as the Elo gap grows: r < 0 at p < :data:`ALPHA` (``gap``:
    :func:`analysis_lib.dr_arena.rounds_vs_gap`)."""
    return holds(gap.pearson < 0 and gap.p_value < ALPHA)


def profile_table(profile: pl.DataFrame) -> pl.DataFrame:
    """Fig 6's table with readable columns: rounds, wins, losses, ties, failure rate and the failure types as %
    of the model's lost rounds."""
    shares = {f"share_{f}": f"{f.title()} %" for f in FAILURE_CODES}
    return profile.select("model", "rounds", "wins", "losses", "ties", (100 * pl.col("failure_rate")).alias("fails %"),
                          *[(100 * pl.col(c)).alias(name) for c, name in shares.items()])


def f6_claim(profile: pl.DataFrame) -> str:
    """DR-F6's claim that the lowest-failure model's Deep and Wide shares are balanced, within
    :data:`BALANCE_POINTS` points (``profile``: :func:`analysis_lib.dr_arena.failure_profile`, ordered by failure
    rate; a share of a model without losses counts 0)."""
    best = profile.row(0, named=True)
    return holds(abs((best["share_DEEP"] or 0) - (best["share_WIDE"] or 0)) <= BALANCE_POINTS / 100)


PROFILE_CAPTION = ("Failure profile per model: fails % = non-winning rounds over rounds; Deep, Wide, Both, None % = "
                   "the loser's failure type as a share of the model's lost rounds.")


def f6_tables(profile: pl.DataFrame) -> list[Table]:
    """Fig 6's table (:func:`profile_table`) under its caption."""
    return [Table(profile_table(profile), PROFILE_CAPTION, 1)]


def f7_claim(verdicts: VerdictSummary) -> str:
    """DR-F7's claim that Better is the most frequent verdict tier (``verdicts``:
    :func:`analysis_lib.dr_arena.verdict_summary`)."""
    return holds(verdicts.top_tier == "Better")


def fig7_reference(shares: pl.DataFrame | None = None) -> list[Reference]:
    """Fig 7's printed shares (Better, Much Better; Deep, Wide failures) as marks on the two panels; with
    ``shares`` (:func:`analysis_lib.dr_arena.verdict_shares`), only those of the tiers and failure types the logs
    have (a mark stands on its bar: logs without a Much Better verdict have no such bar)."""
    def paper(q: str) -> float:
        return float(paper_values.lookup("DR-F7", q).paper)  # type: ignore[arg-type]

    verdicts = {tick_label(c): paper(f"share of {c} verdicts (%)") for c in ("Better", "Much Better")}
    failures = {c: paper(f"share of {c.title()} failures (%)") for c in ("DEEP", "WIDE")}
    panels = [(verdicts, "verdict"), (failures, "failure type")]
    if shares is not None:
        panels = [({k: v for k, v in marks.items()
                    if k in {tick_label(c) for c in shares.filter(pl.col("kind") == kind)["category"]}}, kind)
                  for marks, kind in panels]
    return [Reference.at_marks(marks, axis="y", ax=ax) for ax, (marks, _) in enumerate(panels) if marks]


#: The analysis IDs whose claims the summary says.
CLAIM_IDS = ("DR-T6", "DR-F5", "DR-F6", "DR-F7")


def claims_summary(results: Iterable[Result], seed: int) -> str:
    """What the simulation says about the paper's claims (the ``claim:`` quantities of :data:`CLAIM_IDS` recorded
    so far, ``results``: the recorder's), with the caveats of a single simulated tournament."""
    claims = [r for r in results if r.analysis_id in CLAIM_IDS and r.quantity.startswith("claim:")
              and r.status != "not run"]
    return ("**What the simulation says about the paper's claims.** "
            + " ".join(f"*{r.quantity.removeprefix('claim: ')}*: {r.ours} in the simulation." for r in claims)
            + " These are properties of the loop and the tournament under the simulation's assumptions (independent "
            "depth and width skills, difficulty rising with depth and width, a noisy examiner), not evidence about "
            f"real agents; and they come from one simulated tournament (seed {seed}): the claims on round 2 and on "
            "the Elo gap sit close to their thresholds, and other seeds can turn them either way.")
