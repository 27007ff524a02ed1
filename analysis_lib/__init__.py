"""analysis_lib: the library behind the search-augmented-LLM evaluation compendium.

One module per method family; every function is a pure function over polars frames and numpy arrays.

- :mod:`analysis_lib.fetch`     data manifest, hash-verified downloads, local mirror
- :mod:`analysis_lib.data`      Search Arena release loader and validation (tidy battle frame)
- :mod:`analysis_lib.domains`   citation URL -> domain group mapping (Appendix E.2)
- :mod:`analysis_lib.simulate`  Search Arena simulator (raw release schema, planted parameters)
- :mod:`analysis_lib.bt`        Bradley-Terry and contextual (style-controlled) Bradley-Terry
- :mod:`analysis_lib.stats`     tests and agreement statistics
- :mod:`analysis_lib.llm`       cached OpenAI-compatible client for structured LLM tasks
- :mod:`analysis_lib.report`    records each computed number beside the paper's for the status page
- :mod:`analysis_lib.plotting`  the one plotting style
- :mod:`analysis_lib.llm_http`  the LLM client's HTTP side on ``openai``: same-origin only, deadlines
- :mod:`analysis_lib.llm_tasks` prompt templates and the structured :class:`~analysis_lib.llm.Task`
- :mod:`analysis_lib.llm_records` the LLM result cache, run statistics and result frame
- :mod:`analysis_lib.paths`     package resources, repository root, cache folder (leaf)
- :mod:`analysis_lib.sources`   the data-source grammar: sample[:N], hf[:REF], a path (leaf)
  (the book runner is the separate package ``bookbuild``: ``python -m bookbuild``)
"""

from __future__ import annotations

__version__ = "0.1.0"
