"""The one cache-key helper (``analysis_lib.cache_keys``) and the four caches that use it: the same parts give the
same key, any changed part another, a list's order counts and a dict's key order does not; the LLM records' and
the embeddings' keys keep the bytes they had before the helper (their formulas written out here)."""

from __future__ import annotations

import hashlib
import json
import os

import pytest

from analysis_lib import cache_keys, llm
from analysis_lib.search_arena import loader
from analysis_lib.search_arena.embedding_cache import text_hash
from bookbuild import keys

PARTS = {"model": "m", "messages": [{"role": "user", "content": "Zürich — 東京"}], "params": {"t": 0.5, "n": None}}


def test_known_answers():
    # FIPS 180-2's SHA-256 test vector for "abc"; a dict's canonical JSON is compact, key-sorted, non-ASCII kept
    assert cache_keys.digest("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert cache_keys.canonical_json({"b": [1, 2.5], "a": "é"}) == '{"a":"é","b":[1,2.5]}'
    assert cache_keys.digest({"b": 1, "a": "é"}) == hashlib.sha256('{"a":"é","b":1}'.encode()).hexdigest()


def test_same_parts_same_key_any_changed_part_another():
    same = {"params": {"n": None, "t": 0.5}, "messages": [{"content": "Zürich — 東京", "role": "user"}], "model": "m"}
    assert cache_keys.digest(PARTS) == cache_keys.digest(same)  # dict keys are names, not positions
    changed = [
        {**PARTS, "model": "m2"},
        {**PARTS, "messages": [{"role": "user", "content": "Zürich — 東京 "}]},
        {**PARTS, "params": {"t": 0.25, "n": None}},
        {**PARTS, "params": {"t": 0.5, "n": 0}},  # None and 0 differ
        {**PARTS, "extra": ""},
    ]
    found = {cache_keys.digest(PARTS), *(cache_keys.digest(c) for c in changed)}
    assert len(found) == len(changed) + 1


def test_list_order_counts_and_tuples_are_lists():
    assert cache_keys.digest(["a", "b"]) != cache_keys.digest(["b", "a"])
    assert cache_keys.digest(("a", 1)) == cache_keys.digest(["a", 1])
    assert cache_keys.digest([1]) != cache_keys.digest(["1"])


def test_a_value_json_cannot_hold_is_refused():
    with pytest.raises(TypeError, match="set"):
        cache_keys.digest({"x": {1, 2}})


def test_file_digest(tmp_path):
    f = tmp_path / "x.bin"
    data = os.urandom(3 << 20)
    f.write_bytes(data)
    assert cache_keys.file_digest(f) == hashlib.sha256(data).hexdigest()


def test_the_llm_and_embedding_keys_keep_their_bytes():
    record = {**PARTS, "endpoint": "http://127.0.0.1:1/v1"}
    before = hashlib.sha256(json.dumps(record, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
                            .encode("utf-8")).hexdigest()
    assert llm.request_key("m", PARTS["messages"], PARTS["params"], "http://127.0.0.1:1/v1") == before
    text = "Zürich — 東京\u2028x"
    assert text_hash(text) == hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_loader_key_follows_source_seed_match_and_file(tmp_path):
    base = loader._cache_key("sample:100", 0, "substring")
    assert base is not None and len(base) == 24 and base == loader._cache_key("sample:100", 0, "substring")
    others = {loader._cache_key("sample:100", 1, "substring"), loader._cache_key("sample:101", 0, "substring"),
              loader._cache_key("sample:100", 0, "raw")}
    assert base not in others and len(others) == 3
    f = tmp_path / "release.jsonl"
    f.write_text('{"a": 1}\n')
    first = loader._cache_key(str(f), 0, "substring")
    os.utime(f, ns=(1, 1))
    assert first is not None and loader._cache_key(str(f), 0, "substring") == first  # the content, not the mtime
    f.write_text('{"a": 2}\n')  # same size
    os.utime(f, ns=(1, 1))  # same mtime
    assert loader._cache_key(str(f), 0, "substring") not in {first, None}
    assert loader._cache_key(str(tmp_path / "missing.jsonl"), 0, "substring") is None


def test_rebuild_key_follows_every_part(tmp_path):
    nb = tmp_path / "a.ipynb"
    nb.write_text("{}")
    args = dict(parameters={"seed": 0}, inputs={"data": "sample"}, lib_hash="L", kernel="python3",
                llm_identity=None, environment=("e", "3.11", "fp32"))
    base = keys.notebook_key(nb, **args)
    assert base == keys.notebook_key(nb, **args) and len(base) == 64
    variants = [{"parameters": {"seed": 1}}, {"inputs": {"data": "sample:10"}}, {"lib_hash": "M"},
                {"kernel": "other"}, {"llm_identity": {"model": "x"}}, {"environment": ("e", "3.12", "fp32")}]
    found = {keys.notebook_key(nb, **{**args, **v}) for v in variants}
    assert base not in found and len(found) == len(variants)
    nb.write_text("{ }")
    assert keys.notebook_key(nb, **args) != base
