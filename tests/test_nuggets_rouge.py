"""NG-F8: the response-level ROUGE-L score (mean over response sentences of the best F1 against the chunk
sentences), the Unicode tokenizer, the per-battle preference and its confusion with the human vote."""

import numpy as np
import pytest
from rouge_score import tokenizers

from analysis_lib import nuggets as ng
from analysis_lib.nuggets import rouge
from analysis_lib.reading import DataValidationError


def _lcs(x: list[str], y: list[str]) -> int:
    """Longest common subsequence length by the textbook dynamic programme (independent of rouge-score)."""
    table = np.zeros((len(x) + 1, len(y) + 1), dtype=int)
    for i, a in enumerate(x, 1):
        for j, b in enumerate(y, 1):
            table[i, j] = table[i - 1, j - 1] + 1 if a == b else max(table[i - 1, j], table[i, j - 1])
    return int(table[-1, -1])


def _f1(x: list[str], y: list[str]) -> float:
    lcs = _lcs(x, y)
    if lcs == 0:
        return 0.0
    p, r = lcs / len(x), lcs / len(y)
    return 2 * p * r / (p + r)


ENGLISH = ["The cats were sitting on the mats, quietly!", "Revenue grew 12% in 2024 (see Table 3).",
           "Running runners ran; they'd run again.", "e-mail addresses like a.b@c.org"]


def test_tokenizer_equals_rouge_scores_default_on_ascii_text():
    default = tokenizers.DefaultTokenizer(use_stemmer=True)
    ours = rouge.UnicodeTokenizer()
    for text in ENGLISH:
        assert ours.tokenize(text) == default.tokenize(text)


def test_tokenizer_keeps_other_scripts_and_splits_cjk_into_characters():
    tok = rouge.UnicodeTokenizer()
    assert tokenizers.DefaultTokenizer(use_stemmer=True).tokenize("Москва столица России") == []
    assert tok.tokenize("Москва — столица России.") == ["москва", "столица", "россии"]
    assert tok.tokenize("北京是中国的首都") == list("北京是中国的首都")
    assert tok.tokenize("東京タワー, 2024") == ["東", "京", "タ", "ワ", "ー", "2024"]


def test_f1_matrix_matches_an_independent_lcs():
    scorer = rouge.rouge_l_scorer()
    tok = rouge.UnicodeTokenizer()
    resp = ["The cat sat on the mat.", "北京是中国的首都", "Dogs bark loudly at night"]
    chunks = ["A cat sat on a mat today.", "中国的首都是北京", "The dog barked at night.", "Москва"]
    m = rouge.rouge_l_matrix(resp, chunks, scorer)
    want = np.array([[_f1(tok.tokenize(r), tok.tokenize(c)) for c in chunks] for r in resp])
    np.testing.assert_allclose(m, want)
    assert m[1, 1] == pytest.approx(5 / 8)  # LCS 中国的首都 of two 8-character sentences


def test_response_score_is_the_mean_of_row_maxima():
    resp = ["the cat sat", "dogs bark loudly"]
    chunks = ["the cat sat on the mat", "a dog barked", "loud dogs bark"]
    tok = rouge.UnicodeTokenizer()
    best = [max(_f1(tok.tokenize(r), tok.tokenize(c)) for c in chunks) for r in resp]
    # by hand: "the cat sat" vs "the cat sat on the mat": P = 1, R = 1/2 -> 2/3;
    #          "dogs bark loudly" -> "dog bark loudli" vs "loud dog bark": LCS 2 (dog bark) -> 2/3
    assert best == pytest.approx([2 / 3, 2 / 3])
    assert rouge.response_rouge_l(resp, chunks) == pytest.approx(np.mean(best))
    assert np.isnan(rouge.response_rouge_l([], chunks)) and np.isnan(rouge.response_rouge_l(resp, []))


def test_preference_ties_and_nan():
    got = rouge.rouge_preference([0.2, 0.5, 0.3, np.nan], [0.4, 0.1, 0.3, 0.2])
    assert got.tolist() == ["model_b", "model_a", "tie", "tie"]


def _side(qid, side, winner, text, chunks=None, language="English"):
    rec = {"qid": qid, "side": side, "winner": winner, "language": language, "answer_text": text,
           "nuggets": [{"text": "n", "importance": "vital", "assignment": "support"}]}
    if chunks is not None:
        rec["chunks"] = chunks
    return rec


def test_alignment_per_battle_and_confusion():
    chunks = ["The Eiffel Tower is in Paris. It was completed in 1889."]
    objs = [
        _side("1", "a", "model_a", "The Eiffel Tower is in Paris.", chunks),
        _side("1", "b", "model_a", "Towers are tall.", chunks),
        _side("2", "a", "model_a", "Bananas are yellow.", chunks),
        _side("2", "b", "model_a", "It was completed in 1889.", chunks),
        _side("3", "a", "tie", "x", None),  # no chunks: left out
        _side("3", "b", "tie", "y", None),
    ]
    recs = ng.records.records_from_dicts(objs)
    al = rouge.rouge_l_alignment(recs, progress=False).sort("qid")
    assert al["qid"].to_list() == ["1", "2"]
    assert al["rouge_a"][0] == pytest.approx(1.0) and al["rouge_b"][1] == pytest.approx(1.0)
    assert al["rouge_pref"].to_list() == ["model_a", "model_b"]
    conf = rouge.rouge_confusion(al)
    assert conf.counts[0].tolist() == [1, 0, 1] and conf.counts.sum() == 2  # human A: one agreement, one inversion


def test_chunks_are_validated_and_round_trip(tmp_path):
    with pytest.raises(DataValidationError, match=r"line 1, field 'chunks': expected a list of strings"):
        ng.records.records_from_dicts([_side("1", "a", "model_a", "t", "not a list")])
    recs = ng.records.records_from_dicts([_side("1", s, "model_a", "t", ["c1", "c2"]) for s in "ab"])
    back = ng.load_nugget_records(recs.to_jsonl(tmp_path / "r.jsonl"))
    assert back.sides["chunks"].to_list() == [["c1", "c2"]] * 2


def test_decided_block_and_summary_against_sklearn():
    from sklearn.metrics import cohen_kappa_score

    human = ["model_a"] * 6 + ["model_b"] * 4 + ["tie", "tie (bothbad)"]
    pref = ["model_a"] * 4 + ["model_b", "tie"] + ["model_a", "model_b", "model_b", "model_b"] + ["model_a"] * 2
    conf = ng.confusion(human, pref)
    assert conf.decided.tolist() == [[4, 1], [1, 3]]
    s = rouge.alignment_test(conf)
    kept = [(h, p) for h, p in zip(human, pref, strict=True) if h in ("model_a", "model_b") and p != "tie"]
    assert s.battles == len(kept) == 9
    assert s.agreement_pct == pytest.approx(100 * 7 / 9)
    assert s.kappa == pytest.approx(cohen_kappa_score(*zip(*kept, strict=True)))
    one_sided = rouge.alignment_test(ng.confusion(["model_a", "model_b"], ["model_a", "model_a"]))
    assert np.isnan(one_sided.kappa) and not one_sided.aligned  # the preference never picks B: no κ
