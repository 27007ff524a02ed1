"""NG-C chunking, the ≤ 100-byte yield share and dense retrieval on local text."""

import numpy as np
import polars as pl
import pytest

from analysis_lib.nuggets import corpus, sentences


def test_chunks_of_ten_with_overlap_two():
    sents = [f"Sentence number {i}." for i in range(25)]
    chunks = sentences.chunk_sentences(sents)
    # starts 0, 8, 16: [0-9], [8-17], [16-24]
    assert len(chunks) == 3
    assert chunks[1].startswith("Sentence number 8.") and chunks[1].endswith("Sentence number 17.")
    assert chunks[2].endswith("Sentence number 24.")
    assert sentences.chunk_sentences(sents[:7]) == [" ".join(sents[:7])]
    assert sentences.chunk_sentences(sents[:10]) == [" ".join(sents[:10])]
    with pytest.raises(ValueError):
        sentences.chunk_sentences(sents, size=2, overlap=2)


def test_multilingual_sentence_split():
    assert sentences.split_sentences("Das ist gut. Wir gehen heute. Ja!", "de") == [
        "Das ist gut.", "Wir gehen heute.", "Ja!"]
    assert len(sentences.split_sentences("这是第一句。这是第二句。", "zh")) == 2


def test_yield_share_counts_failures_as_empty():
    scraped = pl.DataFrame({"url": list("abcde"), "status": ["ok", "ok", "timeout", "ok", "robots_disallowed"],
                            "text": ["x" * 500, "short", None, "y" * 101, None], "n_bytes": [500, 5, None, 101, None]})
    s = corpus.yield_summary(scraped)
    assert s["URLs"] == 5 and s["URLs yielding <= 100 bytes (%)"] == pytest.approx(60.0)
    chunks = corpus.build_chunks(scraped)
    assert set(chunks["url"]) == {"a", "b", "d"}


def test_retrieval_ranks_the_relevant_chunk_first(tmp_path):
    scraped = pl.DataFrame({"url": ["u1", "u2", "u3"], "status": ["ok"] * 3, "n_bytes": [100] * 3, "text": [
        "The Eiffel Tower is in Paris. It was built in 1889.",
        "Photosynthesis converts light into chemical energy in plants.",
        "The stock market fell sharply on Monday."]})
    chunks = corpus.build_chunks(scraped)
    hits = corpus.retrieve(["How do plants make energy from sunlight?", "When was the Eiffel Tower built?"],
                           chunks, k=2,
                           cache_dir=tmp_path)
    top = hits.filter(pl.col("rank") == 0).sort("query")["url"].to_list()
    assert top == ["u2", "u1"]
    assert np.all(np.diff(hits.filter(pl.col("query") == 0)["score"].to_numpy()) <= 0)


def test_nli_share_and_offline_loader(monkeypatch):
    from analysis_lib.nuggets import nli

    def fake(premises, hyps):
        return ["entailment" if h.lower() in p.lower() else "neutral" for p, h in zip(premises, hyps)]

    share, ok = nli.entailed_share(["Paris is big", "cats fly"], [["x", "Yes, paris is big."], ["dogs run"]], fake)
    assert share == pytest.approx(50.0) and ok.tolist() == [True, False]
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(nli.NLIUnavailable) as caught:
        nli.load_nli("no-such-org/no-such-nli-model")
    assert str(caught.value) == ("the NLI model is not in the local Hugging Face cache and the hub is not reachable "
                                 "from this build (model no-such-org/no-such-nli-model)")
    assert caught.value.detail and caught.value.detail in type(caught.value.__cause__).__name__


def test_nli_share_on_records_uses_chunks_and_both_responses():
    from analysis_lib import nuggets as ng
    from analysis_lib.nuggets import nli

    def fake(premises, hyps):
        return ["entailment" if h.lower() in p.lower() else "neutral" for p, h in zip(premises, hyps, strict=True)]

    def side(qid, s, text, chunks, nuggets):
        return {"qid": qid, "side": s, "winner": "model_a", "answer_text": text, "chunks": chunks,
                "nuggets": [{"text": t, "importance": "vital", "assignment": "support"} for t in nuggets]}

    nugs = ["paris is big", "cats fly", "rome is old"]
    objs = [side("1", "a", "Cats fly, says A.", ["Paris is big."], nugs),
            side("1", "b", "B says nothing.", ["Paris is big."], nugs),
            side("2", "a", "x", None, ["dogs run"]), side("2", "b", "y", None, ["dogs run"])]
    recs = ng.records.records_from_dicts(objs)
    share, n, battles = nli.records_entailed_share(recs, fake)
    # battle 2 has no chunks: left out; of battle 1's three nuggets, one is in a chunk, one in response A
    assert n == 3 and battles == 1 and share == pytest.approx(200 / 3)
    with pytest.raises(ValueError, match="no battle carries retrieved chunks"):
        nli.records_entailed_share(ng.records.records_from_dicts(objs[2:]), fake)
