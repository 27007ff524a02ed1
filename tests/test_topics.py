"""SA-B4 topic modelling: embedding cache, BERTopic on clustered data, labels from the LLM layer."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest
from fake_openai_server import FakeOpenAIServer

from analysis_lib.llm import LLMClient
from analysis_lib.search_arena import encoder, topics

VOCAB = {
    "stocks": "stock market shares dividend nasdaq earnings investor portfolio",
    "football": "football match goal league striker season coach transfer",
    "recipes": "recipe bake oven flour sugar dessert chocolate cake",
    "laptops": "laptop gpu ram battery keyboard screen processor notebook",
}


def _corpus(n_per=60, seed=0):
    rng = np.random.default_rng(seed)
    texts, truth, embs = [], [], []
    centers = rng.normal(size=(len(VOCAB), 32))
    for k, (name, words) in enumerate(VOCAB.items()):
        w = words.split()
        for i in range(n_per):
            texts.append(" ".join(rng.choice(w, 6)) + f" question {name} {i}")
            truth.append(name)
            v = centers[k] + 0.15 * rng.normal(size=32)
            embs.append(v / np.linalg.norm(v))
    return texts, truth, np.asarray(embs, dtype=np.float32)


def test_fit_topics_recovers_clusters_with_keyword_labels(tmp_path):
    texts, truth, emb = _corpus()
    tp, asg = topics.fit_topics(texts, embeddings=emb, min_cluster_size=15, min_samples=5, n_neighbors=10,
                                representation="c-tf-idf", cache_dir=tmp_path)
    assert tp.columns == ["topic", "size", "share", "share_clustered", "label", "label_source", "keywords"]
    assert asg.columns == ["text", "topic", "centrality"] and asg.height == len(texts)
    clustered = tp.filter(pl.col("topic") >= 0)
    assert clustered.height == 4
    assert tp["share"].sum() == pytest.approx(1.0)
    assert (clustered["label_source"] == "keywords").all()
    # each topic is one vocabulary, named by its words
    frame = asg.with_columns(pl.Series("truth", truth))
    purity = frame.filter(pl.col("topic") >= 0).group_by("topic").agg(
        (pl.col("truth").value_counts(sort=True).first().struct.field("count") / pl.len()).alias("purity"))
    assert purity["purity"].min() > 0.95
    for topic, label, kws in zip(clustered["topic"], clustered["label"], clustered["keywords"], strict=True):
        assert label == topics.keyword_label(kws.to_list())
        name = truth[asg["topic"].to_list().index(topic)]
        assert set(label.replace(" / ", " ").split()) <= {*VOCAB[name].split(), name, "question"}
    ex = topics.topic_examples(tp, asg, k=2)
    assert ex.height == 4 and ex["examples"].str.contains(" · ").all()
    assert ex.columns == ["topic", "label", "share", "share_clustered", "examples"]
    assert ex["share_clustered"].to_list() == clustered["share_clustered"].to_list()
    assert ex["share"].to_list() == clustered["share"].to_list()
    s = topics.topic_summary(tp)
    assert s.n_topics == 4 and s.largest_share <= 0.3 and s.n_texts == len(texts) == asg.height
    # reproducible, and the UMAP coordinates were cached
    assert list((tmp_path / "umap").glob("*.npy"))
    _, asg2 = topics.fit_topics(texts, embeddings=emb, min_cluster_size=15, min_samples=5, n_neighbors=10,
                                  representation="c-tf-idf", cache_dir=tmp_path)
    assert asg2["topic"].to_list() == asg["topic"].to_list()


def test_llm_labels_through_the_client(tmp_path):
    texts, _, emb = _corpus(seed=1)

    def responder(payload):
        content = payload["messages"][0]["content"]
        kw = content.split("KEYWORDS:", 1)[1].split("\n", 1)[0]
        for name, words in VOCAB.items():
            if any(w in kw for w in words.split()[:4]):
                return json.dumps({"label": name.title()})
        return json.dumps({"label": "Misc"})

    with FakeOpenAIServer(responder) as srv:
        client = LLMClient(base_url=srv.base_url, model="m", cache_dir=tmp_path / "llm", progress=False)
        tp, _ = topics.fit_topics(texts, embeddings=emb, min_cluster_size=15, min_samples=5, n_neighbors=10,
                                  representation="c-tf-idf", client=client, cache_dir=tmp_path)
        n = srv.n_requests
    clustered = tp.filter(pl.col("topic") >= 0)
    assert n == clustered.height
    assert sorted(clustered["label"].to_list()) == sorted(n.title() for n in VOCAB)
    assert (clustered["label_source"] == "llm").all()
    # offline afterwards: the cached labels are used, no endpoint needed
    offline = LLMClient(model="m", cache_dir=tmp_path / "llm", offline=True, progress=False)
    tp2, _ = topics.fit_topics(texts, embeddings=emb, min_cluster_size=15, min_samples=5, n_neighbors=10,
                               representation="c-tf-idf", client=offline, cache_dir=tmp_path)
    assert tp2["label"].to_list() == tp["label"].to_list()


def test_embedding_cache_via_endpoint(tmp_path):
    with FakeOpenAIServer() as srv:
        client = LLMClient(base_url=srv.base_url, cache_dir=tmp_path / "llm", progress=False)
        a = topics.embed_texts(["x", "y", "x"], "text-embedding-3-large", client=client, cache_dir=tmp_path)
        assert srv.n_requests == 1 and a.shape == (3, 8)
        assert np.allclose(a[0], a[2]) and np.allclose(np.linalg.norm(a, axis=1), 1)
        b = topics.embed_texts(["y", "z"], "text-embedding-3-large", client=client, cache_dir=tmp_path)
        assert srv.n_requests == 2  # only "z" was new
        assert np.allclose(b[0], a[1])
        assert srv.requests[-1]["input"] == ["z"]
    cache_dir = topics.embedding_cache("text-embedding-3-large", client, tmp_path).dir  # this endpoint's folder
    assert cache_dir.name.startswith("text-embedding-3-large@") and (cache_dir / "vectors.npy").exists()
    assert len(json.loads((cache_dir / "index.json").read_text())["keys"]) == 3
    with pytest.raises(RuntimeError, match="needs an LLM endpoint"):
        topics.embed_texts(["new text"], "text-embedding-3-large", client=LLMClient(cache_dir=tmp_path),
                           cache_dir=tmp_path)


def test_offline_encoder_ships_with_the_package(tmp_path):
    v = topics.embed_texts(["best laptop for machine learning", "cheapest gpu laptop for deep learning",
                            "chocolate cake recipe"], cache_dir=tmp_path)
    assert v.shape == (3, 384)
    sims = v @ v.T
    assert sims[0, 1] > sims[0, 2]


@pytest.mark.parametrize("precision", ["float32", "bfloat16"])
def test_offline_vectors_do_not_depend_on_torch_threads(precision):
    """The runner gives each kernel cores / jobs torch threads (``$ANALYSIS_TORCH_THREADS``) and does not key
    rebuilds on it: that holds only while the vectors are the same to the bit whatever the thread count."""
    import torch

    texts = [f"question {i}: " + "how do search engines rank pages and cite sources " * (i % 7 + 1)
             for i in range(48)]
    before = torch.get_num_threads()
    try:
        out = {}
        for n in (1, 2):
            torch.set_num_threads(n)
            out[n] = encoder.encode(texts, precision)
    finally:
        torch.set_num_threads(before)
    assert np.array_equal(out[1], out[2])


def test_auto_embedding_follows_the_endpoint(tmp_path):
    assert topics.resolve_embedding("auto", None) == "offline"
    assert topics.resolve_embedding("auto", LLMClient(cache_dir=tmp_path, offline=True)) == "offline"
    assert topics.resolve_embedding("auto", LLMClient(base_url="http://127.0.0.1:9/v1", cache_dir=tmp_path)) == \
        "text-embedding-3-large"
    assert topics.resolve_embedding("offline", LLMClient(base_url="http://127.0.0.1:9/v1")) == "offline"


def test_keyword_label_skips_keywords_that_add_no_word():
    assert topics.keyword_label(["ai model", "ai models", "best ai", "llm"]) == "ai model / best ai / llm"
    assert topics.keyword_label(["stock", "stocks", "stock market", "price"], k=2) == "stock / stock market"
    assert topics.keyword_label([]) == "(no keywords)"


STOCK_TEMPLATES = ("What is the stock price of {} today?", "Is {} stock a good buy this year?",
                   "Why did {} shares fall on the market?", "Latest earnings report for {} stock")
RECIPE_TEMPLATES = ("How do I bake a {} cake at home?", "Easy recipe for {} cookies with chocolate",
                    "What flour is best for {} bread?", "How long to roast {} in the oven?")
FILLERS = ("apple", "tesla", "nvidia", "amazon", "banana", "lemon", "pumpkin", "walnut", "carrot", "ginger")


def test_one_pasted_page_does_not_name_a_topic(tmp_path):
    """A pasted HTML page inside a topic of short recipe questions: counted whole, its markup names the topic
    under c-TF-IDF; clipped to its first words (as the encoder reads it), the label comes from the questions."""
    stocks = [t.format(f) for t in STOCK_TEMPLATES for f in FILLERS]
    recipes = [t.format(f) for t in RECIPE_TEMPLATES for f in FILLERS]
    page = "Can you turn this banana bread recipe into a list? " + "div class span div const div " * 300
    texts = [*stocks, *recipes, page]
    # the page sits with the recipes in embedding space (an encoder reads its first 128 word pieces)
    emb = topics.embed_texts([*stocks, *recipes, page.split(" div")[0]], cache_dir=tmp_path)
    common = {"embeddings": emb, "min_cluster_size": 10, "min_samples": 3, "n_neighbors": 10,
              "cache_dir": tmp_path}
    whole, asg = topics.fit_topics(texts, representation="c-tf-idf", keyword_words=None, **common)
    page_topic = asg["topic"][len(texts) - 1]
    members = asg.with_row_index().filter(pl.col("topic") == page_topic)["index"]
    assert page_topic >= 0 and members.len() >= 10 and (members >= len(stocks)).all()  # a recipe topic
    label = dict(zip(whole["topic"], whole["label"]))
    assert "div" in label[page_topic]  # the defect: one page outweighs 40 questions
    for representation in ("c-tf-idf", "keybert"):
        clipped, _ = topics.fit_topics(texts, representation=representation, keyword_words=20, **common)
        words = " ".join(clipped.filter(pl.col("topic") == page_topic)["keywords"][0].to_list()[:3])
        assert "div" not in words and "span" not in words, representation
    keybert, _ = topics.fit_topics(texts, representation="keybert", keyword_words=20, **common)
    stock_topic = asg["topic"][0]
    assert "stock" in keybert.filter(pl.col("topic") == stock_topic)["label"][0]


# --- the offline encoder's precision (issue 23, chapter 02's embedding time): bfloat16 only where the processor
# computes it natively, the same vectors as float32 to a cosine of 0.999, never mixed with float32 rows in the cache

PRECISION_TEXTS = [
    "best laptop for machine learning under 1500 dollars",
    "cheapest gpu laptop for deep learning",
    "chocolate cake recipe without eggs",
    "how to bake sourdough bread at home",
    "latest news on the champions league final",
    "who won the world cup in 2022",
    "compare the iphone 16 and the pixel 9 cameras",
    "what are the side effects of ibuprofen",
    "explain the transformer architecture in simple terms",
    "stock price forecast for nvidia next quarter",
]


@pytest.mark.parametrize(("flags", "native"), [
    ("fpu sse avx2 avx512f avx512_bf16 avx512_vnni", True),
    ("fpu sse avx2 amx_bf16 amx_tile", True),
    ("fpu sse avx2 avx512f avx512_vnni", False),
])
def test_native_bfloat16_reads_the_processor_flags(tmp_path, flags, native):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(f"processor\t: 0\nmodel name\t: test\nflags\t\t: {flags}\n\nprocessor\t: 1\n")
    assert encoder.native_bfloat16(str(cpuinfo)) is native
    assert encoder.native_bfloat16(str(tmp_path / "missing")) is False  # not Linux: float32


def test_auto_follows_the_processor_and_bad_values_are_refused(monkeypatch):
    monkeypatch.setattr(encoder, "native_bfloat16", lambda: True)
    assert encoder.resolve_precision("auto") == "bfloat16"
    assert encoder.model_key("auto") == "all-MiniLM-L6-v2@128-bf16"
    monkeypatch.setattr(encoder, "native_bfloat16", lambda: False)
    assert encoder.resolve_precision("auto") == "float32"
    assert encoder.model_key("auto") == "all-MiniLM-L6-v2@128"  # the key float32 caches always had
    assert encoder.resolve_precision("bfloat16") == "bfloat16"  # asked for: used even where emulated
    with pytest.raises(ValueError, match="auto, float32, bfloat16; got 'fp16'"):
        encoder.resolve_precision("fp16")


def test_bfloat16_vectors_agree_with_float32():
    """bfloat16 runs (the vectors differ) and keeps what the analyses use: each text's direction (cosine >= 0.999)
    and its nearest neighbour."""
    full = encoder.encode(PRECISION_TEXTS, "float32")
    half = encoder.encode(PRECISION_TEXTS, "bfloat16")
    assert full.dtype == half.dtype == np.float32
    assert not np.array_equal(full, half)
    np.testing.assert_allclose(np.linalg.norm(half, axis=1), 1.0, atol=1e-5)
    assert (full * half).sum(axis=1).min() >= 0.999

    def nearest(v: np.ndarray) -> np.ndarray:
        sims = v @ v.T
        np.fill_diagonal(sims, -np.inf)
        return sims.argmax(axis=1)

    np.testing.assert_array_equal(nearest(full), nearest(half))


def test_the_cache_keeps_each_precision_apart(tmp_path):
    full = topics.embed_texts(PRECISION_TEXTS[:3], cache_dir=tmp_path, precision="float32")
    half = topics.embed_texts(PRECISION_TEXTS[:3], cache_dir=tmp_path, precision="bfloat16")
    assert not np.array_equal(full, half)  # bfloat16 was computed, not served float32's rows
    np.testing.assert_array_equal(half, encoder.encode(PRECISION_TEXTS[:3], "bfloat16"))
    again = topics.embed_texts(PRECISION_TEXTS[:3], cache_dir=tmp_path, precision="float32")
    np.testing.assert_array_equal(again, full)
