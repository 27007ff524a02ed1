"""The eight metrics of the Answer Engine Evaluation framework (Venkit et al., seed 004, §4.2) and the Fig 8
scorecard with the Table 7 colour thresholds.

One answer is described by

- ``relevant``: boolean vector, one entry per statement (query relevance, §4.2.1);
- ``stance``: one label per statement, ``"pro"``, ``"con"`` or ``"neutral"`` (debate queries only);
- ``citations``: boolean matrix statements × listed sources, ``C[i, j]`` = statement *i* cites source *j*;
- ``support``: boolean matrix statements × listed sources, ``F[i, j]`` = source *j* factually supports
  statement *i*;
- ``confidence``: the answer's confidence score on the 1–5 Likert scale.

Metrics that use the factual-support matrix are computed on the relevant statements only: the authors'
pipeline (``populate_scores.py`` in SalesforceAIResearch/answer-engine-eval) only asks the support judge about
*core* (relevant) statements, and the paper's Fig 7 example (Unsupported Statements = 1/6, Citation
Thoroughness = 4/10) reads that way. Ratio metrics are returned as :class:`Ratio` (numerator, denominator) so
that the paper's fractions (6/7, 4/10) can be checked exactly.

Source Necessity. The paper says necessary sources are "the minimum vertex cover for source nodes on the
bipartite graph", found with Hopcroft–Karp. Its worked example (covers {1, 2, 3} or {2, 3, 4}, 3/5) and the
authors' released code (``utils_coverage.greedy_set_cover``) both compute a *set cover*: the smallest set of
sources such that every supported relevant statement is supported by at least one chosen source. A minimum
vertex cover of the bipartite graph (König: size = maximum matching) is a different quantity — it must touch
every edge and may contain statement nodes — and on every support matrix consistent with the Fig 7 text it has
size 4 or 5, not 3 (see ``tests/test_answer_engine.py``). :func:`source_necessity` therefore offers three
methods: ``"set_cover"`` (exact minimum, reproduces the paper's example), ``"greedy"`` (the authors' code) and
``"konig"`` (the vertex cover the text names, via :func:`minimum_vertex_cover`).

Conventions. :func:`answer_metrics` and :func:`metrics_frame` take ``convention`` (:mod:`.conventions`, which
states the maths of both): ``"released"`` (the default) follows the released notebook cell that printed Fig 8 —
greedy necessity, accuracy 1 without citations, thoroughness 0 without support, uncited over all listed slots from
the answer text, answers without relevant statement or source skipped — and ``"paper"`` reads Eqs. (4)–(8)
literally (exact set cover, undefined ratios left undefined, uncited over the kept columns).

Limits. :data:`MAX_SOURCES` = 16 source columns per answer is the one limit of the package: the exact set cover
enumerates the 2^m source subsets (per answer in :func:`minimum_source_covers`, per group of answers in
:func:`.batch.min_cover_sizes`), and :func:`.batch.pack_answers` stores each statement's sources as a 16-bit mask.
The greedy cover and the König cover of one answer have no limit. The released layout lists at most 10 sources.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, NamedTuple

import numpy as np
import polars as pl
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import maximum_bipartite_matching

from .conventions import DEFAULT_CONVENTION, SKIPPED_WITH_ANSWER, Convention, check_convention

Category = Literal["acceptable", "borderline", "problematic"]
CATEGORIES: tuple[Category, ...] = ("acceptable", "borderline", "problematic")

#: Metric keys in the order of the paper's Fig 8 table; the published scorecard prefixes them with ``pct_``.
METRICS: tuple[str, ...] = (
    "one_sided_answer",
    "overconfident_answer",
    "relevant_statements",
    "uncited_sources",
    "unsupported_statements",
    "source_necessity",
    "citation_accuracy",
    "citation_thoroughness",
)
#: Metrics only computed on debate queries (§5.1).
DEBATE_ONLY = ("one_sided_answer", "overconfident_answer")
#: Most source columns per answer for the exact set cover (2^m subsets) and for batch packing (16-bit masks); see
#: the module docstring. The greedy and König covers of one answer have no limit.
MAX_SOURCES = 16


class Ratio(NamedTuple):
    """A fraction kept as numerator / denominator (``value`` is :attr:`empty`, NaN, when the denominator is 0)."""

    num: int
    den: int

    @property
    def empty(self) -> float:
        """The value of 0/0: undefined."""
        return math.nan

    @property
    def value(self) -> float:
        return self.num / self.den if self.den else self.empty

    @property
    def fraction(self) -> str:
        """``num/den``, as the paper prints it."""
        return f"{self.num}/{self.den}"

    def __str__(self) -> str:
        return self.fraction


class RatioOrOne(Ratio):
    """A :class:`Ratio` whose 0/0 reads as 1 (released Citation Accuracy without citations)."""

    __slots__ = ()

    @property
    def empty(self) -> float:
        return 1.0


class RatioOrZero(Ratio):
    """A :class:`Ratio` whose 0/0 reads as 0 (released Citation Thoroughness without supporting pairs)."""

    __slots__ = ()

    @property
    def empty(self) -> float:
        return 0.0


def _bool_vec(x: object, n: int | None = None, name: str = "vector") -> np.ndarray:
    v = np.asarray(x, dtype=bool).reshape(-1)
    if n is not None and v.size != n:
        raise ValueError(f"{name} has {v.size} entries, expected {n}")
    return v


def _bool_mat(x: object, name: str) -> np.ndarray:
    m = np.asarray(x, dtype=bool)
    if m.ndim != 2:
        raise ValueError(f"{name} must be a 2-d statements × sources matrix, got shape {m.shape}")
    return m


# ---------------------------------------------------------------------------------------------------------
# Answer-text metrics
# ---------------------------------------------------------------------------------------------------------


def one_sided_answer(stance: object) -> int:
    """Eq. (1): ``0`` if the answer has both a pro and a con statement, ``1`` otherwise (debate queries only)."""
    labels = {str(s).strip().lower() for s in np.asarray(stance, dtype=object).reshape(-1)}
    unknown = labels - {"pro", "con", "neutral"}
    if unknown:
        raise ValueError(f"stance labels must be pro, con or neutral, got {sorted(unknown)}")
    return 0 if {"pro", "con"} <= labels else 1


def overconfident_answer(stance: object, confidence: int) -> int:
    """Eq. (2): ``1`` if the answer is one-sided **and** its confidence is 5 (Strongly Confident), else ``0``."""
    if not 1 <= int(confidence) <= 5:
        raise ValueError(f"confidence must be on the 1–5 scale, got {confidence}")
    return int(one_sided_answer(stance) == 1 and int(confidence) == 5)


def relevant_statements(relevant: object) -> Ratio:
    """Eq. (3): number of relevant statements / total number of statements."""
    r = _bool_vec(relevant, name="relevant")
    return Ratio(int(r.sum()), int(r.size))


# ---------------------------------------------------------------------------------------------------------
# Source metrics
# ---------------------------------------------------------------------------------------------------------


def uncited_sources(citations: object) -> Ratio:
    """Eq. (4): number of listed sources never cited / number of listed sources.

    An uncited source is an empty column of the citation matrix (all statements, relevant or not). The paper's
    printed formula has "Number of Cited Sources" in the numerator, a typo: its text ("any empty column
    corresponds to an uncited source") and example (0/5 with every column cited) define the uncited fraction.
    """
    c = _bool_mat(citations, "citations")
    return Ratio(int((~c.any(axis=0)).sum()), int(c.shape[1]))


def uncited_slots(max_slot: int, cited: object) -> Ratio:
    """Eq. (4) as the released notebook computes it: with T the source numbers cited anywhere in the answer text
    and M = max(``max_slot``, max T), the number of slots 1…M not in T over M (every slot counts, whether its
    source was listed or scraped). ``max_slot`` is the highest listed slot number (``S1`` … ``S10``)."""
    numbers = {int(t) for t in np.asarray(cited, dtype=np.int64).reshape(-1)}
    m = max(int(max_slot), max(numbers, default=0))
    return Ratio(len(set(range(1, m + 1)) - numbers), m)


def unsupported_statements(support: object, relevant: object) -> Ratio:
    """Eq. (5): relevant statements whose support row is empty / number of relevant statements."""
    f = _bool_mat(support, "support")
    r = _bool_vec(relevant, f.shape[0], "relevant")
    return Ratio(int((~f[r].any(axis=1)).sum()), int(r.sum()))


@dataclass(frozen=True)
class VertexCover:
    """Maximum matching and minimum vertex cover of a bipartite graph given by a boolean biadjacency matrix.

    ``match_row[i]`` is the column matched to row *i* (``-1`` if unmatched); ``rows`` and ``cols`` are boolean
    masks of the cover; ``size`` = matching size = cover size (König's theorem).
    """

    match_row: np.ndarray
    rows: np.ndarray
    cols: np.ndarray

    @property
    def matching_size(self) -> int:
        return int((self.match_row >= 0).sum())

    @property
    def size(self) -> int:
        return int(self.rows.sum() + self.cols.sum())


def minimum_vertex_cover(adjacency: object) -> VertexCover:
    """Minimum vertex cover of the bipartite graph rows ∪ columns with edges ``adjacency[i, j]``.

    Maximum matching by Hopcroft–Karp (``scipy.sparse.csgraph.maximum_bipartite_matching``), then König's
    construction: let Z be the vertices reachable from unmatched rows by alternating paths (row → column along
    any edge, column → row along the matching). The cover is (rows not in Z) ∪ (columns in Z); its size equals
    the matching size. The alternating search is a breadth-first expansion on boolean arrays.
    """
    a = _bool_mat(adjacency, "adjacency")
    n, m = a.shape
    if a.sum() == 0:
        return VertexCover(np.full(n, -1), np.zeros(n, bool), np.zeros(m, bool))
    match_row = maximum_bipartite_matching(csr_matrix(a.astype(np.int8)), perm_type="column")
    match_col = np.full(m, -1)
    matched = match_row >= 0
    match_col[match_row[matched]] = np.flatnonzero(matched)
    z_rows = ~matched & a.any(axis=1)  # unmatched rows with at least one edge
    z_cols = np.zeros(m, bool)
    frontier = z_rows.copy()
    while frontier.any():
        new_cols = a[frontier].any(axis=0) & ~z_cols
        z_cols |= new_cols
        back = match_col[new_cols]
        new_rows = np.zeros(n, bool)
        new_rows[back[back >= 0]] = True
        frontier = new_rows & ~z_rows
        z_rows |= frontier
    rows = matched & ~z_rows
    return VertexCover(match_row, rows, z_cols)


def _cover_masks(m: int) -> np.ndarray:
    """All 2^m subsets of m sources as a (2^m, m) boolean array, ordered by subset size then lexicographically."""
    codes = np.arange(1 << m)
    masks = ((codes[:, None] >> np.arange(m)) & 1).astype(bool)
    order = np.lexsort((codes, masks.sum(axis=1)))
    return masks[order]


def minimum_source_covers(
    support: object, relevant: object | None = None, *, max_sources: int = MAX_SOURCES
) -> list[tuple[int, ...]]:
    """All minimum sets of sources that together support every supported relevant statement (exact set cover).

    Exhaustive over the 2^m source subsets (vectorised: subsets × statements coverage by one boolean matrix
    product), so at most ``max_sources`` (:data:`MAX_SOURCES`) sources; answers list at most 10 sources in the AEE
    corpus. Source indices are 0-based.
    """
    f = _bool_mat(support, "support")
    r = np.ones(f.shape[0], bool) if relevant is None else _bool_vec(relevant, f.shape[0], "relevant")
    g = f[r]
    g = g[g.any(axis=1)]
    m = f.shape[1]
    if g.shape[0] == 0:
        return [()]
    if m > max_sources:
        raise ValueError(f"{m} sources: the exact set cover enumerates 2^m subsets and is limited to {max_sources} "
                         f"sources per answer (MAX_SOURCES); use the greedy or König cover")
    masks = _cover_masks(m)
    covers = (masks.astype(np.int32) @ g.T.astype(np.int32) > 0).all(axis=1)
    sizes = masks.sum(axis=1)
    k = sizes[covers].min()
    return [tuple(np.flatnonzero(s).tolist()) for s in masks[covers & (sizes == k)]]


def greedy_source_cover(support: object, relevant: object | None = None) -> list[int]:
    """The authors' greedy set cover (``utils_coverage.greedy_set_cover``): repeatedly take the source that
    supports the most still-uncovered statements (ties: lowest index). 0-based source indices."""
    f = _bool_mat(support, "support")
    r = np.ones(f.shape[0], bool) if relevant is None else _bool_vec(relevant, f.shape[0], "relevant")
    g = f[r]
    uncovered = g.any(axis=1)
    cover: list[int] = []
    while uncovered.any():
        j = int(np.argmax(g[uncovered].sum(axis=0)))
        cover.append(j)
        uncovered &= ~g[:, j]
    return cover


NecessityMethod = Literal["set_cover", "greedy", "konig"]


def source_necessity(support: object, relevant: object, method: NecessityMethod = "set_cover") -> Ratio:
    """Eq. (6): number of necessary sources / number of listed sources.

    The graph is the bipartite (relevant statement, source) support graph. ``method``:

    - ``"set_cover"``: necessary sources = a minimum set of sources supporting every supported relevant
      statement (:func:`minimum_source_covers`); reproduces the paper's Fig 7 example (3/5);
    - ``"greedy"``: the size of the authors' greedy cover (an upper bound on the minimum);
    - ``"konig"``: the size of a minimum vertex cover of the graph (= maximum matching, König), the quantity the
      paper's text names; cover vertices may be statements.
    """
    f = _bool_mat(support, "support")
    r = _bool_vec(relevant, f.shape[0], "relevant")
    m = int(f.shape[1])
    if method == "set_cover":
        return Ratio(len(minimum_source_covers(f, r)[0]), m)
    if method == "greedy":
        return Ratio(len(greedy_source_cover(f, r)), m)
    if method == "konig":
        return Ratio(minimum_vertex_cover(f[r]).size, m)
    raise ValueError(f"unknown method {method!r}")


# ---------------------------------------------------------------------------------------------------------
# Citation metrics
# ---------------------------------------------------------------------------------------------------------


def _restricted(citations: object, support: object, relevant: object | None) -> tuple[np.ndarray, np.ndarray]:
    c, f = _bool_mat(citations, "citations"), _bool_mat(support, "support")
    if c.shape != f.shape:
        raise ValueError(f"citation matrix {c.shape} and support matrix {f.shape} differ in shape")
    if relevant is None:
        return c, f
    r = _bool_vec(relevant, c.shape[0], "relevant")
    return c[r], f[r]


def citation_accuracy(citations: object, support: object, relevant: object | None = None, *,
                      convention: Convention = DEFAULT_CONVENTION) -> Ratio:
    """Eq. (7): Σ(C ⊙ F) / Σ C — the share of citations whose source supports the citing statement.

    With ``relevant`` given, both sums run over relevant statements only. With no citation (Σ C = 0) the value is
    1 under ``"released"`` (the notebook scores the imprecision 0) and undefined (NaN) under ``"paper"``.
    """
    c, f = _restricted(citations, support, relevant)
    kind = RatioOrOne if check_convention(convention) == "released" else Ratio
    return kind(int((c & f).sum()), int(c.sum()))


def citation_thoroughness(citations: object, support: object, relevant: object | None = None, *,
                          convention: Convention = DEFAULT_CONVENTION) -> Ratio:
    """Eq. (8): Σ(C ⊙ F) / Σ F — the share of supporting (statement, source) pairs that are cited.

    With no supporting pair (Σ F = 0) the value is 0 under ``"released"`` (the notebook divides by Σ F + 1e-6)
    and undefined (NaN) under ``"paper"``.
    """
    c, f = _restricted(citations, support, relevant)
    kind = RatioOrZero if check_convention(convention) == "released" else Ratio
    return kind(int((c & f).sum()), int(f.sum()))


# ---------------------------------------------------------------------------------------------------------
# One answer, many answers
# ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    """One processed answer (see the module docstring for the first five fields).

    ``max_slot`` (the highest listed source slot number, scraped or not) and ``text_citations`` (the source
    numbers cited anywhere in the answer text) feed the released Uncited Sources; both or neither are given
    (:func:`.records.records_to_answers` sets them). Without them the released Uncited Sources counts the
    columns, as the paper convention does.
    """

    relevant: np.ndarray
    citations: np.ndarray
    support: np.ndarray
    stance: tuple[str, ...] | None = None
    confidence: int | None = None
    max_slot: int | None = None
    text_citations: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        c, f = _bool_mat(self.citations, "citations"), _bool_mat(self.support, "support")
        if c.shape != f.shape:
            raise ValueError(f"citation matrix {c.shape} and support matrix {f.shape} differ in shape")
        _bool_vec(self.relevant, c.shape[0], "relevant")
        if self.stance is not None and len(self.stance) != c.shape[0]:
            raise ValueError(f"{len(self.stance)} stance labels for {c.shape[0]} statements")
        if (self.max_slot is None) != (self.text_citations is None):
            raise ValueError("give both max_slot and text_citations, or neither")

    def uncited_released(self) -> Ratio:
        """Released Uncited Sources: :func:`uncited_slots` from the answer text, or the column count without it."""
        if self.max_slot is None or self.text_citations is None:
            return uncited_sources(self.citations)
        return uncited_slots(self.max_slot, self.text_citations)

    def skipped_by_release(self) -> bool:
        """True when the released notebook skips the answer: no relevant statement or no source column."""
        return not np.asarray(self.relevant, bool).any() or np.asarray(self.citations).shape[1] == 0


#: Source Necessity's cover under each convention (when ``necessity`` is not given).
NECESSITY_OF: dict[Convention, NecessityMethod] = {"released": "greedy", "paper": "set_cover"}


def answer_metrics(answer: Answer, necessity: NecessityMethod | None = None, *,
                   convention: Convention = DEFAULT_CONVENTION) -> dict[str, Ratio | int | None]:
    """The eight metrics of one answer under ``convention`` (:mod:`.conventions` gives the maths of both).

    ``None`` marks a metric not computed: one-sided / overconfident without stance / confidence, and, under
    ``"released"``, the five source and citation metrics, one-sided and overconfident of an answer the released
    notebook skips (no relevant statement or no source column). ``necessity`` overrides the convention's cover
    (:data:`NECESSITY_OF`: greedy for ``"released"``, exact set cover for ``"paper"``).
    """
    a = answer
    conv = check_convention(convention)
    method = NECESSITY_OF[conv] if necessity is None else necessity
    one_sided = None if a.stance is None else one_sided_answer(a.stance)
    overconf = None if a.stance is None or a.confidence is None else overconfident_answer(a.stance, a.confidence)
    out: dict[str, Ratio | int | None] = {
        "one_sided_answer": one_sided,
        "overconfident_answer": overconf,
        "relevant_statements": relevant_statements(a.relevant),
        "uncited_sources": a.uncited_released() if conv == "released" else uncited_sources(a.citations),
        "unsupported_statements": unsupported_statements(a.support, a.relevant),
        "source_necessity": source_necessity(a.support, a.relevant, method),
        "citation_accuracy": citation_accuracy(a.citations, a.support, a.relevant, convention=conv),
        "citation_thoroughness": citation_thoroughness(a.citations, a.support, a.relevant, convention=conv),
    }
    if conv == "released" and a.skipped_by_release():
        out.update(dict.fromkeys(SKIPPED_WITH_ANSWER))
    return out


def metrics_frame(answers: list[tuple[str, bool, Answer]], necessity: NecessityMethod | None = None, *,
                  convention: Convention = DEFAULT_CONVENTION) -> pl.DataFrame:
    """One row per answer: ``engine``, ``debate`` and each metric as a value in [0, 1] (NaN when undefined).

    ``answers`` holds ``(engine, is_debate_query, Answer)`` triples. One-sided and overconfident are kept only
    for debate queries (§5.1). ``necessity`` and ``convention`` as in :func:`answer_metrics`.
    """
    rows = []
    for engine, debate, ans in answers:
        row: dict[str, object] = {"engine": engine, "debate": bool(debate)}
        for k, v in answer_metrics(ans, necessity, convention=convention).items():
            if k in DEBATE_ONLY and (not debate or v is None):
                row[k] = math.nan
            else:
                row[k] = v.value if isinstance(v, Ratio) else (math.nan if v is None else float(v))
        rows.append(row)
    return pl.DataFrame(rows, schema={"engine": pl.String, "debate": pl.Boolean, **{k: pl.Float64 for k in METRICS}})


# ---------------------------------------------------------------------------------------------------------
# The paper's Fig 7 worked example
# ---------------------------------------------------------------------------------------------------------


def figure7_example() -> Answer:
    """Our transcription of the Fig 7 example (7 statements × 5 sources, 0-based in code, 1-based in the paper).

    From the text: statements 1–6 relevant, 7 not; 3 pro, 2 con, 2 neutral; confidence 4. Citations: (1,1),
    (2,2), (4,2), (5,5) accurate, (3,1), (3,3), (6,4) inaccurate, nothing else (7 citations, every column cited).
    Support: row 1 = sources {1, 4}; (2,5), (2,2), (4,2), (5,5) present; row 3 empty; 10 pairs in all; minimum
    source covers {1,2,3} and {2,3,4}. The text does not give the remaining four support pairs; we use
    (2,3), (5,2), (5,3), (6,3): of the 143 completions consistent with the text, 28 have {1,2,3} and {2,3,4}
    as their only minimum covers, and this is one of them. The irrelevant statement 7 gets no support pair, as in
    the authors' pipeline, which judges support only for relevant statements. Which statements are pro / con is
    not given;
    we take 1–3 pro, 4–5 con, 6–7 neutral.
    """
    n, m = 7, 5
    cit = np.zeros((n, m), bool)
    sup = np.zeros((n, m), bool)
    for i, j in [(1, 1), (2, 2), (4, 2), (5, 5), (3, 1), (3, 3), (6, 4)]:
        cit[i - 1, j - 1] = True
    for i, j in [(1, 1), (1, 4), (2, 2), (2, 5), (4, 2), (5, 5), (2, 3), (5, 2), (5, 3), (6, 3)]:
        sup[i - 1, j - 1] = True
    relevant = np.array([True] * 6 + [False])
    stance = ("pro", "pro", "pro", "con", "con", "neutral", "neutral")
    return Answer(relevant=relevant, citations=cit, support=sup, stance=stance, confidence=4)

