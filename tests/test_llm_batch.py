"""The Batch API path against the fake server's /v1/files and /v1/batches: outcomes, resuming, guarantees."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fake_openai_server import FakeOpenAIServer

from analysis_lib import llm
from analysis_lib.llm import LLMClient, Task, batch
from analysis_lib.search_arena import intents
from analysis_lib.search_arena.schema import INTENTS

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}, "n": {"type": "integer"}},
          "required": ["answer", "n"]}
SECRET = "sk-test-DO-NOT-LEAK-batch-0123456789"


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


def _client(server, cache: Path, **kw) -> LLMClient:
    kw.setdefault("backoff_base", 0.01)
    kw.setdefault("progress", False)
    kw.setdefault("mode", "batch")
    kw.setdefault("batch_poll", 0.01)
    return LLMClient(base_url=server.base_url, model="fake-model", cache_dir=cache, **kw)


ITEMS = [f"item {i}" for i in range(30)]


def test_a_completed_batch_fills_the_cache_the_live_path_reads(server, tmp_path):
    client = _client(server, tmp_path / "c")
    df = client.run(_task(), ITEMS + ITEMS[:3])  # repeated items: one request each
    assert df["status"].to_list() == ["ok"] * 33
    assert df["answer"].to_list() == [f"ECHO {x}".upper() for x in ITEMS + ITEMS[:3]]
    api = server.batch_api
    assert (api.uploads, len(api.created), len(api.submitted_lines)) == (1, 1, 30)
    assert server.chat_requests() == []
    s = client.last_stats
    assert (s.batch_submitted, s.requests, s.ok, s.batch_pending) == (30, 30, 33, 0)
    # the request file: one line per request, custom_id = the cache key, the chat body
    lines = [json.loads(x) for x in api.files["file-0001"]["data"].decode().splitlines()]
    first = client.prepare(_task(), ITEMS[0], "fake-model", 0, False)
    assert lines[0] == {"custom_id": first.key, "method": "POST", "url": "/v1/chat/completions",
                        "body": {"model": "fake-model", "messages": first.messages, **first.params}}
    # the live path now sends nothing and reads the same answers
    live = _client(server, tmp_path / "c", mode="live")
    again = live.run(_task(), ITEMS)
    assert server.chat_requests() == [] and again["cached"].all()
    assert again["answer"].to_list() == df["answer"].to_list()[:30]
    # and they equal what a live run from scratch gives
    scratch = _client(server, tmp_path / "other", mode="live").run(_task(), ITEMS)
    assert scratch["answer"].to_list() == again["answer"].to_list()
    record = json.loads(live.cache.path(first.key).read_text())
    assert record["status"] == "ok" and record["via"] == "batch_0001"


def test_partially_failed_requests_are_retried_live(server, tmp_path):
    server.batch_api.outcome, server.batch_api.fail_every = "partial", 3
    client = _client(server, tmp_path / "c")
    df = client.run(_task(), ITEMS)
    assert df["status"].to_list() == ["ok"] * 30
    assert len(server.chat_requests()) == 10  # every third line came back HTTP 500
    assert client.last_stats.requests == 40 and client.last_stats.batch_submitted == 30


def test_expired_requests_are_retried_live(server, tmp_path):
    server.batch_api.outcome, server.batch_api.answered = "expired", 12
    client = _client(server, tmp_path / "c")
    df = client.run(_task(), ITEMS)
    assert df["status"].to_list() == ["ok"] * 30
    sent = sorted(r["messages"][0]["content"] for r in server.chat_requests())
    assert sent == sorted(f"echo {x}" for x in ITEMS[12:])


def test_a_cancelled_batch_is_not_retried_and_its_rest_goes_in_a_new_batch_next_run(server, tmp_path):
    server.batch_api.outcome, server.batch_api.answered = "cancelled", 5
    client = _client(server, tmp_path / "c")
    df = client.run(_task(), ITEMS)
    assert df["status"].to_list() == ["ok"] * 5 + ["failed"] * 25
    assert set(df["error"].drop_nulls()) == {"batch cancelled: rerun to submit again"}
    assert server.chat_requests() == []
    server.batch_api.outcome = "completed"
    df2 = _client(server, tmp_path / "c").run(_task(), ITEMS)
    assert df2["status"].to_list() == ["ok"] * 30 and df2["cached"].sum() == 5
    assert len(server.batch_api.created) == 2 and len(server.batch_api.submitted_lines) == 30 + 25


def test_a_failed_batch_fails_its_items_with_the_code(server, tmp_path):
    server.batch_api.outcome = "failed"
    df = _client(server, tmp_path / "c").run(_task(), ITEMS[:4])
    assert df["status"].to_list() == ["failed"] * 4
    assert set(df["error"]) == {"batch failed (invalid_json_line): rerun to submit again"}
    assert server.chat_requests() == []


def test_a_pending_batch_is_counted_in_the_not_run_reason_and_collected_later(server, tmp_path):
    server.batch_api.polls = None  # in progress until released
    client = _client(server, tmp_path / "c", batch_wait=0)
    df = client.run(_task(), ITEMS[:20])
    assert df["status"].to_list() == ["not run"] * 20
    reason = "not run: 20 items pending in a Batch API batch; rebuild to collect them"
    assert client.not_run_reason().startswith(reason) and df["error"][0].startswith(reason)
    assert client.last_stats.batch_pending == 20
    records = list((tmp_path / "c" / "batches").glob("*.json"))
    assert len(records) == 1 and json.loads(records[0].read_text())["batch_id"] == "batch_0001"
    server.batch_api.release()
    again = _client(server, tmp_path / "c")
    df2 = again.run(_task(), ITEMS[:20])
    assert df2["status"].to_list() == ["ok"] * 20
    assert len(server.batch_api.created) == 1 and again.last_stats.batch_submitted == 0
    assert json.loads(records[0].read_text())["collected"] is True


def test_a_batch_of_other_items_of_the_same_task_is_cached_too(server, tmp_path):
    server.batch_api.polls = None
    _client(server, tmp_path / "c", batch_wait=0).run(_task(), ITEMS[:10])
    server.batch_api.release()
    df = _client(server, tmp_path / "c").run(_task(), ITEMS[:4])  # collects the whole batch
    assert df["status"].to_list() == ["ok"] * 4 and len(server.batch_api.created) == 1
    live = _client(server, tmp_path / "c", mode="live").run(_task(), ITEMS[:10])
    assert live["cached"].all() and server.chat_requests() == []


def test_request_files_respect_the_line_limit(server, tmp_path, monkeypatch):
    monkeypatch.setattr(batch, "MAX_LINES", 7)
    df = _client(server, tmp_path / "c").run(_task(), ITEMS[:20])
    assert df["status"].to_list() == ["ok"] * 20
    sizes = [len(server.batch_api.files[f"file-{k:04d}"]["data"].splitlines()) for k in (1, 2, 3)]
    assert sizes == [7, 7, 6] and len(server.batch_api.created) == 3


def test_chunk_lines_respects_count_and_bytes():
    lines = [b"x" * n for n in (40, 40, 40, 10, 10, 10, 10, 90)]
    assert batch.chunk_lines(lines, max_lines=3, max_bytes=100) == [[0, 1], [2, 3, 4], [5, 6], [7]]
    with pytest.raises(ValueError, match="line 0 alone"):
        batch.chunk_lines([b"x" * 101], max_lines=3, max_bytes=100)


class _Killed(Exception):
    pass


def test_a_run_killed_after_batches_create_finds_its_batch_instead_of_paying_twice(server, tmp_path, monkeypatch):
    real_write = batch._write
    writes = []

    def write_then_die(path, record):
        writes.append(record.get("status"))
        if record.get("batch_id"):  # batches.create answered; the record with its id is never written
            raise _Killed
        real_write(path, record)

    monkeypatch.setattr(batch, "_write", write_then_die)
    with pytest.raises(_Killed):
        _client(server, tmp_path / "c").run(_task(), ITEMS[:6])
    monkeypatch.setattr(batch, "_write", real_write)
    df = _client(server, tmp_path / "c").run(_task(), ITEMS[:6])
    assert df["status"].to_list() == ["ok"] * 6
    assert len(server.batch_api.created) == 1 and len(server.batch_api.submitted_lines) == 6


def test_budget_caps_batch_lines(server, tmp_path):
    client = _client(server, tmp_path / "c", max_requests=5)
    df = client.run(_task(), ITEMS[:8])
    assert df["status"].to_list() == ["ok"] * 5 + ["not run"] * 3
    assert df["error"][7] == llm.over_budget_reason(5)
    assert len(server.batch_api.submitted_lines) == 5 and client.last_stats.over_budget == 3


def test_no_batch_api_on_the_endpoint_says_to_use_live(server, tmp_path):
    server.script.append(("status", 404))
    df = _client(server, tmp_path / "c").run(_task(), ITEMS[:3])
    assert df["status"].to_list() == ["failed"] * 3
    assert df["error"][0] == ("batch submission failed: HTTP 404 Not Found (scripted); this endpoint offers no "
                              "Batch API: set ANALYSIS_LLM_MODE=live")


def test_the_key_is_a_header_of_every_batch_call_and_nowhere_on_disk(server, tmp_path, monkeypatch):
    monkeypatch.setenv(llm.settings.API_KEY_ENV, SECRET)
    server.batch_api.outcome, server.batch_api.answered = "expired", 3
    df = _client(server, tmp_path / "c").run(_task(), ITEMS[:6])
    assert df["status"].to_list() == ["ok"] * 6
    kinds = {(r.get("method", "POST"), r.get("path", "/chat")) for r in server.requests}
    assert len(kinds) >= 5  # upload, create, retrieve, contents, chat
    assert all(h["Authorization"] == f"Bearer {SECRET}" for h in server.headers)
    leaked = [p for p in tmp_path.rglob("*") if p.is_file() and SECRET in p.read_text(errors="replace")]
    assert leaked == []


def test_batch_calls_never_follow_a_redirect(tmp_path, monkeypatch):
    monkeypatch.setenv(llm.settings.API_KEY_ENV, SECRET)
    with FakeOpenAIServer(_echo) as elsewhere, FakeOpenAIServer(_echo) as endpoint:
        endpoint.redirect_to = elsewhere.base_url.rsplit("/v1", 1)[0]
        df = _client(endpoint, tmp_path / "c", max_retries=1).run(_task(), ITEMS[:2])
        assert df["error"][0].startswith("batch submission failed: HTTP 302 Found")
        assert elsewhere.n_requests == 0


def test_a_hanging_create_costs_one_deadline_and_the_next_run_finds_the_batch(server, tmp_path):
    server.script.extend([("pass",), ("slow", 2.0)])  # the upload answers, batches.create hangs (then happens)
    client = _client(server, tmp_path / "c", timeout=0.3, request_deadline=0.8, max_retries=0)
    t0 = time.perf_counter()
    df = client.run(_task(), ITEMS[:4])
    assert time.perf_counter() - t0 < 2.0
    assert df["status"].to_list() == ["failed"] * 4
    assert df["error"][0] in {"batch submission failed: deadline exceeded", "batch submission failed: timeout"}
    while len(server.batch_api.created) < 1 and time.perf_counter() - t0 < 10:
        time.sleep(0.05)
    df2 = _client(server, tmp_path / "c").run(_task(), ITEMS[:4])  # recovered through batches.list
    assert df2["status"].to_list() == ["ok"] * 4
    assert len(server.batch_api.created) == 1 and len(server.batch_api.submitted_lines) == 4


# ---------------------------------------------------------------------- the "done when", small


INTENT_RUN = """
import json, sys
from analysis_lib.search_arena import intents
from analysis_lib.search_arena.schema import INTENTS
from analysis_lib.llm import LLMClient
prompts = json.load(open(sys.argv[1]))
client = LLMClient(model="gpt-4.1", mode="batch", batch_poll=0.02, progress=False)
df = intents.classify_intents(prompts, client)
print(json.dumps(df["status"].value_counts().sort("status").rows()))
"""


def intent_reply(payload):
    """A deterministic labeller: the intent from a hash of the user prompt inside the B.2 prompt."""
    import hashlib

    text = payload["messages"][-1]["content"]
    h = int(hashlib.sha256(text.encode()).hexdigest(), 16)
    primary = INTENTS[h % 9]
    secondary = INTENTS[(h // 9) % 9]
    return json.dumps({"primary_intent": primary, "secondary_intent": secondary, "reasoning": "hash"})


def run_intent_subprocess(prompts_file: Path, env: dict) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", INTENT_RUN, str(prompts_file)], env=env, cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.slow
def test_intent_batch_survives_a_kill_mid_poll_and_the_live_path_then_sends_nothing(tmp_path):
    prompts = [f"How do I do task number {i}?" for i in range(400)]
    prompts_file = tmp_path / "prompts.json"
    prompts_file.write_text(json.dumps(prompts))
    cache = tmp_path / "llm"
    with FakeOpenAIServer(intent_reply) as srv:
        srv.batch_api.polls = None  # in progress until released
        env = {**os.environ, llm.settings.BASE_URL_ENV: srv.base_url, llm.settings.CACHE_ENV: str(cache),
               llm.settings.API_KEY_ENV: SECRET}
        proc = run_intent_subprocess(prompts_file, env)
        t0 = time.monotonic()
        while srv.batch_api.retrieves < 3 and time.monotonic() - t0 < 60 and proc.poll() is None:
            time.sleep(0.05)
        assert srv.batch_api.retrieves >= 3 and proc.poll() is None  # polling
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        assert proc.returncode == -signal.SIGKILL
        assert len(srv.batch_api.created) == 1 and len(srv.chat_requests()) == 0
        srv.batch_api.release()
        resumed = run_intent_subprocess(prompts_file, env)
        out, err = resumed.communicate(timeout=120)
        assert resumed.returncode == 0, err[-2000:]
        assert json.loads(out) == [["ok", 400]]
        assert len(srv.batch_api.created) == 1 and len(srv.batch_api.submitted_lines) == 400  # paid once
        live = LLMClient(base_url=srv.base_url, model="gpt-4.1", cache_dir=cache, progress=False)
        labels = intents.classify_intents(prompts, live)
        assert len(srv.chat_requests()) == 0 and live.last_stats.cache_hits == 400
        expected = [json.loads(intent_reply({"messages": [{"content": intents.build_prompt(p)}]})) for p in prompts]
        assert labels["primary_intent"].to_list() == [e["primary_intent"] for e in expected]
        assert not [p for p in cache.rglob("*") if p.is_file() and SECRET in p.read_text(errors="replace")]
