"""The book build, kept apart from the analysis library: ``python -m bookbuild`` (what ``make book`` runs).

Modules:

- :mod:`bookbuild.runner`  the command line, the notebook runs (skip unchanged, atomic outputs, ``_failed.json``)
- :mod:`bookbuild.keys`    what a notebook's executed copy depends on (data identity, library hash, rebuild key)
- :mod:`bookbuild.toc`     chapter order from the committed ``_toc.yml`` and the TOC of one build
- :mod:`bookbuild.book`    ``jupyter-book build`` and its warnings
- :mod:`bookbuild.leaks`   the guard that no BrowseComp problem text reaches the book
"""

from bookbuild.runner import (
    EXIT_BOOK,
    EXIT_NOTEBOOK,
    EXIT_OK,
    EXIT_USAGE,
    BuildError,
    Config,
    Summary,
    build,
    main,
    parse_args,
)

__all__ = ["EXIT_BOOK", "EXIT_NOTEBOOK", "EXIT_OK", "EXIT_USAGE", "BuildError", "Config", "Summary", "build",
           "main", "parse_args"]
