"""The book side of chapter 07 (*Search Arena Meets Nuggets*, NG). The analyses are :mod:`analysis_lib.nuggets`'s
and each paper-values row (``resources/paper_values/ng.csv``) names the field of their result it compares with, so
the notebook records an analysis ID with one ``rec.record(aid, result)``; this package holds what is the book's:

- :mod:`.claims`: the paper's claims checked and its values drawn on the figures;
- :mod:`.notes`: the notes that depend on the build (tie threshold, simulated battles, samples);
- :mod:`.model_numbers`: the book's rules for the sections that need a model or the network (NG-F6, NG-T3, NG-Q,
  NG-NLI, NG-F7, NG-C, NG-F8): what may be sent, why a step did not run, the paper's one-cell numbers;
- :mod:`.tables`: the chapter's tables and NG-N's worked example.
"""

from bookbuild.papers.nuggets.claims import (
    alignment_sentence,
    highest_note,
    ks_check,
    ks_reference,
    paper_value,
    share_marks,
    sweep_reference,
    top_classes,
)
from bookbuild.papers.nuggets.model_numbers import (
    F7_NOT_RUN,
    F8_NOT_RUN,
    SCRAPE_NOT_RUN,
    entailment_note,
    judge_result,
    llm_note,
    llm_pairs,
    nli_model,
    query_classes,
    query_limit,
    rubric_result,
    second_assigner_note,
)
from bookbuild.papers.nuggets.notes import (
    SIMULATED_BATTLES,
    SIMULATED_URLS,
    coverage_note,
    exclusions,
    f4_notes,
    inputs_detail,
    ks_notes,
    notes_at,
    t2_notes,
    threshold_label,
    threshold_note,
)
from bookbuild.papers.nuggets.tables import (
    assignment_table,
    inversion_display,
    ks_check_table,
    sweep_table,
    worked_example,
    worked_example_table,
)

__all__ = [
    "F7_NOT_RUN", "F8_NOT_RUN", "SCRAPE_NOT_RUN", "SIMULATED_BATTLES", "SIMULATED_URLS", "alignment_sentence",
    "assignment_table", "coverage_note", "entailment_note", "exclusions", "f4_notes", "highest_note", "inputs_detail",
    "inversion_display", "judge_result", "ks_check", "ks_check_table", "ks_notes", "ks_reference", "llm_note",
    "llm_pairs", "nli_model", "notes_at", "paper_value", "query_classes", "query_limit", "rubric_result",
    "second_assigner_note", "share_marks", "sweep_reference", "sweep_table", "t2_notes", "threshold_label",
    "threshold_note", "top_classes", "worked_example", "worked_example_table",
]
