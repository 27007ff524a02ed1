"""Search Arena schema vocabulary: the values and column names the release uses, defined once.

It imports only the vote vocabulary of :mod:`analysis_lib.ranking.votes` (which imports nothing from the paper
packages), so the loader, the simulator and the analyses can share it without import cycles.

- :data:`WINNERS`: the values of the release's ``winner`` column (null = no vote), also by name:
  :data:`MODEL_A`, :data:`MODEL_B`, :data:`TIE`, :data:`BOTH_BAD`. They are LMArena's labels, defined once in
  :mod:`analysis_lib.ranking.votes` (its default :data:`~analysis_lib.ranking.votes.LMARENA` format); the
  Search Arena release, the nugget records, the nugget simulator and the Text Arena loader use these values.
- :data:`OUTCOME_OF_WINNER`: outcome for model A used by every Bradley–Terry fit: 1 (``model_a``),
  0 (``model_b``), 0.5 (``tie`` and ``tie (bothbad)``: a tie counts as half a win, as the authors count it);
  :mod:`analysis_lib.ranking.votes`'s.
- :data:`DECISIVE`: the two winner values of a decided battle (:mod:`analysis_lib.ranking.votes`'s).
- :data:`VOTES_BY_SIDE`: the votes ordered by the side they favour (A, tie, B), then both bad: the rows of the
  nugget papers' confusion matrices (NG Figure 4).
- :data:`SIDES`: suffixes of the per-side columns (``<feature>_a``, ``<feature>_b``).
- :data:`ATTRIBUTION_COUNTS`: base names of the per-side citation-attribution counts of the
  ``citation_attribution_data.jsonl`` release (SA §3.2, Fig 6 right).
- :data:`MODERATION_PROMPT`: the placeholder that replaced a moderated user prompt in the release.
- :data:`FULL_SIZE`: the conversations of the released 24k file (the simulator's default size).
- :data:`RELEASE_FORMATS`, :data:`MAX_RELEASE_BYTES`: the file types a release may be (by suffix) and its
  largest size.
- :data:`INTENTS`: the nine intent categories (SA Table B.1) in the order of the paper's classification prompt,
  spelled as in the release (``Info Synthesis``); :data:`UNASSIGNED` is the release's "no secondary intent".
"""

from __future__ import annotations

from analysis_lib.ranking.votes import DECISIVE, OUTCOME_OF_WINNER, WINNERS

__all__ = [
    "ATTRIBUTION_COUNTS", "BOTH_BAD", "DECISIVE", "FULL_SIZE", "INTENTS", "MODEL_A", "MODEL_B", "MODERATION_PROMPT",
    "OUTCOME_OF_WINNER", "SIDES", "TIE", "UNASSIGNED", "VOTES_BY_SIDE", "WINNERS", "side_columns",
]

MODEL_A, MODEL_B, TIE, BOTH_BAD = WINNERS
VOTES_BY_SIDE: tuple[str, str, str, str] = (MODEL_A, TIE, MODEL_B, BOTH_BAD)
SIDES: tuple[str, ...] = ("a", "b")
ATTRIBUTION_COUNTS: tuple[str, ...] = ("support_count", "irrelevant_count", "contradict_count")
MODERATION_PROMPT = "$MODERATION$ YOUR TEXT VIOLATES OUR CONTENT MODERATION GUIDELINES."
FULL_SIZE = 24_069
RELEASE_FORMATS = {".parquet": "parquet", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl"}
#: Largest release file read (the real 24k release is 1.22 GB as JSON lines, ~0.4 GB as parquet).
MAX_RELEASE_BYTES = 16 * 1024**3

INTENTS: tuple[str, ...] = (
    "Text Processing",
    "Creative Generation",
    "Factual Lookup",
    "Info Synthesis",
    "Analysis",
    "Recommendation",
    "Explanation",
    "Guidance",
    "Other",
)
UNASSIGNED = "Unassigned"


def side_columns(base: str) -> tuple[str, str]:
    """``(<base>_a, <base>_b)``: the two per-side columns of a feature."""
    return f"{base}_{SIDES[0]}", f"{base}_{SIDES[1]}"
