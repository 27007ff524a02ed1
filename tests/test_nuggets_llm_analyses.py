"""NG-F6 judge, NG-T3 rubric and NG-F7 agreement through the LLM layer against the local server."""

import json
import re

import numpy as np
import polars as pl
import pytest
from fake_openai_server import FakeOpenAIServer
from scipy import stats as sps
from sklearn.metrics import cohen_kappa_score

from analysis_lib import llm
from analysis_lib.llm import LLMClient
from analysis_lib.nuggets import llm_analyses as lt
from analysis_lib.nuggets.scores import ASSIGNMENT_ORDER


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for name in llm.settings.ENV_VARS:
        monkeypatch.delenv(name, raising=False)


def judge(payload):
    text = payload["messages"][0]["content"]
    first = re.search(r"\[The Start of Assistant A's Answer\]\n(.*)\n\[The End of Assistant A's Answer\]",
                      text, re.DOTALL).group(1)
    second = re.search(r"\[The Start of Assistant B's Answer\]\n(.*)\n\[The End of Assistant B's Answer\]",
                       text, re.DOTALL).group(1)
    if "GOOD" in first and "GOOD" in second:
        return "Both are fine. [[Tie]]"
    return "Reasoning... A mentions [[B]] style only as an example. Final: " + ("[[A]]" if "GOOD" in first else "[[B]]")


def test_judge_maps_verdicts_back_through_the_random_order(tmp_path):
    battles = pl.DataFrame({"qid": [f"q{i}" for i in range(12)], "query": ["q"] * 12,
                            "answer_a": ["GOOD", "bad", "GOOD"] * 4, "answer_b": ["bad", "GOOD", "GOOD"] * 4})
    with FakeOpenAIServer(judge) as srv:
        client = LLMClient(base_url=srv.base_url, model="local", cache_dir=tmp_path, progress=False)
        out = lt.run_judge(battles, client, seed=3)
    assert out["swapped"].any() and not out["swapped"].all()
    assert out["judge"].to_list() == ["model_a", "model_b", "tie"] * 4


def test_parse_verdict_takes_the_last():
    assert lt.parse_verdict("x [[A]] then [[tie]]") == {"verdict": "Tie"}
    with pytest.raises(ValueError):
        lt.parse_verdict("no verdict")


def rubric(payload):
    text = payload["messages"][0]["content"]
    response = re.search(r"Candidate response to evaluate:\n(.*)\n\nCriterion 1", text, re.DOTALL).group(1)
    s = min(5, 1 + len(response) // 10)
    return json.dumps({k: {"feedback": "f", "score": s} for k in lt.CRITERIA})


def test_rubric_scores_and_correlations(tmp_path):
    with FakeOpenAIServer(rubric) as srv:
        client = LLMClient(base_url=srv.base_url, model="local", cache_dir=tmp_path, progress=False)
        out = client.run(lt.rubric_task(), [("q", "short"), ("q", "a much longer answer here")])
    assert out["fluency"].to_list() == [1, 3] and (out["status"] == "ok").all()
    rng = np.random.default_rng(0)
    a = pl.DataFrame({n: rng.integers(1, 6, 200) for n in lt.CRITERION_NAMES})
    b = pl.DataFrame({n: rng.integers(1, 6, 200) for n in lt.CRITERION_NAMES})
    w = rng.choice(["model_a", "model_b", "tie"], 200)
    corr = lt.rubric_correlations(a, b, w)
    keep = w != "tie"
    d = (b["fluency"] - a["fluency"]).to_numpy()[keep]
    y = np.where(w[keep] == "model_b", 1, -1)
    row = corr.row(0, named=True)
    assert row["battles"] == keep.sum()
    assert row["kendall_tau"] == pytest.approx(sps.kendalltau(d, y).statistic)
    assert row["spearman_rho"] == pytest.approx(sps.spearmanr(d, y).statistic)


def test_assignment_agreement_matches_sklearn():
    rng = np.random.default_rng(1)
    labels = np.array(ASSIGNMENT_ORDER)
    a1 = rng.choice(labels, 300)
    a2 = np.where(rng.uniform(size=300) < 0.7, a1, rng.choice(labels, 300))
    keys = {"qid": [str(i // 10) for i in range(300)], "side": ["a"] * 300, "position": [i % 10 for i in range(300)]}
    k, table, unmatched = lt.assignment_agreement(pl.DataFrame({**keys, "assignment": a1}),
                                                  pl.DataFrame({**keys, "assignment": a2}))
    assert k == pytest.approx(cohen_kappa_score(a1, a2, labels=list(labels), weights="quadratic"))
    assert table.sum() == 300 and unmatched == 0


def test_the_llm_judge_chart_labels_its_columns_as_the_judge():
    """NG-F6's chart names the LLM judge on its columns, not the nugget chart's labels (issue 38 point 6)."""
    import dataclasses

    import numpy as np

    from analysis_lib.nuggets import plots
    from analysis_lib.nuggets.agreement import NuggetConfusion

    counts = np.arange(12).reshape(4, 3)
    judge = dataclasses.replace(NuggetConfusion(counts), preference="LLM judge")
    labels = [t.get_text() for t in plots.confusion_heatmap(judge, "F6").axes[0].get_xticklabels()]
    assert labels == ["LLM judge: model_a", "LLM judge: tie", "LLM judge: model_b"]
    labels = [t.get_text() for t in plots.confusion_heatmap(NuggetConfusion(counts), "F4").axes[0].get_xticklabels()]
    assert labels == ["nuggets: model_a", "nuggets: tie", "nuggets: model_b"]
