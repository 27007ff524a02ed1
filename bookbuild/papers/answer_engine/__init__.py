"""The book's side of the Answer Engine Evaluation paper (Venkit et al.; chapter 09): what is genuinely the book's
around the numbers the chapter records by path (``bookbuild/resources/paper_values/ae.csv``): the results its rows
read where an analysis result needs the book's notes, counts or claims, the tables with readable column names, the
paper's value drawn on a figure, the data kinds and the not-run reasons.

- the usability study and the source tables (:mod:`.study`): :func:`t1_result` (Table 1's checks), the tables of
  AE-T1, AE-F6, AE-T34 and AE-T5;
- the metrics and the scorecard (:mod:`.scorecard`): :func:`m_result` (the Fig 7 example), :func:`f8_record`
  (Fig 8a published and recomputed, with :func:`most_metrics_claim`), :func:`f8_recomputed_section`;
- the answer-level sections (:mod:`.answers`): :func:`f8b_record` (Fig 8b) with the paper's value drawn on it
  (:func:`paper_strongly_confident`), :func:`p_record` (AE-P).
"""

from .answers import (
    PAPER_ENGINES,
    Recorded,
    answers_detail,
    engine_names,
    f8b_record,
    number_kind,
    p_record,
    p_tables,
    paper_strongly_confident,
)
from .scorecard import f8_recomputed_section, f8_record, m_result, most_metrics_claim
from .study import f6_table, t1_result, t1_table, t5_table, t34_table

__all__ = [
    "PAPER_ENGINES", "Recorded", "answers_detail", "engine_names", "f6_table", "f8_record", "f8_recomputed_section",
    "f8b_record", "m_result", "most_metrics_claim", "number_kind", "p_record", "p_tables", "paper_strongly_confident",
    "t1_result", "t1_table", "t34_table", "t5_table",
]
