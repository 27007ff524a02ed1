"""Nugget-based evaluation of Search Arena battles (*Search Arena Meets Nuggets*, NG: the later version and the
earlier one, *Chatbot Arena Meets Nuggets*).

Submodules, one job each:

- :mod:`~analysis_lib.nuggets.scores`: nugget types, the 30-nugget cap, the four scores, the tie-threshold
  preference (definitions in its docstring);
- :mod:`~analysis_lib.nuggets.records`: the JSONL nugget-record format (nuggetizer's layout), its loader and
  :func:`validate_nugget_records`; :mod:`~analysis_lib.nuggets.reading`: what a load reads, within bounds;
- :mod:`~analysis_lib.nuggets.loading`: the chapter's inputs (the release's battles, the records or the simulator);
- :mod:`~analysis_lib.nuggets.perbattle`: scores of both sides per battle, confusions by subset, KDE curves;
- :mod:`~analysis_lib.nuggets.agreement`: confusion matrices, weighted κ, inversions, threshold sweep, K-S tests;
- :mod:`~analysis_lib.nuggets.published`: the published matrices and K-S statistics, the K-S p-from-D check;
- :mod:`~analysis_lib.nuggets.diversity`: within-battle Jaccard / cosine (NG-T2);
- :mod:`~analysis_lib.nuggets.rouge`: ROUGE-L alignment of the responses with the retrieved chunks (NG-F8);
- :mod:`~analysis_lib.nuggets.battles`: single-turn battles of a release (v1-7k included), NG-A1 shares, NG-C URLs;
- :mod:`~analysis_lib.nuggets.pipeline`: the AutoNuggetizer steps through the LLM layer with nuggetizer's prompts;
- :mod:`~analysis_lib.nuggets.sampling`: seeded battle samples; :mod:`~analysis_lib.nuggets.numbers`: the rows the
  chapter records; :mod:`~analysis_lib.nuggets.claims`: the paper's claims checked and its values drawn;
  :mod:`~analysis_lib.nuggets.display`: the chapter's tables; :mod:`~analysis_lib.nuggets.model_steps`: the LLM,
  NLI and embedding steps;
- :mod:`~analysis_lib.nuggets.plots`: the chapter's figures;
- :mod:`~analysis_lib.nuggets.simulate`: the nugget-record simulator (latent quality behind votes and assignments).
"""

from analysis_lib.nuggets import diversity
from analysis_lib.nuggets.agreement import (
    NuggetConfusion,
    confusion,
    inversion_table,
    kappa_table,
    ks_by_vote,
    threshold_sweep,
)
from analysis_lib.nuggets.diversity import (
    mean_pairwise_cosine,
    mean_pairwise_jaccard,
    unigram_jaccard,
)
from analysis_lib.nuggets.perbattle import (
    battle_scores,
    cap_frame,
    diffs_by_vote,
    ecdf,
    kde_curves,
    preferences,
    score_summary,
    subset_confusions,
)
from analysis_lib.nuggets.published import (
    ks_consistency,
    ks_p_interval,
    ks_pvalue,
    published_confusions,
    published_ks,
    responses_only_confusion,
)
from analysis_lib.nuggets.records import (
    NuggetRecordError,
    NuggetRecords,
    load_nugget_records,
    records_from_dicts,
    validate_nugget_records,
)
from analysis_lib.nuggets.scores import (
    ASSIGNMENT_ORDER,
    MAX_NUGGETS,
    PREFERENCES,
    SWEEP_THRESHOLDS,
    TABLE1_LANGUAGES,
    TIE_THRESHOLD,
    AssignedNugget,
    Assignment,
    Importance,
    Nugget,
    cap_nuggets,
    nugget_preference,
    nugget_scores,
    score_frame,
)

__all__ = [
    "ASSIGNMENT_ORDER",
    "MAX_NUGGETS",
    "PREFERENCES",
    "SWEEP_THRESHOLDS",
    "TABLE1_LANGUAGES",
    "TIE_THRESHOLD",
    "AssignedNugget",
    "Assignment",
    "Importance",
    "Nugget",
    "NuggetConfusion",
    "NuggetRecordError",
    "NuggetRecords",
    "battle_scores",
    "cap_frame",
    "cap_nuggets",
    "confusion",
    "diffs_by_vote",
    "diversity",
    "ecdf",
    "inversion_table",
    "kappa_table",
    "kde_curves",
    "ks_by_vote",
    "ks_consistency",
    "ks_p_interval",
    "ks_pvalue",
    "load_nugget_records",
    "mean_pairwise_cosine",
    "mean_pairwise_jaccard",
    "nugget_preference",
    "nugget_scores",
    "preferences",
    "published_confusions",
    "published_ks",
    "records_from_dicts",
    "responses_only_confusion",
    "score_frame",
    "score_summary",
    "subset_confusions",
    "threshold_sweep",
    "unigram_jaccard",
    "validate_nugget_records",
]
