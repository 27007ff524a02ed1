"""What the book records for DR-Arena (chapter 08): the functions that turn a result of :mod:`analysis_lib.dr_arena`
into the numbers recorded against the paper (``*_numbers``), the tables as the page shows them (``*_tables``), the
notes and claims, the paper's values drawn on the figures (``fig*_reference``) and the data banner's texts.

- :mod:`.trees`: DR-T89 (Tables 8, 9), DR-F8 (Fig 8) and the trees' banner text;
- :mod:`.published`: DR-T3 (Table 3), DR-T4 (Table 4), DR-T5 (Table 5), DR-T7 (Table 7);
- :mod:`.loop`: DR-L (Table 2, the released traces and the project page's walkthrough replayed);
- :mod:`.logs`: DR-S, DR-T6 (Fig 4), DR-F5, DR-F6, DR-F7 and the summary of the claims;
- :mod:`.examiner`: DR-X (the method through the LLM layer).
"""

from bookbuild.papers.dr_arena.examiner import (
    LOG_FOLDER,
    agent_names,
    examiner_prompts,
    x_notes,
    x_numbers,
    x_tables,
)
from bookbuild.papers.dr_arena.logs import (
    FIG5_NOTE,
    claims_summary,
    f5_numbers,
    f6_numbers,
    f6_tables,
    f7_numbers,
    fig4_notes,
    fig4_reference,
    fig5_reference,
    fig7_reference,
    mle_note,
    s_numbers,
    s_tables,
    t6_numbers,
    t6_tables,
)
from bookbuild.papers.dr_arena.loop import (
    page_numbers,
    page_tables,
    rules_numbers,
    rules_tables,
    traces_numbers,
    traces_tables,
)
from bookbuild.papers.dr_arena.published import (
    t3_numbers,
    t4_numbers,
    t4_tables,
    t5_numbers,
    t5_tables,
    t7_numbers,
    t7_tables,
)
from bookbuild.papers.dr_arena.trees import (
    PUBLISHED_DETAIL,
    f8_numbers,
    f8_tables,
    t89_numbers,
    t89_tables,
    trees_detail,
)

__all__ = [
    "FIG5_NOTE", "LOG_FOLDER", "PUBLISHED_DETAIL", "agent_names", "claims_summary", "examiner_prompts",
    "f5_numbers", "f6_numbers", "f6_tables", "f7_numbers", "f8_numbers", "f8_tables", "fig4_notes",
    "fig4_reference", "fig5_reference", "fig7_reference", "mle_note", "page_numbers", "page_tables",
    "rules_numbers", "rules_tables", "s_numbers", "s_tables", "t3_numbers", "t4_numbers", "t4_tables",
    "t5_numbers", "t5_tables", "t6_numbers", "t6_tables", "t7_numbers", "t7_tables", "t89_numbers",
    "t89_tables", "traces_numbers", "traces_tables", "trees_detail", "x_notes", "x_numbers", "x_tables",
]
