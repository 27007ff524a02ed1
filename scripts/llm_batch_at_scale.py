"""Issue #24's "done when", at full size: intent labels for the 32,884 user turns of a simulated 24k release
through a local fake Batch API; the run is killed mid-poll (SIGKILL of its process), resumed without submitting
the same requests twice, and the live path then makes zero requests and gives the same labels.

Usage: ``.venv/bin/python scripts/llm_batch_at_scale.py [--turns 32884] [--seed 0]``. Everything runs on
127.0.0.1 (the fake server of ``tests/fake_openai_server.py``) in a temporary folder; prints what it did and
exits 1 if any check fails. The small version of the same run is the test
``tests/test_llm_batch.py::test_intent_batch_survives_a_kill_mid_poll_and_the_live_path_then_sends_nothing``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from fake_openai_server import FakeOpenAIServer  # noqa: E402

from analysis_lib import llm  # noqa: E402
from analysis_lib.search_arena import intents  # noqa: E402
from analysis_lib.search_arena.schema import FULL_SIZE, INTENTS  # noqa: E402
from analysis_lib.search_arena.simulate import simulate_release  # noqa: E402

TURNS_24K = 32_884


def user_turns(n: int, seed: int) -> list[str]:
    """The user turns of a simulated 24k release (both sides share them), the first ``n``."""
    battles = simulate_release(FULL_SIZE, seed).raw
    turns = [m["content"] for msgs in battles["messages_a"].to_list() for m in msgs if m["role"] == "user"]
    if len(turns) < n:
        raise SystemExit(f"the simulated release has {len(turns):,} user turns, fewer than {n:,}")
    return turns[:n]


def reply(payload: dict) -> str:
    """A deterministic labeller: intents from a hash of the request's prompt."""
    h = int(hashlib.sha256(payload["messages"][-1]["content"].encode()).hexdigest(), 16)
    return json.dumps({"primary_intent": INTENTS[h % 9],
                       "secondary_intent": INTENTS[(h // 9) % 9], "reasoning": "hash"})


def child(prompts_file: str) -> None:
    prompts = json.loads(Path(prompts_file).read_text())
    client = llm.LLMClient(model="gpt-4.1", mode="batch", batch_poll=0.5, progress=False)
    t0 = time.perf_counter()
    df = intents.classify_intents(prompts, client)
    print(json.dumps({"status": dict(df["status"].value_counts().iter_rows()), "seconds": time.perf_counter() - t0,
                      "estimate": client.last_estimate.line() if client.last_estimate else None,
                      "stats": client.last_stats.summary()}))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--turns", type=int, default=TURNS_24K)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.child:
        child(a.child)
        return 0
    t0 = time.perf_counter()
    prompts = user_turns(a.turns, a.seed)
    print(f"{len(prompts):,} user turns from the simulated 24k release (seed {a.seed}) in "
          f"{time.perf_counter() - t0:.1f} s")
    ok = True
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer(reply) as srv:
        prompts_file = Path(tmp) / "prompts.json"
        prompts_file.write_text(json.dumps(prompts))
        cache = Path(tmp) / "llm"
        env = {**os.environ, llm.settings.BASE_URL_ENV: srv.base_url, llm.settings.CACHE_ENV: str(cache)}
        env.pop(llm.settings.API_KEY_ENV, None)
        cmd = [sys.executable, __file__, "--child", str(prompts_file)]
        srv.batch_api.polls = None  # in progress until released
        t1 = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, cwd=ROOT)
        while srv.batch_api.retrieves < 3 and proc.poll() is None:
            time.sleep(0.2)
        files, created, lines = srv.batch_api.uploads, len(srv.batch_api.created), len(srv.batch_api.submitted_lines)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        print(f"first run: {files} request files uploaded, {created} batches with {lines:,} requests submitted, "
              f"polled {srv.batch_api.retrieves} times, then killed (SIGKILL, exit {proc.returncode}) after "
              f"{time.perf_counter() - t1:.1f} s")
        srv.batch_api.release()
        t2 = time.perf_counter()
        out = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, check=False)
        if out.returncode != 0:
            print(out.stderr[-3000:])
            return 1
        resumed = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"resumed run: {resumed['status']} in {time.perf_counter() - t2:.1f} s; "
              f"batches created in all: {len(srv.batch_api.created)}, requests submitted in all: "
              f"{len(srv.batch_api.submitted_lines):,} (unique {len(set(srv.batch_api.submitted_lines)):,})")
        print(f"  {resumed['stats']}")
        ok &= resumed["status"] == {"ok": len(prompts)} and len(srv.batch_api.created) == created
        ok &= len(srv.batch_api.submitted_lines) == lines == len(set(prompts))
        t3 = time.perf_counter()
        live = llm.LLMClient(base_url=srv.base_url, model="gpt-4.1", cache_dir=cache, progress=False)
        labels = intents.classify_intents(prompts, live)
        expected = [json.loads(reply({"messages": [{"content": intents.build_prompt(q)}]}))["primary_intent"]
                    for q in prompts]
        same = labels["primary_intent"].to_list() == expected
        print(f"live run on the filled cache: {len(srv.chat_requests())} chat requests, "
              f"{live.last_stats.cache_hits:,} cache hits, labels equal to the fake labeller's: {same} "
              f"({time.perf_counter() - t3:.1f} s)")
        ok &= same and len(srv.chat_requests()) == 0
    print("all checks passed" if ok else "A CHECK FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
