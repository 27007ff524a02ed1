"""Embeddings from an endpoint (issue 38): requests sized to the reply cap, and the offline encoder standing in for
an endpoint that has no embedding model (a chat-only vLLM or Ollama server)."""

from __future__ import annotations

import hashlib
import json
import logging

import numpy as np
import pytest
from fake_openai_server import FakeOpenAIServer

from analysis_lib import llm
from analysis_lib.llm import LLMClient
from analysis_lib.search_arena import encoder, topics

DIM = 3072


def _vector(text: str, dim: int = DIM) -> list[float]:
    """A deterministic vector with full-precision floats (about 20 characters each in JSON, as real ones)."""
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
    return np.random.default_rng(seed).standard_normal(dim).tolist()


class LargeVectorServer(FakeOpenAIServer):
    """Answers ``/embeddings`` with 3,072-dimension vectors (``text-embedding-3-large``) and keeps each reply's
    size and the number of texts it answered."""

    def __init__(self) -> None:
        super().__init__()
        self.replies: list[tuple[int, int]] = []

    def _embeddings(self, payload):
        inputs = payload["input"]
        body = json.dumps({"object": "list", "model": payload["model"],
                           "data": [{"object": "embedding", "index": i, "embedding": _vector(t)}
                                    for i, t in enumerate(inputs)],
                           "usage": {"prompt_tokens": len(inputs)}}).encode()
        with self.lock:
            self.replies.append((len(inputs), len(body)))
        return body


class ChatOnlyServer(FakeOpenAIServer):
    """A chat-only server: ``/embeddings`` answers 404 ``model_not_found``, as vLLM or Ollama without the model."""

    def _answer(self, h, payload, action):
        if h.path.endswith("/embeddings"):
            body = json.dumps({"error": {"message": f"The model `{payload.get('model')}` does not exist.",
                                         "type": "invalid_request_error", "code": "model_not_found"}}).encode()
            self._send(h, 404, body)
            return
        super()._answer(h, payload, action)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for name in llm.settings.ENV_VARS:
        monkeypatch.delenv(name, raising=False)


def _client(srv: FakeOpenAIServer, tmp_path, **kw) -> LLMClient:
    return LLMClient(base_url=srv.base_url, cache_dir=tmp_path / "llm", progress=False, backoff_base=0.01, **kw)


def test_large_vectors_are_requested_in_chunks_whose_replies_fit_the_cap(tmp_path):
    texts = [f"prompt number {i}" for i in range(120)]
    cap = 2 * 1024 * 1024  # 256 vectors of 3,072 floats are ~15 MB of JSON: one request would be refused
    with LargeVectorServer() as srv:
        client = _client(srv, tmp_path, max_reply_bytes=cap)
        vecs = topics.embed_texts(texts, "text-embedding-3-large", client=client, cache_dir=tmp_path)
    assert vecs.shape == (len(texts), DIM)
    expected = np.asarray([_vector(t) for t in texts], dtype=np.float32)
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    np.testing.assert_allclose(vecs, expected, rtol=1e-5, atol=1e-6)
    assert sum(n for n, _ in srv.replies) == len(texts)  # every text asked once
    assert all(size <= cap for _, size in srv.replies) and len(srv.replies) > 1


def test_a_reply_over_the_cap_is_asked_again_in_halves(tmp_path):
    texts = [f"text {i}" for i in range(10)]
    cap = 300_000  # ~61 kB per vector: the first request (16 texts) and then 8 are over it, 4 fit
    with LargeVectorServer() as srv:
        client = _client(srv, tmp_path, max_reply_bytes=cap)
        vecs = client.embed(texts, model="text-embedding-3-large")
    assert vecs.shape == (10, DIM)
    np.testing.assert_allclose(vecs[3], np.asarray(_vector(texts[3]), dtype=np.float32))
    answered = [(n, size) for n, size in srv.replies if size <= cap]
    assert sum(n for n, _ in answered) == 10
    assert [n for n, _ in srv.replies][:3] == [10, 5, 2]  # 10 (all there were), halved twice, then sized
    per_vector = srv.replies[-1][1] / srv.replies[-1][0]
    assert all(n <= cap / (2 * per_vector) + 1 for n, _ in srv.replies[3:])


def test_a_chat_only_endpoint_falls_back_to_the_offline_encoder(tmp_path, caplog):
    texts = ["best laptop for machine learning", "cheapest gpu laptop for deep learning", "chocolate cake recipe"]
    caplog.set_level(logging.INFO, logger="analysis_lib")
    with ChatOnlyServer() as srv:
        client = _client(srv, tmp_path)
        got = topics.embed_with_fallback(texts, "auto", client=client, cache_dir=tmp_path, precision="float32")
        assert srv.n_requests == 1  # 404 is not retried
    assert got.embedding == "offline"
    assert "HTTP 404 Not Found (model_not_found)" in got.fallback and "text-embedding-3-large" in got.fallback
    lines = [r.getMessage() for r in caplog.records if "offline encoder" in r.getMessage()]
    assert len(lines) == 1 and encoder.label("float32") in lines[0]
    offline = topics.embed_texts(texts, "offline", cache_dir=tmp_path, precision="float32")
    np.testing.assert_array_equal(got.vectors, offline)
    assert topics.embedding_label(got.embedding, "float32") == encoder.label("float32")


def test_an_endpoint_with_the_model_is_used_and_named(tmp_path):
    texts = ["a question", "another question"]
    with LargeVectorServer() as srv:
        got = topics.embed_with_fallback(texts, "auto", client=_client(srv, tmp_path), cache_dir=tmp_path)
    assert (got.embedding, got.fallback) == ("text-embedding-3-large", "")
    assert got.vectors.shape == (2, DIM)
    assert topics.embedding_label(got.embedding) == "text-embedding-3-large"


class EvenVectorServer(FakeOpenAIServer):
    """Vectors whose JSON takes the same bytes for every text (each value one of 0.125, 0.375, 0.625), so the
    client's request sizes are fixed by the cap: a known answer for the estimate."""

    def _embeddings(self, payload):
        inputs = payload["input"]
        data = [{"object": "embedding", "index": i,
                 "embedding": [(1 + 2 * ((len(t) + j) % 3)) / 8 for j in range(self.embedding_dim)]}
                for i, t in enumerate(inputs)]
        return json.dumps({"object": "list", "model": payload["model"], "data": data,
                           "usage": {"prompt_tokens": len(inputs)}}).encode()


def test_the_estimate_counts_embeddings_requests_as_the_client_sends_them(tmp_path):
    from analysis_lib.llm import estimate

    cap = 40_000  # 64 values of 6 bytes ("0.125,"): ~430 bytes a vector, 46 texts a request after the first 16
    with EvenVectorServer(embedding_dim=64) as srv:
        client = _client(srv, tmp_path, max_reply_bytes=cap)
        topics.embed_texts([f"text {i}" for i in range(200)], "emb", client=client, cache_dir=tmp_path)
        sent, measured = srv.n_requests, client.embed_vector_bytes
        one = len(json.dumps({"object": "embedding", "index": 0, "embedding": [0.125] * 64}, separators=(",", ":")))
        assert one <= measured <= one + 2  # the reply's JSON per vector (two-digit indices, brackets and commas)
        per = cap // (2 * measured)
        assert per == cap // (2 * one) == 46
        assert sent == 1 + -(-(200 - 16) // per) == estimate.embed_requests(200, measured, max_reply_bytes=cap)
        assert client.total_stats.requests == sent and client.total_stats.ok == 200  # the chapter's usage line
        # a later run of the same endpoint knows the size: its first request is sized too, as the estimate says
        cache = topics.embedding_cache("emb", client, tmp_path)
        assert cache.vector_bytes == measured
        later = _client(srv, tmp_path, max_reply_bytes=cap)
        topics.embed_texts([f"new text {i}" for i in range(120)], "emb", client=later, cache_dir=tmp_path)
        assert srv.n_requests - sent == -(-120 // per) == estimate.embed_requests(120, measured, max_reply_bytes=cap,
                                                                                  measured=True)


def test_vectors_are_cached_per_endpoint_model_and_dimension(tmp_path):
    texts = ["a question", "another question", "a question"]
    with EvenVectorServer() as one, EvenVectorServer() as two:
        first = topics.embed_texts(texts, "emb", client=_client(one, tmp_path), cache_dir=tmp_path)
        topics.embed_texts(texts, "emb", client=_client(one, tmp_path), cache_dir=tmp_path)
        assert one.n_requests == 1  # the same endpoint's vectors are reused
        other = topics.embed_texts(texts, "emb", client=_client(two, tmp_path), cache_dir=tmp_path)
        assert two.n_requests == 1 and [r["input"] for r in two.requests] == [["a question", "another question"]]
        np.testing.assert_array_equal(first, other)  # the same fake vectors, asked of each server
        topics.embed_texts(texts, "emb", client=_client(two, tmp_path), cache_dir=tmp_path, dimensions=4)
        assert two.requests[-1]["dimensions"] == 4 and two.n_requests == 2  # another dimension: asked again
        folders = {p.name for p in tmp_path.iterdir() if p.name.startswith("emb@")}
        assert len(folders) == 3
    offline_client = LLMClient(cache_dir=tmp_path / "llm", progress=False)  # no endpoint: no endpoint's vectors
    with pytest.raises(RuntimeError, match="not in the embedding cache of this endpoint"):
        topics.embed_texts(texts, "emb", client=offline_client, cache_dir=tmp_path)
