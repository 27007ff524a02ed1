"""Response texts, retrieved chunks and a second assigner for the nugget simulator (NG-F8, NG-F7).

Both draw from their own random streams (``default_rng([seed, 1])`` for the texts, ``default_rng([seed, 2])``
for the second assigner), so the votes, nuggets and first assignments of
:func:`analysis_lib.nuggets.simulate.quality.simulate_nuggets` are the same with or without them.

**Response texts and chunks** (from the simulator's pseudo-word nugget texts; NG-F8's ROUGE-L input). A battle's
*vocabulary* is the words of its nuggets. The response of a side is, in random order,

- the full text of every nugget the side *supports*, one sentence each;
- the first ⌈k/2⌉ of the k words of every nugget it *partially* supports;
- 1 + Poisson(2) filler sentences of 5–10 words drawn uniformly from the battle's vocabulary.

The battle's retrieved chunks hold the full text of all its nuggets plus ⌈n/2⌉ filler sentences (n nuggets),
shuffled and cut into chunks of at most five sentences. A side that supports more nuggets therefore copies more
chunk sentences, so the ROUGE-L preference follows the nugget scores by construction: on these records NG-F8
measures the generator, not the paper's claim.

**Second assigner** (NG-F7): each first-model assignment is kept with probability ``keep`` and otherwise
replaced by one of the two other labels, each with probability 1/2. Given the first model's label shares
:math:`p`, the expected joint table is :math:`P = \\mathrm{diag}(p) M` with
:math:`M = \\text{keep}\\, I + \\frac{1 - \\text{keep}}{2}(J - I)`, so the planted quadratic-weighted κ is
:math:`1 - \\sum w_{ij} P_{ij} / \\sum w_{ij} p_i q_j` with :math:`q = p M` and :math:`w_{ij} = (i - j)^2`
(:func:`second_assigner_kappa`).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from analysis_lib.nuggets.scores import ASSIGNMENT_ORDER
from analysis_lib.stats import kappa_from_confusion

SECOND_KEEP = 0.8  # planted probability that the second assigner keeps the first model's label
CHUNK_SENTENCES = 5


def _sentence(words: list[str]) -> str:
    text = " ".join(words)
    return text[:1].upper() + text[1:] + "."


def _filler(rng: np.random.Generator, vocab: np.ndarray, count: int) -> list[str]:
    # vocab[rng.integers(0, len(vocab), k)] draws what rng.choice(vocab, size=k) draws, without its checks
    return [_sentence(vocab[rng.integers(0, vocab.size, size=int(rng.integers(5, 11)))].tolist())
            for _ in range(count)]


def response_texts(
    texts: list[str], battle: np.ndarray, n: np.ndarray, code: np.ndarray, rng: np.random.Generator
) -> tuple[list[str], list[str], list[list[str]]]:
    """Response texts of sides a and b and the retrieved chunks, per battle (module docstring).

    ``texts``: nugget texts in battle order; ``battle``: each nugget's battle index; ``n``: nuggets per battle;
    ``code``: assignments per (nugget, side), 0 not / 1 partial / 2 support."""
    start = np.r_[0, np.cumsum(n)[:-1]]
    answers: tuple[list[str], list[str]] = ([], [])
    chunks: list[list[str]] = []
    if len(texts) != battle.size:
        raise ValueError("one text per nugget needed")
    for s0, k in zip(start, n, strict=True):
        words = [texts[i].split() for i in range(s0, s0 + k)]
        vocab = np.array([w for ws in words for w in ws] or ["empty"])
        for side in (0, 1):
            sents = [_sentence(ws if c == 2 else ws[: (len(ws) + 1) // 2])
                     for ws, c in zip(words, code[s0:s0 + k, side], strict=True) if c > 0 and ws]
            sents += _filler(rng, vocab, 1 + int(rng.poisson(2.0)))
            answers[side].append(" ".join(sents[i] for i in rng.permutation(len(sents))))
        pool = [_sentence(ws) for ws in words if ws] + _filler(rng, vocab, (int(k) + 1) // 2)
        pool = [pool[i] for i in rng.permutation(len(pool))]
        chunks.append([" ".join(pool[i:i + CHUNK_SENTENCES]) for i in range(0, len(pool), CHUNK_SENTENCES)])
    return answers[0], answers[1], chunks


def second_assigner(nuggets: pl.DataFrame, *, keep: float = SECOND_KEEP, seed: int = 0) -> pl.DataFrame:
    """A second model's assignments of the same nuggets (the long nugget frame with ``assignment`` redrawn):
    each label kept with probability ``keep``, else one of the two others at random (module docstring)."""
    if not 0.0 <= keep <= 1.0:
        raise ValueError("keep must lie in [0, 1]")
    rng = np.random.default_rng([seed, 2])
    idx = nuggets["assignment"].replace_strict({x: k for k, x in enumerate(ASSIGNMENT_ORDER)}, return_dtype=pl.Int64)
    first = idx.to_numpy()
    kept = rng.uniform(size=first.size) < keep
    other = (first + rng.integers(1, 3, size=first.size)) % 3
    return nuggets.with_columns(pl.Series("assignment", np.array(ASSIGNMENT_ORDER)[np.where(kept, first, other)]))


def second_assigner_kappa(first_shares: np.ndarray | list[float], keep: float = SECOND_KEEP) -> float:
    """Planted (expected) quadratic-weighted κ between the first labels, with shares ``first_shares`` in the
    order of :data:`ASSIGNMENT_ORDER`, and the second assigner's: :func:`analysis_lib.stats.kappa_from_confusion`
    of the expected joint proportions p_i M_ij (module docstring)."""
    p = np.asarray(first_shares, dtype=float)
    p = p / p.sum()
    m = np.full((3, 3), (1.0 - keep) / 2.0)
    np.fill_diagonal(m, keep)
    return kappa_from_confusion(p[:, None] * m, "quadratic")  # the expected joint proportions
