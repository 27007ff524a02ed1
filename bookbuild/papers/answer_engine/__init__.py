"""What the book records for the Answer Engine Evaluation paper (Venkit et al., seed 004; chapter 09): the
functions that turn the results of :mod:`analysis_lib.answer_engine` into the numbers recorded against the
paper, named after the analysis IDs.

- the usability study and the source tables (:mod:`.study`): :func:`t1_numbers` (Table 1's findings),
  :func:`t2_numbers` (Table 2), :func:`f6_numbers` (Fig 6 as Table 3 implies it), :func:`t34_numbers` and
  :func:`t5_numbers` (the t-tests of Tables 3–5), with their tables;
- the metrics and the scorecard (:mod:`.scorecard`): :func:`m_numbers` (the Fig 7 example),
  :func:`f8_published_numbers` (Fig 8a in Table 7's categories and the paper's conclusion),
  :func:`f8_recomputed_section` (Fig 8a recomputed from answers);
- the answer-level sections (:mod:`.answers`): :func:`f8b_numbers` (Fig 8b) with the paper's value drawn on it
  (:func:`paper_strongly_confident`), :func:`p_section` (AE-P).
"""

from .answers import PAPER_ENGINES, engine_names, f8b_numbers, p_numbers, p_section, paper_strongly_confident
from .scorecard import (
    f8_not_run,
    f8_published_numbers,
    f8_recomputed_numbers,
    f8_recomputed_section,
    m_numbers,
    most_metrics_claim,
)
from .study import f6_numbers, f6_table, t1_numbers, t1_table, t2_numbers, t5_numbers, t5_table, t34_numbers, t34_table

__all__ = [
    "PAPER_ENGINES", "engine_names", "f6_numbers", "f6_table", "f8_not_run", "f8_published_numbers",
    "f8_recomputed_numbers", "f8_recomputed_section", "f8b_numbers", "m_numbers", "most_metrics_claim", "p_numbers",
    "p_section", "paper_strongly_confident", "t1_numbers", "t1_table", "t2_numbers", "t34_numbers", "t34_table",
    "t5_numbers", "t5_table",
]
