"""Step 4 of the Search Arena simulator: the text and the release table in the raw parquet schema.

Writes every message (words drawn from small per-script vocabularies: not meant to be readable, but with exactly
the drawn word counts), the nested metadata structs (``formatted_messages``, ``llm_config``, ``llm_trace``,
``web_search_config``, ``web_search_trace``), the conversation ids, and assembles the ``pyarrow`` table with the
columns, nesting and physical types of ``search-arena-chat-24k.parquet``; then the :class:`Planted` truth.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa

from analysis_lib.search_arena.domains import DOMAIN_GROUPS
from analysis_lib.search_arena.models import NON_SEARCH_MODEL
from analysis_lib.search_arena.schema import MODERATION_PROMPT
from analysis_lib.search_arena.simulate.calibration import (
    BETAS,
    FEATURES,
    MAX_CITATIONS,
    P_BOTHBAD,
    P_EMPTY_TRACE,
    P_MALFORMED_URL,
    P_MODERATION,
    P_MULTILINGUAL,
    P_NULL_COUNTRY,
    P_ODD_MESSAGES,
    P_TIE,
    P_VOTE,
    P_VOTE_NONSEARCH,
    PROMPT_SIGMA,
    PROMPT_WORDS,
    SOURCE_MIX,
    WORDS_EN,
    WORDS_RU,
    WORDS_XX,
    WORDS_ZH,
    Models,
    Planted,
)
from analysis_lib.search_arena.simulate.content import Content, Side
from analysis_lib.search_arena.simulate.draws import lognormal as _lognormal
from analysis_lib.search_arena.simulate.population import Population
from analysis_lib.search_arena.simulate.voting import Votes

SYSTEM_PROMPT = "You are a helpful assistant with access to web search. Cite your sources."


def _word_buffer(rng: np.random.Generator, vocab: list[str], n_words: int) -> tuple[str, np.ndarray]:
    """A long text of vocabulary words; word k spans buf[off[k]:off[k+1]-1]."""
    idx = rng.integers(0, len(vocab), n_words)
    lens = np.array([len(w) for w in vocab])[idx] + 1
    off = np.concatenate([[0], np.cumsum(lens)])
    return " ".join(np.asarray(vocab, dtype=object)[idx].tolist()) + " ", off


def _texts(
    rng: np.random.Generator, counts: np.ndarray, script: np.ndarray, buffers: list[tuple[str, np.ndarray]]
) -> list[str]:
    """Texts with exactly ``counts[i]`` whitespace-separated words in script ``script[i]``."""
    out: list[str] = [""] * len(counts)
    for s, (buf, off) in enumerate(buffers):
        idx = np.flatnonzero(script == s)
        if not len(idx):
            continue
        k = counts[idx]
        start = (rng.random(len(idx)) * (len(off) - 1 - k)).astype(np.int64)
        a = off[start].tolist()
        b = (off[start + k] - 1).tolist()
        for j, i in enumerate(idx.tolist()):
            out[i] = buf[a[j] : b[j]]
    return out


def _list_array(offsets: np.ndarray, values: pa.Array) -> pa.Array:
    return pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32)), values)


def _msg_struct(content: list[str] | np.ndarray, role: list[str] | np.ndarray) -> pa.Array:
    return pa.StructArray.from_arrays(
        [pa.array(list(content), pa.string()), pa.array(list(role), pa.string())], names=["content", "role"]
    )


def _api_name(raw: str) -> str:
    for suffix in ("-high-loc", "-high", "-grounding", "-wo-search"):
        if raw.endswith(suffix):
            raw = raw[: -len(suffix)]
            break
    return raw


@dataclass(frozen=True)
class Texts:
    """The written messages: user turns (``user``, per turn), trailing unanswered user messages (``extra``, for
    conversations ``extra_rows``), and each side's assistant messages (per turn); ids and each side's citation
    style (``citation_format`` for side A, ``citation_format_b`` for side B, drawn independently)."""

    user: np.ndarray
    extra_rows: np.ndarray
    extra: list[str]
    a: list[str]
    b: list[str]
    conv_id: list[str]
    citation_format: np.ndarray
    citation_format_b: np.ndarray


def write_texts(rng: np.random.Generator, pop: Population, content: Content) -> Texts:
    """Word buffers, then user, trailing-user, side-A and side-B texts, then conversation ids and citation style."""
    buffers = [
        _word_buffer(rng, list(WORDS_EN), 400_000),
        _word_buffer(rng, list(WORDS_RU), 120_000),
        _word_buffer(rng, list(WORDS_ZH), 120_000),
        _word_buffer(rng, list(WORDS_XX), 120_000),
    ]
    layout = content.turns
    t_script = pop.script[layout.conv_of]
    user_text = _texts(rng, content.user_words, t_script, buffers)
    for i in np.flatnonzero(content.moderated).tolist():
        user_text[layout.first[i]] = MODERATION_PROMPT
    extra_rows = np.flatnonzero(content.extra_user)
    extra_words = np.clip(np.rint(_lognormal(rng, PROMPT_WORDS[pop.intent[extra_rows]] * 0.5, PROMPT_SIGMA)), 1, 3000)
    extra_text = _texts(rng, extra_words.astype(np.int64), pop.script[extra_rows], buffers)
    a_text = _texts(rng, content.a.words, t_script, buffers)
    b_text = _texts(rng, content.b.words, t_script, buffers)
    hexes = [rng.bytes(16).hex() for _ in range(pop.n)]
    conv_id = [f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}" for h in hexes]
    cfs = np.where(rng.random(pop.n) < 0.5, "standardized", "original")
    # side B's style, drawn last so that every earlier draw (and side A's style) is as before
    cfs_b = np.where(rng.random(pop.n) < 0.5, "standardized", "original")
    return Texts(
        user=np.asarray(user_text, dtype=object), extra_rows=extra_rows, extra=extra_text, a=a_text, b=b_text,
        conv_id=conv_id, citation_format=cfs, citation_format_b=cfs_b,
    )


def _messages(
    pop: Population, content: Content, texts: Texts, asst: list[str], keep: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Flat content/role in conversation order + per-conversation offsets."""
    layout, n, extra_rows = content.turns, pop.n, texts.extra_rows
    n_turns = layout.n_turns
    conv = np.concatenate([layout.conv_of, layout.conv_of, extra_rows])
    key = np.concatenate([2 * layout.turn_no, 2 * layout.turn_no + 1, 2 * pop.turns[extra_rows]])
    text = np.concatenate([texts.user, np.asarray(asst, dtype=object), np.asarray(texts.extra, dtype=object)])
    user, asst_role = np.full(n_turns, "user", object), np.full(n_turns, "assistant", object)
    role = np.concatenate([user, asst_role, np.full(len(extra_rows), "user", object)])
    ok = np.concatenate([np.ones(n_turns, bool), keep, np.ones(len(extra_rows), bool)])
    conv, key, text, role = conv[ok], key[ok], text[ok], role[ok]
    order = np.lexsort((key, conv))
    counts = np.bincount(conv, minlength=n)
    offs = np.concatenate([[0], np.cumsum(counts)])
    return text[order], role[order], offs


def _formatted(asst: list[str], s: Side) -> list[str]:
    """Each answer followed by an HTML block of its citation links (as ``formatted_messages`` shows them)."""
    assert s.urls is not None
    url_list = s.urls["url"].to_list()
    ends = np.cumsum(s.cites).tolist()
    begins = (np.cumsum(s.cites) - s.cites).tolist()
    out = []
    for j, text in enumerate(asst):
        if ends[j] > begins[j]:
            links = "\n".join(f'<a href="{url}">[{k + 1}]</a>' for k, url in enumerate(url_list[begins[j] : ends[j]]))
            out.append(f"{text}\n\n<details><summary>Citations</summary>\n{links}\n</details>")
        else:
            out.append(text)
    return out


def _metadata(
    m: np.ndarray, s: Side, asst: list[str], pop: Population, content: Content, texts: Texts, models: Models,
    style: np.ndarray,
) -> pa.Array:
    """One side's ``system_<side>_metadata`` struct column (``style``: that side's citation style)."""
    assert s.keep is not None and s.empty is not None and s.urls is not None
    n, layout, country = pop.n, content.turns, pop.country
    fm_content, fm_role, fm_offs = _messages(pop, content, texts, _formatted(asst, s), s.keep)
    fmsg = _list_array(fm_offs, _msg_struct(fm_content, fm_role))
    # llm_config
    fam = models.family[m]
    raw = models.raw_ids[m]
    api = np.array([_api_name(r) for r in raw], dtype=object)
    ctx = np.array([models.table[k]["search_context"] for k in m], dtype=object)
    is_loc = np.array([r.endswith("-loc") for r in raw])
    max_ct = pa.array(np.where(fam == "gpt", 16384, 0), pa.int64(), mask=fam != "gpt")
    max_ot = pa.array(np.where(fam == "gemini", 8192, 0), pa.int64(), mask=fam != "gemini")
    max_t = pa.array(np.where(fam == "sonar", 8192, 0), pa.int64(), mask=fam != "sonar")
    temp = pa.array(np.where(fam == "gemini", 1.0, 0.7), pa.float64(), mask=fam == "gpt")
    top_p = pa.array(np.where(fam == "gemini", 0.95, 1.0), pa.float64(), mask=fam == "gpt")
    has_wso = fam != "gemini"
    null = np.array(None, dtype=object)
    loc_country = np.where(is_loc, country, null)
    approx = pa.StructArray.from_arrays([pa.array(loc_country.tolist(), pa.string())], names=["country"])
    user_loc = pa.StructArray.from_arrays(
        [approx, pa.array(np.where(is_loc, "approximate", null).tolist(), pa.string())],
        names=["approximate", "type"],
        mask=pa.array(~is_loc),
    )
    wso = pa.StructArray.from_arrays(
        [pa.array(np.where(has_wso, ctx, null).tolist(), pa.string()), user_loc],
        names=["search_context_size", "user_location"],
        mask=pa.array(~has_wso),
    )
    params = pa.StructArray.from_arrays(
        [max_ct, max_ot, max_t, temp, top_p, wso],
        names=[
            "max_completion_tokens", "max_output_tokens", "max_tokens", "temperature", "top_p", "web_search_options"
        ],
    )
    llm_config = pa.StructArray.from_arrays([pa.array(api.tolist(), pa.string()), params], names=["name", "params"])
    # llm_trace: system prompt + the user turns
    tr_conv = np.concatenate([np.arange(n), layout.conv_of])
    tr_key = np.concatenate([np.full(n, -1), layout.turn_no])
    tr_content = np.concatenate([np.full(n, SYSTEM_PROMPT, object), texts.user])
    tr_role = np.concatenate([np.full(n, "system", object), np.full(layout.n_turns, "user", object)])
    order = np.lexsort((tr_key, tr_conv))
    tr_offs = np.concatenate([[0], np.cumsum(np.bincount(tr_conv, minlength=n))])
    llm_trace = _list_array(tr_offs, _msg_struct(tr_content[order], tr_role[order]))
    none = pa.nulls(n, pa.string())
    wsc = pa.StructArray.from_arrays([none, none, none], names=["context_manager", "scrape_engine", "search_engine"])
    # web_search_trace: conv -> turn lists -> [marker, url]
    n_lists = np.where(s.empty, 0, pop.turns)
    list_turn = np.flatnonzero(~s.empty[layout.conv_of])  # turns that own a list, in order
    pair_counts = s.cites[list_turn]
    markers = np.array([f"[{k}]" for k in range(MAX_CITATIONS + 2)], dtype=object)[s.urls["marker_no"]]
    vals = np.empty(2 * len(markers), dtype=object)
    vals[0::2] = markers
    vals[1::2] = np.asarray(s.urls["url"].to_list(), dtype=object)
    inner = _list_array(np.arange(0, len(vals) + 1, 2), pa.array(vals.tolist(), pa.string()))
    middle = _list_array(np.concatenate([[0], np.cumsum(pair_counts)]), inner)
    trace = _list_array(np.concatenate([[0], np.cumsum(n_lists)]), middle)
    return pa.StructArray.from_arrays(
        [
            pa.array(style.tolist(), pa.string()),
            pa.array(country.tolist(), pa.string()),
            pa.array(texts.conv_id, pa.string()),
            fmsg,
            llm_config,
            llm_trace,
            wsc,
            trace,
        ],
        names=[
            "citation_format_standardized", "client_country", "conv_id", "formatted_messages", "llm_config",
            "llm_trace", "web_search_config", "web_search_trace",
        ],
    )


def release_table(pop: Population, content: Content, votes: Votes, texts: Texts, models: Models) -> pl.DataFrame:
    """The raw release: one row per conversation, in the schema of ``search-arena-chat-24k.parquet``."""
    assert content.a.keep is not None and content.b.keep is not None
    ca, ra, oa = _messages(pop, content, texts, texts.a, content.a.keep)
    cb, rb, ob = _messages(pop, content, texts, texts.b, content.b.keep)
    langs_flat = [x for ls in pop.lang_lists for x in ls]
    lang_offs = np.concatenate([[0], np.cumsum([len(ls) for ls in pop.lang_lists])])
    table = pa.table(
        {
            "model_a": pa.array(models.raw_ids[pop.ma].tolist(), pa.string()),
            "model_b": pa.array(models.raw_ids[pop.mb].tolist(), pa.string()),
            "winner": pa.array(votes.winner.tolist(), pa.string()),
            "judge": pa.array(pop.judge, pa.string()),
            "turn": pa.array(pop.turns.astype(np.int64)),
            "timestamp": pa.array(pop.ts, pa.timestamp("ns")),
            "messages_a": _list_array(oa, _msg_struct(ca, ra)),
            "messages_b": _list_array(ob, _msg_struct(cb, rb)),
            "system_a_metadata": _metadata(pop.ma, content.a, texts.a, pop, content, texts, models,
                                           texts.citation_format),
            "system_b_metadata": _metadata(pop.mb, content.b, texts.b, pop, content, texts, models,
                                           texts.citation_format_b),
            "primary_intent": pa.array(pop.primary.tolist(), pa.string()),
            "secondary_intent": pa.array(pop.secondary.tolist(), pa.string()),
            "languages": _list_array(lang_offs, pa.array(langs_flat, pa.string())),
        }
    )
    raw_frame = pl.from_arrow(table)
    assert isinstance(raw_frame, pl.DataFrame)
    return raw_frame


def planted_truth(
    pop: Population, content: Content, votes: Votes, texts: Texts, models: Models, seed: int
) -> Planted:
    """The :class:`Planted` record: ratings, coefficients, z-scoring constants and one truth row per conversation."""
    fa, fb = content.a.features, content.b.features
    assert fa is not None and fb is not None
    ma, mb, voted, z = pop.ma, pop.mb, votes.voted, votes.z
    truth_cols: dict[str, Any] = {
        "conv_id": texts.conv_id,
        "model_a": models.paper[ma].tolist(),
        "model_b": models.paper[mb].tolist(),
        "voted": voted,
    }
    for f in FEATURES:
        truth_cols[f"{f}_a"] = fa[f]
        truth_cols[f"{f}_b"] = fb[f]
    for g in DOMAIN_GROUPS:
        truth_cols[f"num_cites_{g}_a"] = fa[f"num_cites_{g}"]
        truth_cols[f"num_cites_{g}_b"] = fb[f"num_cites_{g}"]
    for j, f in enumerate(FEATURES):
        truth_cols[f"z_{f}"] = pl.Series(np.where(voted, z[:, j], np.nan)).fill_nan(None)
    truth_cols["logit"] = votes.logit
    truth_cols["p_a"] = votes.p_a
    truth = pl.DataFrame(truth_cols)
    ratings = models.ratings
    return Planted(
        ratings=ratings,
        betas=dict(BETAS),
        features=FEATURES,
        p_tie=P_TIE,
        p_bothbad=P_BOTHBAD,
        n=pop.n,
        seed=seed,
        feature_mean={f: float(votes.mu[j]) for j, f in enumerate(FEATURES)},
        feature_std={f: float(votes.sd[j]) for j, f in enumerate(FEATURES)},
        truth=truth,
        params={
            "p_vote": P_VOTE,
            "p_vote_nonsearch": P_VOTE_NONSEARCH,
            "nonsearch_model": NON_SEARCH_MODEL,
            "nonsearch_rating": ratings[NON_SEARCH_MODEL],
            "self_battle_row": pop.self_row,
            "null_intent_row": pop.null_intent,
            "rates": {
                "null_country": P_NULL_COUNTRY, "moderation": P_MODERATION, "empty_trace": P_EMPTY_TRACE,
                "odd_messages": P_ODD_MESSAGES, "malformed_url": P_MALFORMED_URL, "multilingual": P_MULTILINGUAL,
            },
            "models": models.table,
            "source_mix": {f: dict(zip(DOMAIN_GROUPS, v + [1 - sum(v)])) for f, v in SOURCE_MIX.items()},
            "z_population": "all voted battles (winner not null), population std",
            "tie_model": votes.tie_model,
        },
    )
