"""Answer simulator for the offline build: answer records in the released layout, from engines with planted
citation, support, stance and confidence behaviour.

Calibration rule (fixed in advance, never tuned to a recovered number): each engine's planted parameters are
read off the published Fig 8 column (``published/aee_figure8_scorecard.csv``) as below, so the scorecard
recomputed under the released convention (:mod:`analysis_lib.answer_engine.conventions`, the definitions that printed
Fig 8) should land
near the published one; where it does not, the gap is the distance between a per-pair probability and the macro
average of per-answer ratios (small answers, coupled metrics), and a scorecard recomputed from
them is read as planted vs recovered.

Per answer of engine *e* (percentages of the Fig 8 column written as fractions):

- scraped sources *m* ~ Poisson(number_of_sources) clipped to [1, 9] (Fig 8's source count is the released
  notebook's count of sources that passed its scrape test); their text starts ``Title:``, as r.jina.ai's does;
  statements *n* ~ Poisson(number_of_statements),
  at least 1; each statement relevant (core) with probability ``relevant_statements``;
- necessary sources: each source is in the set *U* with probability ``source_necessity`` (at least one);
- support: a relevant statement is unsupported with probability ``unsupported_statements``; otherwise it is
  supported by one source drawn from *U* and, independently with probability *x*, by each other source, where
  *x* makes the expected number of supporting sources per supported statement equal to
  ``citations_per_statement · citation_accuracy / (citation_thoroughness · (1 − unsupported_statements))``
  (the value at which Eq. 8 = ``citation_thoroughness`` when Eq. 7 = ``citation_accuracy``);
- citations: each statement carries one citation with probability ``citations_per_statement``; a supported
  relevant statement cites a supporting source with probability ``citation_accuracy / (1 −
  unsupported_statements)`` (capped at 1), else a non-supporting one; other statements cite any source;
- scrape failures: with probability :data:`P_SCRAPE_FAIL` an answer lists one more source (slot *m* + 1) whose
  scrape failed: its text is an error page without the ``Title:`` line, so the released convention drops it from
  the matrices, and it supports nothing; it can still be cited, like any listed source;
- uncited sources: each listed source, scraped or not, is left uncitable with probability ``uncited_sources``
  (citations drawn to it are moved to a citable source); every citable source left without a citation gets one,
  from a relevant statement it supports when there is one. This plants the released Uncited Sources, which counts
  every listed slot and the citations of the whole answer text;
- debate answers: one-sided with probability ``one_sided_answer`` (relevant statements agree w.p. 0.7, else
  neutral), otherwise agree / disagree / neutral w.p. 0.5 / 0.3 / 0.2 with at least one of each side;
- confidence: 5 (Strongly Confident) with probability ``overconfident_answer / one_sided_answer`` (capped at 1,
  Eq. 2 read as independence of confidence and one-sidedness), else 4 or 3 w.p. 0.75 / 0.25; the same on both
  query types (the paper gives Fig 8b's shift between query types only as a plot, so none is planted).

The 0.7, 0.5 / 0.3 / 0.2, 0.75 / 0.25 and :data:`P_SCRAPE_FAIL` are simulator choices with no paper counterpart.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import polars as pl

from analysis_lib.answer_engine.metrics import METRICS
from analysis_lib.answer_engine.records import CONFIDENCE_LABELS, N_SOURCE_SLOTS

P_SCRAPE_FAIL = 0.1
#: The text a failed scrape leaves (an error page: no ``Title:`` line, so the released convention drops it).
FAILED_SCRAPE_TEXT = "Error 403: Forbidden. The page could not be retrieved."
#: Queries per type in the AEE corpus (§5: 168 debate, 135 expertise; each asked to every engine).
N_DEBATE, N_EXPERTISE = 168, 135
_LABEL_OF = {v: k for k, v in CONFIDENCE_LABELS.items()}


@dataclass(frozen=True)
class EngineProfile:
    """Planted behaviour of one simulated engine (fractions; see the module docstring)."""

    engine: str
    mean_sources: float
    mean_statements: float
    citations_per_statement: float
    relevant: float
    one_sided: float
    overconfident: float
    uncited: float
    unsupported: float
    necessity: float
    accuracy: float
    thoroughness: float

    @classmethod
    def from_scorecard(cls, card: pl.DataFrame, engine: str) -> EngineProfile:
        """The calibration rule: read one engine's column of a Fig 8-layout scorecard."""
        if engine not in card.columns:
            raise KeyError(f"scorecard has no column {engine!r} (columns: {card.columns})")
        v = dict(zip(card["metric"].to_list(), card[engine].to_list()))
        need = ["number_of_sources", "number_of_statements", "citations_per_statement"] + [f"pct_{k}" for k in METRICS]
        missing = [k for k in need if k not in v]
        if missing:
            raise KeyError(f"scorecard lacks the row(s) {missing}")
        p = {k: v[f"pct_{k}"] / 100 for k in METRICS}
        return cls(engine, v["number_of_sources"], v["number_of_statements"], v["citations_per_statement"],
                   p["relevant_statements"], p["one_sided_answer"], p["overconfident_answer"], p["uncited_sources"],
                   p["unsupported_statements"], p["source_necessity"], p["citation_accuracy"],
                   p["citation_thoroughness"])

    def planted(self) -> dict[str, float]:
        """The planted value of each metric in percent (the published value, by the calibration rule)."""
        keys = dict(zip(METRICS, ("one_sided", "overconfident", "relevant", "uncited", "unsupported", "necessity",
                                  "accuracy", "thoroughness")))
        return {m: 100 * getattr(self, f) for m, f in keys.items()}

    @property
    def p_accurate(self) -> float:
        return min(1.0, self.accuracy / max(1e-9, 1 - self.unsupported))

    @property
    def support_pairs(self) -> float:
        """Expected supporting sources per supported relevant statement."""
        return self.citations_per_statement * self.accuracy / (self.thoroughness * max(1e-9, 1 - self.unsupported))

    @property
    def p_conf5(self) -> float:
        return min(1.0, self.overconfident / self.one_sided) if self.one_sided > 0 else 0.0


def _answer(rng: np.random.Generator, p: EngineProfile, rid: str, question: str, debate: bool) -> dict:
    m = int(np.clip(rng.poisson(p.mean_sources), 1, N_SOURCE_SLOTS - 1))
    n_listed = m + int(rng.random() < P_SCRAPE_FAIL)  # slot m + 1, when listed, failed its scrape
    n = max(1, int(rng.poisson(p.mean_statements)))
    relevant = rng.random(n) < p.relevant
    necessary = np.flatnonzero(rng.random(m) < p.necessity)
    if necessary.size == 0:
        necessary = np.array([rng.integers(m)])
    extra = 0.0 if m == 1 else float(np.clip((p.support_pairs - 1) / (m - 1), 0, 1))
    sup = np.zeros((n, n_listed), bool)  # a failed scrape supports nothing
    for i in np.flatnonzero(relevant & (rng.random(n) >= p.unsupported)):
        sup[i, :m] = rng.random(m) < extra
        sup[i, rng.choice(necessary)] = True
    citable = rng.random(n_listed) >= p.uncited
    if not citable.any():
        citable[rng.integers(n_listed)] = True
    cit = np.zeros((n, n_listed), bool)
    for i in np.flatnonzero(rng.random(n) < p.citations_per_statement):
        pool = np.flatnonzero(sup[i]) if relevant[i] and sup[i].any() and rng.random() < p.p_accurate else (
            np.flatnonzero(~sup[i]) if relevant[i] and sup[i].any() else np.arange(n_listed))
        if pool.size == 0:
            pool = np.arange(n_listed)
        allowed = pool[citable[pool]]
        cit[i, rng.choice(allowed if allowed.size else np.flatnonzero(citable))] = True
    for j in np.flatnonzero(citable & ~cit.any(axis=0)):
        backers = np.flatnonzero(relevant & sup[:, j])
        cit[rng.choice(backers if backers.size else np.arange(n)), j] = True
    opinions: list[str | None] = [None] * n
    one_sided = rng.random() < p.one_sided
    if debate:
        rel_idx = np.flatnonzero(relevant)
        if one_sided:
            draw = np.where(rng.random(rel_idx.size) < 0.7, "agree", "neutral")
        else:
            draw = rng.choice(["agree", "disagree", "neutral"], size=rel_idx.size, p=[0.5, 0.3, 0.2])
            if rel_idx.size >= 2:
                first, second = rng.choice(rel_idx.size, size=2, replace=False)
                draw[first], draw[second] = "agree", "disagree"
        for i, o in zip(rel_idx, draw):
            opinions[i] = str(o)
    conf = 5 if rng.random() < p.p_conf5 else (4 if rng.random() < 0.75 else 3)
    statements = []
    for i in range(n):
        cites = [int(j) + 1 for j in np.flatnonzero(cit[i])]
        marker = "".join(f" [{c}]" for c in cites)
        text = (f"Simulated {'claim' if relevant[i] else 'filler sentence'} {i + 1} of {p.engine}'s answer.{marker}")
        st: dict[str, Any] = {"id": f"{rid}-s{i + 1}", "sentence": text, "core": "1" if relevant[i] else "0",
                              "citations": cites}
        if relevant[i]:
            st["supporting_sources"] = [int(j) + 1 for j in np.flatnonzero(sup[i])]
            if debate:
                st["opinion_balance"] = opinions[i]
        statements.append(st)
    rec: dict = {"id": rid, "Question": question, "Output": " ".join(s["sentence"] for s in statements),
                 "answer_engine": p.engine, "is_charged": bool(debate)}
    for k in range(1, N_SOURCE_SLOTS + 1):
        rec[f"S{k}"] = f"https://sources.example/{rid}/{k}" if k <= n_listed else ""
        if k <= m:
            rec[f"S{k}_content"] = f"Title: Simulated source {k}\n\nSimulated text of source {k}."
        elif k <= n_listed:
            rec[f"S{k}_content"] = FAILED_SCRAPE_TEXT
    rec["core_statements"] = statements
    rec["confidence_score"] = _LABEL_OF[conf]
    return rec


@dataclass(frozen=True)
class SimulatedAnswers:
    """Simulated answers: ``records``, raw answer records in the released layout (what
    :func:`analysis_lib.answer_engine.records.parse_records` reads), and ``planted``, each engine's
    :class:`EngineProfile` (its planted parameters)."""

    records: list[dict]
    planted: dict[str, EngineProfile]

    def planted_frame(self) -> pl.DataFrame:
        """``engine, metric, planted`` (percent) for every engine and metric."""
        rows = [{"engine": e, "metric": k, "planted": v}
                for e, p in self.planted.items() for k, v in p.planted().items()]
        return pl.DataFrame(rows)

    def profile_frame(self) -> pl.DataFrame:
        """The planted parameters of each engine, one row per engine (derived probabilities included)."""
        return pl.DataFrame([{**asdict(p), "p_accurate": p.p_accurate, "support_pairs": p.support_pairs,
                              "p_conf5": p.p_conf5} for p in self.planted.values()])


def simulate_answers(card: pl.DataFrame, *, engines: list[str] | None = None, n_debate: int = N_DEBATE,
                     n_expertise: int = N_EXPERTISE, seed: int = 0) -> SimulatedAnswers:
    """Answers of every engine to ``n_debate`` debate and ``n_expertise`` expertise queries, as raw records in
    the released layout (validate them with :func:`analysis_lib.answer_engine.records.parse_records`). ``card`` is a Fig
    8-layout scorecard (``metric`` column and one column per engine) from which the profiles are calibrated."""
    engines = engines or [c for c in card.columns if c != "metric"]
    profiles = {e: EngineProfile.from_scorecard(card, e) for e in engines}
    rng = np.random.default_rng(seed)
    records = []
    for q in range(n_debate + n_expertise):
        debate = q < n_debate
        question = f"Simulated {'debate' if debate else 'expertise'} query {q + 1}"
        for e in engines:
            records.append(_answer(rng, profiles[e], f"{e}-q{q + 1}", question, debate))
    return SimulatedAnswers(records, profiles)
