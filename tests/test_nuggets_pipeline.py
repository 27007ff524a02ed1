"""The AutoNuggetizer pipeline end to end against the local chat-completions server, with hand-computed scores."""

import ast
import json
import re

import polars as pl
import pytest
from fake_openai_server import FakeOpenAIServer

from analysis_lib import llm
from analysis_lib import nuggets as ng
from analysis_lib.llm import LLMClient
from analysis_lib.nuggets.pipeline import BattleInput, run_pipeline

FACTS = {  # nuggets the scripted model "creates" for each query, with their importance
    "capital of france": [("Paris is the capital", "vital"), ("Paris is on the Seine", "okay"),
                          ("Paris has 2 million people", "vital")],
    "tallest mountain": [("Everest is the tallest", "vital"), ("Everest is 8849 m", "okay")],
    "broken query": [("x", "vital")],
}


def _list_after(text: str, label: str) -> list[str]:
    return ast.literal_eval(re.search(label + r": (\[.*?\])\n", text, flags=re.DOTALL).group(1))


def responder(payload):
    system, user = payload["messages"][0]["content"], payload["messages"][1]["content"]
    query = re.search(r"Search Query: (.*)\n", user).group(1)
    if system.startswith("You are NuggetizeLLM"):
        return repr([t for t, _ in FACTS[query]])
    if system.startswith("You are NuggetizeScoreLLM"):
        if query == "broken query":
            return "not a list"
        imp = dict(FACTS[query])
        return repr([imp[t] for t in _list_after(user, "Nugget List")])
    passage = re.search(r"Passage: (.*)\nNugget List", user, flags=re.DOTALL).group(1)
    # support: the nugget's text is in the response; partial: its first word is; else not
    return json.dumps(["support" if t in passage else "partial_support" if t.split()[0] in passage else "not_support"
                       for t in _list_after(user, "Nugget List")])


BATTLES = [
    BattleInput("b1", "capital of france", "model_b", answer_a="Paris is the capital.",
                answer_b="Paris is the capital. Paris is on the Seine. Paris has 2 million people.",
                sources=["doc one", "doc two"], language="English"),
    BattleInput("b2", "tallest mountain", "model_a", answer_a="Everest is the tallest, Everest is 8849 m",
                answer_b="K2 is high", sources=["doc"], language="English"),
    BattleInput("b3", "broken query", "tie", answer_a="x", answer_b="y", sources=["doc"]),
]


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for name in (llm.BASE_URL_ENV, llm.API_KEY_ENV, llm.MODEL_ENV, llm.OFFLINE_ENV, llm.CACHE_ENV):
        monkeypatch.delenv(name, raising=False)


def test_pipeline_end_to_end_hand_scores(tmp_path):
    with FakeOpenAIServer(responder) as srv:
        client = LLMClient(base_url=srv.base_url, model="local", cache_dir=tmp_path, progress=False,
                           backoff_base=0.01, max_parse_retries=0)
        result = run_pipeline(BATTLES, client)
        n_first = srv.n_requests
        again = run_pipeline(BATTLES, client)  # all cached: no new request
        assert srv.n_requests == n_first
    scores = ng.battle_scores(result.records).sort("qid")
    # b1: a supports "Paris is the capital" (1), partial for the two other Paris nuggets (0.5 each) -> 2/3
    #     b supports all three -> 1.0 ; diff = 1/3 -> model_b
    # b2: a supports both -> 1.0 ; b supports none ("K2" has neither "Everest") -> 0.0
    assert scores["qid"].to_list() == ["b1", "b2"]
    assert scores["all_a"].to_list() == pytest.approx([2 / 3, 1.0])
    assert scores["all_b"].to_list() == pytest.approx([1.0, 0.0])
    assert scores["vital_a"].to_list() == pytest.approx([0.75, 1.0])
    assert scores["strict_all_a"].to_list() == pytest.approx([1 / 3, 1.0])
    assert ng.preferences(scores).tolist() == ["model_b", "model_a"]
    # b3's importance reply is not a list: failed, excluded and counted
    assert result.records.excluded["battles with a failed nuggetizer step (importance or assignment 'failed')"] == 1
    assert result.calls["ng_importance"]["failed"] == 1
    assert again.records.nuggets.equals(result.records.nuggets)
    # the records carry the responses and the chunks the nuggets came from (NG-F8 reads them)
    sides = result.records.sides.sort("qid", "side")
    assert sides.filter(pl.col("qid") == "b1")["chunks"].to_list() == [["doc one", "doc two"]] * 2
    assert sides["answer_text"][0] == "Paris is the capital."


def test_responses_only_uses_the_answers_as_documents(tmp_path):
    seen = []

    def spy(payload):
        seen.append(payload["messages"][1]["content"])
        return responder(payload)

    with FakeOpenAIServer(spy) as srv:
        client = LLMClient(base_url=srv.base_url, model="local", cache_dir=tmp_path, progress=False,
                           max_parse_retries=0)
        run_pipeline(BATTLES[:1], client, variant="responses_only")
    create = [s for s in seen if "Initial Nugget List" in s]
    assert len(create) == 1 and "Paris has 2 million people." in create[0] and "doc one" not in create[0]


def test_without_endpoint_nothing_runs(tmp_path):
    client = LLMClient(cache_dir=tmp_path, progress=False)
    result = run_pipeline(BATTLES[:1], client)
    assert result.records.n_battles == 0 and result.calls["ng_create_with_sources"] == {"not run": 1}
