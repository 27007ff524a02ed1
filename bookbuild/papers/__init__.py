"""What the book records for each paper: the functions that turn an analysis result of :mod:`analysis_lib` into
the numbers recorded against the paper (:class:`bookbuild.sections.Number`), with their quantity labels, notes,
claims and the paper's values drawn on figures. One module (or package) per paper: :mod:`.search_arena`,
:mod:`.nuggets`, :mod:`.dr_arena`, :mod:`.answer_engine`."""
