"""An LLM step whose request budget runs out part-way (issue 38 point 2): what finished is kept, the result is
"not run" with a reason that starts with the budget (so a book runner reruns it), never a number computed from a
part of the items."""

from __future__ import annotations

import pytest
from fake_openai_server import FakeOpenAIServer
from test_describe import _responder

from analysis_lib import llm
from analysis_lib.llm import LLMClient
from analysis_lib.search_arena import describe
from analysis_lib.search_arena.describe import Settings


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for name in llm.settings.ENV_VARS:
        monkeypatch.delenv(name, raising=False)


def test_describing_differences_with_a_budget_that_runs_out_in_validation(tmp_path):
    group_a = [f"tell me about my cat number {i}" for i in range(150)]
    group_b = [f"tell me about my dog number {i}" for i in range(150)]
    settings = Settings(rounds=3, samples_per_group=5, n_validation=20, top_k=5)
    with FakeOpenAIServer(_responder) as srv:
        # 3 proposals + 1 reduction + 30 of the 3 x 40 validation checks
        client = LLMClient(base_url=srv.base_url, model="m", cache_dir=tmp_path, progress=False, max_requests=34)
        part = describe.describe_differences(group_a, group_b, client, settings=settings)
        assert srv.n_requests == 34
        assert part.status == llm.NOT_RUN
        assert part.note.startswith("not run: request budget ($ANALYSIS_LLM_MAX_REQUESTS=34) reached")
        assert "90 of 120 validate requests not sent" in part.note
        assert part.validation["n_a"].sum() + part.validation["n_b"].sum() == 30  # what finished is kept
        # a rebuild with a larger budget finishes the rest, the first 34 from the cache
        client = LLMClient(base_url=srv.base_url, model="m", cache_dir=tmp_path, progress=False, max_requests=500)
        full = describe.describe_differences(group_a, group_b, client, settings=settings)
        assert full.status == "ok" and srv.n_requests == 34 + 90
        assert set(full.validation["n_a"].to_list()) == {20}
