"""The book, kept apart from the analysis library: it imports ``analysis_lib``, never the other way round.

The build (``python -m bookbuild``, what ``make book`` runs; needs the ``[book]`` extra):

- :mod:`bookbuild.runner`       the command line, the notebook runs (skip unchanged, atomic outputs, ``_failed.json``)
- :mod:`bookbuild.config`       the build's options, exit codes and summary
- :mod:`bookbuild.keys`         what a notebook's executed copy depends on (data identity, code hash, rebuild key)
- :mod:`bookbuild.toc`          chapter order from the committed ``_toc.yml`` and the TOC of one build
- :mod:`bookbuild.book`         ``jupyter-book build`` and its warnings
- :mod:`bookbuild.leaks`        the guard that no BrowseComp problem text reaches the book
- :mod:`bookbuild.inputs`       every input validated by its loader before any notebook runs (exit 2), described
- :mod:`bookbuild.identity`     one identity per build: inputs, seed, LLM endpoint, environment; stale chapters
- :mod:`bookbuild.chapter`      one chapter's files, replaced atomically; the parameters and identity on its page
- :mod:`bookbuild.console`      a quiet console: the runner's lines and bars on screen, the kernels' noise in a log
- :mod:`bookbuild.publish`      ``make publish``: the built HTML to a ``gh-pages`` branch with ghp-import

What the chapters use (core install only):

- :mod:`bookbuild.recorder`     the chapters' :class:`~bookbuild.recorder.Recorder`: numbers beside the papers',
  the status rule, section tables
- :mod:`bookbuild.banner`       the data banner and the safe ways to name a user's input in Markdown
- :mod:`bookbuild.tables`       the book's HTML tables (:func:`~bookbuild.tables.html_table`, ``folded``)
- :mod:`bookbuild.status`       the reproduction-status table: one row per analysis ID, the aggregation rule
- :mod:`bookbuild.status_page`  the status page's rendering: banner, table, figure index, counts
- :mod:`bookbuild.navigation`   chapter titles, section anchors and the figure index, read from executed chapters
- :mod:`bookbuild.catalogue`    the catalogue of analyses (``resources/analyses.csv``)

Importing this package imports none of its modules.
"""
