"""The mirrored prompt and answer sets of the authors' describing-differences runs (Search Arena, App. C).

Files (``data_manifest.csv`` ids ``describing_diffs/*``, fetched hash-checked by :func:`analysis_lib.fetch.fetch`):

- ``search_arena_vs_simpleqa``: 4,326 English Search Arena prompts and the 4,326 SimpleQA problems;
- ``search_arena_vs_browsecomp``: 1,266 English Search Arena prompts and the 1,266 BrowseComp problems
  (benchmark items meant to stay out of training corpora: use for statistics only, never print them);
- ``{lang,search}_{factual,synthesis,text_processing}_qa``: one question with a search and a non-search
  model's answer, from the Text Arena (``lang_``) and Search Arena (``search_``) deployments.

Prompts are stripped of surrounding whitespace; "deduplicated" means exact duplicates after stripping are
dropped, keeping the first occurrence.
"""

from __future__ import annotations

import json
import os
import socket

import numpy as np
import polars as pl

from analysis_lib.extras import require
from analysis_lib.fetch import fetch
from analysis_lib.search_arena.loader import words_expr

PROMPT_FILES = {"simpleqa": "search_arena_vs_simpleqa", "browsecomp": "search_arena_vs_browsecomp"}
RESPONSE_SETS = {
    ("text_arena", "Factual Lookup"): "lang_factual_qa",
    ("text_arena", "Info Synthesis"): "lang_synthesis_qa",
    ("text_arena", "Text Processing"): "lang_text_processing_qa",
    ("search_arena", "Factual Lookup"): "search_factual_qa",
    ("search_arena", "Info Synthesis"): "search_synthesis_qa",
}


def _read(name: str, cache_dir=None) -> pl.DataFrame:
    path = fetch(f"describing_diffs/{name}", cache_dir=cache_dir)
    return pl.read_csv(path).drop("", strict=False)


def _dedup(texts: list[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for t in texts:
        t = (t or "").strip()
        if t and t not in seen:
            seen.add(t)
            out.append(t)
    return out


def prompt_pairs(benchmark: str, *, cache_dir=None) -> pl.DataFrame:
    """The raw file pairing Search Arena prompts with ``benchmark`` (``simpleqa`` or ``browsecomp``).

    Columns ``text``, ``group_name`` (``search_arena`` or the benchmark), all rows as released.
    """
    if benchmark not in PROMPT_FILES:
        raise ValueError(f"benchmark must be one of {sorted(PROMPT_FILES)}, got {benchmark!r}")
    return _read(PROMPT_FILES[benchmark], cache_dir).select("text", "group_name")


def benchmark_prompts(benchmark: str, *, dedup: bool = False, cache_dir=None) -> list[str]:
    """All SimpleQA or BrowseComp problems (4,326 / 1,266; never print the BrowseComp ones)."""
    df = prompt_pairs(benchmark, cache_dir=cache_dir).filter(pl.col("group_name") == benchmark)
    texts = [t.strip() for t in df["text"].to_list()]
    return _dedup(texts) if dedup else texts


def search_arena_prompts(which: str = "all", *, dedup: bool = True, n: int | None = None, seed: int = 0,
                         cache_dir=None) -> list[str]:
    """English Search Arena prompts from the mirrored files.

    ``which``: ``"simpleqa"`` (the 4,326 paired with SimpleQA), ``"browsecomp"`` (the 1,266), or ``"all"``
    (both samples pooled). With ``dedup`` exact duplicates are dropped: 3,990 / 1,225 / 4,747 unique prompts.
    ``n``: a uniform sample of ``n`` of them without replacement (seeded, in file order), e.g. for a quick build;
    ``None`` (or ``n`` at least their number): all.
    """
    names = list(PROMPT_FILES) if which == "all" else [which]
    texts: list[str] = []
    for bench in names:
        df = prompt_pairs(bench, cache_dir=cache_dir).filter(pl.col("group_name") == "search_arena")
        texts.extend(t.strip() for t in df["text"].to_list())
    texts = _dedup(texts) if dedup else texts
    if n is None or n >= len(texts):
        return texts
    if n < 1:
        raise ValueError(f"n must be a positive number of prompts or None, got {n!r}")
    keep = np.sort(np.random.default_rng(seed).choice(len(texts), size=n, replace=False))
    return [texts[i] for i in keep]


def response_pairs(arena: str, intent: str, *, cache_dir=None) -> pl.DataFrame:
    """Questions with a search and a non-search model's answer (App. C.2 inputs).

    ``arena``: ``"text_arena"`` or ``"search_arena"``; ``intent``: ``"Factual Lookup"``, ``"Info Synthesis"``
    or (Text Arena only) ``"Text Processing"``. Columns ``question``, ``answer_search``,
    ``answer_non_search``: one row per question (each file holds each question once per group).
    """
    key = (arena, intent)
    if key not in RESPONSE_SETS:
        raise ValueError(f"no response set for {key}; available: {sorted(RESPONSE_SETS)}")
    df = _read(RESPONSE_SETS[key], cache_dir)
    s = df.filter(pl.col("group_name") == "search").select("question", pl.col("answer").alias("answer_search"))
    n = df.filter(pl.col("group_name") == "non-search").select(
        "question", pl.col("answer").alias("answer_non_search")
    )
    s = s.unique("question", keep="first", maintain_order=True)
    n = n.unique("question", keep="first", maintain_order=True)
    return s.join(n, on="question", how="inner", maintain_order="left")


# ------------------------------------------------------------------------------ external datasets (SA-G)

#: Hugging Face ids of the Appendix G comparison datasets. WildChat: the non-toxic release the paper samples
#: from (Zhao et al. 2024); CORAL: the authors' release (Cheng et al. 2025), test split conversations.
WILDCHAT_ID = "allenai/WildChat-nontoxic"
CORAL_ID = "ariya2357/CORAL"
CORAL_FILE = "test/test_conversation.json"


class ExternalDataUnavailable(RuntimeError):
    """An external dataset could not be loaded (offline, gated, moved); the message says which and why."""


def _turns_frame(rows: list[tuple[int, str]], name: str) -> pl.DataFrame:
    frame = pl.DataFrame(
        {"dataset": [name] * len(rows), "turns": [r[0] for r in rows], "prompt": [r[1] for r in rows]},
        schema={"dataset": pl.String, "turns": pl.Int64, "prompt": pl.String},
    )
    # whitespace word count (the paper's prompt length), the same count the battle data uses
    return frame.with_columns(words_expr(pl.col("prompt")).cast(pl.Int64).alias("prompt_words"))


def _require_hub(dataset_id: str, timeout_s: float) -> None:
    """Fail fast (no retry loop) when the Hugging Face hub is switched off or unreachable."""
    if os.environ.get("HF_HUB_OFFLINE", "").strip() in {"1", "true", "True", "yes"}:
        raise ExternalDataUnavailable(f"{dataset_id}: HF_HUB_OFFLINE is set")
    host = os.environ.get("HF_ENDPOINT", "https://huggingface.co").split("://")[-1].split("/")[0]
    try:
        socket.create_connection((host, 443), timeout=min(timeout_s, 5.0)).close()
    except OSError:
        raise ExternalDataUnavailable(f"{dataset_id}: the Hugging Face hub ({host}) is not reachable from this "
                                      "build") from None


def load_wildchat(n: int = 100_000, *, timeout_s: float = 20.0) -> pl.DataFrame:
    """The first ``n`` WildChat-nontoxic conversations (streamed): ``dataset``, ``turns``, ``prompt`` (first
    user message), ``prompt_words``. The paper uses a random 100k sample; a streamed prefix is what can be
    read without downloading all 3.2M. Raises :class:`ExternalDataUnavailable` when the hub is unreachable."""
    load_dataset = require("datasets", "hf", purpose="WildChat").load_dataset
    os.environ.setdefault("HF_HUB_ETAG_TIMEOUT", str(int(timeout_s)))
    os.environ.setdefault("HF_HUB_DOWNLOAD_TIMEOUT", str(int(timeout_s)))
    _require_hub(WILDCHAT_ID, timeout_s)
    try:
        stream = load_dataset(WILDCHAT_ID, split="train", streaming=True)
        rows = []
        for rec in stream:
            conv = rec.get("conversation") or []
            first = next((m.get("content", "") for m in conv if m.get("role") == "user"), "")
            rows.append((int(rec.get("turn") or sum(m.get("role") == "user" for m in conv)), first or ""))
            if len(rows) >= n:
                break
    except Exception as err:  # noqa: BLE001 - offline, gated, renamed: all mean "not available here"
        raise ExternalDataUnavailable(
            f"{WILDCHAT_ID} could not be loaded ({type(err).__name__}: {str(err)[:200]})"
        ) from err
    if not rows:
        raise ExternalDataUnavailable(f"{WILDCHAT_ID}: no conversations read")
    return _turns_frame(rows, "WildChat")


def load_coral(*, timeout_s: float = 20.0) -> pl.DataFrame:
    """CORAL conversations (test split): ``dataset``, ``turns``, ``prompt`` (first question), ``prompt_words``
    (of the first question). Raises :class:`ExternalDataUnavailable` when the hub is unreachable."""
    hf_hub_download = require("huggingface_hub", "hf", purpose="CORAL").hf_hub_download
    os.environ.setdefault("HF_HUB_ETAG_TIMEOUT", str(int(timeout_s)))
    os.environ.setdefault("HF_HUB_DOWNLOAD_TIMEOUT", str(int(timeout_s)))
    _require_hub(CORAL_ID, timeout_s)
    try:
        path = hf_hub_download(CORAL_ID, CORAL_FILE, repo_type="dataset")
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except Exception as err:  # noqa: BLE001
        raise ExternalDataUnavailable(
            f"{CORAL_ID} could not be loaded ({type(err).__name__}: {str(err)[:200]})"
        ) from err
    convs = data if isinstance(data, list) else list(data.values()) if isinstance(data, dict) else []
    rows = []
    for conv in convs:
        turns = ((conv.get("turns") or conv.get("conversation") or conv.get("dialog") or [])
                 if isinstance(conv, dict) else conv)
        if not isinstance(turns, list) or not turns:
            continue
        first = turns[0]
        q = ((first.get("question") or first.get("query") or first.get("content") or "")
             if isinstance(first, dict) else str(first))
        rows.append((len(turns), str(q)))
    if not rows:
        raise ExternalDataUnavailable(f"{CORAL_ID}: unrecognised layout of {CORAL_FILE}")
    return _turns_frame(rows, "CORAL")
