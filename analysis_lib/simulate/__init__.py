"""Simulators that emit releases in the real raw schemas, with the planted parameters that generated them.

- :func:`search_arena` -- the Search Arena 24k release (``search-arena-chat-24k.parquet`` schema) and the
  :class:`Planted` truth (ratings, style coefficients, per-battle features) behind its votes.
- :func:`text_arena` -- the Text Arena cross-arena deployment (``text_arena_battles.jsonl`` rows) and its
  :class:`TextArenaPlanted` per-intent vote counts.
"""

from __future__ import annotations

from analysis_lib.simulate.search_arena import Planted, search_arena
from analysis_lib.simulate.text_arena import TextArenaPlanted, text_arena

__all__ = ["Planted", "TextArenaPlanted", "search_arena", "text_arena"]
