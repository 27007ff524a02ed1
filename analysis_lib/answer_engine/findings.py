"""Table 1 of the usability study (AE-T1): the 16 findings with the number of participants who raised each, and
the checks the paper allows on them.

Table 1 is display data: the coded interviews were not released, so nothing here recomputes a count. What can
be checked is its consistency with the rest of the paper:

- 16 findings (§3.3: "The final 16 findings"), four per component of an answer engine;
- every count between 0 and its denominator, and every denominator at most the 21 participants of the final
  study (§3.1: 24 recruited, 3 of them in the pilot);
- Table 1's counts against the same counts printed in each finding's heading in §3.3;
- the denominators against Table 8 (Appendix A.2), which lists every participant, the engine each used and
  the three pilot participants: the final study has 21 participants, 7 per engine, as §3.1 says.

One finding, S.III (lack of trust in source types), is counted out of 20 in both places; the paper does not
say why. :func:`share_bounds` gives the share it would have among all 21 final-study participants, whichever
way the uncounted participant would have been coded.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl

from analysis_lib.fetch import published

#: Table 1's four columns, the components of an answer engine (§3.3), in the table's order.
COMPONENTS = ("Answer text", "Citation", "Sources", "User interface")
FINDINGS_SCHEMA = {"component": pl.String, "finding_id": pl.String, "finding": pl.String, "participants": pl.Int64,
                   "out_of": pl.Int64, "text_participants": pl.Int64, "text_out_of": pl.Int64}
PARTICIPANTS_SCHEMA = {"participant": pl.String, "field": pl.String, "occupation": pl.String, "engine": pl.String,
                       "study": pl.String}


def load_findings(path: str | Path | None = None) -> pl.DataFrame:
    """``published/aee_table1_findings.csv`` (:data:`FINDINGS_SCHEMA`), each component one of
    :data:`COMPONENTS`."""
    frame = pl.read_csv(path if path is not None else published("aee_table1_findings"), schema=FINDINGS_SCHEMA)
    unknown = sorted(set(frame["component"]) - set(COMPONENTS))
    if unknown:
        raise ValueError(f"Table 1 components {unknown} are not among {COMPONENTS}")
    return frame


def load_participants(path: str | Path | None = None) -> pl.DataFrame:
    """``published/aee_table8_participants.csv`` (:data:`PARTICIPANTS_SCHEMA`; ``study`` is pilot or final)."""
    frame = pl.read_csv(path if path is not None else published("aee_table8_participants"),
                        schema=PARTICIPANTS_SCHEMA)
    bad = sorted(set(frame["study"]) - {"pilot", "final"})
    if bad:
        raise ValueError(f"Table 8 study values {bad}: expected pilot or final")
    return frame


@dataclass(frozen=True)
class FindingsCheck:
    """What Table 1 and Table 8 say about each other (see the module docstring)."""

    n_findings: int
    per_component: dict[str, int]
    final_participants: int
    per_engine: dict[str, int]
    #: findings whose count is negative, above its denominator, or whose denominator exceeds the final study
    out_of_range: tuple[str, ...]
    #: findings whose Table 1 count or denominator differs from its §3.3 heading
    text_mismatch: tuple[str, ...]
    #: findings counted out of fewer participants than the final study had: ``(id, count, denominator)``
    partial: tuple[tuple[str, int, int], ...]

    @property
    def partial_shares(self) -> pl.DataFrame:
        """Each finding of :attr:`partial`: ``finding_id, participants, out_of``, its ``share`` (%) of its own
        denominator as printed, and its share among all final-study participants if none or all of the uncounted
        ones raised it (``share_if_none``, ``share_if_all``: :func:`share_bounds`)."""
        rows = [{"finding_id": fid, "participants": c, "out_of": n, "share": 100 * c / n,
                 **dict(zip(("share_if_none", "share_if_all"), share_bounds(c, n, self.final_participants)))}
                for fid, c, n in self.partial]
        return pl.DataFrame(rows, schema={"finding_id": pl.String, "participants": pl.Int64, "out_of": pl.Int64,
                                          "share": pl.Float64, "share_if_none": pl.Float64,
                                          "share_if_all": pl.Float64})


def check_findings(findings: pl.DataFrame, participants: pl.DataFrame) -> FindingsCheck:
    """Check Table 1 against its own headings and against Table 8 (counted, not asserted)."""
    final = participants.filter(pl.col("study") == "final")
    n = final.height
    per_engine = dict(final.group_by("engine", maintain_order=True).len().iter_rows())
    out_of_range = findings.filter((pl.col("participants") < 0) | (pl.col("participants") > pl.col("out_of"))
                                   | (pl.col("out_of") > n))["finding_id"]
    mismatch = findings.filter((pl.col("participants") != pl.col("text_participants"))
                               | (pl.col("out_of") != pl.col("text_out_of")))["finding_id"]
    partial = findings.filter(pl.col("out_of") < n).select("finding_id", "participants", "out_of").rows()
    per_component = {c: int((findings["component"] == c).sum()) for c in COMPONENTS}
    return FindingsCheck(findings.height, per_component, n, per_engine, tuple(out_of_range), tuple(mismatch),
                         tuple(partial))


def share_bounds(count: int, out_of: int, total: int) -> tuple[float, float]:
    """The share (%) of ``total`` participants who raised a finding counted ``count`` out of ``out_of``, at the
    two extremes: none of the ``total - out_of`` uncounted participants raised it, or all of them did."""
    if not 0 <= count <= out_of <= total:
        raise ValueError(f"expected 0 <= count <= out_of <= total, got {count}, {out_of}, {total}")
    return 100 * count / total, 100 * (count + total - out_of) / total


def findings_shares(findings: pl.DataFrame) -> pl.DataFrame:
    """Table 1 with ``share`` (% of the finding's own denominator) and its rank by share within its component."""
    return findings.with_columns(share=100 * pl.col("participants") / pl.col("out_of")).with_columns(
        rank_in_component=pl.col("share").rank("min", descending=True).over("component").cast(pl.Int64))
