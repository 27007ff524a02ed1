"""The nugget papers' claims the chapter checks, and the paper's values its figures draw.

- **No ROUGE-L alignment** (NG, later version §4.6, Figure 8: "a confusion matrix with no alignment"): an
  association of the ROUGE-L preference with the vote (:func:`analysis_lib.nuggets.rouge.alignment_test`:
  Fisher's exact p < 0.05 and Cohen's κ > 0) *contradicts* the claim; :func:`alignment_sentence` says which.
- **Classes of highest agreement** (NG, later version App. B.1: "subjective, knowledge-intensive, and
  reasoning-intensive"): :func:`top_classes`, the three query classes of highest κ, harmful (92 battles) set apart
  as the paper's sentence sets it apart (:func:`highest_note` says when the class set apart has the highest κ).
- **The published K-S p follows from D** (Figure 2): :func:`ks_check` says it as the paper-values table does,
  ``yes`` or ``no``.
- **Reference values for figures**: :func:`paper_value` reads one number of the paper from the paper-values table
  (``bookbuild/resources/paper_values/ng.csv``), :func:`share_marks` Figure 9's shares, :func:`ks_reference` the
  published D of Figure 2 and :func:`sweep_reference` the κ range of the threshold sweep, so a figure draws the
  paper's number beside ours without typing it twice.
"""

from __future__ import annotations

import polars as pl

from analysis_lib.nuggets.agreement import top_kappa_classes
from analysis_lib.nuggets.battles import BattleShares
from analysis_lib.nuggets.published import published_ks
from analysis_lib.nuggets.rouge import AlignmentTest
from analysis_lib.nuggets.scores import TIE_THRESHOLD
from bookbuild import paper_values

TOP_CLASSES = 3
#: the class the paper's sentence on the classes of highest κ sets apart
SET_APART = ("harmful",)


def alignment_sentence(test: AlignmentTest, kind: str) -> str:
    """One sentence for NG-F8's figure: what the records show against the paper's "no alignment"."""
    stats = (f"κ = {test.kappa:.2f}, Fisher's exact p = {test.p_value:.1g} on {test.battles:,} decided "
             "battles")
    if not test.aligned:
        return ("As in the paper, the ROUGE-L preference shows no alignment with the human vote here "
                f"({stats}, p ≥ 0.05).")
    why = (" because the simulated responses copy the chunk sentences of the nuggets they support, so this "
           "describes the generator, not the paper's data" if kind == "simulated" else "")
    return (f"This contradicts the paper's \"no alignment\": here the ROUGE-L preference agrees with the human "
            f"vote more often than chance ({stats}){why}.")


def top_classes(kappas: pl.DataFrame) -> list[str]:
    """The paper's claim's classes: the :data:`TOP_CLASSES` query classes of highest κ in ``kappas``
    (:func:`analysis_lib.nuggets.kappa_table`), without :data:`SET_APART`, highest first."""
    return top_kappa_classes(kappas, TOP_CLASSES, SET_APART)


def highest_note(kappas: pl.DataFrame, top: list[str]) -> str:
    """The class of highest κ of all when it is not among ``top`` (a class set apart), with its battles; else ``""``."""
    classes = kappas.filter(pl.col("subset_type") == "query_category").sort("kappa", descending=True)
    if classes.height == 0 or classes["subset"][0] in top:
        return ""
    return f"{classes['subset'][0]} ({classes['battles'][0]} battles) has the highest κ of all"


def ks_check(check: pl.DataFrame) -> pl.DataFrame:
    """The published-K-S check (:func:`analysis_lib.nuggets.published.ks_consistency`) with ``follows``: ``yes``
    where the published p follows from D and the group sizes, else ``no``."""
    return check.with_columns(follows=pl.when(pl.col("consistent")).then(pl.lit("yes")).otherwise(pl.lit("no")))


def share_marks(shares: BattleShares) -> dict[str, float | None]:
    """Figure 9's paper marks: the paper's share (%) of each vote and language drawn (None where it has none)."""
    votes = {w: paper_value("NG-A1", f"vote share {w} (%)") for w in shares.votes["winner"]}
    return votes | {lang: paper_value("NG-A1", f"language share {lang} (%)") for lang in shares.languages["language"]}


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
