"""The one evidence model of the book, and the rule that compares a number with the paper's.

A number's **evidence** is what it was computed from (:data:`EVIDENCE`, from the recorder's data kind; one model for
every class the build can know):

- ``real``         inputs whose sha256 equals an entry of the data manifest (the mirrored files, the pinned hub
  revision): real public data;
- ``published``    the papers' published aggregates (tables, released summary files);
- ``user``         a user's file (named by file and hash on the page): the build cannot know what it holds;
- ``llm``          an LLM's output (the model, the endpoint's origin and the kind of call, chat or
  embeddings, are named beside the number);
- ``simulated``    the project's simulators;
- ``checked``      a check of a published number against another (a p-value that follows from a statistic,
  shares that sum to 100): it checks the paper, it does not reproduce a figure;
- ``transcribed``  a number transcribed from the paper (shown, not computed);
- ``none``         a worked example that needs no data, or a number that did not run.

Only ``real`` and ``published`` numbers can reproduce a figure (:mod:`bookbuild.status`). Its
**status** (:func:`compare`):

- ``match``        within ``tol`` of the paper's value (a reproduction only on real or published data);
- ``differs``      outside ``tol``: ours vs the paper (the chapter says why);
- ``inconsistent`` outside ``tol`` because the paper is inconsistent with itself (its text vs its figure, a
  mistyped list): the paper-values row's ``discrepancy`` says so, and ``Result.reason`` gives the reason in a word;
- ``assumption``   outside ``tol`` at an assumption the paper does not publish (an implied group size), likewise;
- ``simulated``    computed on the project's simulator: the paper's value is shown for orientation only;
- ``computed``     no paper value to compare with (a new number, a property of the method, or a row the paper does
  not have, such as a model of a later release: its paper cell reads "—");
- ``not run``      needs an LLM endpoint or data that this build did not have; no number is shown.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from analysis_lib.llm import settings as llm_settings
from bookbuild.paper_values import Bound, Discrepancy, PaperValue

DataKind = Literal["real", "user", "published", "llm", "simulated", "checked", "transcribed", "none"]
Status = Literal["match", "differs", "inconsistent", "assumption", "simulated", "computed", "not run"]
Evidence = Literal["real", "user", "published", "llm", "simulated", "checked", "transcribed", "none"]

#: Every status a number can have, in the order the tables list them.
STATUSES: tuple[str, ...] = ("match", "differs", "inconsistent", "assumption", "simulated", "computed", "not run")
#: Every evidence class, in the order the page counts them; a data kind is its own evidence class.
EVIDENCE: tuple[str, ...] = ("real", "published", "user", "llm", "checked", "transcribed", "simulated", "none")
#: The data kinds older results files used, and what they are now (an LLM's cached outputs are the LLM's).
DATA_ALIASES: dict[str, str] = {"llm-cache": "llm"}
#: A reader's words for each evidence class.
EVIDENCE_LABEL: dict[str, str] = {
    "real": "real public data", "published": "published aggregates", "user": "user data", "llm": "LLM output",
    "checked": "check of the paper", "transcribed": "transcribed from the paper", "simulated": "simulated",
    "none": "no data",
}
#: The words a reader sees for a status (``inconsistent`` and ``assumption`` add their reason).
STATUS_LABEL: dict[str, str] = {
    "match": "match", "differs": "differs", "inconsistent": "paper inconsistent", "assumption": "assumption",
    "simulated": "simulated", "computed": "computed", "not run": "not run",
}


def data_kind(data: str) -> DataKind:
    """A data kind as recorded: an alias of an older results file replaced (:data:`DATA_ALIASES`); ``ValueError``
    for an unknown kind."""
    data = DATA_ALIASES.get(data, data)
    if data not in EVIDENCE:
        raise ValueError(f"unknown data kind {data!r}; expected one of {list(EVIDENCE)}")
    return data  # type: ignore[return-value]


def evidence(data: str, status: str) -> Evidence:
    """The evidence of a number: ``none`` when it did not run, else its data kind's class (:data:`EVIDENCE`;
    ``ValueError`` for an unknown kind)."""
    kind = data_kind(data)
    return "none" if status == "not run" else kind


def status_label(status: str, reason: str = "") -> str:
    """A status in a reader's words, with its reason when it has one: ``assumption (unpublished n)``."""
    label = STATUS_LABEL.get(status, status)
    return f"{label} ({reason})" if reason else label


def compare(
    ours: float | str | None,
    paper: float | str | None,
    data: DataKind,
    tol: float | None,
    bound: Bound | None = None,
    discrepancy: Discrepancy | None = None,
) -> Status:
    """The status rule stated in the module docstring.

    ``bound="lower"`` reads the paper's value as a lower bound ("more than 11%"): ``ours >= paper - tol``
    matches; ``"upper"`` likewise for "less than". A number on real or published data outside the tolerance
    ``differs``, unless the paper's value has a known ``discrepancy``: then its kind (``inconsistent`` or
    ``assumption``) is the status.
    """
    if ours is None or (isinstance(ours, float) and math.isnan(ours)):
        return "not run"
    if data == "simulated":
        return "simulated"
    if paper is None:
        return "computed"
    if isinstance(ours, str) or isinstance(paper, str):
        within = str(ours) == str(paper)
    else:
        tol = 0.0 if tol is None else tol
        x, p = float(ours), float(paper)
        if bound == "lower":
            within = x >= p - tol - 1e-12
        elif bound == "upper":
            within = x <= p + tol + 1e-12
        else:
            within = abs(x - p) <= tol + 1e-12
    if within:
        return "match"
    return discrepancy.kind if discrepancy is not None else "differs"


#: The kinds of LLM call a number can rest on (named beside it): chat completions and embeddings.
CALLS = ("chat", "embeddings")


def llm_source(model: str | None = None, call: str = "chat") -> str:
    """What produced an LLM output, from the environment (:func:`analysis_lib.llm.settings.identity`):
    ``"<model> @ <endpoint> (<call>)"`` with an endpoint (``model``: the one the step asked for, default the
    configured one; ``call``: one of :data:`CALLS`), else that the outputs were read from the cache (their model is
    the one that wrote it: no endpoint of this build was used)."""
    if call not in CALLS:
        raise ValueError(f"unknown kind of LLM call {call!r}; expected one of {list(CALLS)}")
    ident = llm_settings.identity()
    if ident["endpoint"] and not ident["offline"]:
        return f"{model or ident['model']} @ {ident['endpoint']} ({call})"
    return "cached LLM output (no endpoint in this build)"


def miss_note(ours: float | str | None, row: PaperValue, interval: tuple[float, float]) -> str:
    """Why a simulated number misses the paper's value it was calibrated to by more than the tolerance: its 95%
    ``interval`` covers that value (the miss is the sampling noise of one simulated release) or does not (the
    simulator does not reach it: the calibration chapter says by how much). Empty within the tolerance."""
    if not isinstance(ours, float) or not isinstance(row.paper, float):
        return ""
    tol = row.tol or 0.0
    if abs(ours - row.paper) <= tol + 1e-12:
        return ""
    lo, hi = interval
    covered = lo <= row.paper <= hi
    return (f"misses the target by {ours - row.paper:+.3g} (tolerance {tol:g}); its 95% interval "
            f"[{lo:.4g}, {hi:.4g}] " + ("covers the target: sampling noise of one simulated release" if covered else
                                         "does not cover the target: the simulator does not reach it here"))


#: What joins the parts of a recorded note (the paper-values row's, the chapter's, a miss's reason).
NOTE_SEPARATOR = "; "

#: The reason of a number recorded without a value and without a reason of its own.
NO_VALUE = "no value: the data hold nothing to compute it from (a model, field or subset this data lacks)"


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
    planted: float | str | None = None
    bound: Bound | None = None
    reason: str = ""
    llm: str = ""

    @property
    def evidence(self) -> Evidence:
        """What the number rests on (:func:`evidence`)."""
        return evidence(self.data, self.status)

    @property
    def label(self) -> str:
        """The status as a reader sees it: ``paper inconsistent (text vs figure)``, ``match``, ..."""
        return status_label(self.status, self.reason)
