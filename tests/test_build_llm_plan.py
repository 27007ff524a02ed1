"""The runner's LLM estimate (issue 38 point 4): this build's ``--set`` values, the embeddings call, only the
chapters that rerun, and "nothing to send" when nothing reruns. Nothing is sent: the endpoint is a closed port."""

from __future__ import annotations

import math
import shutil

import dr_framework_standin
import pytest
from test_build import TINY, _root, _run, _variant

from analysis_lib import llm
from analysis_lib.dr_arena import framework_prompts
from analysis_lib.llm import LLMClient
from analysis_lib.search_arena import prompt_sets, topics
from analysis_lib.search_arena.embedding_cache import text_hash
from bookbuild import keys, llm_plan


@pytest.fixture
def endpoint(monkeypatch):
    for name in ("OPENAI_API_KEY", "ANALYSIS_LLM_MODEL", "ANALYSIS_LLM_OFFLINE", "ANALYSIS_LLM_MAX_REQUESTS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(llm.settings.BASE_URL_ENV, "http://127.0.0.1:9/v1")  # nothing listens: an estimate sends nothing


def _rows(rows, analysis):
    return [r for _, r in rows if not isinstance(r, str) and r.analysis == analysis]


def test_declared_defaults_are_the_parameters_cells_values():
    inspected = {"a": {"default": "150"}, "b": {"default": '("")'}, "c": {"default": "None"},
                 "d": {"default": "100_000"}, "e": {"default": "os.getcwd()"}}
    assert llm_plan.declared_defaults(inspected) == {"a": 150, "b": "", "c": None, "d": 100_000}


def test_the_estimate_counts_this_builds_settings(endpoint, tmp_path, monkeypatch):
    client = LLMClient(cache_dir=tmp_path / "llm", progress=False)
    inputs = llm_plan.Inputs("sample:300", 0, tmp_path, {"02_prompts": {"intent_sample": 40, "topic_prompts": 600,
                                                                        "min_cluster_size": 30},
                                                         "07_nuggets": {"query_class_battles": 25}})
    rows = llm_plan.estimate_book(client, inputs, ["02_prompts", "07_nuggets"])
    assert [r.items for r in _rows(rows, "SA-B5")] == [40]  # not the chapter's default 150
    assert [r.requests for r in _rows(rows, "NG-Q")] == [25]  # not 200
    labels = next(r for r in _rows(rows, "SA-B4") if r.task != "embeddings")
    assert labels.bound and labels.requests == 600 // 30  # one label per topic of the 600 prompts modelled
    monkeypatch.setattr(llm_plan, "PLAN", tuple(e for e in llm_plan.PLAN if e.analyses == "SA-B5"))
    default = llm_plan.estimate_book(client, llm_plan.Inputs("sample:300", 0, tmp_path), ["02_prompts"])
    assert 40 < _rows(default, "SA-B5")[0].items <= llm_plan.INTENT_SAMPLE  # the default: 150 drawn, distinct


def test_the_estimate_counts_the_embeddings_call(endpoint, tmp_path):
    client = LLMClient(cache_dir=tmp_path / "llm", progress=False)
    texts = list(prompt_sets.search_arena_prompts("all", n=600, seed=0))
    inputs = llm_plan.Inputs("sample:300", 0, tmp_path, {"02_prompts": {"topic_prompts": 600}})
    rows = _rows(llm_plan.estimate_book(client, inputs, ["02_prompts"]), "SA-B4")
    [emb] = [r for r in rows if r.task == "embeddings"]
    assert emb.model == topics.PAPER_EMBEDDING  # "auto" with an endpoint: the paper's model on it
    distinct = len(set(texts))
    # the client's sizes: 16 texts, then as many as fit half the 8 MiB cap at 3,072 values of 15 bytes each
    per = 8 * 1024 * 1024 // (2 * 3072 * 15)
    assert (emb.items, emb.cached, emb.requests) == (distinct, 0, 1 + math.ceil((distinct - 16) / per))
    # the keywords' texts (keybert): a bound, 100 candidate words for each of at most 600 // 20 topics and -1
    [keywords] = [r for r in rows if r.task == "embeddings of topic keywords"]
    assert keywords.bound and keywords.requests == 1 + math.ceil((31 * 100 - 16) / per)
    # texts already in this endpoint's embedding cache are not sent again, and its measured size is used
    cache = topics.embedding_cache(topics.PAPER_EMBEDDING, client, tmp_path / "embeddings")
    done = list(dict.fromkeys(texts))[:distinct - 3]
    cache.add([text_hash(t) for t in done], __import__("numpy").ones((len(done), 4), dtype="float32"),
              vector_bytes=50_000)
    [emb] = [r for r in _rows(llm_plan.estimate_book(client, inputs, ["02_prompts"]), "SA-B4")
             if r.task == "embeddings"]
    assert (emb.cached, emb.requests) == (distinct - 3, 1) and "measured" in emb.note
    # another endpoint's vectors count for nothing
    elsewhere = LLMClient(base_url="http://127.0.0.1:10/v1", cache_dir=tmp_path / "llm", progress=False)
    [emb] = [r for r in _rows(llm_plan.estimate_book(elsewhere, inputs, ["02_prompts"]), "SA-B4")
             if r.task == "embeddings"]
    assert emb.cached == 0
    offline = llm_plan.Inputs("sample:300", 0, tmp_path, {"02_prompts": {"topic_prompts": 600,
                                                                         "topic_embedding": "offline"}})
    assert not [r for r in _rows(llm_plan.estimate_book(client, offline, ["02_prompts"]), "SA-B4")
                if r.task.startswith("embeddings")]


def test_a_step_that_cannot_run_is_not_called_cached(endpoint, tmp_path, monkeypatch):
    monkeypatch.setattr(framework_prompts, "try_load", lambda **_: (None, "the framework's prompts are missing"))
    client = LLMClient(cache_dir=tmp_path / "llm", progress=False)
    given = llm_plan.Inputs(parameters={"08_dr_arena": {"dr_agents": "m1, m2"}})
    rows = llm_plan.estimate_book(client, given, ["08_dr_arena"])
    assert [r for _, r in rows] == ["DR-X: cannot run here: its inputs are not available (RuntimeError: the "
                                    "framework's prompts are missing)"]
    text = llm_plan.format_book_estimate(client, rows)
    assert "every request of these chapters is cached" not in text
    assert text.splitlines()[-1] == "  not counted: DR-X (cannot run here, said above)"


def test_dr_x_is_estimated_when_agents_are_given(endpoint, tmp_path, monkeypatch):
    monkeypatch.setattr(framework_prompts, "try_load", lambda **_: (dr_framework_standin.prompts(), None))
    client = LLMClient(cache_dir=tmp_path / "llm", progress=False)
    plain = llm_plan.estimate_book(client, llm_plan.Inputs(), ["08_dr_arena"])
    assert [r for _, r in plain if isinstance(r, str) and r.startswith("DR-X: not in a default build")]
    given = llm_plan.Inputs(parameters={"08_dr_arena": {"dr_agents": "m1, m2, m3, m4", "n_swiss_rounds": 2}})
    rows = _rows(llm_plan.estimate_book(client, given, ["08_dr_arena"]), "DR-X")
    assert len(rows) == 3 and all(r.bound for r in rows)
    games = rows[0].requests
    assert games > 0 and [r.requests for r in rows] == [games, 2 * games, games]
    more = llm_plan.Inputs(parameters={"08_dr_arena": {"dr_agents": "m1, m2, m3, m4", "n_swiss_rounds": 4}})
    assert _rows(llm_plan.estimate_book(client, more, ["08_dr_arena"]), "DR-X")[0].requests == 2 * games


def test_the_runner_estimates_only_the_chapters_that_rerun(endpoint, tmp_path, capsys, monkeypatch):
    fixed = keys.library_hash()
    monkeypatch.setattr(keys, "library_hash", lambda: fixed)
    seen: list[tuple[list[str] | None, dict]] = []

    def fake(cache_dir=None, inputs=None, out=None, *, always=False, chapters=None):
        seen.append((chapters, dict(inputs.parameters)))
        real(cache_dir, inputs, out, always=always, chapters=chapters)

    real = llm_plan.print_estimate
    prompts = _variant(tmp_path, "02_prompts.ipynb", params="intent_sample = 150\ntopic_prompts = None")
    prompts.write_text(prompts.read_text().replace('\\"01_tiny\\"', '\\"02_prompts\\"'))
    root = _root(tmp_path, TINY, prompts)
    monkeypatch.setattr(llm_plan, "PLAN", tuple(e for e in llm_plan.PLAN if e.analyses == "SA-B5"))
    monkeypatch.setattr(llm_plan, "print_estimate", fake)
    assert _run(root, "--set", "intent_sample=12", "--data", "sample:200").ran == ["01_tiny", "02_prompts"]
    (chapters, params), = seen
    assert chapters == ["01_tiny", "02_prompts"]
    assert params["02_prompts"]["intent_sample"] == 12 and params["02_prompts"]["topic_prompts"] is None
    out = capsys.readouterr().out
    assert "SA-B5 intent_classification" in out and " of 11 items cached)" in out  # 12 drawn, 11 distinct
    seen.clear()
    assert _run(root, "--set", "intent_sample=12", "--data", "sample:200").skipped == ["01_tiny", "02_prompts"]
    assert seen == [([], {})]
    assert "LLM: nothing to send: no chapter reruns in this build" in capsys.readouterr().out
    shutil.copy(_variant(tmp_path / "edited", "01_tiny.ipynb", cells=("x = 2",)), root / "notebooks" / "01_tiny.ipynb")
    seen.clear()
    assert _run(root, "--set", "intent_sample=12", "--data", "sample:200").ran == ["01_tiny"]
    assert [c for c, _ in seen] == [["01_tiny"]]
    assert "LLM: none of this build's chapters (01_tiny) sends LLM requests" in capsys.readouterr().out
