"""The LLM layer against a real local HTTP server speaking the chat-completions protocol."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from fake_openai_server import FakeOpenAIServer

from analysis_lib import llm
from analysis_lib.llm import LLMClient, Task

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
    for name in (llm.BASE_URL_ENV, llm.API_KEY_ENV, llm.MODEL_ENV, llm.OFFLINE_ENV, llm.CACHE_ENV):
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
    monkeypatch.setenv(llm.OFFLINE_ENV, "1")
    offline = _client(server, tmp_path)
    assert offline.offline and not offline.available
    df = offline.run(_task(), ["a", "b"])
    assert df["status"].to_list() == ["ok", "not run"]
    assert server.n_requests == 1


def test_environment_defaults(monkeypatch, server, tmp_path):
    monkeypatch.setenv(llm.BASE_URL_ENV, server.base_url)
    monkeypatch.setenv(llm.MODEL_ENV, "env-model")
    c = LLMClient(cache_dir=tmp_path, progress=False)
    assert c.available and c.model == "env-model" and c.base_url == server.base_url
    c.run(_task(), ["a"])
    assert server.chat_requests()[0]["model"] == "env-model"


def test_embeddings_endpoint(server, tmp_path):
    client = _client(server, tmp_path)
    vecs = client.embed(["a", "b", "c"], model="emb", batch_size=2)
    assert vecs.shape == (3, 8)
    assert server.n_requests == 2


SECRET = "sk-test-DO-NOT-LEAK-0123456789abcdef"


def _tree_contains(root: Path, needle: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and needle in p.read_text(errors="replace")]


def test_api_key_is_sent_but_never_stored(server, tmp_path, monkeypatch):
    monkeypatch.setenv(llm.API_KEY_ENV, SECRET)
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
    env = {**os.environ, llm.API_KEY_ENV: SECRET, llm.BASE_URL_ENV: server.base_url}
    subprocess.run(
        [sys.executable, "-m", "papermill", str(src), str(out), "-p", "cache_dir", str(cache), "-k", "python3",
         "--log-level", "WARNING"],
        check=True, env=env, cwd=tmp_path, timeout=300,
    )
    assert len(server.chat_requests()) == 2
    assert all(h["Authorization"] == f"Bearer {SECRET}" for h in server.headers)
    assert len(list(cache.rglob("*.json"))) == 2
    assert _tree_contains(tmp_path, SECRET) == []


def test_describe_never_shows_credentials_in_the_base_url(monkeypatch, tmp_path):
    url = f"https://user:{SECRET}@proxy.example:8443/v1/?api_key={SECRET}#{SECRET}"
    monkeypatch.setenv(llm.BASE_URL_ENV, url)
    client = LLMClient(cache_dir=tmp_path, progress=False)
    text = client.describe()
    assert SECRET not in text and "user" not in text
    assert "endpoint https://proxy.example:8443/v1;" in text
    assert SECRET not in repr(client)
    assert llm.safe_url(f"http://{SECRET}@[::1]:8000/v1") == "http://[::1]:8000/v1"
    assert llm.safe_url("https://api.openai.com/v1") == "https://api.openai.com/v1"
    assert llm.safe_url(None) == ""
    # an error code that is the key itself is dropped too
    assert llm._http_reason(401, json.dumps({"error": {"code": SECRET}}).encode(), SECRET) == "HTTP 401 Unauthorized"


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
