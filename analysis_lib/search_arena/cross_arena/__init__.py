"""Cross-arena deployments of Gemini-2.5-Pro with and without web search (Search Arena §3.3, Figure 8; App. F).

Two deployments, one vote coding:

- **Text Arena**: the search model ``gemini-2.5-pro-exp-03-25-grounding-none`` (search on, inline citations
  off) against its non-search twin only; released as ``data/text_arena_battles.jsonl`` in
  github.com/lmarena/search-arena (Git LFS, 544 battles). :func:`load_text_arena` reads and validates it
  (:mod:`~analysis_lib.search_arena.cross_arena.text_arena`).
- **Search Arena**: the non-search model ``gemini-2.5-pro-exp-03-25-wo-search`` (paper name
  ``gemini-2.5-pro``) against the search models, without the OpenAI (``gpt``) ones.
  :func:`search_arena_cross_battles` selects those battles from the tidy battle frame of
  :func:`analysis_lib.search_arena.loader.load_battles`.

Each vote is oriented from the search model's side (column ``vote``):

- ``search``: the user preferred the search model's answer;
- ``non-search``: the user preferred the non-search model's answer;
- ``tie``: every other voted outcome, i.e. ``tie`` **and** ``tie (bothbad)``. This is the authors' coding in
  ``scripts/cross_setting_analysis.ipynb``: everything starts as a tie and only ``winner`` equal to the
  search side or the non-search side is recoded, so both-bad votes count as ties.

Battles without a vote (``winner`` null) are not part of either analysis: the authors drop them from the
Search Arena battles before coding; the Text Arena file holds only voted battles (a null ``winner`` there
is dropped and reported by the loader). The per-intent binomial tests (:func:`vote_table`) exclude ties and
are one-sided in the observed direction, as :func:`analysis_lib.stats.preference_binomial_test` and the
paper. Choosing the side after seeing the data halves the two-sided p-value, and the paper tests eight intents
without a multiplicity correction: :func:`intent_tests` adds the two-sided p-values and their Holm adjustment
over the Figure 8 intents beside the paper's values (our addition, not the paper's).

Modules: :mod:`~analysis_lib.search_arena.cross_arena.votes` (coding, tables, tests, the published vote totals),
:mod:`~analysis_lib.search_arena.cross_arena.text_arena` (the Text Arena loader),
:mod:`~analysis_lib.search_arena.cross_arena.appendix_f` (Appendix F: the published Table F.1 and Fig F.2 scores,
Fig F.2 gains, the Table F.1 transcription check), :mod:`~analysis_lib.search_arena.cross_arena.figures` (Fig 8,
Fig F.1, Fig F.2).
All ``share`` columns are fractions in [0, 1]; notebooks format them as percentages.
"""

from __future__ import annotations

from analysis_lib.search_arena.cross_arena.appendix_f import (
    authors_fact_synth_list,
    fact_synth_transcription,
    figure_f2_scores,
    search_vs_nonsearch_gains,
    table_f1,
)
from analysis_lib.search_arena.cross_arena.figures import f1_radar, f1_scatter, f2_scatter, figure8
from analysis_lib.search_arena.cross_arena.text_arena import (
    load_text_arena_report,
    text_arena_kind,
    validate_text_arena,
)
from analysis_lib.search_arena.cross_arena.votes import (
    compare_tie_shares,
    intent_tests,
    published_vote_totals,
    search_arena_cross_battles,
    vote_table,
)

__all__ = [
    "authors_fact_synth_list", "compare_tie_shares", "f1_radar", "f1_scatter", "f2_scatter",
    "fact_synth_transcription", "figure8", "figure_f2_scores", "intent_tests", "load_text_arena_report",
    "published_vote_totals", "search_arena_cross_battles", "search_vs_nonsearch_gains", "table_f1", "text_arena_kind",
    "validate_text_arena", "vote_table",
]
