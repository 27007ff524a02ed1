"""The notes chapter 07 adds to some of its numbers, where what a number rests on depends on the build: the tie
threshold (the numbers NG-F4 compares with the paper are at the paper's threshold whatever the chapter's
``tie_threshold``, which its figures and tables use; a number at another threshold says so), simulated battles, a
sample, the simulator's planted value. The paper-values rows hold the notes every build shares (their ``{field}``
placeholders read from the result); :func:`notes_at` gives these others to ``rec.record(..., notes=...)``, and
the notes of numbers that may have no value (a row that did not run shows its paper-values note as written).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import polars as pl

from analysis_lib import paths
from analysis_lib.nuggets.loader import NuggetInputs
from analysis_lib.nuggets.records import NuggetRecords
from analysis_lib.nuggets.scores import TIE_THRESHOLD
from analysis_lib.search_arena import encoder
from bookbuild import banner, fieldpath, paper_values

SIMULATED_BATTLES = "24k release simulated; the paper counts the v1-7k release"
SIMULATED_URLS = "24k release simulated, with the simulator's URLs"
PLANTED_KAPPA = "planted = the κ of the published matrix the simulator was calibrated to"


def notes_at(analysis_id: str, notes: Mapping[str, str]) -> dict[str, str]:
    """``notes`` keyed by result path (``"per_battle"``, ``"cosine.mean"``) as :meth:`Recorder.record` takes them,
    keyed by quantity: each note goes to every row of ``analysis_id`` whose ``result`` path is that path or a field
    under it; empty notes are left out."""
    wanted = [(fieldpath.parse(path).steps, note) for path, note in notes.items() if note]
    out = {}
    for row in paper_values.rows_of(analysis_id):
        steps = fieldpath.parse(row.result).steps
        out.update({row.quantity: note for prefix, note in wanted if steps[:len(prefix)] == prefix})
    return out


def threshold_label(threshold: float) -> str:
    """The tie threshold as the chapter writes it (``0.07``)."""
    return f"{threshold:g}"


def threshold_note(tie_threshold: float) -> str:
    """``""`` at the paper's tie threshold; else a note that the number uses ``tie_threshold``."""
    if np.isclose(tie_threshold, TIE_THRESHOLD):
        return ""
    return f"at tie threshold {threshold_label(tie_threshold)} (the paper's values are at {TIE_THRESHOLD:g})"


def f4_notes(tie_threshold: float, planted: bool) -> dict[str, str]:
    """NG-F4's per-battle numbers: at the paper's tie threshold whatever ``tie_threshold`` (said when it differs),
    κ beside the value the simulator planted (``planted``)."""
    at_paper = "" if np.isclose(tie_threshold, TIE_THRESHOLD) else (
        f"at the paper's tie threshold {TIE_THRESHOLD:g}, to compare with the paper (this page's figures and tables "
        f"use {threshold_label(tie_threshold)})")
    kappa = "; ".join(n for n in (at_paper, PLANTED_KAPPA if planted else "") if n)
    return notes_at("NG-F4", {"per_battle": at_paper, "per_battle_kappa": kappa})


def exclusions(records: NuggetRecords) -> str:
    """Every exclusion of the records with its count, zeros included (NG-N's note)."""
    return ", ".join(f"{v:,} {k.removeprefix('battles ')}" for k, v in records.excluded.items())


def ks_notes(ks: pl.DataFrame) -> dict[str, str]:
    """NG-F2: the two group sizes beside each D (``ks``: :func:`analysis_lib.nuggets.ks_by_vote`)."""
    return notes_at("NG-F2", {f"ks[group_1={r['group_1']},group_2={r['group_2']}].ks_statistic":
                              f"n = {r['n_1']:,} and {r['n_2']:,}" for r in ks.iter_rows(named=True)})


def t2_notes(population: int, sampled: int, precision: encoder.Precision) -> dict[str, str]:
    """NG-T2: the battles measured (the Jaccard: all ``population``; the cosine: ``sampled`` of them, embedded by
    the encoder at ``precision``)."""
    drawn = f"{sampled:,} battles sampled" if sampled < population else f"all {population:,} battles"
    return notes_at("NG-T2", {"jaccard.mean": f"{population:,} battles",
                              "cosine.mean": f"{drawn}; {encoder.label(precision)}"})


def coverage_note(decided: int, scored: int, sampled: int, total: int) -> str:
    """NG-F8: the ``decided`` battles compared, and the ``scored`` battles that carry responses and chunks among
    the ``sampled`` of ``total``."""
    return (f"{decided:,} decided battles; {scored:,} of {sampled:,} battles scored carry responses and chunks"
            + (f" (a random {sampled:,} of {total:,})" if sampled < total else ""))


def inputs_detail(inputs: NuggetInputs, nugget_records: str, data_source: str) -> str:
    """The data banner's sentence of chapter 07: a user's records named with their hash and size (never as the
    real release) and the battles left after exclusions, or the simulated records and the battles they were drawn
    for."""
    if nugget_records:
        return (f"Nugget records: {banner.user_input(nugget_records)}: {inputs.records.n_battles:,} battles after "
                f"exclusions ({inputs.records.exclusion_text()}). "
                + (banner.source_line(data_source, "Battles for NG-A1") or "Battles for NG-A1: the simulator."))
    source = paths.display_path(data_source) if Path(str(data_source)).exists() else str(data_source)
    return (f"Per-battle sections run on **simulated nugget records** for the {inputs.single.height:,} single-turn "
            f"voted battles of `{source}` (nugget simulator calibrated to the published Figure 4 matrix; planted "
            "values shown beside the recovered ones). Sections marked published use the paper's matrices.")
