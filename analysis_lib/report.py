"""Record every number a notebook computes beside the paper's value, for the reproduction-status page.

Each chapter notebook creates one :class:`Recorder` and calls :meth:`Recorder.number` for each paper number it
reproduces. The recorder prints a one-line comparison in the notebook, keeps a table of the notebook's results
and rewrites ``<results_dir>/<notebook>.json`` after every call, so an interrupted run keeps what it finished.

Status of one result:

- ``match``     computed on real or published data and within ``tol`` of the paper's value;
- ``differs``   computed on real or published data and outside ``tol`` (the notebook must say why);
- ``simulated`` computed on the project's simulator: the paper's value is shown for orientation only;
- ``computed``  no paper value to compare with (a new number, or a property of the method);
- ``not run``   needs an LLM endpoint or data that this build did not have; no number is shown.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
import polars as pl

DataKind = Literal["real", "published", "simulated", "llm-cache", "none"]
Status = Literal["match", "differs", "simulated", "computed", "not run"]



@dataclass(frozen=True)
class Result:
    """One reproduced number."""

    analysis_id: str
    quantity: str
    ours: float | str | None
    paper: float | str | None
    data: DataKind
    status: Status
    tol: float | None = None
    source: str = ""
    note: str = ""


Bound = Literal["lower", "upper"]


def compare(
    ours: float | str | None,
    paper: float | str | None,
    data: DataKind,
    tol: float | None,
    bound: Bound | None = None,
) -> Status:
    """The status rule stated in the module docstring.

    ``bound="lower"`` reads the paper's value as a lower bound ("more than 11%"): ``ours >= paper - tol``
    matches; ``"upper"`` likewise for "less than".
    """
    if ours is None or (isinstance(ours, float) and math.isnan(ours)):
        return "not run"
    if data == "simulated":
        return "simulated"
    if paper is None:
        return "computed"
    if isinstance(ours, str) or isinstance(paper, str):
        return "match" if str(ours) == str(paper) else "differs"
    tol = 0.0 if tol is None else tol
    x, p = float(ours), float(paper)
    if bound == "lower":
        return "match" if x >= p - tol - 1e-12 else "differs"
    if bound == "upper":
        return "match" if x <= p + tol + 1e-12 else "differs"
    return "match" if abs(x - p) <= tol + 1e-12 else "differs"


@dataclass
class Recorder:
    """Collects the results of one notebook and persists them as JSON after every call.

    Parameters
    ----------
    results_dir:
        Directory shared by all notebooks of one build (the runner passes it as a parameter).
    notebook:
        Stem of the notebook, e.g. ``"01_dataset"``; names the JSON file.
    data:
        Default data kind for this notebook's numbers (``"simulated"`` on the offline default).
    """

    results_dir: str | Path
    notebook: str
    data: DataKind = "real"
    results: list[Result] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.results_dir = Path(self.results_dir)
        self.results_dir.mkdir(parents=True, exist_ok=True)
        self._save()

    @property
    def path(self) -> Path:
        return Path(self.results_dir) / f"{self.notebook}.json"

    def number(
        self,
        analysis_id: str,
        quantity: str,
        ours: float | str | None,
        paper: float | str | None = None,
        *,
        tol: float | None = None,
        source: str = "",
        note: str = "",
        data: DataKind | None = None,
        digits: int = 3,
        bound: Bound | None = None,
    ) -> None:
        """Record one number, print ``ID quantity: ours (paper: x) [status]`` and persist.

        Returns nothing, so that a notebook cell ending with this call shows only the printed line; the
        recorded :class:`Result` objects are in :attr:`results`.
        """
        ours, paper = _plain(ours), _plain(paper)
        kind = data or self.data
        result = Result(
            analysis_id=analysis_id,
            quantity=quantity,
            ours=ours,
            paper=paper,
            data=kind,
            status=compare(ours, paper, kind, tol, bound),
            tol=tol,
            source=source,
            note=note,
        )
        self.results = [r for r in self.results if (r.analysis_id, r.quantity) != (analysis_id, quantity)]
        self.results.append(result)
        self._save()
        print(self._line(result, digits))

    def not_run(self, analysis_id: str, quantity: str, paper: float | str | None = None, *, reason: str) -> None:
        """Record that an analysis did not run in this build (no endpoint, no data); shows no number."""
        self.number(analysis_id, quantity, None, paper, note=reason, data="none")

    def table(self) -> pl.DataFrame:
        """This notebook's results as a frame (for display at the end of a chapter)."""
        return results_frame(self.results)

    def _save(self) -> None:
        payload = {"notebook": self.notebook, "results": [asdict(r) for r in self.results]}
        tmp = self.path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(payload, indent=1, ensure_ascii=False))
        tmp.replace(self.path)

    @staticmethod
    def _line(r: Result, digits: int) -> str:
        paper = f" (paper: {format_value(r.paper, digits)})" if r.paper is not None else ""
        note = f" — {r.note}" if r.note else ""
        return f"{r.analysis_id} {r.quantity}: {format_value(r.ours, digits)}{paper} [{r.status}]{note}"


def _plain(v: object) -> float | str | None:
    """Numbers (Python or numpy, bools excluded) as float, strings as str, so results serialise as JSON."""
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, (int, float, np.integer, np.floating)):
        return float(v)
    raise TypeError(f"recorded values must be numbers or strings, got {type(v).__name__}: {v!r}")


def format_value(v: float | str | None, digits: int = 3) -> str:
    """Numbers rounded to ``digits`` decimals (significant digits for tiny p-values); ``—`` for none."""
    if v is None:
        return "—"
    if isinstance(v, float):
        if v != 0 and abs(v) < 1e-3:
            return f"{v:.{digits}g}"
        return f"{round(v, digits):g}"
    return str(v)


def results_frame(results: list[Result]) -> pl.DataFrame:
    """A list of results as a frame with string-typed value columns (numbers and labels mix)."""
    schema = {
        "analysis_id": pl.String,
        "quantity": pl.String,
        "ours": pl.String,
        "paper": pl.String,
        "data": pl.String,
        "status": pl.String,
        "source": pl.String,
        "note": pl.String,
    }
    rows = [
        {
            "analysis_id": r.analysis_id,
            "quantity": r.quantity,
            "ours": None if r.ours is None else format_value(r.ours, 4),
            "paper": None if r.paper is None else format_value(r.paper, 4),
            "data": r.data,
            "status": r.status,
            "source": r.source,
            "note": r.note,
        }
        for r in results
    ]
    return pl.DataFrame(rows, schema=schema)


def data_banner(kind: DataKind, detail: str = "") -> str:
    """Markdown banner for the top of a page: says which data the numbers on it come from.

    Rendered by the book as an admonition (MyST syntax, enabled in ``_config.yml``).
    """
    if kind == "simulated":
        return (
            ":::{admonition} Simulated data\n:class: warning\n"
            "The numbers on this page come from the project's **Search Arena simulator**, not from the real "
            "release: they show that the analysis runs and what it recovers, not the paper's findings. "
            "Run `make book DATA=path/to/search-arena-chat-24k.parquet` to reproduce the paper.\n"
            + (f"\n{detail}\n" if detail else "")
            + ":::"
        )
    label = {"real": "real public data", "published": "published aggregates", "llm-cache": "cached LLM outputs"}.get(
        kind, kind
    )
    return f":::{{admonition}} Data: {label}\n:class: note\n{detail}\n:::"
