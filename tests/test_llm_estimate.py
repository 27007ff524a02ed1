"""The estimate: token counts on a fixed prompt set checked by hand, prices, builders, the book plan."""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
from importlib import resources

import polars as pl
import pytest

from analysis_lib import llm
from analysis_lib.llm import LLMClient, Step, Task, estimate
from analysis_lib.nuggets import llm_analyses
from analysis_lib.search_arena import intents
from bookbuild import llm_plan

HAS_BPE = importlib.util.find_spec("bpe_openai") is not None


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for name in llm.settings.ENV_VARS:
        monkeypatch.delenv(name, raising=False)


def _task(max_tokens=None) -> Task:
    return Task("t", {"type": "object"}, lambda x: [{"role": "system", "content": "abcd" * 5},
                                                     {"role": "user", "content": x}],
                params={"max_tokens": max_tokens} if max_tokens else {})


def test_the_approximation_on_a_fixed_prompt_set_by_hand(tmp_path):
    # by hand: system "abcd"*5 = 20 chars -> 5 tokens, role "system" 6 chars -> 2, "user" -> 1;
    # per request 3 (reply) + 2 * 3 (messages) + 5 + 2 + 1 = 17, plus the user content
    # "x" * 10 -> 3 tokens (ceil 10/4), "y" * 40 -> 10, "" -> 0: 20 + 27 + 17 = 64 tokens
    client = LLMClient(cache_dir=tmp_path, model="not-a-known-model", progress=False)
    est = estimate.estimate_step(Step("X-1", _task(100), ["x" * 10, "y" * 40, ""]), client)
    assert est.method == estimate.APPROXIMATION
    assert (est.requests, est.cached, est.prompt_tokens, est.max_completion_tokens) == (3, 0, 64, 300)
    assert est.prompt_cost_usd is None and not est.priced  # no price for an unknown model


@pytest.mark.skipif(not HAS_BPE, reason="bpe-openai is not installed")
def test_bpe_openai_ships_openais_own_tables_and_counts_as_the_cookbook():
    # the sha256 of OpenAI's published encoding files, as tiktoken checks them (tiktoken_ext/openai_public.py)
    expected = {"cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
                "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"}
    for name, digest in expected.items():
        raw = resources.files("bpe_openai.data").joinpath(f"{name}.tiktoken.gz").read_bytes()
        assert hashlib.sha256(gzip.decompress(raw)).hexdigest() == digest
    enc, method = estimate.tokenizer("gpt-4", "cl100k_base")
    # OpenAI cookbook, "How to count tokens with tiktoken": cl100k_base encodes "tiktoken is great!" as 6 tokens
    assert enc.encode("tiktoken is great!") == [83, 1609, 5963, 374, 2294, 0] and method.startswith("cl100k_base")
    assert estimate.count_messages([{"role": "user", "content": "tiktoken is great!"}], enc) == 3 + 3 + 1 + 6


def test_prices_live_and_batch_by_hand(tmp_path):
    prices = estimate.load_prices()
    assert prices.live("gpt-4.1") == (2.0, 8.0) and prices.batch("gpt-4.1") == (1.0, 4.0)
    client = LLMClient(cache_dir=tmp_path, model="gpt-4.1", progress=False, mode="batch")
    est = estimate.estimate_step(Step("X-1", _task(10), ["hello"] * 4), client)
    # batch: prompt tokens * $1 / 1M; at most 4 * 10 completion tokens * $4 / 1M more
    assert est.prompt_cost_usd == pytest.approx(est.prompt_tokens * 1.0 / 1e6)
    assert est.max_cost_usd == pytest.approx(est.prompt_cost_usd + 40 * 4.0 / 1e6)


def test_a_bad_price_table_names_file_row_and_column(tmp_path):
    bad = tmp_path / "p.csv"
    bad.write_text("model,input_usd_per_mtok,output_usd_per_mtok,batch_input_usd_per_mtok,"
                   "batch_output_usd_per_mtok,encoding,source,date\nm,2,eight,1,4,,x,2026\n")
    with pytest.raises(ValueError, match=r"p.csv, row 2, column output_usd_per_mtok: expected USD per million"):
        estimate.load_prices(bad)


def test_cached_requests_are_not_counted(tmp_path):
    client = LLMClient(cache_dir=tmp_path, model="m", offline=True, progress=False)
    p = client.prepare(_task(), "a", "m", 0, False)
    client.cache.put(p.key, {"status": "ok", "content": "{}"}, alias=p.any_key)
    est = estimate.estimate_step(Step("X", _task(), ["a", "b"]), client)
    assert (est.items, est.cached, est.requests) == (2, 1, 1)


def test_run_estimates_before_sending(tmp_path):
    client = LLMClient(base_url="http://127.0.0.1:9/v1", cache_dir=tmp_path, model="m", progress=False,
                       max_requests=0)
    df = client.run(_task(), ["x" * 10, "y" * 40])
    assert df["status"].to_list() == ["not run"] * 2  # the budget of 0 sent nothing
    assert client.last_estimate is not None and client.last_estimate.requests == 2
    assert client.last_estimate.prompt_tokens == 3 + 10 + 2 * 17


def test_builders_match_what_the_runners_send():
    battles = pl.DataFrame({"conv_id": [f"c{i}" for i in range(6)],
                            "prompt": ["a?", "", "b?", None, "c?", "d?"]})
    step = intents.sample_step(battles, 4, seed=1)
    drawn = battles.sample(n=4, seed=1, shuffle=True)["prompt"].to_list()
    assert list(step.items) == [p for p in drawn if intents.skip_reason(p) is None]
    assert step.task.name == "intent_classification" and step.analysis == "SA-B5"
    sides = pl.DataFrame({"qid": ["2", "1", "1", "3"], "side": ["a", "a", "b", "a"],
                          "query": [" q2 ", "q1", "q1", "  "]})
    q = llm_analyses.query_battles(sides)
    assert q["qid"].to_list() == ["1", "2"]
    assert list(llm_analyses.query_class_step(q).items) == ["q1", "q2"]
    judged = pl.DataFrame({"query": ["q"] * 4, "answer_a": list("abcd"), "answer_b": list("wxyz")})
    items, swapped = llm_analyses.judge_items(judged, seed=3)
    assert [it[1] for it in items] == [b if s else a for a, b, s in zip("abcd", "wxyz", swapped, strict=True)]


def test_the_book_plan_lists_every_llm_chapter(tmp_path):
    chapters = {e.chapter for e in llm_plan.PLAN}
    assert chapters == {"02_prompts", "07_nuggets", "08_dr_arena", "09_answer_engines"}
    client = LLMClient(cache_dir=tmp_path, progress=False)
    rows = llm_plan.estimate_book(client, llm_plan.Inputs("sample:300", 0, tmp_path))
    ng_q = [r for ch, r in rows if not isinstance(r, str) and r.analysis == "NG-Q"]
    assert len(ng_q) == 1 and ng_q[0].requests <= llm_plan.QUERY_CLASS_BATTLES_SIMULATED
    b5 = [r for ch, r in rows if not isinstance(r, str) and r.analysis == "SA-B5"]
    assert len(b5) == 1 and b5[0].requests == 150 - b5[0].cached - (150 - b5[0].items)
    text = llm_plan.format_book_estimate(client, rows)
    assert "NG-Q ng_query_categorization" in text and text.splitlines()[-2].lstrip().startswith("total:")
    total, chat, embeddings = llm_plan.to_send(rows, None)  # no endpoint here: "auto" embeds offline
    assert embeddings == 0 and total == chat == sum(r.requests for _, r in rows if not isinstance(r, str))
    assert text.splitlines()[-1] == f"  to send: at most {total:,} requests ({chat:,} chat)"


def test_the_runner_hook_says_so_when_there_is_no_endpoint(tmp_path, capsys):
    llm_plan.print_estimate(tmp_path)
    assert capsys.readouterr().out == "LLM: no endpoint: LLM steps use the cache or are not run\n"


def test_the_runner_hook_estimates_only_the_chapters_of_the_build(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv(llm.settings.BASE_URL_ENV, "http://127.0.0.1:9/v1")
    built: list[str] = []
    plan = tuple(llm_plan.Entry(e.chapter, e.analyses, (lambda c, i, ch=e.chapter: built.append(ch) or [])
                                if e.build else None, e.not_default) for e in llm_plan.PLAN)
    monkeypatch.setattr(llm_plan, "PLAN", plan)
    llm_plan.print_estimate(tmp_path, chapters=["03_preferences", "99_reproduction_status"])
    assert built == [] and capsys.readouterr().out == (
        "LLM: none of this build's chapters (03_preferences, 99_reproduction_status) sends LLM requests\n")
    llm_plan.print_estimate(tmp_path, chapters=["07_nuggets", "08_dr_arena"])
    out = capsys.readouterr().out
    assert set(built) == {"07_nuggets"} and "  07_nuggets" in out and "  08_dr_arena" in out
    assert "02_prompts" not in out
    built.clear()
    llm_plan.print_estimate(tmp_path)  # no chapters given: the whole book
    assert set(built) == {"02_prompts", "07_nuggets"}
