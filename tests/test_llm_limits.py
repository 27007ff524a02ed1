"""The reply-size cap, backoff on unreadable bodies, the request budget and JSON mode on local servers."""

from __future__ import annotations

import json
import time
import tracemalloc
from types import SimpleNamespace

import pytest
from fake_openai_server import FakeOpenAIServer

from analysis_lib import llm
from analysis_lib.llm import LLMClient, Task, local
from analysis_lib.llm import client as client_module

SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}, "n": {"type": "integer"}},
          "required": ["answer", "n"]}


def _task() -> Task:
    return Task("echo", SCHEMA, lambda item: [{"role": "user", "content": f"echo {item}"}], params={"max_tokens": 50})


def _echo(payload):
    text = payload["messages"][-1]["content"]
    return json.dumps({"answer": text.upper(), "n": len(text)})


@pytest.fixture
def server():
    with FakeOpenAIServer(_echo) as srv:
        yield srv


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for name in llm.settings.ENV_VARS:
        monkeypatch.delenv(name, raising=False)


def _client(server, tmp_path, **kw) -> LLMClient:
    kw.setdefault("backoff_base", 0.01)
    kw.setdefault("progress", False)
    return LLMClient(base_url=server.base_url, model="fake-model", cache_dir=tmp_path / "cache", **kw)


# ------------------------------------------------------------------------------------- the size cap


def test_an_endless_reply_is_a_failure_within_its_deadline_with_memory_bounded(server, tmp_path):
    client = _client(server, tmp_path, max_concurrency=1, request_deadline=20, max_reply_bytes=4_000_000)
    client.run(_task(), ["warm-up"])  # imports and first-use tables are not the reply's memory
    server.script.append(("endless",))
    tracemalloc.start()
    t0 = time.perf_counter()
    df = client.run(_task(), ["a"])
    elapsed = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert df["status"].item() == "failed"
    assert df["error"].item() == "request failed: reply larger than the 4,000,000-byte cap"
    assert elapsed < 20  # well inside the request's deadline
    assert peak < 5 * 4_000_000  # the body read so far, and a few copies of it, never more
    assert server.n_requests == 2  # not retried: an endless reply would be endless again
    assert client.run(_task(), ["a"])["status"].item() == "ok"  # and not cached


def test_a_declared_length_over_the_cap_is_refused_before_reading(server, tmp_path, monkeypatch):
    monkeypatch.setenv(llm.settings.MAX_REPLY_BYTES_ENV, "1000000")
    server.script.append(("huge_declared",))
    client = _client(server, tmp_path)
    assert client.max_reply_bytes == 1_000_000
    df = client.run(_task(), ["a"])
    assert df["error"].item() == ("request failed: reply declares 10,000,000,000 bytes, over the 1,000,000-byte "
                                  "cap")


def test_the_default_cap_lets_ordinary_replies_through(server, tmp_path):
    client = _client(server, tmp_path)
    assert client.max_reply_bytes == llm.settings.DEFAULT_MAX_REPLY_BYTES == 8 * 1024 * 1024
    assert client.run(_task(), ["a"])["status"].item() == "ok"


def test_unreadable_bodies_are_retried_after_a_growing_backoff(server, tmp_path, monkeypatch):
    slept: list[float] = []
    monkeypatch.setattr(client_module, "time", SimpleNamespace(sleep=slept.append, monotonic=time.monotonic,
                                                               time=time.time))
    server.script.extend([("truncated_body",)] * 3)
    client = _client(server, tmp_path, max_concurrency=1, backoff_base=0.2, backoff_max=10)
    assert client.run(_task(), ["a"])["status"].item() == "ok"
    assert server.n_requests == 4 and len(slept) == 3
    for n, delay in enumerate(slept):  # base * 2**n with a jitter in [0.5, 1)
        assert 0.5 * 0.2 * 2**n <= delay < 0.2 * 2**n


# -------------------------------------------------------------------------------------------- budget


def test_the_budget_stops_a_live_run_before_it_exceeds(server, tmp_path, monkeypatch):
    monkeypatch.setenv(llm.settings.MAX_REQUESTS_ENV, "5")
    client = _client(server, tmp_path, max_concurrency=3)
    df = client.run(_task(), [str(i) for i in range(8)])
    assert sorted(df["status"].to_list()) == ["not run"] * 3 + ["ok"] * 5
    assert len(server.chat_requests()) == 5
    assert set(df.filter(df["status"] == "not run")["error"]) == {llm.over_budget_reason(5)}
    assert client.last_stats.over_budget == 3
    assert client.not_run_reason() == llm.over_budget_reason(5)
    # cached answers cost nothing: a rerun serves the 5 and still sends nothing
    again = _client(server, tmp_path, max_requests=0).run(_task(), [str(i) for i in range(8)])
    assert again["status"].to_list().count("ok") == 5 and len(server.chat_requests()) == 5


def test_re_asks_count_against_the_budget(server, tmp_path):
    server.script.extend([("content", "{not json")] * 2)
    client = _client(server, tmp_path, max_requests=2, max_parse_retries=2, max_concurrency=1)
    df = client.run(_task(), ["a"])
    assert df["status"].item() == "failed" and df["error"].item().endswith("not re-asked: the request budget was "
                                                                           "reached")
    assert len(server.chat_requests()) == 2
    assert client.run(_task(), ["a"], retry_failed=True)["status"].item() == "not run"  # not cached as failed


# ------------------------------------------------------------------------------------- local servers


class NoJsonModeServer(FakeOpenAIServer):
    """A server that refuses ``response_format`` as llama.cpp or an old vLLM does, and wraps replies in text."""

    def _answer(self, h, payload, action):
        if "response_format" in payload:
            body = json.dumps({"error": {"message": "response_format is not supported", "type": "invalid_request_error",
                                         "param": "response_format", "code": 400}}).encode()
            self._send(h, 400, body)
            return
        super()._answer(h, payload, action)


def test_a_server_refusing_json_mode_gets_plain_requests_and_replies_are_extracted(tmp_path):
    with NoJsonModeServer(lambda p: "Sure! Here it is: " + _echo(p) + " Anything else?") as srv:
        client = _client(srv, tmp_path, max_concurrency=1)
        df = client.run(_task(), ["a", "b", "c"])
        assert df["status"].to_list() == ["ok"] * 3 and df["answer"].to_list() == ["ECHO A", "ECHO B", "ECHO C"]
        s = client.last_stats
        assert (s.json_mode_fallbacks, s.json_extracted) == (1, 3)
        assert len(srv.chat_requests()) == 4  # one refused, then three without response_format
        assert [("response_format" in r) for r in srv.chat_requests()] == [True, False, False, False]
        # the cache is keyed on the task's request (with its response format), as a JSON-mode server's would be
        p = client.prepare(_task(), "a", "fake-model", 0, False)
        assert "response_format" in p.params and client.cache.get(p.key)["status"] == "ok"


def test_json_mode_setting_chooses_the_response_format(server, tmp_path, monkeypatch):
    monkeypatch.setenv(llm.settings.JSON_MODE_ENV, "object")
    _client(server, tmp_path).run(_task(), ["a"])
    assert server.chat_requests()[-1]["response_format"] == {"type": "json_object"}
    _client(server, tmp_path / "off", json_mode="off").run(_task(), ["b"])
    assert "response_format" not in server.chat_requests()[-1]
    monkeypatch.setenv(llm.settings.JSON_MODE_ENV, "yaml")
    with pytest.raises(ValueError, match="ANALYSIS_LLM_JSON_MODE must be one of schema, object, off"):
        _client(server, tmp_path)


def test_refusal_detection_reads_the_error_not_a_quote_of_the_request():
    quoted = json.dumps({"error": {"message": "cannot process " + "x" * 400 + " response_format", "type": "bad"}})
    assert not local.refuses_response_format(400, quoted.encode())
    assert local.refuses_response_format(400, json.dumps({"error": {"param": "response_format"}}).encode())
    fastapi = {"detail": [{"loc": ["body", "response_format"], "msg": "extra fields not permitted"}]}
    assert local.refuses_response_format(422, json.dumps(fastapi).encode())
    assert not local.refuses_response_format(500, json.dumps({"error": {"param": "response_format"}}).encode())


def test_extract_json_object_finds_the_first_whole_object():
    assert llm.tasks.extract_json_object('Sure {"a": {"b": 1}} and {"c": 2}') == {"a": {"b": 1}}
    assert llm.tasks.extract_json_object('noise { not json } then {"ok": true}') == {"ok": True}
    assert llm.parse_json('```json\n{"a": 1,}\n```') == {"a": 1}
    with pytest.raises(json.JSONDecodeError):
        llm.parse_json("no object here [1, 2]")


def test_mode_and_counts_from_the_environment_are_checked(monkeypatch, tmp_path):
    monkeypatch.setenv(llm.settings.MODE_ENV, "fast")
    with pytest.raises(ValueError, match="ANALYSIS_LLM_MODE must be one of live, batch"):
        LLMClient(cache_dir=tmp_path)
    monkeypatch.setenv(llm.settings.MODE_ENV, "batch")
    monkeypatch.setenv(llm.settings.MAX_REQUESTS_ENV, "ten")
    with pytest.raises(ValueError, match="ANALYSIS_LLM_MAX_REQUESTS must be a whole number"):
        LLMClient(cache_dir=tmp_path)
    monkeypatch.setenv(llm.settings.MAX_REQUESTS_ENV, "40_000")
    c = LLMClient(cache_dir=tmp_path)
    assert (c.mode, c.max_requests) == ("batch", 40_000)
