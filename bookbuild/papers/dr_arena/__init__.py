"""The book's side of DR-Arena (chapter 08): what is genuinely the book's around the numbers the chapter records by
path (``bookbuild/resources/paper_values/dr.csv``): the paper's claims judged on the analyses' results, the tables
as the page shows them (``*_tables``), the notes, the not-run reasons, the paper's values drawn on the figures
(``fig*_reference``) and the data banner's texts.

- :mod:`.trees`: the trees' banner text and DR-F8's summary check;
- :mod:`.published`: DR-T4 (Table 4), DR-T5 (Table 5), DR-T7 (Table 7);
- :mod:`.loop`: DR-L (Table 2, the released traces and the project page's walkthrough replayed);
- :mod:`.logs`: DR-S, DR-T6 (Fig 4), DR-F5, DR-F6, DR-F7 and the summary of the claims;
- :mod:`.examiner`: DR-X (the method through the LLM layer).
"""

from bookbuild.papers.dr_arena.examiner import (
    LOG_FOLDER,
    agent_names,
    examiner_prompts,
    x_notes,
    x_result,
    x_row_notes,
    x_tables,
)
from bookbuild.papers.dr_arena.logs import (
    FIG5_NOTE,
    claims_summary,
    f5_claim,
    f6_claim,
    f6_tables,
    f7_claim,
    fig4_notes,
    fig4_reference,
    fig5_reference,
    fig7_reference,
    holds,
    logs_detail,
    mle_note,
    s_tables,
    t6_result,
    t6_tables,
    too_few,
)
from bookbuild.papers.dr_arena.loop import page_tables, rules_tables, traces_tables
from bookbuild.papers.dr_arena.published import T4_MISSING, t4_tables, t5_tables, t7_result, t7_tables
from bookbuild.papers.dr_arena.trees import PUBLISHED_DETAIL, f8_tables, trees_detail

__all__ = [
    "FIG5_NOTE", "LOG_FOLDER", "PUBLISHED_DETAIL", "T4_MISSING", "agent_names", "claims_summary", "examiner_prompts",
    "f5_claim", "f6_claim", "f6_tables", "f7_claim", "f8_tables", "fig4_notes", "fig4_reference", "fig5_reference",
    "fig7_reference", "holds", "logs_detail", "mle_note", "page_tables", "rules_tables", "s_tables", "t4_tables",
    "t5_tables", "t6_result", "t6_tables", "t7_result", "t7_tables", "too_few", "traces_tables", "trees_detail",
    "x_notes", "x_result", "x_row_notes", "x_tables",
]
