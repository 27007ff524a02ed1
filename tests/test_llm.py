"""The LLM layer against a real local HTTP server speaking the chat-completions protocol."""

from __future__ import annotations

import json
import time
from pathlib import Path

import polars as pl
import pytest
from fake_openai_server import FakeOpenAIServer

from analysis_lib import llm
from analysis_lib.llm import LLMClient, Task
from analysis_lib.llm import http as llm_http

SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string"}, "n": {"type": "integer"}},
    "required": ["answer", "n"],
}


def _task() -> Task:
    return Task(
        name="echo",
        schema=SCHEMA,
        build=lambda item: [{"role": "user", "content": f"echo {item}"}],
        params={"max_tokens": 50},
    )


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


def test_run_parses_validates_and_caches(server, tmp_path):
    items = [f"item {i}" for i in range(20)]
    client = _client(server, tmp_path, max_concurrency=4, prices={"fake-model": (1.0, 2.0)})
    df = client.run(_task(), items)
    assert df.columns == ["item", "answer", "n", "status", "error", "cached"]
    assert df["status"].to_list() == ["ok"] * 20
    assert df["answer"].to_list() == [f"ECHO {x}".upper() for x in items]  # input order kept
    assert server.n_requests == 20
    s = client.last_stats
    assert (s.ok, s.failed, s.requests, s.cache_hits) == (20, 0, 20, 0)
    assert s.prompt_tokens == 20 * 3 and s.completion_tokens > 0
    assert s.cost_usd == pytest.approx((s.prompt_tokens * 1.0 + s.completion_tokens * 2.0) / 1e6)
    # the request carried the structured-output schema and the task's params
    req = server.chat_requests()[0]
    assert req["model"] == "fake-model" and req["max_tokens"] == 50
    assert req["response_format"]["json_schema"]["schema"] == SCHEMA

    # second run: same inputs, zero requests, same results
    again = _client(server, tmp_path).run(_task(), items)
    assert server.n_requests == 20
    assert again["cached"].all() and again["answer"].to_list() == df["answer"].to_list()


def test_cache_key_depends_on_model_messages_params():
    m = [{"role": "user", "content": "x"}]
    k = llm.request_key("a", m, {"t": 1})
    assert k == llm.request_key("a", [{"content": "x", "role": "user"}], {"t": 1})  # canonical JSON
    assert k != llm.request_key("b", m, {"t": 1})
    assert k != llm.request_key("a", [{"role": "user", "content": "y"}], {"t": 1})
    assert k != llm.request_key("a", m, {"t": 0})


def test_retries_429_500_drop_and_truncated_body(server, tmp_path):
    server.script.extend([("status", 429), ("status", 500), ("drop",), ("truncated_body",), ("status", 503)])
    client = _client(server, tmp_path, max_concurrency=1)
    df = client.run(_task(), ["a"])
    assert df["status"].item() == "ok" and df["answer"].item() == "ECHO A"
    assert server.n_requests == 6
    assert client.last_stats.retries == 5


def test_gives_up_after_max_retries_and_does_not_cache_transport_failures(server, tmp_path):
    server.script.extend([("status", 500)] * 3)
    client = _client(server, tmp_path, max_concurrency=1, max_retries=2)
    df = client.run(_task(), ["a"])
    assert df["status"].item() == "failed"
    assert "HTTP 500 Internal Server Error" in df["error"].item() and "after 3 attempts" in df["error"].item()
    assert client.last_stats.failure_reasons == {"request failed": 1}
    # not cached: the next run asks again and succeeds
    df2 = client.run(_task(), ["a"])
    assert df2["status"].item() == "ok" and server.n_requests == 4


def test_non_retryable_status_fails_at_once(server, tmp_path):
    server.script.append(("status", 400))
    df = _client(server, tmp_path).run(_task(), ["a"])
    assert df["status"].item() == "failed"
    assert df["error"].item() == "request failed: HTTP 400 Bad Request (scripted)"  # the API's error type kept
    assert server.n_requests == 1


def test_malformed_replies_are_reasked_then_recorded(server, tmp_path):
    # invalid JSON, then a reply cut by the token limit, then valid JSON failing the schema: all re-asked
    server.script.extend([("content", "{not json"), ("length", '{"answer": "AB'), ("content", '{"answer": 1}')])
    client = _client(server, tmp_path, max_concurrency=1, max_parse_retries=2)
    df = client.run(_task(), ["a", "b"])
    first = df.row(0, named=True)
    assert first["status"] == "failed" and first["answer"] is None
    assert first["error"] == "invalid reply: schema rule 'required' failed at root"
    assert df["status"].to_list()[1] == "ok"
    s = client.last_stats
    assert (s.ok, s.failed, s.parse_retries) == (1, 1, 2)
    assert s.failure_reasons == {"invalid reply": 1}
    # a malformed-reply failure is cached: reported again without a request, unless retry_failed
    n = server.n_requests
    df2 = client.run(_task(), ["a", "b"])
    assert server.n_requests == n and df2["status"].to_list() == ["failed", "ok"]
    df3 = client.run(_task(), ["a", "b"], retry_failed=True)
    assert server.n_requests == n + 1 and df3["status"].to_list() == ["ok", "ok"]


def test_trailing_comma_and_code_fence_are_tolerated(server, tmp_path):
    server.script.append(("content", '```json\n{"answer": "x", "n": 1,}\n```'))
    df = _client(server, tmp_path).run(_task(), ["a"])
    assert df["status"].item() == "ok" and df["n"].item() == 1


def test_slow_replies_run_concurrently(server, tmp_path):
    server.script.extend([("slow", 0.4)] * 8)
    client = _client(server, tmp_path, max_concurrency=8)
    t0 = time.perf_counter()
    df = client.run(_task(), [str(i) for i in range(8)])
    elapsed = time.perf_counter() - t0
    assert df["status"].to_list() == ["ok"] * 8
    assert elapsed < 8 * 0.4 * 0.6  # far below the serial time


def test_timeout_is_retried(server, tmp_path):
    server.script.append(("slow", 1.0))
    client = _client(server, tmp_path, max_concurrency=1, timeout=0.3)
    df = client.run(_task(), ["a"])
    assert df["status"].item() == "ok"
    assert client.last_stats.retries == 1


class _Stop(Exception):
    pass


def test_interrupted_run_resumes(server, tmp_path):
    items = [f"q{i}" for i in range(12)]
    client = _client(server, tmp_path, max_concurrency=1)
    seen = []

    def stop_after_five(i, outcome):
        seen.append(i)
        if len(seen) == 5:
            raise _Stop

    with pytest.raises(_Stop):
        client.run(_task(), items, on_result=stop_after_five)
    done = server.n_requests
    assert 5 <= done < 12
    cached = len(client.cache)
    assert cached == done  # every answered request was written as it arrived
    df = client.run(_task(), items)
    assert df["status"].to_list() == ["ok"] * 12
    assert server.n_requests == 12  # only the missing ones were requested
    assert client.last_stats.cache_hits == cached


def test_no_endpoint_returns_not_run(tmp_path):
    client = LLMClient(cache_dir=tmp_path, progress=False)
    assert not client.available
    df = client.run(_task(), ["a", "b"])
    assert df["status"].to_list() == ["not run", "not run"]
    assert df["answer"].null_count() == 2
    assert all(e.startswith("not run") for e in df["error"])
    assert client.last_stats.not_run == 2


def test_offline_mode_serves_cache_only(server, tmp_path, monkeypatch):
    _client(server, tmp_path).run(_task(), ["a"])
    monkeypatch.setenv(llm.settings.OFFLINE_ENV, "1")
    offline = _client(server, tmp_path)
    assert offline.offline and not offline.available
    df = offline.run(_task(), ["a", "b"])
    assert df["status"].to_list() == ["ok", "not run"]
    assert server.n_requests == 1


def test_environment_defaults(monkeypatch, server, tmp_path):
    monkeypatch.setenv(llm.settings.BASE_URL_ENV, server.base_url)
    monkeypatch.setenv(llm.settings.MODEL_ENV, "env-model")
    c = LLMClient(cache_dir=tmp_path, progress=False)
    assert c.available and c.model == "env-model" and c.base_url == server.base_url
    c.run(_task(), ["a"])
    assert server.chat_requests()[0]["model"] == "env-model"


def test_embeddings_endpoint(server, tmp_path):
    import hashlib

    import numpy as np

    client = _client(server, tmp_path)
    texts = ["a", "b", "c"]
    vecs = client.embed(texts, model="emb", batch_size=2)
    # the fake server's vectors, computed independently: the first 8 sha256 bytes scaled to [-1, 1], in order
    expected = np.array([[(b - 127.5) / 127.5 for b in hashlib.sha256(t.encode()).digest()[:8]] for t in texts],
                        dtype=np.float32)
    np.testing.assert_allclose(vecs, expected, rtol=1e-6)
    assert server.n_requests == 2
    assert [r["input"] for r in server.requests] == [["a", "b"], ["c"]]
    assert client.last_stats.prompt_tokens == 3


SECRET = "sk-test-DO-NOT-LEAK-0123456789abcdef"


def _tree_contains(root: Path, needle: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and needle in p.read_text(errors="replace")]


def test_api_key_is_sent_but_never_stored(server, tmp_path, monkeypatch):
    monkeypatch.setenv(llm.settings.API_KEY_ENV, SECRET)
    client = _client(server, tmp_path)
    client.run(_task(), ["a"])
    assert server.headers[0]["Authorization"] == f"Bearer {SECRET}"
    assert SECRET not in repr(client) and SECRET not in client.describe()
    assert SECRET not in json.dumps(vars(client), default=str)
    assert _tree_contains(tmp_path, SECRET) == []


@pytest.mark.slow
def test_api_key_absent_from_executed_notebook_and_cache(server, tmp_path):
    import os
    import subprocess
    import sys

    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("cache_dir = None", metadata={"tags": ["parameters"]}),
        nbformat.v4.new_code_cell(
            "import os, json\n"
            "from analysis_lib.llm import LLMClient, Task\n"
            "client = LLMClient(cache_dir=cache_dir, progress=True)\n"
            "print(client)\nprint(client.describe())\n"
            "task = Task('echo', {'type': 'object'}, lambda x: [{'role': 'user', 'content': x}])\n"
            "df = client.run(task, ['hello', 'world'])\n"
            "print(df)\nprint(client.last_stats.summary())\nassert (df['status'] == 'ok').all()"
        ),
    ]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    src = tmp_path / "tiny.ipynb"
    nbformat.write(nb, src)
    out = tmp_path / "tiny.out.ipynb"
    cache = tmp_path / "llmcache"
    env = {**os.environ, llm.settings.API_KEY_ENV: SECRET, llm.settings.BASE_URL_ENV: server.base_url}
    subprocess.run(
        [sys.executable, "-m", "papermill", str(src), str(out), "-p", "cache_dir", str(cache), "-k", "python3",
         "--log-level", "WARNING"],
        check=True, env=env, cwd=tmp_path, timeout=300,
    )
    assert len(server.chat_requests()) == 2
    assert all(h["Authorization"] == f"Bearer {SECRET}" for h in server.headers)
    assert len(list(cache.glob("*/*.json"))) == 2  # one record per request (plus its endpoint-free copy)
    assert _tree_contains(tmp_path, SECRET) == []


def test_describe_never_shows_credentials_in_the_base_url(monkeypatch, tmp_path):
    url = f"https://user:{SECRET}@proxy.example:8443/v1/?api_key={SECRET}#{SECRET}"
    monkeypatch.setenv(llm.settings.BASE_URL_ENV, url)
    client = LLMClient(cache_dir=tmp_path, progress=False)
    text = client.describe()
    assert SECRET not in text and "user" not in text
    assert "endpoint https://proxy.example:8443/v1;" in text
    assert SECRET not in repr(client)
    assert llm.safe_url(f"http://{SECRET}@[::1]:8000/v1") == "http://[::1]:8000/v1"
    assert llm.safe_url("https://api.openai.com/v1") == "https://api.openai.com/v1"
    assert llm.safe_url(None) == ""
    # an error code that is the key itself is dropped too
    reply = json.dumps({"error": {"code": SECRET}}).encode()
    assert llm_http.http_reason(401, reply, SECRET) == "HTTP 401 Unauthorized"


# ------------------------------------------------------------------------ nothing of the input is echoed

#: Stands in for a BrowseComp problem: benchmark items must never be printed in the book.
BROWSECOMP_LIKE = ("Identify the 1987 chess olympiad participant whose second cousin later founded a brewery in "
                   "Tartu and named a lager after a comet")


class EchoingServer(FakeOpenAIServer):
    """Error bodies that quote the whole request back, as real servers do ("... in your prompt: ...")."""

    def _answer(self, h, payload, action):
        if action and action[0] == "echo_status":
            quoted = json.dumps(payload)
            body = json.dumps({"error": {"message": f"cannot process: {quoted}", "type": "invalid_request_error",
                                         "code": quoted[:300]}}).encode()
            self._send(h, int(action[1]), body, {"Retry-After": "0"})
            return
        super()._answer(h, payload, action)


def _leaks(text: str) -> bool:
    # the whole string, or any run of five of its words
    words = BROWSECOMP_LIKE.split()
    return any(" ".join(words[i : i + 5]) in text for i in range(len(words) - 4))


def test_failures_never_echo_the_input(tmp_path, capsys, caplog):
    caplog.set_level("DEBUG")
    item = BROWSECOMP_LIKE
    quote = f"You asked: {item}"
    with EchoingServer(_echo) as srv:
        srv.script.extend([
            ("echo_status", 400),                                      # 1: non-retryable, body quotes the request
            ("echo_status", 500), ("echo_status", 503),                # 2: retried, then given up
            ("content", quote), ("length", quote),                     # 3: not JSON (twice)...
            ("content", json.dumps({"answer": item})),                 # ...then missing a field
            ("content", json.dumps({"answer": 1, "n": item})),         # 4: wrong types, the input as a value
            ("content", json.dumps({"answer": item, "n": "x"})),
            ("content", json.dumps({"answer": item, "n": []})),
        ])
        client = LLMClient(base_url=srv.base_url, model="m", cache_dir=tmp_path / "c", max_concurrency=1,
                           max_retries=1, max_parse_retries=2, backoff_base=0.01, progress=False)
        task = Task(name="echo", schema=SCHEMA, build=lambda x: [{"role": "user", "content": x}])
        frames = [client.run(task, [f"{item} ({k})"]) for k in range(4)]
        assert srv.chat_requests()[0]["messages"][0]["content"].startswith(item)  # the input was sent
        for df in frames:
            assert df["status"].item() == "failed", df
            print(df["error"].item())
            print(client.last_stats.summary())
        errors = [df["error"].item() for df in frames]
        print(client.total_stats.summary(), client.total_stats.as_dict(), client.describe(), repr(client))
        # a cached failure read back, and a cached reply that no longer validates, say no more
        again = client.run(task, [f"{item} (2)"])
        print(again["error"].item())
    out = capsys.readouterr()
    assert errors[0] == "request failed: HTTP 400 Bad Request (invalid_request_error)"
    assert errors[1] == "request failed: HTTP 503 Service Unavailable (invalid_request_error) after 2 attempts"
    assert errors[2].startswith("invalid reply: schema rule 'required' failed")
    assert errors[3].startswith("invalid reply: schema rule 'type' failed at n")
    for text in (*errors, out.out, out.err, caplog.text):
        assert not _leaks(text), text


def test_task_parse_errors_are_recorded_by_kind_only(server, tmp_path):
    def parse(content):
        raise ValueError(f"could not read {content}")  # a careless parser quoting the reply

    class Careful(llm.ReplyError):
        pass

    server.script.extend([("content", BROWSECOMP_LIKE)] * 2)
    client = _client(server, tmp_path, max_parse_retries=0, max_concurrency=1)
    df = client.run(Task("p", {"type": "object"}, lambda x: [{"role": "user", "content": x}], parse=parse), ["a"])
    assert df["error"].item() == "invalid reply: ValueError"

    def careful(content):
        raise Careful("expected one number")

    df = client.run(Task("q", {"type": "object"}, lambda x: [{"role": "user", "content": x}], parse=careful), ["a"])
    assert df["error"].item() == "invalid reply: expected one number"


# ------------------------------------------------------------------------ issue 11: reliability and security


def test_redirect_never_carries_the_key_to_another_origin(tmp_path, monkeypatch):
    monkeypatch.setenv(llm.settings.API_KEY_ENV, SECRET)
    with FakeOpenAIServer(_echo) as elsewhere, FakeOpenAIServer(_echo) as endpoint:
        endpoint.redirect_to = elsewhere.base_url.rsplit("/v1", 1)[0]  # same host, another port
        client = _client(endpoint, tmp_path, max_retries=2)
        df = client.run(_task(), ["a"])
        assert df["status"].item() == "failed"
        assert df["error"].item().startswith("request failed: HTTP 302 Found")
        assert endpoint.n_requests == 1 and endpoint.headers[0]["Authorization"] == f"Bearer {SECRET}"
        assert elsewhere.n_requests == 0 and elsewhere.headers == []  # the key went nowhere else
        # and the transport refuses another origin even when asked to follow
        with pytest.raises(llm.LLMRequestError, match="another origin"):
            client.api._client.follow_redirects = True
            client._post("chat/completions", {"model": "m", "messages": []})
        assert elsewhere.n_requests == 0


def test_plain_http_endpoint_off_loopback_is_warned_about(tmp_path):
    with pytest.warns(UserWarning, match="not TLS"):
        LLMClient(base_url="http://llm.example.org/v1", cache_dir=tmp_path, progress=False)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        LLMClient(base_url="https://llm.example.org/v1", cache_dir=tmp_path, progress=False)
        LLMClient(base_url="http://localhost:8000/v1", cache_dir=tmp_path, progress=False)


def test_a_dripping_server_hits_the_request_deadline(server, tmp_path):
    server.script.append(("drip", 0.05))  # ~300 bytes: 15 s at this pace, each read well within the timeout
    client = _client(server, tmp_path, max_concurrency=1, timeout=1.0, request_deadline=0.8)
    t0 = time.perf_counter()
    df = client.run(_task(), ["a"])
    assert time.perf_counter() - t0 < 5
    assert df["status"].item() == "failed" and df["error"].item() == "request failed: deadline exceeded"
    assert client.last_stats.timed_out == 1 and "1 timed out" in client.last_stats.summary()
    # a deadline failure is not cached: the next run asks again
    assert client.run(_task(), ["a"])["status"].item() == "ok"


def test_a_hanging_server_costs_one_deadline_not_all_retries(server, tmp_path, monkeypatch):
    server.script.extend([("slow", 3.0)] * 8)
    monkeypatch.setenv(llm.settings.REQUEST_DEADLINE_ENV, "0.8")
    client = _client(server, tmp_path, max_concurrency=1, timeout=0.3, max_retries=6)
    assert client.request_deadline == 0.8
    t0 = time.perf_counter()
    df = client.run(_task(), ["a"])
    assert time.perf_counter() - t0 < 2.5
    assert df["status"].item() == "failed"
    assert "deadline exceeded" in df["error"].item() or "timeout" in df["error"].item()


def test_run_deadline_leaves_the_rest_not_run(server, tmp_path):
    server.script.extend([("slow", 0.3)] * 10)
    client = _client(server, tmp_path, max_concurrency=1)
    df = client.run(_task(), [str(i) for i in range(10)], deadline=0.5)
    statuses = df["status"].to_list()
    assert 1 <= statuses.count("ok") <= 3 and statuses.count("not run") >= 6
    assert set(df.filter(pl.col("status") == "not run")["error"]) == {llm.client.RUN_DEADLINE_PASSED}
    assert client.last_stats.timed_out == statuses.count("not run") + statuses.count("failed")


def test_cache_is_tied_to_the_endpoint(tmp_path):
    m = [{"role": "user", "content": "x"}]
    assert llm.request_key("a", m, {}, "http://127.0.0.1:1/v1") != llm.request_key("a", m, {}, "http://h:2/v1")
    with FakeOpenAIServer(_echo) as one, FakeOpenAIServer(_echo) as two:
        _client(one, tmp_path).run(_task(), ["a"])
        df = _client(two, tmp_path).run(_task(), ["a"])
        assert not df["cached"].item() and two.n_requests == 1  # answers of one endpoint are not another's
        assert _client(one, tmp_path).run(_task(), ["a"])["cached"].item()
    # a cache-only client (no endpoint at all) serves what an endpoint answered
    cache_only = LLMClient(model="fake-model", cache_dir=tmp_path / "cache", offline=True, progress=False)
    assert cache_only.run(_task(), ["a", "b"])["status"].to_list() == ["ok", "not run"]


def test_identity_names_endpoint_model_and_offline_mode_never_the_key(monkeypatch):
    monkeypatch.setenv(llm.settings.BASE_URL_ENV, f"https://u:{SECRET}@h.example/v1?key={SECRET}")
    monkeypatch.setenv(llm.settings.API_KEY_ENV, SECRET)
    monkeypatch.setenv(llm.settings.MODEL_ENV, "m1")
    ident = llm.identity()
    assert ident == {"endpoint": "https://h.example/v1", "model": "m1", "offline": False}
    monkeypatch.setenv(llm.settings.OFFLINE_ENV, "1")
    assert llm.identity()["offline"] is True


def test_cached_failures_are_never_answers_and_the_switch_retries_them(server, tmp_path, monkeypatch):
    server.script.extend([("content", "{not json")] * 3)
    client = _client(server, tmp_path, max_parse_retries=2, max_concurrency=1)
    assert client.run(_task(), ["a"])["status"].item() == "failed"
    again = _client(server, tmp_path).run(_task(), ["a"])
    assert again["status"].item() == "failed" and again["answer"].item() is None and server.n_requests == 3
    monkeypatch.setenv(llm.settings.RETRY_FAILED_ENV, "1")
    retried = _client(server, tmp_path).run(_task(), ["a"])
    assert retried["status"].item() == "ok" and server.n_requests == 4


def test_describe_never_shows_the_cache_folder_absolutely(tmp_path):
    client = LLMClient(base_url=None, cache_dir=tmp_path / "llm", offline=True)
    line = client.describe()
    assert str(tmp_path) not in line and "cached results in llm" in line
