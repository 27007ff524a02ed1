"""Issues 38 and 44, end to end: the book runner against loopback endpoints (:mod:`plausible_llm`).

One private book (its own root, cache, state and results) is built three times by ``python -m bookbuild``:

1. a chat-only endpoint (``/v1/embeddings`` answers ``404 model_not_found``) with a request budget that runs
   out part-way, chapters 02 and 09 (answer records nobody has judged yet, so chapter 09 sends its judging);
2. a plain rebuild (no ``--force``), embeddings now served (3,072 values a text, as text-embedding-3-large), a
   budget large enough for chapter 09 but not for chapter 02's describing differences;
3. chapters 02 and 07 against a second endpoint with embeddings, on another port, with the same caches.

The chapters of a build run two at a time. Each build must exit 0; every LLM number is ``data == "llm"`` and names the
model, the endpoint and the kind of call; every other row of an LLM step says why it did not run, per ID; budget rows
are resumed by the plain rebuild; the topic numbers say which encoder ran (the offline fallback with no embedding model,
the endpoint's model with one). The second endpoint gets its own embedding requests (none of the first's vectors
reused), the topic and query-class numbers name it, chapter 07's page shows its LLM usage line, and the estimate printed
before the build is within 10% of the requests the endpoint received.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from analysis_lib.search_arena import prompt_sets, topics
from bookbuild import keys
from bookbuild.recorder import Result

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import REPO, book_root  # noqa: E402
from plausible_llm import PlausibleServer, _text  # noqa: E402

MODEL = "some-local-model"
CHAPTERS = ("02_prompts", "09_answer_engines")
#: the smallest chapter 02 that still runs every step: 20 intent requests, 100 topic prompts with c-TF-IDF keywords
TOPIC_PROMPTS = 100
SIZES = ("--bootstrap", "5", "--set", "intent_sample=20", "--set", f"topic_prompts={TOPIC_PROMPTS}",
         "--set", "topic_representation=c-tf-idf", "--set", "min_cluster_size=10", "--set", "min_samples=5")
#: the third build: chapter 07 classifies the queries of 30 battles (NG-Q), within a budget chapter 02 exhausts
QUERY_BATTLES, BUDGET_SECOND = 30, 60
#: chapter 02 sends 20 intents and a few topic names before describing differences; chapter 09 about 40
BUDGET_SHORT, BUDGET_LONGER = 30, 150
ENGINES = ("You.com", "BingChat", "Perplexity")
TOPICS = ("zoos", "electric cars", "nuclear power", "remote work")


def _answers(path: Path) -> Path:
    """Answer records in the released layout that no judge has seen: 12 answers, 3 engines, 4 statements and
    2 cited pages each (the sentences of page 1 repeat the answer's first two statements)."""
    rows = []
    for k in range(12):
        topic, engine = TOPICS[k % 4], ENGINES[k % 3]
        s = [f"{topic.capitalize()} have supporters among experts [1].", f"Critics say {topic} cost too much [2].",
             f"Studies of {topic} from {2010 + k} disagree [1, 2].", "I hope this helps."]
        row = {"id": f"q{k}", "Question": f"Why should we support {topic}?", "Output": " ".join(s),
               "answer_engine": engine, "is_charged": k % 2 == 0,
               "S1": f"https://a{k}.example", "S1_content": f"Title: a\n{s[0]} {s[2]}",
               "S2": f"https://b{k}.example", "S2_content": f"Title: b\nMany say {topic} cost too much."}
        row |= {f"S{j}": "" for j in range(3, 11)}
        rows.append(row)
    path.write_text(json.dumps(rows, indent=1))
    return path


def _build(root: Path, server: PlausibleServer, budget: int | None, chapters: tuple[str, ...] = CHAPTERS,
           *extra: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-test", ANALYSIS_LLM_MODEL=MODEL,
               ANALYSIS_LLM_MAX_REQUESTS="none" if budget is None else str(budget))
    for name in ("ANALYSIS_LLM_OFFLINE", "ANALYSIS_LLM_MODE", "ANALYSIS_LLM_CACHE"):
        env.pop(name, None)
    cmd = [sys.executable, "-m", "bookbuild", "--root", str(root), "--notebooks-dir", str(REPO / "notebooks"),
           "--data", "sample:2000", "--cache-dir", str(root / "cache"), "--state-dir", str(root / "state"),
           "--answers", str(root / "answers.json"), "--only", ",".join([*chapters, "99_reproduction_status"]),
           "--no-book", "--jobs", "2", "--memory-gb", "6", *SIZES, *extra]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900, check=False)
    assert proc.returncode == 0, f"build failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def _ran(stdout: str) -> set[str]:
    """The chapters the runner's summary line says ran (``notebooks: 2 ran (a, b), 1 skipped (c); …``)."""
    line = next(x for x in stdout.splitlines() if x.startswith("notebooks:"))
    return {s.strip() for s in line.split(" ran (", 1)[1].split(")", 1)[0].split(",")} - {"-", ""}


def _results(root: Path, stem: str) -> list[Result]:
    return [Result(**r) for r in json.loads((root / "book" / "_results" / f"{stem}.json").read_text())["results"]]


def _budget_rows(rows: list[Result]) -> list[Result]:
    return [r for r in rows if r.status == "not run" and "request budget" in (r.reason or r.note)]


def _check_llm_rows(rows: list[Result], server: PlausibleServer) -> None:
    """Every LLM number is in the ``llm`` evidence class and names the model at the loopback endpoint and the kind
    of call (chat, or the paper's embedding model's embeddings)."""
    llm_rows = [r for r in rows if r.data == "llm"]
    for r in llm_rows:
        assert r.status != "not run"
        assert r.llm in (f"{MODEL} @ {server.base_url} (chat)",
                         f"text-embedding-3-large @ {server.base_url} (embeddings)"), (r.analysis_id, r.quantity, r.llm)
    for r in rows:
        if r.status == "not run":
            assert (r.reason or r.note).strip(), (r.analysis_id, r.quantity)


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    root = book_root(tmp_path_factory.mktemp("llmbook"))
    _answers(root / "answers.json")
    return root


def test_budget_runs_out_a_plain_rebuild_resumes_and_another_endpoint_gets_its_own_requests(root):
    with PlausibleServer(embeddings=False, faults=(0.02, 0.01, 0.01), fault_seed=1) as server:
        # (a) chat only, a budget that runs out part-way in both chapters
        first = _build(root, server, BUDGET_SHORT)
        assert server.embedding_calls >= 1  # asked, refused: the offline encoder ran
        p02, p09 = _results(root, "02_prompts"), _results(root, "09_answer_engines")
        for rows in (p02, p09):
            _check_llm_rows(rows, server)
        b5 = [r for r in p02 if r.analysis_id == "SA-B5" and r.data == "llm"]
        assert b5, "the intents ran within the budget"
        topics_note = next(r.note for r in p02 if r.analysis_id == "SA-B4" and r.quantity == "number of topics")
        assert "all-MiniLM-L6-v2" in topics_note and "model_not_found" in topics_note
        assert _budget_rows(p02) and _budget_rows(p09), "the budget ran out in both chapters"
        assert {r.analysis_id for r in _budget_rows(p09)} >= {"AE-F8", "AE-F8b"}
        assert len(server.chat_requests()) <= 2 * BUDGET_SHORT + sum(server.injected.values())
        n_first = len(server.chat_requests())

        # (b) chat + embeddings, a larger budget: a plain rebuild reruns both chapters and finishes chapter 09
        server.embeddings_enabled = True
        second = _build(root, server, BUDGET_LONGER)
        assert _ran(second.stdout) >= set(CHAPTERS)
        p02, p09 = _results(root, "02_prompts"), _results(root, "09_answer_engines")
        for rows in (p02, p09):
            _check_llm_rows(rows, server)
        assert not _budget_rows(p09), [r.quantity for r in _budget_rows(p09)]
        assert any(r.data == "llm" for r in p09 if r.analysis_id == "AE-F8")
        assert not keys.unfinished(root / "book" / "_results" / "09_answer_engines.json")
        topics_note = next(r.note for r in p02 if r.analysis_id == "SA-B4" and r.quantity == "number of topics")
        assert "text-embedding-3-large" in topics_note and "MiniLM" not in topics_note
        n_second = len(server.chat_requests())
        assert n_second > n_first
    assert _ran(first.stdout) >= set(CHAPTERS)

    # (c) chapters 02 and 07 against another endpoint with embeddings: nothing of the first endpoint is reused
    with PlausibleServer(embeddings=True) as other:
        third = _build(root, other, BUDGET_SECOND, ("02_prompts", "07_nuggets"),
                       "--set", f"query_class_battles={QUERY_BATTLES}", "--set", "cosine_battles=50",
                       "--set", "rouge_battles=50")
        assert _ran(third.stdout) >= {"02_prompts", "07_nuggets"}
        embedded = [t for r in other.requests if "input" in r for t in r["input"]]
        prompts = prompt_sets.search_arena_prompts("all", n=TOPIC_PROMPTS, seed=0)
        assert set(embedded) == {t[: topics.MAX_EMBED_CHARS] for t in prompts}  # every prompt asked again, once
        assert len(embedded) == len(set(embedded))
        p02, p07 = _results(root, "02_prompts"), _results(root, "07_nuggets")
        for rows in (p02, p07):
            _check_llm_rows(rows, other)
        b4 = {r.quantity: r for r in p02 if r.analysis_id == "SA-B4"}
        for quantity in ("number of topics", "largest topic share of clustered prompts (%)",
                         "unclustered prompts (%)"):
            assert (b4[quantity].data, b4[quantity].llm) == (
                "llm", f"text-embedding-3-large @ {other.base_url} (embeddings)"), b4[quantity]
        assert b4["unique English prompts modelled"].data == "real"
        ng_q = [r for r in p07 if r.analysis_id == "NG-Q" and r.status != "not run"]
        assert ng_q and {(r.data, r.llm) for r in ng_q} == {("llm", f"{MODEL} @ {other.base_url} (chat)")}
        page = (root / "book" / "chapters" / "07_nuggets.ipynb").read_text()
        rated = [r for r in other.chat_requests() if "Given the question:" in _text(r)]
        assert "LLM usage of this chapter" in page and f"{len(rated)} requests (0 retried" in page
        assert "no LLM output used" not in page
        estimate = re.search(r"to send: at most ([\d,]+) requests", third.stdout)
        assert estimate, third.stdout[-3000:]
        expected, received = int(estimate.group(1).replace(",", "")), other.n_requests
        print(f"second endpoint: estimate {expected} requests, received {received} "
              f"({len(other.chat_requests())} chat, {received - len(other.chat_requests())} embeddings)")
        assert abs(expected - received) <= 0.1 * received, (expected, received, third.stdout[-3000:])
