"""Step 2 of the Search Arena simulator: what each side says (package docstring, items 7-10).

Per turn: prompt length, response length and citation count of each side; the structural surprises (dropped
final answers, trailing user messages, empty traces); the cited URLs; and the per-side style features computed
from them exactly as the authors compute them from a release. Word counts only: the text is written in
:mod:`~analysis_lib.search_arena.simulate.output`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from analysis_lib.search_arena.domains import DOMAIN_GROUPS, group_expr
from analysis_lib.search_arena.simulate.calibration import (
    CITATION_DISPERSION,
    CITATIONS,
    HOSTS,
    MAX_CITATIONS,
    P_EMPTY_TRACE,
    P_MALFORMED_URL,
    P_MODERATION,
    P_ODD_MESSAGES,
    PROMPT_SIGMA,
    PROMPT_WORDS,
    RESPONSE_SIGMA,
    RESPONSE_WORDS,
    SOURCE_MIX,
    SYLLABLES,
    TLDS,
    WORDS_EN,
    Models,
)
from analysis_lib.search_arena.simulate.draws import categorical as _categorical
from analysis_lib.search_arena.simulate.draws import lognormal as _lognormal
from analysis_lib.search_arena.simulate.population import Population


@dataclass(frozen=True)
class Turns:
    """Turn layout, conversation-major and turn-minor: turn ``t`` belongs to conversation ``conv_of[t]``."""

    n_turns: int
    conv_of: np.ndarray
    first: np.ndarray  # index of each conversation's first turn
    turn_no: np.ndarray  # 0-based turn number within the conversation


@dataclass
class Side:
    """One side's content. Per turn: ``words`` (assistant message), ``cites``; ``keep`` = the assistant message
    is present. Per conversation: ``empty`` = no trace lists at all. ``urls``: per citation (see :func:`_urls`);
    ``features``: per conversation (the authors' definitions)."""

    words: np.ndarray
    cites: np.ndarray
    keep: np.ndarray | None = None
    empty: np.ndarray | None = None
    urls: dict[str, Any] | None = None
    features: dict[str, np.ndarray] | None = None


@dataclass(frozen=True)
class Content:
    """Everything said in the release, as counts: turns, user prompt lengths, the two sides."""

    turns: Turns
    user_words: np.ndarray
    moderated: np.ndarray
    extra_user: np.ndarray
    a: Side
    b: Side


def _side(rng: np.random.Generator, m: np.ndarray, t_intent: np.ndarray, layout: Turns, models: Models) -> Side:
    mt = m[layout.conv_of]
    words = np.clip(np.rint(_lognormal(rng, RESPONSE_WORDS[t_intent] * models.verbosity[mt], RESPONSE_SIGMA)), 3, 4000)
    mean_c = CITATIONS[t_intent] * models.citation_factor[mt]
    zp = models.zero_p[mt]
    pos_mean = np.maximum(mean_c / np.maximum(1 - zp, 1e-9) - 1.0, 0.05)
    k = CITATION_DISPERSION
    extra = rng.negative_binomial(k, k / (k + pos_mean))
    cites = np.where(rng.random(layout.n_turns) < zp, 0, np.minimum(1 + extra, MAX_CITATIONS))
    cites = np.where(models.is_search[mt], cites, 0)
    return Side(words=words.astype(np.int64), cites=cites.astype(np.int64))


def _host_pools(rng: np.random.Generator, n: int, text: bool = True) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Per group: host array and sampling weights; `other` gets a synthetic long tail. Checked against the rule.

    ``text=False``: the same draws, no hosts (empty lists)."""
    hosts: list[np.ndarray] = []
    weights: list[np.ndarray] = []
    n_tail = int(min(150_000, max(2_000, 5 * n)))
    syl = np.asarray(SYLLABLES, dtype=object)
    tl = np.asarray(TLDS, dtype=object)
    a, b, c = (rng.integers(0, len(syl), n_tail) for _ in range(3))
    t = rng.integers(0, len(tl), n_tail)
    www = np.where(rng.random(n_tail) < 0.6, "www.", "")
    if not text:
        return hosts, weights
    tail = pl.DataFrame(
        {"w": www, "a": syl[a].astype(str), "b": syl[b].astype(str), "c": syl[c].astype(str), "t": tl[t].astype(str)}
    )
    tail_hosts = tail.select(h=pl.concat_str(["w", "a", "b", "c", pl.lit("."), "t"]))["h"].unique(maintain_order=True)
    tail_ok = pl.DataFrame({"host": tail_hosts}).filter(group_expr(pl.col("host")) == "other")["host"].to_numpy()
    for g in DOMAIN_GROUPS:
        head = np.asarray(HOSTS[g], dtype=object)
        got = pl.DataFrame({"host": head.astype(str)}).select(g=group_expr(pl.col("host")))["g"].to_list()
        wrong = [h for h, gg in zip(head, got) if gg != g]
        if wrong:
            raise AssertionError(f"host pool for {g!r} has hosts the substring rule puts elsewhere: {wrong}")
        w_head = 1.0 / (np.arange(len(head)) + 1.0) ** 1.1
        if g == "other":
            w_head = w_head / w_head.sum() * 0.25  # real-host head: a quarter of `other` citations
            w_tail = 1.0 / (np.arange(len(tail_ok)) + 1.0) ** 0.6
            w_tail = w_tail / w_tail.sum() * 0.75
            head = np.concatenate([head, tail_ok.astype(object)])
            w_head = np.concatenate([w_head, w_tail])
        hosts.append(head)
        weights.append(w_head / w_head.sum())
    return hosts, weights


def _urls(
    rng: np.random.Generator,
    s: Side,
    m: np.ndarray,
    layout: Turns,
    family: np.ndarray,
    pools: list[np.ndarray],
    pool_w: list[np.ndarray],
    text: bool = True,
) -> dict[str, Any]:
    """Per citation: source group ``grp``, ``url``, ``marker_no`` (restarting at 1 each turn), ``cit_turn``,
    ``host``. ``text=False``: ``grp`` and ``cit_turn`` only, from the same draws (no strings are built)."""
    group_cdf = {f: np.array(v + [max(1 - sum(v), 0.0)]) for f, v in SOURCE_MIX.items()}
    c = s.cites
    n_c = int(c.sum())
    cit_turn = np.repeat(np.arange(layout.n_turns), c)
    fam = family[m[layout.conv_of[cit_turn]]]
    grp = np.empty(n_c, dtype=np.int64)
    for f, p in group_cdf.items():
        sel = np.flatnonzero(fam == f)
        grp[sel] = _categorical(rng, p, len(sel))
    host = np.empty(n_c, dtype=object)
    for g in range(len(DOMAIN_GROUPS)):
        sel = np.flatnonzero(grp == g)
        if text:
            host[sel] = pools[g][_categorical(rng, pool_w[g], len(sel))]
        else:
            rng.random(len(sel))  # the one uniform per draw that _categorical takes
    w_en = np.asarray(WORDS_EN, dtype=object)
    if not text:
        for low, high in ((0, len(w_en)), (0, len(w_en)), (1, 100_000), (0, 2**62)):  # the path draws below
            rng.integers(low, high, n_c)
        grp[rng.random(n_c) < P_MALFORMED_URL] = len(DOMAIN_GROUPS) - 1
        return {"grp": grp, "cit_turn": cit_turn}
    path = pl.DataFrame(
        {
            "a": w_en[rng.integers(0, len(w_en), n_c)].astype(str),
            "b": w_en[rng.integers(0, len(w_en), n_c)].astype(str),
            "k": rng.integers(1, 100_000, n_c),
            "v": rng.integers(0, 2**62, n_c),
        }
    )
    host_s = pl.Series("host", host.astype(str), dtype=pl.String)
    malformed = rng.random(n_c) < P_MALFORMED_URL
    grp[malformed] = len(DOMAIN_GROUPS) - 1
    video_id = pl.col("v").cast(pl.String).str.slice(0, 11)
    page = pl.col("k").cast(pl.String)
    dash = pl.lit("-")
    url = (
        path.with_columns(host=host_s, malformed=pl.Series(malformed))
        .select(
            pl.when(pl.col("malformed"))
            .then(pl.concat_str([pl.lit("https:///"), "a", pl.lit("-"), "b"]))
            .when(pl.col("host").str.contains("youtube.com", literal=True))
            .then(pl.concat_str([pl.lit("https://"), "host", pl.lit("/watch?v="), video_id]))
            .otherwise(pl.concat_str([pl.lit("https://"), "host", pl.lit("/"), "a", dash, "b", dash, page]))
            .alias("url")
        )["url"]
    )
    # marker numbers restart at 1 in each turn
    starts = np.concatenate([[0], np.cumsum(c)[:-1]])
    marker_no = np.arange(n_c) - np.repeat(starts, c) + 1
    return {"grp": grp, "url": url, "marker_no": marker_no, "cit_turn": cit_turn, "host": np.where(malformed, "", host)}


def _features(s: Side, layout: Turns, turns: np.ndarray, n: int) -> dict[str, np.ndarray]:
    """Per-side features, the authors' definitions (``preprocess_for_style``), int32 as they store them."""
    assert s.keep is not None and s.empty is not None and s.urls is not None
    conv_of = layout.conv_of
    wsum = np.bincount(conv_of, weights=np.where(s.keep, s.words, 0), minlength=n)
    wcnt = np.bincount(conv_of, weights=s.keep.astype(float), minlength=n)
    length = (wsum / wcnt).astype(np.int32)
    n_lists = np.where(s.empty, 0, turns)
    csum = np.bincount(conv_of, weights=s.cites, minlength=n)
    cit = np.where(n_lists > 0, csum / np.maximum(n_lists, 1), 0.0).astype(np.int32)
    out = {"response_length": length, "citation_count": cit}
    conv_cit = conv_of[s.urls["cit_turn"]]
    for gi, g in enumerate(DOMAIN_GROUPS):
        cnt = np.bincount(conv_cit[s.urls["grp"] == gi], minlength=n)
        out[f"num_cites_{g}"] = cnt.astype(np.int64)
        out[f"cites_{g}"] = (cnt > 0).astype(np.int32)
    return out


def draw_content(rng: np.random.Generator, pop: Population, models: Models, text: bool = True) -> Content:
    """Items 7-10 of the generative model and the per-side features, in this order of draws.

    ``text=False`` makes the same draws but builds no URL strings (``Side.urls`` holds the source groups only):
    the features, and every later draw, are those of ``text=True``, at a fraction of the cost (for fits that need
    the features only; the release table needs ``text=True``)."""
    n, turns, ma, mb = pop.n, pop.turns, pop.ma, pop.mb
    is_search = models.is_search

    # 7-9. per-turn counts (conv-major, turn-minor)
    n_turns = int(turns.sum())
    conv_of = np.repeat(np.arange(n), turns)
    first = np.concatenate([[0], np.cumsum(turns)[:-1]])
    turn_no = np.arange(n_turns) - np.repeat(first, turns)
    layout = Turns(n_turns=n_turns, conv_of=conv_of, first=first, turn_no=turn_no)
    t_intent = pop.intent[conv_of]
    prompt_mean = PROMPT_WORDS[t_intent] * np.where(turn_no == 0, 1.0, 0.5)
    user_words = np.clip(np.rint(_lognormal(rng, prompt_mean, PROMPT_SIGMA)), 1, 3000).astype(np.int64)
    moderated = (rng.random(n) < P_MODERATION) & (np.arange(n) != pop.null_intent)

    sa, sb = _side(rng, ma, t_intent, layout, models), _side(rng, mb, t_intent, layout, models)

    # surprises on structure
    odd = rng.random(n) < P_ODD_MESSAGES
    drop_final = odd & (turns >= 2)
    drop_side_b = rng.random(n) < 0.5
    extra_user = odd & (turns == 1)
    last_turn = turn_no == turns[conv_of] - 1
    sa.keep = ~(last_turn & drop_final[conv_of] & ~drop_side_b[conv_of])
    sb.keep = ~(last_turn & drop_final[conv_of] & drop_side_b[conv_of])
    sa.cites = np.where(sa.keep, sa.cites, 0)
    sb.cites = np.where(sb.keep, sb.cites, 0)
    sa.empty = is_search[ma] & (rng.random(n) < P_EMPTY_TRACE) | ~is_search[ma]
    sb.empty = is_search[mb] & (rng.random(n) < P_EMPTY_TRACE) | ~is_search[mb]
    sa.cites = np.where(sa.empty[conv_of], 0, sa.cites)
    sb.cites = np.where(sb.empty[conv_of], 0, sb.cites)

    # 10. URLs
    pools, pool_w = _host_pools(rng, n, text)
    sa.urls = _urls(rng, sa, ma, layout, models.family, pools, pool_w, text)
    sb.urls = _urls(rng, sb, mb, layout, models.family, pools, pool_w, text)

    # features per side (the authors' definitions; int32 cast as in preprocess_for_style)
    sa.features = _features(sa, layout, turns, n)
    sb.features = _features(sb, layout, turns, n)
    return Content(turns=layout, user_words=user_words, moderated=moderated, extra_user=extra_user, a=sa, b=sb)
