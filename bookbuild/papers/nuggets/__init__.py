"""The book side of chapter 07 (*Search Arena Meets Nuggets*, NG): the numbers recorded against the paper, the
claims checked, the paper's values drawn on figures and the tables laid out for reading. The analyses themselves
are :mod:`analysis_lib.nuggets`'s.

- :mod:`.numbers`: the numbers of NG-A1, NG-N, NG-F3, NG-F2, NG-F4, NG-F5, NG-T1, NG-B and NG-T2;
- :mod:`.model_numbers`: the numbers of the sections that need a model or the network (NG-F6, NG-T3, NG-Q,
  NG-NLI, NG-F7, NG-C, NG-F8) and the book's rules for what may be sent to a model;
- :mod:`.claims`: the paper's claims checked and its values drawn on the figures;
- :mod:`.tables`: the chapter's tables.
"""

from bookbuild.papers.nuggets.claims import (
    alignment_sentence,
    ks_reference,
    paper_value,
    sweep_reference,
    top_classes,
)
from bookbuild.papers.nuggets.model_numbers import (
    F7_NOT_RUN,
    F7_QUANTITY,
    F8_NOT_RUN,
    F8_QUANTITIES,
    NLI_QUANTITY,
    c_numbers,
    f6_numbers,
    f6_published_numbers,
    f7_numbers,
    f8_numbers,
    llm_note,
    llm_pairs,
    nli_model,
    nli_numbers,
    q_numbers,
    query_limit,
    t3_numbers,
)
from bookbuild.papers.nuggets.numbers import (
    a1_numbers,
    b_numbers,
    b_record_numbers,
    f2_numbers,
    f3_numbers,
    f4_published_numbers,
    f4_record_numbers,
    f5_numbers,
    ks_check_numbers,
    n_numbers,
    sweep_numbers,
    t1_overall_numbers,
    t1_published_numbers,
    t2_numbers,
    threshold_label,
    worked_example_numbers,
)
from bookbuild.papers.nuggets.tables import (
    assignment_table,
    inversion_display,
    ks_check_table,
    sweep_table,
    worked_example_table,
)

__all__ = [
    "F7_NOT_RUN", "F7_QUANTITY", "F8_NOT_RUN", "F8_QUANTITIES", "NLI_QUANTITY", "a1_numbers", "alignment_sentence",
    "assignment_table", "b_numbers", "b_record_numbers", "c_numbers", "f2_numbers", "f3_numbers",
    "f4_published_numbers", "f4_record_numbers", "f5_numbers", "f6_numbers", "f6_published_numbers", "f7_numbers",
    "f8_numbers", "inversion_display", "ks_check_numbers", "ks_check_table", "ks_reference", "llm_note", "llm_pairs",
    "n_numbers", "nli_model", "nli_numbers", "paper_value", "q_numbers", "query_limit", "sweep_numbers",
    "sweep_reference", "sweep_table", "t1_overall_numbers", "t1_published_numbers", "t2_numbers", "t3_numbers",
    "threshold_label",
    "top_classes", "worked_example_numbers", "worked_example_table",
]
