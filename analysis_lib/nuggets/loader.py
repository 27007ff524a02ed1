"""The nugget analyses' one loader: the battles of a release and the nugget records, from a user's files when a
path is given, from the nugget simulator otherwise.

The battles (``data_source``: ``sample``, ``sample:N``, ``hf`` or a release file, read by
:func:`analysis_lib.search_arena.loader.load_battles`) give NG-A1's single-turn battles and, without records, the
battles the simulator draws records for (:func:`analysis_lib.nuggets.simulate.simulate_nuggets`, calibrated to
the published Figure 4 matrix). :class:`NuggetInputs` says which is which (``kind`` of the records,
``battles_kind`` of the battles).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from analysis_lib import fetch
from analysis_lib.memory import release_freed_memory
from analysis_lib.nuggets.battles import TRACE_COLUMNS, LeftOut, TraceUrls, single_turn, single_turn_urls
from analysis_lib.nuggets.records import NuggetRecords, load_nugget_records
from analysis_lib.nuggets.simulate import simulate_nuggets
from analysis_lib.search_arena import loader
from analysis_lib.search_arena.release import read_raw


@dataclass(frozen=True)
class NuggetInputs:
    """What the nugget analyses run on.

    ``single``: the single-turn battles with a vote (NG-A1); ``left_out``: battles left out of them;
    ``records``: the nugget records; ``planted``: the simulator's planted values (empty for a user's records);
    ``kind``: ``real`` or ``simulated`` (the records); ``battles_kind``: the same for the battles; ``urls``:
    NG-C's distinct URLs of the single-turn battles and their counts
    (:func:`analysis_lib.nuggets.battles.single_turn_urls`), from the same read of the release."""

    single: pl.DataFrame
    left_out: LeftOut
    records: NuggetRecords
    kind: str
    battles_kind: str
    planted: dict[str, Any] = field(default_factory=dict)
    urls: TraceUrls = TraceUrls([], 0, 0)

    @property
    def queries_kind(self) -> str:
        """``simulated`` when the records' queries come from the simulated release, else the LLM cache's kind."""
        return "simulated" if self.kind == "simulated" and self.battles_kind == "simulated" else "llm-cache"


def load_inputs(data_source: str | Path, nugget_records: str | Path | None = None, *, seed: int = 0,
                cache_dir: str | Path | None = None) -> NuggetInputs:
    """The battles of ``data_source`` and the records at ``nugget_records`` (empty or None: simulated for those
    battles with ``seed``). NG-C's URLs come from the release's citation traces, which the battle frame does not
    keep. Without ``cache_dir`` the release is read once for both; with it, the battles come from the loader's
    cache and the traces alone from the release (a simulated one from the cache, when another process has
    simulated it: no release texts in memory). Raises :class:`~analysis_lib.reading.DataValidationError`
    for unusable records, before any battle is read."""
    records = load_nugget_records(nugget_records) if nugget_records else None
    if cache_dir is None:
        raw, _ = read_raw(data_source, seed=seed)
        battles = loader.load_battles(raw, seed=seed)
    else:
        battles = loader.load_battles(data_source, seed=seed, cache_dir=cache_dir)
        raw = loader.read_release(data_source, seed=seed, cache_dir=cache_dir, columns=TRACE_COLUMNS)
    urls = single_turn_urls(raw)
    del raw
    release_freed_memory()  # the release's texts: the encoder and the records come next
    single, left_out = single_turn(battles)
    battles_kind = loader.data_kind(data_source)
    if records is not None:
        return NuggetInputs(single, left_out, records, fetch.provenance(records.origin), battles_kind, urls=urls)
    sim = simulate_nuggets(single, seed=seed)
    return NuggetInputs(single, left_out, sim.records, "simulated", battles_kind, dict(sim.planted), urls)
