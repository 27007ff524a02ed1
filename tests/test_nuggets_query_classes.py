"""NG-Q (the authors' Researchy-Questions classification through the LLM layer) and NG-C's URL count."""

import re

import matplotlib.pyplot as plt
import polars as pl
import pytest
from fake_openai_server import FakeOpenAIServer
from raw_factory import conversation, make_raw

from analysis_lib import llm
from analysis_lib.llm import LLMClient
from analysis_lib.nuggets import battles as ng_battles
from analysis_lib.nuggets import llm_analyses as lt
from analysis_lib.nuggets import plots

ATTRS = ("ambiguous", "incompleteness", "assumptive", "multi-faceted", "knowledge-intensive", "subjective",
         "reasoning-intensive", "harmful")


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for name in llm.settings.ENV_VARS:
        monkeypatch.delenv(name, raising=False)


def scores(**given):
    return {a: given.get(a.replace("-", "_"), 0) for a in ATTRS}


# ------------------------------------------------------------------------------------------- the class rule


def test_the_highest_score_at_seven_or_more_gives_the_class():
    assert lt.query_classes(scores(subjective=7, ambiguous=3)) == ["subjective"]
    assert lt.query_classes(scores(harmful=10, subjective=9)) == ["harmful"]


def test_ties_at_the_top_give_every_tied_class():
    got = lt.query_classes(scores(ambiguous=8, knowledge_intensive=8, subjective=7))
    assert got == ["ambiguous", "knowledge-intensive"]
    assert lt.query_classes({a: 9 for a in ATTRS}) == list(ATTRS)


def test_all_below_seven_gives_no_class_and_the_threshold_is_inclusive():
    assert lt.query_classes(scores(ambiguous=6, subjective=6)) == []
    assert lt.query_classes({a: 0 for a in ATTRS}) == []
    assert lt.query_classes(scores(assumptive=7)) == ["assumptive"]
    assert lt.query_classes(scores(assumptive=6), threshold=6) == ["assumptive"]


def test_the_prompt_is_the_authors_with_the_question_filled_in():
    task = lt.query_class_task()
    text = task.build("is capitalism better than socialism")[0]["content"]
    assert text.startswith("Given the question: is capitalism better than socialism\nInstructions: Please output")
    for k, a in enumerate(ATTRS, start=1):
        assert f'{k}. "{a}" : Int 0-10' in text
    assert text.endswith("Make sure to output only the valid python dictionary without comments or other "
                         "extraneous output.")
    assert task.params == {"temperature": 0.7, "max_completion_tokens": 512}


# ---------------------------------------------------------------------------------------------- the parser


def test_parser_reads_a_python_dict_in_a_fence():
    reply = "```python\n{'ambiguous': 2, 'incompleteness': 0, 'assumptive': 1, 'multi-faceted': 7, " \
            "'knowledge-intensive': 8, 'subjective': 3, 'reasoning-intensive': 6, 'harmful': 0}\n```"
    got = lt.parse_attributes(reply)
    assert got == scores(ambiguous=2, assumptive=1, multi_faceted=7, knowledge_intensive=8, subjective=3,
                         reasoning_intensive=6)
    assert list(got) == list(ATTRS)


@pytest.mark.parametrize("reply, problem", [
    ("not a dict at all", "not a Python literal"),
    ("[1, 2, 3]", "not a dictionary"),
    (str({a: 1 for a in ATTRS[:-1]}), "missing: harmful"),
    (str({**{a: 1 for a in ATTRS}, "funny": 9}), "besides the eight"),
    (str({**{a: 1 for a in ATTRS}, "harmful": 11}), "harmful must be an integer 0-10"),
    (str({**{a: 1 for a in ATTRS}, "ambiguous": -1}), "ambiguous must be"),
    (str({**{a: 1 for a in ATTRS}, "subjective": 7.5}), "subjective must be"),
    (str({**{a: 1 for a in ATTRS}, "harmful": True}), "harmful must be"),
])
def test_parser_refuses_what_is_not_eight_scores_0_to_10(reply, problem):
    with pytest.raises(llm.ReplyError, match=problem):
        lt.parse_attributes(reply)


# -------------------------------------------------------------------------------------- end to end (fake server)


def scorer(payload):
    """Scores from the question's words: 'why' -> reasoning 9; 'best' -> subjective 8; 'cure' -> harmful 8 and
    knowledge 8 (a tie); anything else stays below 7. Replies as a fenced Python dict, as GPT-4.1 often does."""
    q = re.search(r"Given the question: (.*)\nInstructions:", payload["messages"][0]["content"]).group(1)
    s = {a: 2 for a in ATTRS}
    if "why" in q:
        s["reasoning-intensive"] = 9
    if "best" in q:
        s["subjective"] = 8
    if "cure" in q:
        s["harmful"] = s["knowledge-intensive"] = 8
    return "```python\n" + repr(s) + "\n```"


def test_classes_counted_per_battle_with_one_request_per_distinct_query(tmp_path):
    battles = pl.DataFrame({
        "qid": ["b1", "b2", "b3", "b4", "b5", "b6"],
        "query": ["why is the sky blue", "best pizza in town", "why is the sky blue ", "cure for a cold",
                  "hello", "why is the best pizza round"],
    })
    with FakeOpenAIServer(scorer) as srv:
        client = LLMClient(base_url=srv.base_url, model="local", cache_dir=tmp_path, progress=False)
        out = lt.run_query_classes(battles, client)
        assert len(srv.requests) == 5  # b1 and b3 ask the same (stripped) question
        assert {r["temperature"] for r in srv.requests} == {0.7}
        assert {r["max_completion_tokens"] for r in srv.requests} == {512}
    assert out["qid"].to_list() == battles["qid"].to_list()
    assert (out["status"] == "ok").all()
    assert out["classes"].to_list() == [["reasoning-intensive"], ["subjective"], ["reasoning-intensive"],
                                        ["knowledge-intensive", "harmful"], [], ["reasoning-intensive"]]
    counts = dict(lt.class_counts(out).iter_rows())
    assert counts == {"ambiguous": 0, "incompleteness": 0, "assumptive": 0, "multi-faceted": 0,
                      "knowledge-intensive": 1, "subjective": 1, "reasoning-intensive": 3, "harmful": 1}
    hist = lt.rating_histogram(out)
    assert hist.height == 8 * 11
    row = hist.filter((pl.col("attribute") == "reasoning-intensive") & (pl.col("score") == 9))
    assert row["battles"].item() == 3
    assert hist.filter(pl.col("attribute") == "ambiguous")["battles"].sum() == 6


def test_without_an_endpoint_nothing_is_classified_and_the_reason_is_the_clients(tmp_path):
    client = LLMClient(cache_dir=tmp_path, progress=False)
    out = lt.run_query_classes(pl.DataFrame({"qid": ["b1"], "query": ["why"]}), client)
    assert out["status"].to_list() == ["not run"] and out["error"].to_list() == [client.not_run_reason()]
    assert out["classes"].to_list() == [None]
    assert lt.class_counts(out)["battles"].sum() == 0


def test_a_malformed_reply_is_asked_again_then_fails(tmp_path):
    with FakeOpenAIServer(lambda p: "{'ambiguous': 3}") as srv:
        client = LLMClient(base_url=srv.base_url, model="local", cache_dir=tmp_path, progress=False,
                           max_parse_retries=1)
        out = lt.run_query_classes(pl.DataFrame({"qid": ["b1"], "query": ["why"]}), client)
        assert len(srv.requests) == 2
    assert out["status"].item() == "failed" and "attributes missing" in out["error"].item()


# ------------------------------------------------------------------------------------------------------ NG-C


def test_single_turn_urls_of_voted_battles_both_sides_distinct():
    raw = make_raw([
        conversation(conv_id="c1", trace_a=[[["[1]", "https://a.org/x"], ["[2]", "https://b.org/y"]]],
                     trace_b=[[["[1]", "https://a.org/x"]]]),
        conversation(conv_id="c2", winner="tie (bothbad)", trace_a=[[]], trace_b=[[["[1]", "https://c.org/"],
                                                                                   ["[2]"], ["[3]", ""]]]),
        conversation(conv_id="c3", winner="model_b", trace_a=[[]], trace_b=[[]]),  # voted, no URL
        conversation(conv_id="c4", winner=None, trace_a=[[["[1]", "https://novote.org"]]]),  # no vote
        conversation(conv_id="c5", user=["q1", "q2"], answers_a=["a1", "a2"], answers_b=["b1", "b2"],
                     trace_a=[[["[1]", "https://multi.org"]], []]),  # two turns
    ])
    traces = ng_battles.single_turn_urls(raw)
    assert traces.urls == ["https://a.org/x", "https://b.org/y", "https://c.org/"]
    assert (traces.n_urls, traces.battles, traces.with_url, traces.without_url) == (3, 3, 2, 1)
    assert traces.without_url_pct == pytest.approx(100 / 3)


def test_single_turn_urls_read_the_v1_7k_search_results_layout():
    result = pl.Struct({"url": pl.String, "title": pl.String})
    meta = pl.Struct({"conv_id": pl.String,
                      "web_search_trace": pl.List(pl.Struct({"search_results": pl.List(result)}))})
    raw = pl.DataFrame({
        "turn": [1, 1, 1],
        "winner": ["model_a", "model_b", ""],
        "system_a_metadata": [
            {"conv_id": "c1", "web_search_trace": [{"search_results": [{"url": "https://x.org", "title": "t"},
                                                                       {"url": "https://y.org", "title": "t"}]}]},
            {"conv_id": "c2", "web_search_trace": [{"search_results": None}]},
            {"conv_id": "c3", "web_search_trace": [{"search_results": [{"url": "https://empty-vote.org",
                                                                        "title": "t"}]}]},
        ],
        "system_b_metadata": [
            {"conv_id": "c1", "web_search_trace": [{"search_results": [{"url": "https://x.org", "title": "t"}]}]},
            {"conv_id": "c2", "web_search_trace": [{"search_results": [{"url": "https://z.org", "title": "t"}]}]},
            {"conv_id": "c3", "web_search_trace": []},
        ],
    }, schema={"turn": pl.Int64, "winner": pl.String, "system_a_metadata": meta, "system_b_metadata": meta})
    traces = ng_battles.single_turn_urls(raw)
    assert traces.urls == ["https://x.org", "https://y.org", "https://z.org"]
    assert (traces.battles, traces.with_url, traces.without_url_pct) == (2, 2, 0.0)


def test_the_prompt_resource_has_one_placeholder_the_question():
    text = llm.load_prompt("ng_query_categorization")
    assert re.findall(r"[{}]", text) == ["{", "}"] and "{question}" in text


def test_figure_10_has_one_panel_per_attribute():
    classified = pl.DataFrame({**{a: [0, 7, 10] for a in ATTRS}, "status": ["ok", "ok", "failed"]})
    hist = lt.rating_histogram(classified)
    assert hist.filter(pl.col("score") == 10)["battles"].sum() == 0  # the failed row is not counted
    fig = plots.rating_histograms(hist, "Figure 10")
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in visible] == list(ATTRS)
    plt.close(fig)
