"""SA-B5 intent annotation and its agreement statistics."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest
from fake_openai_server import FakeOpenAIServer
from sklearn.metrics import cohen_kappa_score

from analysis_lib.llm import LLMClient
from analysis_lib.search_arena import intents, schema
from analysis_lib.search_arena.schema import INTENTS, UNASSIGNED


def test_prompt_is_the_papers_with_table_b1_examples():
    p = intents.build_prompt("who won the 2025 F1 season?")
    assert p.startswith("You are an impartial classifier.")
    assert "{FEW_SHOT_EXAMPLES}" not in p and "{USER_PROMPT}" not in p
    assert p.rstrip().endswith("User query: who won the 2025 F1 season?")
    for label, (_, examples) in intents.TAXONOMY.items():
        assert label in p
        for ex in examples:
            assert json.dumps(ex, ensure_ascii=False) in p
    assert len(intents.TAXONOMY) == 9 and tuple(intents.TAXONOMY) == INTENTS


def _responder(payload):
    query = payload["messages"][0]["content"].rsplit("User query:", 1)[1].strip()
    if query.startswith("bad"):
        return json.dumps({"primary_intent": "Chit-chat", "secondary_intent": UNASSIGNED, "reasoning": "x"})
    primary = "Factual Lookup" if query.lower().startswith("who") else "Guidance"
    secondary = "Explanation" if "why" in query else primary  # same as primary -> Unassigned
    return json.dumps({"primary_intent": primary, "secondary_intent": secondary, "reasoning": "r"}) + "\n"


def test_classify_intents_against_server(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeOpenAIServer(_responder) as srv:
        client = LLMClient(base_url=srv.base_url, model="m", cache_dir=tmp_path, progress=False, max_parse_retries=1)
        df = intents.classify_intents(["who is X", "how to fix my bike and why", "bad prompt"], client)
        assert df.columns == ["prompt", "primary_intent", "secondary_intent", "reasoning", "status", "error"]
        assert df["primary_intent"].to_list() == ["Factual Lookup", "Guidance", None]
        assert df["secondary_intent"].to_list() == [UNASSIGNED, "Explanation", None]
        assert df["status"].to_list() == ["ok", "ok", "failed"]
        assert "invalid reply" in df["error"][2]  # the label is not one of the nine categories
        # the request asked for the schema restricting labels to the categories
        schema = srv.chat_requests()[0]["response_format"]["json_schema"]["schema"]
        assert schema["properties"]["primary_intent"]["enum"] == list(INTENTS)
        assert srv.n_requests == 4  # 3 prompts + 1 re-ask of the invalid one


def _raters(seed=0, n=400):
    rng = np.random.default_rng(seed)
    labels = np.array(INTENTS)
    p1 = rng.choice(labels, n)
    p2 = np.where(rng.random(n) < 0.6, p1, rng.choice(labels, n))
    s1 = np.where(rng.random(n) < 0.5, rng.choice(labels, n), UNASSIGNED)
    s2 = np.where(rng.random(n) < 0.5, np.where(rng.random(n) < 0.5, p1, rng.choice(labels, n)), UNASSIGNED)
    s1 = np.where(s1 == p1, UNASSIGNED, s1)
    s2 = np.where(s2 == p2, UNASSIGNED, s2)
    return list(p1), list(s1), list(p2), list(s2)


def test_primary_kappa_matches_sklearn():
    p1, _, p2, _ = _raters()
    assert intents.primary_kappa(p1, p2) == pytest.approx(cohen_kappa_score(p1, p2), abs=1e-12)


def test_top2_definition_and_kappa_matches_sklearn():
    p1, s1, p2, s2 = _raters(1)
    r1, r2, match = intents.top2_resolve(p1, s1, p2, s2)
    for a, sa, b, sb, x, y, m in zip(p1, s1, p2, s2, r1, r2, match, strict=True):
        expected = a in {b, sb} or b in {a, sa}
        assert m == expected
        if m:
            assert x == y == (a if a in {b, sb} else b)
        else:
            assert (x, y) == (a, b)
    assert intents.top2_kappa(p1, s1, p2, s2) == pytest.approx(cohen_kappa_score(r1, r2), abs=1e-12)
    assert intents.top2_kappa(p1, s1, p2, s2) >= intents.primary_kappa(p1, p2)


def test_top2_small_example():
    p1 = ["Analysis", "Guidance", "Other", "Factual Lookup"]
    s1 = ["Explanation", UNASSIGNED, UNASSIGNED, UNASSIGNED]
    p2 = ["Explanation", "Recommendation", "Other", "Info Synthesis"]
    s2 = [UNASSIGNED, "Guidance", UNASSIGNED, "Factual Lookup"]
    r1, r2, match = intents.top2_resolve(p1, s1, p2, s2)
    assert match == [True, True, True, True]
    assert r1 == r2 == ["Explanation", "Guidance", "Other", "Factual Lookup"]


def test_agreement_frame_drops_missing_and_rejects_unknown_labels():
    a = pl.DataFrame({"primary_intent": ["Analysis", None, "Other"],
                      "secondary_intent": [UNASSIGNED, None, UNASSIGNED]})
    b = pl.DataFrame({"primary_intent": ["Analysis", "Other", "Guidance"], "secondary_intent": [UNASSIGNED] * 3})
    res = intents.agreement(a, b)
    assert res.n == 2 and res.accuracy_primary == 0.5
    with pytest.raises(ValueError, match="nine intent categories"):
        intents.primary_kappa(["Chat"], ["Other"])


def test_intent_distribution_excludes_other():
    # Other's bar is left out, Other stays in the base (the authors' Fig 1); the null is out of the base
    d = intents.intent_distribution(["Analysis", "Analysis", "Other", "Guidance", None])
    assert d["intent"].to_list() == ["Analysis", "Guidance"]
    assert d["share"].to_list() == pytest.approx([2 / 4, 1 / 4])


def test_annotate_sample_skips_placeholder_and_missing_prompts(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    prompts = ["who is X", schema.MODERATION_PROMPT, None, "how to fix my bike", "   "]
    battles = pl.DataFrame({
        "conv_id": [f"c{i}" for i in range(5)],
        "prompt": prompts,
        "language": ["English"] * 5,
        "primary_intent": ["Factual Lookup", "Other", "Other", "Guidance", "Other"],
        "secondary_intent": [UNASSIGNED] * 5,
    })
    with FakeOpenAIServer(_responder) as srv:
        client = LLMClient(base_url=srv.base_url, model="m", cache_dir=tmp_path, progress=False)
        out = intents.annotate_sample(battles, client, n=5, seed=0)
        sent = sorted(r["messages"][0]["content"].rsplit("User query:", 1)[1].strip() for r in srv.chat_requests())
    assert sent == ["how to fix my bike", "who is X"]  # nothing else reached the model
    assert out.columns == ["conv_id", "prompt", "language", "release_primary", "release_secondary",
                           "primary_intent", "secondary_intent", "reasoning", "status", "error"]
    by_id = {r["conv_id"]: r for r in out.iter_rows(named=True)}
    assert set(by_id) == {f"c{i}" for i in range(5)}
    assert by_id["c0"]["primary_intent"] == "Factual Lookup" and by_id["c0"]["prompt"] == "who is X"
    assert by_id["c3"]["primary_intent"] == "Guidance" and by_id["c3"]["status"] == "ok"
    assert by_id["c1"]["status"] == intents.SKIPPED and by_id["c1"]["error"] == "skipped: moderation placeholder"
    assert by_id["c2"]["error"] == by_id["c4"]["error"] == "skipped: no user prompt"
    assert by_id["c2"]["primary_intent"] is None
    assert (out["status"] == intents.SKIPPED).sum() == 3
    agree = intents.sample_agreement(out.filter(pl.col("status") == "ok"))
    assert agree.n == 2 and agree.accuracy_primary == 1.0
