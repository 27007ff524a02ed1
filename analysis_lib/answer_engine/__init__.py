"""Answer Engine Evaluation (Venkit et al., seed 004): the eight metrics of §4.2 (:mod:`.metrics`), the same
vectorised over many answers (:mod:`.batch`), answer records in the released layout (:mod:`.records`), the LLM
judging steps (:mod:`.pipeline`), the Fig 8 scorecard with bootstrap intervals and Table 7 thresholds
(:mod:`.scorecard`), the answer simulator (:mod:`.simulate`) and the chapter's figures (:mod:`.plots`)."""

from .batch import AnswerBatch, batch_metrics, greedy_cover_sizes, min_cover_sizes, pack_answers, popcount
from .metrics import (
    CATEGORIES,
    DEBATE_ONLY,
    FIGURE7_PAPER,
    METRICS,
    Answer,
    Category,
    NecessityMethod,
    Ratio,
    VertexCover,
    answer_metrics,
    citation_accuracy,
    citation_thoroughness,
    figure7_example,
    greedy_source_cover,
    metrics_frame,
    minimum_source_covers,
    minimum_vertex_cover,
    one_sided_answer,
    overconfident_answer,
    relevant_statements,
    source_necessity,
    uncited_sources,
    unsupported_statements,
)
from .records import (
    CONFIDENCE_LABELS,
    AnswerRecord,
    AnswerRecordError,
    ConvertedAnswers,
    Statement,
    confidence_frame,
    load_answer_records,
    load_support_results,
    parse_citations,
    parse_records,
    records_to_answers,
    scrape_ok,
)
from .scorecard import (
    Threshold,
    bootstrap_scorecard,
    category_counts,
    classify,
    classify_scorecard,
    engine_scorecard,
    load_thresholds,
    scorecard_matrix,
    table2_cited_share,
    wide_scorecard,
    display_name,
    recorded_scorecard,
)
from .agreement import confidence_distribution, judge_agreement, judge_values, load_answer_labels
from .loading import AnswerData, load_answers
from .pipeline import JudgeReport, judge_records
