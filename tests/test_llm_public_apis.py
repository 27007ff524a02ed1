"""The field's libraries through their public interfaces only (issue 34, point 4): retries on 429/5xx with
``Retry-After`` honoured by the project's own small layer (no private ``openai`` method called or overridden), no
private nuggetizer method called, and no import cycle inside ``analysis_lib.llm``."""

from __future__ import annotations

import ast
import inspect
import json
import time
from pathlib import Path

import pytest
from fake_openai_server import FakeOpenAIServer

from analysis_lib import llm
from analysis_lib.llm import LLMClient, Task, http

ROOT = Path(__file__).resolve().parent.parent
LLM_DIR = ROOT / "analysis_lib" / "llm"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for name in llm.settings.ENV_VARS:
        monkeypatch.delenv(name, raising=False)


class RetryAfterServer(FakeOpenAIServer):
    """``("wait", status, retry_after)``: an error status with that ``Retry-After`` header."""

    def _answer(self, h, payload, action):
        if action and action[0] == "wait":
            body = json.dumps({"error": {"message": "slow down", "type": "rate_limit"}}).encode()
            self._send(h, int(action[1]), body, {"Retry-After": str(action[2])})
            return
        super()._answer(h, payload, action)


def _task() -> Task:
    return Task(name="echo", schema={"type": "object", "properties": {"answer": {"type": "string"}},
                                     "required": ["answer"]},
                build=lambda item: [{"role": "user", "content": f"echo {item}"}])


def _client(srv, tmp_path, **kw) -> LLMClient:
    return LLMClient(base_url=srv.base_url, model="m", cache_dir=tmp_path / "c", progress=False, max_concurrency=1,
                     **kw)


def test_429_and_500_are_retried_after_the_servers_retry_after(tmp_path):
    with RetryAfterServer() as srv:
        srv.script.extend([("wait", 429, 1), ("wait", 500, 1)])
        client = _client(srv, tmp_path, backoff_base=0.01, backoff_max=10, max_retries=3)
        started = time.monotonic()
        df = client.run(_task(), ["a"])
        elapsed = time.monotonic() - started
        assert df["status"].item() == "ok" and srv.n_requests == 3
        assert elapsed >= 2.0  # two waits of Retry-After: 1 s, though the backoff alone is ~0.01 s
        assert client.last_stats.retries == 2
        # cached: a second run sends nothing
        assert client.run(_task(), ["a"])["cached"].item() and srv.n_requests == 3


def test_retry_after_is_capped_by_backoff_max_and_the_deadline(tmp_path):
    with RetryAfterServer() as srv:
        srv.script.extend([("wait", 429, 30)])
        client = _client(srv, tmp_path, backoff_base=0.01, backoff_max=0.3, max_retries=2)
        started = time.monotonic()
        assert client.run(_task(), ["a"])["status"].item() == "ok"
        assert time.monotonic() - started < 5
    with RetryAfterServer() as srv:
        srv.script.extend([("wait", 429, 30)] * 5)
        client = _client(srv, tmp_path / "2", backoff_base=0.01, backoff_max=60, max_retries=4,
                         request_deadline=1.0)
        started = time.monotonic()
        df = client.run(_task(), ["a"])
        assert df["status"].item() == "failed" and "deadline" in df["error"].item()
        assert time.monotonic() - started < 5  # never slept the 30 s asked for
        assert srv.n_requests == 1


def test_400_is_not_retried(tmp_path):
    with FakeOpenAIServer() as srv:
        srv.script.extend([("status", 400)])
        client = _client(srv, tmp_path, backoff_base=0.01, max_retries=3)
        assert client.run(_task(), ["a"])["status"].item() == "failed" and srv.n_requests == 1


def test_retry_after_header_forms():
    assert http.retry_after({"retry-after": "2"}) == 2.0
    assert http.retry_after({"retry-after-ms": "250"}) == 0.25
    assert http.retry_after({"retry-after": "soon"}) is None
    date = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 100))
    assert 95 < (http.retry_after({"retry-after": date}) or 0) <= 101
    assert http.retry_after(None) is None


# ------------------------------------------------------------------------------ no private API of others


def _private_names(cls: type) -> set[str]:
    return {name for name, _ in inspect.getmembers(cls) if name.startswith("_") and not name.startswith("__")}


def _attribute_names(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)} | {
        node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}


def test_no_private_method_of_openai_or_nuggetizer_is_called_or_overridden():
    openai = pytest.importorskip("openai")
    nuggetizer = pytest.importorskip("nuggetizer.models.nuggetizer")
    private = (_private_names(openai.OpenAI) | _private_names(nuggetizer.Nuggetizer))
    files = sorted(LLM_DIR.glob("*.py")) + [ROOT / "analysis_lib" / "nuggets" / "pipeline.py"]
    used = {f.relative_to(ROOT).as_posix(): sorted(_attribute_names(f) & private) for f in files}
    assert {k: v for k, v in used.items() if v} == {}
    assert not any(issubclass(v, openai.OpenAI) for v in vars(http.sdk()).values() if isinstance(v, type))


def _imports(path: Path) -> set[str]:
    """Every ``analysis_lib.llm`` module ``path`` imports, TYPE_CHECKING blocks included."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "analysis_lib.llm":
                out |= {a.name for a in node.names if (LLM_DIR / f"{a.name}.py").exists()}
            elif node.module.startswith("analysis_lib.llm."):
                out.add(node.module.split(".")[2])
        elif isinstance(node, ast.Import):
            out |= {a.name.split(".")[2] for a in node.names if a.name.startswith("analysis_lib.llm.")}
    return out - {path.stem}


def test_no_import_cycle_in_the_llm_package():
    graph = {p.stem: _imports(p) for p in LLM_DIR.glob("*.py") if p.stem not in ("__init__", "__main__")}
    assert "client" not in graph["batch"]
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in graph.get(node, ()):
            assert state.get(nxt) != 1, f"import cycle: {' -> '.join([*path, node, nxt])}"
            if nxt not in state:
                visit(nxt, [*path, node])
        state[node] = 2

    for node in graph:
        if node not in state:
            visit(node, [])
