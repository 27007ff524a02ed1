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
    for name in llm.settings.ENV_VARS:
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


# --- more than one window: 23 documents, 30 nuggets (windows of 10) and the 30-nugget cap ----------------------

DOCS = [f"document d{k:02d} about mountains" for k in range(23)]
ANSWER_A = " ".join(f"n{k:02d}a" for k in range(15))  # every 'a' nugget the model keeps (vital)
ANSWER_B = " ".join(f"n{k:02d}{s}" for k in range(10, 15) for s in "ab")  # both nuggets of d10 … d14


def many_docs_responder(payload):
    """Creation adds two nuggets per document of the window to the list it is given (so the list outgrows 30);
    importance: 'a' nuggets vital, 'b' okay; assignment: support when the nugget's text is in the passage."""
    system, user = payload["messages"][0]["content"], payload["messages"][1]["content"]
    if system.startswith("You are NuggetizeLLM"):
        docs = re.findall(r"^\[\d+\] document d(\d\d) ", user, flags=re.MULTILINE)
        current = _list_after(user, "Initial Nugget List")
        return repr(current + [f"n{d}{s}" for d in docs for s in "ab"])
    nuggets = _list_after(user, "Nugget List")
    if system.startswith("You are NuggetizeScoreLLM"):
        return repr(["vital" if t.endswith("a") else "okay" for t in nuggets])
    passage = re.search(r"Passage: (.*)\nNugget List", user, flags=re.DOTALL).group(1)
    return json.dumps(["support" if t in passage.split() else "not_support" for t in nuggets])


def test_documents_and_nuggets_go_in_windows_of_ten_and_the_list_is_capped_at_30(tmp_path):
    seen: list[dict] = []

    def spy(payload):
        seen.append(payload)
        return many_docs_responder(payload)

    battle = BattleInput("m1", "many documents", "model_a", answer_a=ANSWER_A, answer_b=ANSWER_B, sources=DOCS)
    with FakeOpenAIServer(spy) as srv:
        client = LLMClient(base_url=srv.base_url, model="local", cache_dir=tmp_path, progress=False,
                           max_parse_retries=0)
        result = run_pipeline([battle], client)
    by_step = {name: [p["messages"][1]["content"] for p in seen if p["messages"][0]["content"].startswith(name)]
               for name in ("You are NuggetizeLLM", "You are NuggetizeScoreLLM", "You are NuggetizeAssignerLLM")}
    create, score, assign = by_step.values()
    # creation: one request per window of 10 documents (0-9, 10-19, 20-22), each given the list so far
    assert [re.findall(r"^\[\d+\] document d(\d\d)", c, flags=re.MULTILINE) for c in create] == [
        [f"{k:02d}" for k in range(0, 10)], [f"{k:02d}" for k in range(10, 20)], [f"{k:02d}" for k in range(20, 23)]]
    # the second round returns 40 nuggets: the pipeline keeps the first 30, and the third round starts from them
    assert [len(_list_after(c, "Initial Nugget List")) for c in create] == [0, 20, 30]
    kept = [f"n{k:02d}{s}" for k in range(15) for s in "ab"]
    # importance and assignment: the 30 nuggets in windows of 10 (3 + 3 per side; the requests run in parallel)
    assert sorted(_list_after(s, "Nugget List") for s in score) == [kept[0:10], kept[10:20], kept[20:30]]
    assert sorted(tuple(_list_after(a, "Nugget List")) for a in assign) == sorted(
        [tuple(kept[k:k + 10]) for k in (0, 10, 20)] * 2)
    nug = result.records.nuggets.sort("side", "position")
    assert nug.filter(pl.col("side") == "a")["text"].to_list() == kept
    assert nug["importance"].to_list() == ["vital" if t.endswith("a") else "okay" for t in kept] * 2
    # each window's labels land on its own nuggets: side a supports every 'a' nugget, side b those of d10 … d14
    expected_a = ["support" if t.endswith("a") else "not_support" for t in kept]
    expected_b = ["support" if int(t[1:3]) >= 10 else "not_support" for t in kept]
    assert nug["assignment"].to_list() == expected_a + expected_b
    scores = ng.battle_scores(result.records).row(0, named=True)
    assert (scores["n_nuggets"], scores["n_vital"], scores["capped"]) == (30, 15, False)
    assert (scores["all_a"], scores["vital_a"]) == pytest.approx((0.5, 1.0))
    assert (scores["all_b"], scores["vital_b"]) == pytest.approx((10 / 30, 5 / 15))


class _Recorder:
    """Stands in for nuggetizer's LLM handler (the public ``creator_llm`` / ``scorer_llm`` / ``assigner_llm``
    attributes): keeps each prompt and answers from a list."""

    def __init__(self, replies):
        self.replies, self.prompts = list(replies), []

    def run(self, messages, temperature=0):
        self.prompts.append(messages)
        return self.replies.pop(0), 0


def test_the_prompts_equal_what_nuggetizer_sends():
    """Our copies of nuggetizer 0.0.5's prompts equal what its public ``create`` and ``assign`` send (captured by
    stand-in handlers, so no private method is called here either)."""
    nz_models = pytest.importorskip("nuggetizer.models.nuggetizer")
    nzt = pytest.importorskip("nuggetizer.core.types")
    from analysis_lib.nuggets import nuggetizer_prompts as ours

    nz = nz_models.Nuggetizer(api_keys="unused")  # builds OpenAI clients, sends nothing
    docs = [nzt.Document(str(k), f"document {k} about Paris") for k in range(13)]
    request = nzt.Request(nzt.Query("q1", "capital of france"), docs)
    first, second = ["Paris is the capital"], ["Paris is the capital", "Paris is on the Seine"]
    nz.creator_llm = _Recorder([repr(first), repr(second)])
    nz.scorer_llm = _Recorder([repr(["vital", "okay"])])
    created = nz.create(request)
    assert nz.creator_llm.prompts == [ours.create_nugget_prompt(request, 0, 10, []),
                                      ours.create_nugget_prompt(request, 10, 20, first)]
    assert nz.scorer_llm.prompts == [ours.create_score_prompt("capital of france",
                                                              [nzt.Nugget(t) for t in second])]
    nz.assigner_llm = _Recorder([repr(["support", "not_support"])])
    nz.assign("capital of france", "Paris is the capital.", created)
    assert nz.assigner_llm.prompts == [ours.create_assign_prompt("capital of france", "Paris is the capital.",
                                                                 created)]
    two = nzt.NuggetAssignMode.SUPPORT_GRADE_2
    nz.assigner_mode = two
    nz.assigner_llm = _Recorder([repr(["support", "not_support"])])
    nz.assign("capital of france", "Paris.", created)
    assert nz.assigner_llm.prompts == [ours.create_assign_prompt("capital of france", "Paris.", created, two)]


def test_the_pipeline_sends_the_public_functions_prompts(tmp_path):
    from analysis_lib.nuggets.nuggetizer_prompts import prompt_functions

    nzt = pytest.importorskip("nuggetizer.core.types")
    fns = prompt_functions()
    with FakeOpenAIServer(responder) as srv:
        client = LLMClient(base_url=srv.base_url, model="local", cache_dir=tmp_path, progress=False,
                           backoff_base=0.01, max_parse_retries=0)
        run_pipeline(BATTLES[:1], client)
        sent = srv.chat_requests()[0]["messages"]
    b = BATTLES[0]
    request = nzt.Request(nzt.Query(b.qid, b.query), [nzt.Document(str(k), s) for k, s in enumerate(b.sources)])
    assert sent == fns.create_nugget_prompt(request, 0, 10, [], creator_max_nuggets=30)
