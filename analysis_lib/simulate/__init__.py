"""Simulators that emit releases in the real raw schemas, with the planted parameters that generated them.

- :mod:`analysis_lib.simulate.search_arena` -- the Search Arena 24k release (``search-arena-chat-24k.parquet``
  schema) and the :class:`Planted` truth (ratings, style coefficients, per-battle features) behind its votes:
  :func:`analysis_lib.simulate.search_arena.simulate`.
- :mod:`analysis_lib.simulate.text_arena` -- the Text Arena cross-arena deployment (``text_arena_battles.jsonl``
  rows) and its :class:`TextArenaPlanted` per-intent vote counts: :func:`analysis_lib.simulate.text_arena.simulate`.
- :mod:`analysis_lib.simulate.attribution` -- the citation-attribution subset
  (``citation_attribution_data.jsonl``: the release schema plus per-side support / irrelevant / contradict
  counts in ``conv_metadata``) and its :class:`AttributionPlanted` coefficients:
  :func:`analysis_lib.simulate.attribution.simulate`.

``simulate.search_arena``, ``simulate.text_arena`` and ``simulate.attribution`` are the modules; each module's
``simulate(n, seed)`` runs it.
"""

from __future__ import annotations

from analysis_lib.simulate import attribution, search_arena, text_arena
from analysis_lib.simulate.attribution import AttributionPlanted
from analysis_lib.simulate.search_arena import Planted
from analysis_lib.simulate.text_arena import TextArenaPlanted

__all__ = ["AttributionPlanted", "Planted", "TextArenaPlanted", "attribution", "search_arena", "text_arena"]
