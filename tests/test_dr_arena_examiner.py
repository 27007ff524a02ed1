"""DR-Arena Examiner and agents (DR-X): the framework-prompt extraction, the framework's arithmetic around its
prompts, and whole matches against the local chat-completions server with scripted verdicts in the framework's
reply format. The prompts come from stand-ins of the framework's source files (tests/dr_framework_standin.py)."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from dr_framework_standin import AGENTS_SOURCE, EXAMINER_SOURCE, prompts
from fake_openai_server import FakeOpenAIServer

from analysis_lib import fetch, llm
from analysis_lib.dr_arena import examiner as ex
from analysis_lib.dr_arena import framework_prompts as fp
from analysis_lib.dr_arena import match_log as ml


def node(title, *children, content=None):
    return {"url": f"https://x.org/{title}", "domain": "x.org", "title": title, "description": f"about {title}",
            "content": f"text of {title}" if content is None else content, "children": list(children)}


# root -> hub -> [leaf1, leaf2 -> [deep]]
TREE = node("root", node("hub", node("leaf1"), node("leaf2", node("deep"))))


# ---------------------------------------------------------------------------------------- prompt extraction


def test_extraction_keeps_the_literal_text_and_names_every_interpolation():
    p = prompts()
    assert p.examiner_system == "STAND-IN examiner." and p.agent_system == "STAND-IN agent."
    assert p.question.slots == {"ROOT_TOPIC", "REASONING", "TARGETS", "N_TARGETS", "WORD_LIMIT"}
    assert p.judge.slots == {"QUESTION", "MAX_WORDS", "CHECKLIST_WIDTH", "CHECKLIST_DEPTH", "CITATIONS_A",
                             "CITATIONS_B", "ANSWER_A", "ANSWER_B"}
    text = p.agent.render(HISTORY="", QUESTION="Which?", WORD_LIMIT="Answer length: 200-300 words.")
    # the f-string's text exactly, indentation included; a value is inserted once, never re-scanned
    assert text == ("\n        STAND-IN AGENT \n        Constraint: Answer length: 200-300 words.\n"
                    "        Current Question: Which?")
    judge = p.judge.render(QUESTION="{ANSWER_A}", MAX_WORDS=300, CHECKLIST_WIDTH="[]", CHECKLIST_DEPTH="[]",
                           CITATIONS_A=1, CITATIONS_B=2, ANSWER_A="a", ANSWER_B="b")
    assert "Query: {ANSWER_A}\n" in judge and '{"verdict": "[[A_BETTER]]"' in judge  # {{ }} of the f-string
    with pytest.raises(KeyError, match="missing"):
        p.agent.render(QUESTION="q", WORD_LIMIT="w")


def test_a_changed_framework_file_is_refused():
    with pytest.raises(fp.FrameworkSourceError, match=r"unknown interpolation \{c_a \+ 1\}"):
        fp.parse_sources(EXAMINER_SOURCE.replace("{c_a}", "{c_a + 1}"), AGENTS_SOURCE)
    with pytest.raises(fp.FrameworkSourceError, match="no longer uses"):
        fp.parse_sources(EXAMINER_SOURCE.replace("{max_limit}", "300"), AGENTS_SOURCE)
    with pytest.raises(fp.FrameworkSourceError, match="no method judge_answers"):
        fp.parse_sources(EXAMINER_SOURCE.replace("def judge_answers", "def judge"), AGENTS_SOURCE)
    with pytest.raises(fp.FrameworkSourceError, match="no string system_prompt"):
        fp.parse_sources(EXAMINER_SOURCE, AGENTS_SOURCE.replace("self.system_prompt", "self.prompt"))


def _manifest(tmp_path, url_base):
    rows = [",".join(fetch.MANIFEST_COLUMNS)]
    for rid, path in ((fp.EXAMINER_ID, "core/examiner.py"), (fp.AGENTS_ID, "core/agents.py")):
        rows.append(f"{rid},{url_base}/{path},,,none,fw/{path},DR-X,")
    manifest = tmp_path / "manifest.csv"
    manifest.write_text("\n".join(rows) + "\n")
    return manifest


def test_load_reads_the_files_through_the_data_manifest(tmp_path):
    mirror = tmp_path / "mirror" / "fw" / "core"
    mirror.mkdir(parents=True)
    (mirror / "examiner.py").write_text(EXAMINER_SOURCE)
    (mirror / "agents.py").write_text(AGENTS_SOURCE)
    manifest = _manifest(tmp_path, "http://127.0.0.1:9")
    p = fp.load(cache_dir=tmp_path / "cache", mirror=tmp_path / "mirror", manifest=manifest)
    assert p.question == prompts().question and p.agent_system == "STAND-IN agent."
    assert "examiner.py sha256 " in p.source and "agents.py sha256 " in p.source
    # without the files (and a URL that refuses connections): a one-line not-run reason naming the manifest ids
    got, why = fp.try_load(cache_dir=tmp_path / "c2", mirror=tmp_path / "empty", manifest=manifest)
    assert got is None and fp.EXAMINER_ID in why and "\n" not in why


def test_repository_manifest_pins_the_framework_files_by_commit():
    entries = fetch.read_manifest()
    for rid, path in ((fp.EXAMINER_ID, "core/examiner.py"), (fp.AGENTS_ID, "core/agents.py")):
        assert re.search(rf"/[0-9a-f]{{40}}/{path}$", entries[rid].url), entries[rid].url
        assert entries[rid].analyses == ("DR-X",)


# ------------------------------------------------------------------------- the framework's arithmetic


def test_word_limits_follow_the_framework_formula():
    # min(100 + 30 w + 20 d, 300) to +100, capped at 400 (hand-computed)
    assert ex.word_limits(2, 2) == (200, 300)
    assert ex.word_limits(3, 4) == (280, 380)
    assert ex.word_limits(1, 2) == (180, 280)
    assert ex.word_limits(5, 5) == (300, 400)
    assert ex.word_limit_instruction(2, 2) == "Answer length: 200-300 words."


def test_citation_count_counts_reference_lines_after_the_heading():
    text = "Fact [1] and [2].\n\n## references\n[1] https://a.org\n[2] https://b.org\n3. Book\n- not one\n"
    assert ex.citation_count(text) == 3
    assert ex.citation_count("Fact [1].\n[1] https://a.org") == 0  # no heading: the framework counts none
    assert ex.citation_count("## Sources\n1. a\n2. b") == 2
    assert ex.citation_count(None) == 0


def test_judge_replies_are_normalised_to_the_log_contract():
    assert ex.normalise_verdict({"verdict": "[[B_MUCH_BETTER]]", "tie_quality": "N/A",
                                 "loser_failure_type": "deep", "reasoning": "r"}) == {
        "verdict": "B_MUCH_BETTER", "tie_quality": None, "failure_type": "DEEP", "rationale": "r"}
    assert ex.normalise_verdict({"verdict": "[[Tie]]", "tie_quality": "LOW", "loser_failure_type": "NONE"}) == {
        "verdict": "TIE", "tie_quality": "low", "failure_type": None, "rationale": ""}


def test_context_nodes_follow_the_framework_selection():
    # hub's children: a (active), b, a second "b" (same title), an empty page, c
    empty = {"url": "https://x.org/empty", "title": "", "description": None, "content": None, "children": []}
    b2 = node("b")
    b2["url"] = "https://x.org/b-2"
    tree = node("Root page - Wikipedia", node("hub", node("a"), node("b"), b2, empty, node("c")))
    reasoning, targets = ex.context_nodes(tree, (0, 0), 3)
    assert [n["title"] for n in reasoning] == ["Root page - Wikipedia", "hub"]
    assert [n["title"] for n in targets] == ["a", "b", "c"]
    _, targets = ex.context_nodes(tree, (0, 0), 10)  # only two siblings qualify
    assert [n["title"] for n in targets] == ["a", "b", "c"]
    _, drawn = ex.context_nodes(tree, (0, 0), 2, np.random.default_rng(0))
    assert drawn[0]["title"] == "a" and len(drawn) == 2 and drawn[1]["title"] in {"b", "c"}
    reasoning, targets = ex.context_nodes(tree, (0,), 2)  # the root's child: the root is the chain
    assert [n["title"] for n in reasoning] == ["Root page - Wikipedia"] and [n["title"] for n in targets] == ["hub"]
    ctx = ex.task_context(tree, (0, 0), 3)
    assert ctx["ROOT_TOPIC"] == "Root page" and ctx["N_TARGETS"] == 3
    assert ctx["REASONING"] == ("[Deep Logic - Ancestor 0]: text of Root page - Wikipedia\n"
                                "[Deep Logic - Ancestor 1]: text of hub")
    assert ctx["TARGETS"].splitlines()[2] == "[Wide Logic - Target 2]: text of c"
    assert ctx["WORD_LIMIT"] == "Answer length: 250-350 words."  # depth 3, width 3


# ------------------------------------------------------------------------------------------ whole matches

# round -> judge reply in the framework's format: a high tie (pressure test), B better with A failing WIDE (width
# + 1; its first reply, a tie without quality, is re-asked), B much better with A failing DEEP (gap 3: mercy rule)
VERDICTS = {
    1: {"verdict": "[[Tie]]", "tie_quality": "HIGH", "loser_failure_type": "NONE", "reasoning": "both fine"},
    2: {"verdict": "[[B_BETTER]]", "tie_quality": "N/A", "loser_failure_type": "WIDE", "reasoning": "A missed data"},
    3: {"verdict": "[[B_MUCH_BETTER]]", "tie_quality": "N/A", "loser_failure_type": "DEEP", "reasoning": "wrong"},
}
ANSWERS = {"agent-a": "A's answer [1].\n\n## References\n[1] https://a.org",
           "agent-b": "B's answer [1][2].\n\n## References\n[1] https://b.org\n[2] https://c.org"}


class Script:
    def __init__(self):
        self.questions = 0
        self.bad_judge_sent = False

    def __call__(self, payload):
        text = payload["messages"][-1]["content"]
        if "STAND-IN TASK GENERATION" in text:
            self.questions += 1
            limit = re.search(r'"word_limit_instruction": "([^"]*)"', text).group(1)
            n = re.search(r"Use all (\d+) targets", text).group(1)
            return "Here is the task:\n" + json.dumps(
                {"question": f"Q{self.questions} | {limit} | {n} targets", "word_limit_instruction": limit + " (echo)",
                 "checklist_width": ["fact 1", "fact 2"], "checklist_depth": ["entity"], "rationale": "deep, wide"})
        if "STAND-IN JUDGE" in text:
            n = int(re.search(r"Query: Q(\d+)", text).group(1))
            if n == 2 and not self.bad_judge_sent:
                self.bad_judge_sent = True
                return json.dumps({"verdict": "[[Tie]]", "tie_quality": "N/A", "reasoning": "forgot the quality"})
            return "Verdict follows.\n```json\n" + json.dumps(VERDICTS[n]) + "\n```"
        return ANSWERS[payload["model"]]


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for name in llm.settings.ENV_VARS:
        monkeypatch.delenv(name, raising=False)


def test_llm_match_end_to_end_writes_a_valid_log_and_resumes_from_cache(tmp_path):
    script = Script()
    with FakeOpenAIServer(script) as srv:
        client = llm.LLMClient(base_url=srv.base_url, model="examiner-x", cache_dir=tmp_path / "cache",
                               progress=False, backoff_base=0.01)
        log = tmp_path / "logs" / "m.jsonl"
        m = ex.play_llm_match(client, prompts(), TREE, "tree_x", "agent-a", "agent-b", log_path=log, seed=1)
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
        # word limits min(100 + 30 w + 20 d, 300) (+100); targets: hub alone, then the two leaves
        assert rounds["question"].to_list() == ["Q1 | Answer length: 200-300 words. | 1 targets",
                                                "Q2 | Answer length: 250-350 words. | 2 targets",
                                                "Q3 | Answer length: 280-380 words. | 2 targets"]
        reqs = srv.chat_requests()
        assert {r["model"] for r in reqs} == {"examiner-x", "agent-a", "agent-b"}
        assert all("response_format" not in r for r in reqs)  # free-text replies, as in the framework
        by_step = {"STAND-IN TASK GENERATION": (0.7, "STAND-IN examiner."), "STAND-IN JUDGE": (0.1,
                   "STAND-IN examiner."), "STAND-IN AGENT": (0.2, "STAND-IN agent.")}
        for r in reqs:
            step = next(k for k in by_step if k in r["messages"][-1]["content"])
            assert (r["temperature"], r["messages"][0]["content"]) == by_step[step] and r["max_tokens"] == 4096
        judge_reqs = [r["messages"][-1]["content"] for r in reqs if "STAND-IN JUDGE" in r["messages"][-1]["content"]]
        assert len(judge_reqs) == 4  # round 2's tie without quality was asked again
        assert "Maximum 300 words." in judge_reqs[0] and "Maximum 380 words." in judge_reqs[-1]
        assert "(Citation Count: 1)" in judge_reqs[0] and "(Citation Count: 2)" in judge_reqs[0]
        assert '[WIDTH]: ["fact 1", "fact 2"]' in judge_reqs[0]
        agent_req = next(r["messages"][-1]["content"] for r in reqs if r["model"] == "agent-a")
        assert "Constraint: Answer length: 200-300 words. (echo)" in agent_req  # the Examiner's instruction
        assert rounds["answer_a_id"][0] != rounds["answer_b_id"][0]
        n = srv.n_requests
        # rerun: every step is served from the cache, the same log comes out
        again = ex.play_llm_match(client, prompts(), TREE, "tree_x", "agent-a", "agent-b", log_path=log, seed=1)
        assert srv.n_requests == n and again.records == m.records


def test_no_endpoint_gives_a_not_run_failure(tmp_path):
    client = llm.LLMClient(cache_dir=tmp_path / "cache", progress=False)
    assert not client.available
    m = ex.play_llm_match(client, prompts(), TREE, "tree_x", "a", "b")
    assert m.records == [] and "question generation failed" in m.failed


def test_llm_tournament_over_scripted_agents(tmp_path):
    def responder(payload):
        text = payload["messages"][-1]["content"]
        if "STAND-IN TASK GENERATION" in text:
            return json.dumps({"question": "Q", "checklist_depth": ["e"], "checklist_width": ["f"]})
        if "STAND-IN JUDGE" in text:
            a = re.search(r"=== Agent A ===.*\n\s*answer by (\S+)", text).group(1)
            b = re.search(r"=== Agent B ===.*\n\s*answer by (\S+)", text).group(1)
            verdict = "[[A_MUCH_BETTER]]" if a > b else "[[B_MUCH_BETTER]]"
            return json.dumps({"verdict": verdict, "tie_quality": "N/A", "loser_failure_type": "BOTH"})
        return f"answer by {payload['model']}"

    with FakeOpenAIServer(responder) as srv:
        client = llm.LLMClient(base_url=srv.base_url, cache_dir=tmp_path / "c", progress=False)
        rounds, plan, failures = ex.llm_tournament(client, prompts(), {"t1": TREE}, ["m1", "m2", "m3"],
                                                   tmp_path / "logs", n_rounds=2)
    assert failures == []
    assert plan.height == 4 and plan["model_b"].null_count() == 2  # 3 models: one bye per round
    loaded = ml.load_match_logs(tmp_path / "logs")
    assert loaded.height == rounds.height == 2  # each match ends in round 1 by the mercy rule
    winners = ml.matches(loaded)
    # the alphabetically later model wins every match
    assert all((w == "model_a") == (a > b) for w, a, b in zip(winners["winner"], winners["model_a"],
                                                             winners["model_b"], strict=True))
