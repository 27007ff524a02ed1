"""Answer Engine Evaluation (Venkit et al., seed 004): the eight metrics of §4.2 computed from answer records,
the Fig 8 scorecard with bootstrap intervals and Table 7's categories, the LLM judging steps, the judges'
agreement with human labels, the usability study's tables, and the simulators that stand in for unreleased data.

- loading answers: :func:`load_answers` (user records or the simulator, judged through the LLM layer when
  needed), :func:`load_answer_records`, :func:`parse_records`, :func:`records_to_answers`,
  :func:`load_support_results`, the ``validate_*`` checks of a user's files before a build; files are read by
  :mod:`analysis_lib.reading`, every problem a :class:`~analysis_lib.reading.DataValidationError` naming the
  file, the record or line and the field (:mod:`.records`, :mod:`.validation`);
- the metrics (:mod:`.metrics`, vectorised in :mod:`.batch`): :func:`answer_metrics` of one :class:`Answer`,
  :func:`batch_metrics` of many, the source covers behind Source Necessity; the two conventions, ``"released"``
  (the authors' released notebook, the default) and ``"paper"`` (:mod:`.conventions`);
- judging (:mod:`.pipeline`): :func:`judge_records`;
- the scorecard (:mod:`.scorecard`): :func:`bootstrap_scorecard`, :func:`classify_scorecard` with
  :func:`load_thresholds` (Table 7), :func:`table2_cited_share`;
- confidence and agreement (:mod:`.agreement`): :func:`confidence_frame`, :func:`confidence_distribution`,
  :func:`confidence_summary`, :func:`judge_values`, :func:`load_answer_labels`, :func:`judge_agreement`;
- the usability study: Table 1's findings (:mod:`.findings`), the t-tests of Tables 3–5 from summary statistics
  (:mod:`.usability`), Fig 6 as Table 3 implies it (:mod:`.implied`);
- figures (:mod:`.plots`, :mod:`.plots_study`);
- simulators (:mod:`.simulate`): :func:`simulate_answers`, :func:`simulate_labels`.
"""

from .agreement import (
    confidence_distribution,
    judge_agreement,
    judge_values,
    load_answer_labels,
)
from .batch import batch_metrics, pack_answers
from .findings import check_findings, findings_shares, load_findings, load_participants
from .implied import implied_distributions, implied_table
from .input_checks import validate_answers, validate_labels, validate_support_results
from .loader import judged_support_path, load_answers
from .metrics import (
    MAX_SOURCES,
    Answer,
    answer_metrics,
    figure7_example,
    minimum_source_covers,
    minimum_vertex_cover,
    source_necessity,
)
from .pipeline import judge_records
from .plots import confidence_bars, figure7_matrices, scorecard_figure, sources_bars
from .plots_study import findings_bars, implied_violins
from .records import (
    confidence_frame,
    load_answer_records,
    parse_records,
    records_to_answers,
)
from .scorecard import (
    bootstrap_scorecard,
    classify_scorecard,
    engine_scorecard,
    load_thresholds,
    table2_cited_share,
)
from .simulate import simulate_answers, simulate_labels
from .usability import load_usability_tables, usability_comparisons

__all__ = [
    "judged_support_path", "load_answer_records", "load_answers", "parse_records", "records_to_answers",
    "validate_answers", "validate_labels", "validate_support_results", "MAX_SOURCES", "Answer", "answer_metrics",
    "batch_metrics", "figure7_example", "minimum_source_covers", "minimum_vertex_cover", "pack_answers",
    "source_necessity", "judge_records", "bootstrap_scorecard", "classify_scorecard", "engine_scorecard",
    "load_thresholds", "table2_cited_share", "confidence_distribution", "confidence_frame", "judge_agreement",
    "judge_values", "load_answer_labels", "check_findings", "findings_shares", "implied_distributions",
    "implied_table", "load_findings", "load_participants", "load_usability_tables", "usability_comparisons",
    "confidence_bars", "figure7_matrices", "findings_bars", "implied_violins", "scorecard_figure", "sources_bars",
    "simulate_answers", "simulate_labels",
]
