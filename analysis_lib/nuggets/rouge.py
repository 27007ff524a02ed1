"""NG-F8: lexical alignment of each response with the retrieved chunks (ROUGE-L), against the human winner.

The paper (NG v2 §4.6): "For each sentence in a model response, we compute its maximum ROUGE-L F1 against all
sentences in the retrieved chunks, then average these maxima across the response. Comparing the higher of the two
response-level scores to the human-preference winner yields a confusion matrix" (Figure 8, ties excluded).
For response sentences :math:`r_1 … r_n` and chunk sentences :math:`c_1 … c_m`,

.. math:: \\text{ROUGE}(R) = \\frac{1}{n} \\sum_{i=1}^{n} \\max_{j} F_1^{\\text{LCS}}(r_i, c_j),

and the ROUGE preference is the side with the larger score (a tie when equal). ROUGE-L F1 is ``rouge-score``'s.
Sentences come from :func:`analysis_lib.nuggets.sentences.split_sentences` (pysbd, by the battle's language).

Tokens: ``rouge-score``'s default tokenizer keeps only ``[a-z0-9]``, so Cyrillic, Greek or CJK text has no tokens
and scores 0 (about 39% of the battles are not in English). :class:`UnicodeTokenizer` gives the same tokens as the
default (with Porter stemming) on ASCII text, keeps letters and digits of every script, and makes each CJK
ideograph or kana its own token (those scripts do not separate words by spaces). That choice is ours; the paper
does not say how it tokenised non-English text.

Association (:func:`alignment_test`): the decided block (human A/B × ROUGE-L A/B) is tested with Fisher's exact
test (scipy, two-sided); the ROUGE-L preference is *aligned* with the vote when p < ``alpha`` (0.05) and Cohen's
κ > 0 (agreement above chance). The paper prints neither a number nor a test for its "no alignment"; this test
and its level are our choice.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl
from scipy import stats as sps
from tqdm import tqdm  # plain text bar: tqdm.auto warns in a kernel without ipywidgets (the book build)

from analysis_lib.extras import require
from analysis_lib.nuggets.agreement import NuggetConfusion, confusion
from analysis_lib.nuggets.records import NuggetRecords
from analysis_lib.nuggets.sentences import split_sentences
from analysis_lib.search_arena.languages import language_code
from analysis_lib.stats import kappa_from_confusion

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TOKEN = re.compile(rf"[{_CJK}]|[^\W_{_CJK}]+")


class UnicodeTokenizer:
    """Lower-cased tokens of every script for ``rouge-score`` (see the module docstring); ASCII tokens longer than
    three characters are Porter-stemmed (NLTK's stemmer, as ``rouge-score`` does with ``use_stemmer=True``).
    Memoised per text. ``rouge-score`` takes any object with a ``tokenize`` method as its tokenizer."""

    def __init__(self, use_stemmer: bool = True) -> None:
        porter = require("nltk.stem.porter", "nuggets", purpose="ROUGE-L stemming") if use_stemmer else None
        self._stemmer = porter.PorterStemmer() if porter is not None else None
        self._memo: dict[str, list[str]] = {}

    def tokenize(self, text: str) -> list[str]:
        hit = self._memo.get(text)
        if hit is None:
            tokens = _TOKEN.findall(text.lower())
            if self._stemmer is not None:
                tokens = [self._stemmer.stem(t) if len(t) > 3 and t.isascii() else t for t in tokens]
            hit = self._memo[text] = tokens
        return hit


def rouge_l_scorer(tokenizer: Any = None) -> Any:
    """``rouge-score``'s ROUGE-L scorer (``RougeScorer``) on :class:`UnicodeTokenizer` (or ``tokenizer``, any object
    with a ``tokenize`` method)."""
    rouge_scorer = require("rouge_score.rouge_scorer", "nuggets", purpose="ROUGE-L (NG-F8)")
    return rouge_scorer.RougeScorer(["rougeL"], tokenizer=tokenizer or UnicodeTokenizer())


def rouge_l_matrix(response_sentences: Sequence[str], chunk_sentences: Sequence[str],
                   scorer: Any = None) -> np.ndarray:
    """ROUGE-L F1 of every response sentence (rows) against every chunk sentence (columns)."""
    scorer = scorer or rouge_l_scorer()
    return np.array([[scorer.score(c, r)["rougeL"].fmeasure for c in chunk_sentences] for r in response_sentences],
                    dtype=float).reshape(len(response_sentences), len(chunk_sentences))


def _token_counts(token_lists: Sequence[list[str]], vocabulary: dict[str, int]) -> np.ndarray:
    counts = np.zeros((len(token_lists), len(vocabulary)), dtype=np.int64)
    for i, tokens in enumerate(token_lists):
        for t in tokens:
            counts[i, vocabulary[t]] += 1
    return counts


def best_f1(response_sentences: Sequence[str], chunk_sentences: Sequence[str], scorer: Any,
            tokenizer: UnicodeTokenizer) -> np.ndarray:
    """For each response sentence, its best ROUGE-L F1 over the chunk sentences: the row maxima of
    :func:`rouge_l_matrix`, computing only the F1 values that can still raise a maximum.

    ROUGE-L F1 of token lists of lengths m (response) and n (chunk) with LCS length l is the harmonic mean of
    l/m and l/n, increasing in l, and l is at most the size of the two token multisets' intersection, o. So the
    same formula with o in place of l bounds the F1 of a pair (and equals it, to the bit, when l = o):
    candidates are scored in decreasing order of that bound and the search stops once the bound is no larger
    than the best F1 found. The maxima are those of the full matrix; ``scorer`` must tokenize with
    ``tokenizer``."""
    resp = [tokenizer.tokenize(r) for r in response_sentences]
    chunk = [tokenizer.tokenize(c) for c in chunk_sentences]
    vocabulary: dict[str, int] = {}
    for tokens in (*resp, *chunk):
        for t in tokens:
            vocabulary.setdefault(t, len(vocabulary))
    r_counts, c_counts = _token_counts(resp, vocabulary), _token_counts(chunk, vocabulary)
    overlap = np.minimum(r_counts[:, None, :], c_counts[None, :, :]).sum(axis=2).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        # rouge-score's arithmetic: precision o / m, recall o / n, F1 2 p r / (p + r), 0 when p + r = 0
        precision = overlap / r_counts.sum(axis=1)[:, None]
        recall = overlap / c_counts.sum(axis=1)[None, :]
        bound = np.where(overlap > 0, 2 * precision * recall / (precision + recall), 0.0)
    best = np.zeros(len(resp))
    for i in range(len(resp)):
        for j in np.argsort(-bound[i], kind="stable"):
            if bound[i, j] <= best[i]:
                break
            best[i] = max(best[i], scorer.score(chunk_sentences[j], response_sentences[i])["rougeL"].fmeasure)
    return best


def response_rouge_l(response_sentences: Sequence[str], chunk_sentences: Sequence[str],
                     scorer: Any = None, tokenizer: UnicodeTokenizer | None = None) -> float:
    """The response-level score: mean over response sentences of the best F1 over chunk sentences; NaN when the
    response or the chunks have no sentence. With ``tokenizer`` (the one ``scorer`` uses) the maxima come from
    :func:`best_f1`, else from the full :func:`rouge_l_matrix`."""
    if not response_sentences or not chunk_sentences:
        return float("nan")
    if tokenizer is not None and scorer is not None:
        return float(best_f1(response_sentences, chunk_sentences, scorer, tokenizer).mean())
    return float(rouge_l_matrix(response_sentences, chunk_sentences, scorer).max(axis=1).mean())


def rouge_preference(rouge_a: np.ndarray | Sequence[float], rouge_b: np.ndarray | Sequence[float]) -> np.ndarray:
    """``model_a`` / ``model_b`` for the side with the higher score, ``tie`` when equal (or either is NaN)."""
    a, b = np.asarray(rouge_a, dtype=float), np.asarray(rouge_b, dtype=float)
    return np.where(b > a, "model_b", np.where(a > b, "model_a", "tie"))


def alignable(records: NuggetRecords) -> bool:
    """Whether the records carry what NG-F8 needs: response texts (``answer_text``) and retrieved ``chunks``."""
    sides = records.sides
    return sides["answer_text"].null_count() < sides.height and sides["chunks"].null_count() < sides.height


def rouge_l_alignment(records: NuggetRecords, *, progress: bool = True) -> pl.DataFrame:
    """NG-F8 per battle whose records carry both responses (``answer_text``) and the retrieved chunks
    (``chunks``): ``qid``, ``winner``, ``language``, ``rouge_a``, ``rouge_b`` and ``rouge_pref``.

    Battles without a response text or without chunks are left out; compare the height with
    ``records.n_battles`` for the count."""
    usable = records.battle_texts()
    tokenizer = UnicodeTokenizer()
    scorer = rouge_l_scorer(tokenizer)
    out: dict[str, list[float]] = {"rouge_a": [], "rouge_b": []}
    rows = usable.iter_rows(named=True)
    for row in tqdm(rows, total=usable.height, desc="ROUGE-L", unit="battle", disable=not progress):
        lang = language_code(row["language"] or "") or "en"
        chunk_sents = [s for c in row["chunks"] for s in split_sentences(c, lang)]
        for side in "ab":
            out[f"rouge_{side}"].append(response_rouge_l(split_sentences(row[f"text_{side}"], lang), chunk_sents,
                                                         scorer, tokenizer))
    return usable.select("qid", "winner", "language").with_columns(
        pl.Series("rouge_a", out["rouge_a"], dtype=pl.Float64), pl.Series("rouge_b", out["rouge_b"], dtype=pl.Float64),
        pl.Series("rouge_pref", rouge_preference(out["rouge_a"], out["rouge_b"]), dtype=pl.String),
    )


def rouge_confusion(alignment: pl.DataFrame) -> NuggetConfusion:
    """Human vote × ROUGE preference (the 4 × 3 layout of the nugget confusions); Figure 8 shows its decided
    block (human A/B × ROUGE A/B), ties excluded."""
    return confusion(alignment["winner"].to_numpy(), alignment["rouge_pref"].to_numpy())


#: significance level of :func:`alignment_test`
ALPHA = 0.05


@dataclass(frozen=True)
class AlignmentTest:
    """Fisher's exact test of a decided block: decided battles, agreement (%), Cohen's κ (NaN when the preference
    never picks one of the sides), the two-sided p, and whether the preference is aligned with the vote (p < alpha
    and κ > 0)."""

    battles: int
    agreement_pct: float
    kappa: float
    p_value: float
    aligned: bool


def alignment_test(conf: NuggetConfusion, alpha: float = ALPHA) -> AlignmentTest:
    """Fisher's exact test (two-sided) of the decided block of ``conf`` (module docstring): ``aligned`` when
    p < ``alpha`` and the agreement exceeds chance (Cohen's κ > 0)."""
    d = conf.decided.astype(float)
    n = float(d.sum())
    if n == 0:
        raise ValueError("no decided battle with a ROUGE-L preference")
    p_value = float(sps.fisher_exact(conf.decided).pvalue)
    kappa = kappa_from_confusion(d) if (d.sum(axis=0) > 0).all() else float("nan")
    return AlignmentTest(int(n), 100 * float(d.trace()) / n, kappa, p_value, bool(p_value < alpha and kappa > 0))
