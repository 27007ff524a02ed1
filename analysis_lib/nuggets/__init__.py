"""Nugget-based evaluation of Search Arena battles (*Search Arena Meets Nuggets*, NG: the later version and the
earlier one, *Chatbot Arena Meets Nuggets*): AutoNuggetizer scores of both responses of a battle, the nugget
preference they give, and its agreement with the human vote.

The names below, by group (each submodule has one job; its docstring states the maths):

- **loaders**: nugget records in nuggetizer's JSONL layout (:mod:`.records`, bounded reads in :mod:`.reading`),
  and a release's single-turn battles with records or the simulator's (:func:`load_inputs`, :mod:`.loading`;
  :mod:`.battles`: single-turn battles, vote and language shares, cited URLs);
- **nugget types and scores** (:mod:`.scores`): nuggets and assignments, the 30-nugget cap, the four scores, the
  tie-threshold preference;
- **analyses**: scores of both sides per battle and confusions by subset, scores of responses without votes and
  their means with bootstrap intervals over queries (:mod:`.perbattle`); confusion
  matrices, weighted κ, inversions, the threshold sweep and K-S tests (:mod:`.agreement`); the paper's published
  matrices and K-S statistics, and the K-S p-from-D check (:mod:`.published`); within-battle diversity
  (:mod:`.diversity`; embeddings in :mod:`.embedding`); ROUGE-L alignment with the retrieved chunks
  (:mod:`.rouge`); NLI factuality (:mod:`.nli`);
- **LLM steps**: the AutoNuggetizer pipeline (:mod:`.pipeline` with :mod:`.nuggetizer_prompts`), the judge, the
  rubric, assignment agreement and query classes (:mod:`.llm_analyses`), the corpus step (:mod:`.corpus`,
  :mod:`.sentences`), seeded samples (:mod:`.sampling`);
- **plots**: :mod:`.plots`;
- **simulator**: :func:`simulate_nuggets` (:mod:`.simulate`: latent quality behind votes and assignments).
"""

from analysis_lib.nuggets.agreement import (
    confusion,
    inversion_table,
    kappa_table,
    ks_by_vote,
    threshold_sweep,
)
from analysis_lib.nuggets.diversity import battle_diversity
from analysis_lib.nuggets.loader import load_inputs
from analysis_lib.nuggets.perbattle import (
    battle_scores,
    diffs_by_vote,
    nugget_metrics,
    preferences,
    response_scores,
    score_summary,
    subset_confusions,
)
from analysis_lib.nuggets.published import (
    ks_consistency,
    published_confusions,
    responses_only_confusion,
)
from analysis_lib.nuggets.records import (
    load_nugget_records,
    validate_nugget_records,
)
from analysis_lib.nuggets.scores import (
    TIE_THRESHOLD,
    Nugget,
)
from analysis_lib.nuggets.simulate import simulate_nuggets

__all__ = [
    "load_inputs", "load_nugget_records", "validate_nugget_records", "TIE_THRESHOLD", "Nugget", "battle_diversity",
    "battle_scores", "confusion", "diffs_by_vote", "inversion_table", "kappa_table", "ks_by_vote", "ks_consistency",
    "nugget_metrics", "preferences", "published_confusions", "response_scores", "responses_only_confusion",
    "score_summary", "subset_confusions", "threshold_sweep", "simulate_nuggets",
]
