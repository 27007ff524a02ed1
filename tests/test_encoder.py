"""The offline encoder's precision (issue 23, chapter 02's embedding time): bfloat16 only where the processor
computes it natively, the same vectors as float32 to a cosine of 0.999, never mixed with float32 rows in the cache."""

from __future__ import annotations

import numpy as np
import pytest

from analysis_lib.search_arena import encoder, topics

TEXTS = [
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
    full = encoder.encode(TEXTS, "float32")
    half = encoder.encode(TEXTS, "bfloat16")
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
    full = topics.embed_texts(TEXTS[:3], cache_dir=tmp_path, precision="float32")
    half = topics.embed_texts(TEXTS[:3], cache_dir=tmp_path, precision="bfloat16")
    assert not np.array_equal(full, half)  # bfloat16 was computed, not served float32's rows
    np.testing.assert_array_equal(half, encoder.encode(TEXTS[:3], "bfloat16"))
    np.testing.assert_array_equal(topics.embed_texts(TEXTS[:3], cache_dir=tmp_path, precision="float32"), full)
