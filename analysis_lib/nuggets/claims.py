"""The paper's claims the nugget chapter checks, with their rules, and the paper's values its figures draw.

- **No ROUGE-L alignment** (NG, later version §4.6, Figure 8: "a confusion matrix with no alignment"):
  :func:`rouge_alignment_check` tests the decided block (human A/B × ROUGE-L A/B) for association with Fisher's
  exact test (scipy, two-sided); at level :data:`ALPHA` an association with Cohen's κ > 0 *contradicts* the claim.
  The test and the level are our choice: the paper prints neither a number nor a test.
- **Classes of highest agreement** (NG, later version App. B.1: "subjective, knowledge-intensive, and
  reasoning-intensive"): :func:`top_kappa_classes`, the three query classes of highest κ, harmful (92 battles) set
  apart as the paper's sentence sets it apart.
- **Reference values for figures**: :func:`paper_value` reads one number of the paper from the paper-values table
  (``resources/paper_values/ng.csv``), :func:`ks_reference` the published D of Figure 2 and :func:`sweep_reference`
  the κ range of the threshold sweep, so a figure draws the paper's number beside ours without typing it twice.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl
from scipy import stats as sps

from analysis_lib.nuggets.agreement import NuggetConfusion
from analysis_lib.nuggets.published import published_ks
from analysis_lib.nuggets.scores import TIE_THRESHOLD
from analysis_lib.stats import kappa_from_confusion
from bookbuild import paper_values

#: significance level of the ROUGE-L association test
ALPHA = 0.05
TOP_CLASSES = 3
SET_APART = ("harmful",)


@dataclass(frozen=True)
class AlignmentCheck:
    """The ROUGE-L claim checked on one confusion: decided battles, agreement (%), Cohen's κ, Fisher's exact p,
    and whether the records contradict "no alignment"."""

    battles: int
    agreement_pct: float
    kappa: float
    p_value: float
    contradicts: bool

    def sentence(self, kind: str) -> str:
        """One sentence for the figure's caption: what the records show against the paper's claim."""
        stats = (f"κ = {self.kappa:.2f}, Fisher's exact p = {self.p_value:.1g} on {self.battles:,} decided "
                 "battles")
        if not self.contradicts:
            return (f"As in the paper, the ROUGE-L preference shows no alignment with the human vote here ({stats}, "
                    f"p ≥ {ALPHA}).")
        why = (" because the simulated responses copy the chunk sentences of the nuggets they support, so this "
               "describes the generator, not the paper's data" if kind == "simulated" else "")
        return (f"This contradicts the paper's \"no alignment\": here the ROUGE-L preference agrees with the human "
                f"vote more often than chance ({stats}){why}.")


def rouge_alignment_check(conf: NuggetConfusion, alpha: float = ALPHA) -> AlignmentCheck:
    """Fisher's exact test of the decided block of ``conf`` (module docstring); ``contradicts`` when p < ``alpha``
    and the agreement exceeds chance (κ > 0)."""
    d = conf.decided.astype(float)
    n = float(d.sum())
    if n == 0:
        raise ValueError("no decided battle with a ROUGE-L preference")
    p_value = float(sps.fisher_exact(conf.decided).pvalue)
    kappa = kappa_from_confusion(d)
    return AlignmentCheck(int(n), 100 * float(d.trace()) / n, kappa, p_value, bool(p_value < alpha and kappa > 0))


def top_kappa_classes(kappas: pl.DataFrame, n: int = TOP_CLASSES, set_apart: tuple[str, ...] = SET_APART) -> list[str]:
    """The ``n`` query classes of highest κ in ``kappas`` (:func:`nuggets.agreement.kappa_table`), without the
    classes ``set_apart``, highest first."""
    classes = kappas.filter((pl.col("subset_type") == "query_category") & ~pl.col("subset").is_in(set_apart))
    return classes.sort("kappa", descending=True).head(n)["subset"].to_list()


def paper_value(analysis_id: str, quantity: str) -> float | None:
    """The paper's number for one recorded quantity (None when the paper gives none or it is not a number)."""
    value = paper_values.lookup(analysis_id, quantity).paper
    return float(value) if isinstance(value, float) else None


def ks_reference(variant: str = "with_urls") -> dict[tuple[str, str], float]:
    """Figure 2's published D by pair of vote groups (``("model_a", "model_b") -> 0.313``)."""
    table = published_ks().filter(pl.col("variant") == variant)
    return {(r["group_1"], r["group_2"]): float(r["ks_statistic"]) for r in table.iter_rows(named=True)}


def sweep_reference(sweep: pl.DataFrame) -> tuple[tuple[float, float] | None, tuple[float, float] | None]:
    """The paper's κ range over the threshold sweep (NG, later version §4: 0.29–0.31 for 0.05–0.15), for the
    thresholds of ``sweep`` when they are the paper's, and its κ at its threshold, (0.07, 0.30)."""
    ts = sweep["threshold"].to_numpy()
    span = f"{ts.min():g}-{ts.max():g}"
    keys = [(paper_values.table().get(("NG-F4", f"per-battle: {w} kappa across thresholds {span}"))) for w in
            ("lowest", "highest")]
    lo, hi = (k.paper if k is not None else None for k in keys)
    kappa = paper_value("NG-F4", "weighted kappa (quadratic, both-bad excluded)")
    return ((float(lo), float(hi)) if isinstance(lo, float) and isinstance(hi, float) else None,
            (TIE_THRESHOLD, kappa) if kappa is not None else None)
