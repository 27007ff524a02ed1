"""DR-Arena Examiner and agents end to end against the local chat-completions server, with scripted verdicts."""

from __future__ import annotations

import json
import re

import pytest
from fake_openai_server import FakeOpenAIServer

from analysis_lib import llm
from analysis_lib.dr_arena import examiner as ex
from analysis_lib.dr_arena import match_log as ml


def node(title, *children):
    return {"url": "u", "domain": "x.org", "title": title, "description": f"about {title}",
            "content": f"text of {title}",
            "children": list(children)}


# root -> hub -> [leaf1, leaf2 -> [deep]]
TREE = node("root", node("hub", node("leaf1"), node("leaf2", node("deep"))))

# round -> judge reply: a high tie (pressure test), B better with A failing WIDE (width + 1; its first reply, a
# tie without quality, is re-asked), B much better with A failing DEEP (gap 3: mercy rule).
VERDICTS = {
    1: {"verdict": "TIE", "tie_quality": "high", "failure_type": None, "rationale": "both fine"},
    2: {"verdict": "B_BETTER", "tie_quality": None, "failure_type": "WIDE", "rationale": "A missed data"},
    3: {"verdict": "B_MUCH_BETTER", "tie_quality": None, "failure_type": "DEEP", "rationale": "A wrong entity"},
}


class Script:
    def __init__(self):
        self.questions = 0
        self.bad_judge_sent = False

    def __call__(self, payload):
        text = payload["messages"][-1]["content"]
        if "You are the Examiner of DR-Arena, an arena" in text:
            self.questions += 1
            depth = re.search(r"\(depth (\d+)\)", text).group(1)
            width = re.search(r"aggregating facts from (\d+) sibling", text).group(1)
            return json.dumps({"question": f"Q{self.questions} d{depth} w{width}", "checklist_depth": ["entity"],
                               "checklist_width": ["fact 1", "fact 2"], "rationale": "deep and wide"})
        if "acting as a judge" in text:
            n = int(re.search(r"Task:\nQ(\d+)", text).group(1))
            if n == 2 and not self.bad_judge_sent:
                self.bad_judge_sent = True
                return json.dumps({"verdict": "TIE", "rationale": "forgot the quality"})
            return json.dumps(VERDICTS[n])
        return f"answer by {payload['model']} to: {text.splitlines()[-1]}"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for name in (llm.BASE_URL_ENV, llm.API_KEY_ENV, llm.MODEL_ENV, llm.OFFLINE_ENV, llm.CACHE_ENV):
        monkeypatch.delenv(name, raising=False)


def test_llm_match_end_to_end_writes_a_valid_log_and_resumes_from_cache(tmp_path):
    script = Script()
    with FakeOpenAIServer(script) as srv:
        client = llm.LLMClient(base_url=srv.base_url, model="examiner-x", cache_dir=tmp_path / "cache",
                               progress=False, backoff_base=0.01)
        log = tmp_path / "logs" / "m.jsonl"
        m = ex.play_llm_match(client, TREE, "tree_x", "agent-a", "agent-b", log_path=log, seed=1)
        assert m.failed is None
        rounds = ml.load_match_logs(log)
        # round 1 at the start state (2, 2); high tie -> pressure test -> (3, 3); B better, A failed WIDE -> (3, 4);
        # B much better -> gap 3 -> mercy rule
        assert rounds["round"].to_list() == [1, 2, 3]
        assert list(zip(rounds["depth"], rounds["width"], strict=True)) == [(2, 2), (3, 3), (3, 4)]
        assert rounds["verdict"].to_list() == ["TIE", "B_BETTER", "B_MUCH_BETTER"]
        assert rounds["tie_quality"].to_list() == ["high", None, None]
        assert rounds["failure_type"].to_list() == [None, "WIDE", "DEEP"]
        assert rounds["score_b"].to_list() == [0.0, 1.0, 3.0] and rounds["stop"].to_list()[-1] == "SCORE_GAP"
        assert rounds["question"][0].startswith("Q1 d2 w2")
        # both agents were asked under their own model names, the examiner under its own
        reqs = srv.chat_requests()
        assert {r["model"] for r in reqs} == {"examiner-x", "agent-a", "agent-b"}
        judge_reqs = [r for r in reqs if "acting as a judge" in r["messages"][-1]["content"]]
        assert len(judge_reqs) == 4  # round 2's malformed verdict was asked again
        assert judge_reqs[0]["response_format"]["json_schema"]["schema"]["properties"]["verdict"]["enum"] == list(
            ml.VERDICT_CODES)
        assert rounds["answer_a_id"][0] != rounds["answer_b_id"][0]
        n = srv.n_requests
        # rerun: every step is served from the cache, the same log comes out
        again = ex.play_llm_match(client, TREE, "tree_x", "agent-a", "agent-b", log_path=log, seed=1)
        assert srv.n_requests == n and again.records == m.records


def test_no_endpoint_gives_a_not_run_failure(tmp_path):
    client = llm.LLMClient(cache_dir=tmp_path / "cache", progress=False)
    assert not client.available
    m = ex.play_llm_match(client, TREE, "tree_x", "a", "b")
    assert m.records == [] and "question generation failed" in m.failed


def test_task_context_chain_and_sibling_pool():
    ctx = ex.task_context(TREE, (0, 1), 3)
    assert ctx["LOGIC_CHAIN"].splitlines()[0].startswith("1. root") and "3. leaf2" in ctx["LOGIC_CHAIN"]
    # siblings of leaf2 (leaf1, leaf2) then leaf2's child fill the width of 3
    assert [line.split(":")[0] for line in ctx["SIBLINGS"].splitlines() if line.startswith("- ")] == [
        "- leaf1", "- leaf2", "- deep"]
    assert (ctx["DEPTH"], ctx["WIDTH"], ctx["ANSWER_WORDS"]) == ("3", "3", "250-350")


def test_llm_tournament_over_scripted_agents(tmp_path):
    def responder(payload):
        text = payload["messages"][-1]["content"]
        if "You are the Examiner of DR-Arena, an arena" in text:
            return json.dumps({"question": "Q", "checklist_depth": ["e"], "checklist_width": ["f"]})
        if "acting as a judge" in text:
            a = re.search(r"Answer A:\nanswer by (\S+)", text).group(1)
            b = re.search(r"Answer B:\nanswer by (\S+)", text).group(1)
            return json.dumps({"verdict": "A_MUCH_BETTER" if a > b else "B_MUCH_BETTER", "failure_type": "BOTH"})
        return f"answer by {payload['model']}"

    with FakeOpenAIServer(responder) as srv:
        client = llm.LLMClient(base_url=srv.base_url, cache_dir=tmp_path / "c", progress=False)
        rounds, plan, failures = ex.llm_tournament(client, {"t1": TREE}, ["m1", "m2", "m3"], tmp_path / "logs",
                                                   n_rounds=2)
    assert failures == []
    assert plan.height == 4 and plan["model_b"].null_count() == 2  # 3 models: one bye per round
    loaded = ml.load_match_logs(tmp_path / "logs")
    assert loaded.height == rounds.height == 2  # each match ends in round 1 by the mercy rule
    assert set(ml.matches(loaded)["winner"]) <= {"model_a", "model_b"}
