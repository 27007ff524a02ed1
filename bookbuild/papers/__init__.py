"""What the book adds to each paper's analyses: the notes, claims, display tables and figure marks of its chapters
(the numbers themselves are recorded by path, ``rec.record(analysis_id, result)``, against the rows of
``resources/paper_values/<paper>.csv``). One module (or package) per paper: :mod:`.search_arena`, :mod:`.nuggets`,
:mod:`.dr_arena`, :mod:`.answer_engine`."""
