"""Cross-arena deployments of Gemini-2.5-Pro with and without web search (Search Arena §3.3, Figure 8).

Two deployments, one vote coding:

- **Text Arena**: the search model ``gemini-2.5-pro-exp-03-25-grounding-none`` (search on, inline citations
  off) against its non-search twin only; released as ``data/text_arena_battles.jsonl`` in
  github.com/lmarena/search-arena (Git LFS, 544 battles). :func:`load_text_arena` reads and validates it.
- **Search Arena**: the non-search model ``gemini-2.5-pro-exp-03-25-wo-search`` (paper name
  ``gemini-2.5-pro``) against the search models, without the OpenAI (``gpt``) ones.
  :func:`search_arena_cross_battles` selects those battles from the tidy battle frame of
  :func:`analysis_lib.data.load_battles`.

Each vote is oriented from the search model's side (column ``vote``):

- ``search``: the user preferred the search model's answer;
- ``non-search``: the user preferred the non-search model's answer;
- ``tie``: every other voted outcome, i.e. ``tie`` **and** ``tie (bothbad)``. This is the authors' coding in
  ``scripts/cross_setting_analysis.ipynb``: everything starts as a tie and only ``winner`` equal to the
  search side or the non-search side is recoded, so both-bad votes count as ties.

Battles without a vote (``winner`` null) are not part of either analysis: the authors drop them from the
Search Arena battles before coding; the Text Arena file holds only voted battles (a null ``winner`` there
is dropped and reported by the loader). The per-intent binomial tests (:func:`vote_table`) exclude ties and
are one-sided in the observed direction, as :func:`analysis_lib.stats.preference_binomial_test` and the
paper. Choosing the side after seeing the data halves the two-sided p-value, and the paper tests eight intents
without a multiplicity correction: :func:`intent_tests` adds the two-sided p-values and their Holm adjustment
over the Figure 8 intents beside the paper's values (our addition, not the paper's).

All ``share`` columns are fractions in [0, 1]; notebooks format them as percentages.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from analysis_lib.data import WINNERS, sample_size
from analysis_lib.simulate.text_arena import N_BATTLES as TEXT_ARENA_SAMPLE_SIZE
from analysis_lib.stats import benchmark_correlations, preference_binomial_test

log = logging.getLogger(__name__)

TEXT_ARENA_SEARCH_MODEL = "gemini-2.5-pro-exp-03-25-grounding-none"
"""Raw id of the search-enabled Gemini-2.5-Pro in the Text Arena deployment."""
SEARCH_ARENA_NON_SEARCH_MODEL = "gemini-2.5-pro-exp-03-25-wo-search"
"""Raw id of the non-search Gemini-2.5-Pro in the Search Arena release (paper name ``gemini-2.5-pro``)."""
EXCLUDED_OPPONENT_SUBSTRING = "gpt"
"""Search Arena opponents whose raw id contains this are left out (the authors' filter)."""

INTENT_ORDER: tuple[str, ...] = (
    "Factual Lookup",
    "Info Synthesis",
    "Analysis",
    "Recommendation",
    "Explanation",
    "Creative Generation",
    "Guidance",
    "Text Processing",
)
"""Order of the intent categories in Figure 8 (``Other`` is plotted by neither panel)."""
VOTES: tuple[str, ...] = ("search", "non-search", "tie")


class TextArenaFormatError(ValueError):
    """A line of the Text Arena file does not have the expected fields; the message names line and field."""


# ---------------------------------------------------------------------------------------------- coding


def orient_votes(frame: pl.DataFrame, search_side: str = "search_side") -> pl.DataFrame:
    """Add ``vote`` (``search`` / ``non-search`` / ``tie``) from ``winner`` and the search model's side.

    ``search_side`` names a column holding ``"model_a"`` or ``"model_b"``. Any non-null winner other than
    the two sides (``tie``, ``tie (bothbad)``) is a tie; a null winner gives a null vote.
    """
    w, s = pl.col("winner"), pl.col(search_side)
    other = pl.when(s == "model_a").then(pl.lit("model_b")).otherwise(pl.lit("model_a"))
    return frame.with_columns(
        pl.when(w.is_null())
        .then(pl.lit(None, dtype=pl.String))
        .when(w == s)
        .then(pl.lit("search"))
        .when(w == other)
        .then(pl.lit("non-search"))
        .otherwise(pl.lit("tie"))
        .alias("vote")
    )


def search_arena_cross_battles(
    battles: pl.DataFrame,
    non_search_model: str = SEARCH_ARENA_NON_SEARCH_MODEL,
    exclude_substring: str | None = EXCLUDED_OPPONENT_SUBSTRING,
) -> pl.DataFrame:
    """The Search Arena battles of the non-search model against search models, with an oriented ``vote``.

    ``battles`` is the tidy battle frame (needs ``raw_model_a``, ``raw_model_b``, ``winner`` and
    ``primary_intent``; without raw columns ``model_a`` / ``model_b`` are matched instead). Kept: voted
    battles where exactly one side is ``non_search_model`` and the other side's raw id does not contain
    ``exclude_substring``. Battles of the model against itself are dropped (the authors' filter would keep
    them as a tie or as one win for each side; it is not a search vs non-search comparison).

    Returns the kept battles with ``search_side``, ``search_model``, ``intent`` (= ``primary_intent``) and
    ``vote``.
    """
    a_col, b_col = ("raw_model_a", "raw_model_b") if "raw_model_a" in battles.columns else ("model_a", "model_b")
    need = {a_col, b_col, "winner", "primary_intent"}
    missing = sorted(need - set(battles.columns))
    if missing:
        raise ValueError(f"battle frame lacks column(s) {missing}; expected the tidy frame of load_battles")
    a, b = pl.col(a_col), pl.col(b_col)
    a_is, b_is = a == non_search_model, b == non_search_model
    if exclude_substring:
        keep_a = a_is & ~b.str.contains(exclude_substring, literal=True)
        keep_b = b_is & ~a.str.contains(exclude_substring, literal=True)
    else:
        keep_a, keep_b = a_is, b_is
    out = battles.filter(pl.col("winner").is_not_null() & (keep_a ^ keep_b))
    self_battles = battles.filter(pl.col("winner").is_not_null() & a_is & b_is).height
    if self_battles:
        log.info(
            "search_arena_cross_battles: dropped %d battle(s) of %s against itself", self_battles, non_search_model
        )
    a_plain = pl.col(a_col) == non_search_model
    out = out.with_columns(
        pl.when(a_plain).then(pl.lit("model_b")).otherwise(pl.lit("model_a")).alias("search_side"),
        pl.when(a_plain).then(pl.col(b_col)).otherwise(pl.col(a_col)).alias("search_model"),
        pl.col("primary_intent").alias("intent"),
    )
    return orient_votes(out)


# ------------------------------------------------------------------------------------------ tabulation


def vote_table(
    frame: pl.DataFrame,
    by: str | None = "intent",
    order: Iterable[str] | None = INTENT_ORDER,
    split_ties: bool = False,
) -> pl.DataFrame:
    """Vote counts and shares per group (or overall with ``by=None``) with the binomial test of each.

    Columns: ``<by>``, ``n`` (battles), ``search``, ``non_search``, ``tie`` (counts), ``share_search``,
    ``share_non_search``, ``share_tie`` (fractions of ``n``), ``favours`` (``search``, ``non-search`` or
    ``even``), ``alternative`` and ``p_value`` (one-sided in the observed direction, ties excluded unless
    ``split_ties``). Groups listed in ``order`` come first in that order, the rest (e.g. ``Other``) after,
    alphabetically; an ``order`` group without battles gets a row of zeros and a NaN p-value.
    """
    frame = frame.filter(pl.col("vote").is_not_null())
    keys = [by] if by else []
    counts = frame.group_by(keys or pl.lit(1).alias("_all")).agg(
        pl.len().alias("n"),
        (pl.col("vote") == "search").sum().alias("search"),
        (pl.col("vote") == "non-search").sum().alias("non_search"),
        (pl.col("vote") == "tie").sum().alias("tie"),
    )
    rows: dict[Any, dict[str, Any]] = {}
    for r in counts.iter_rows(named=True):
        rows[r[by] if by else "all"] = r
    if by:
        listed = list(order or ())
        rest = sorted((g for g in rows if g not in set(listed)), key=lambda g: (g is None, str(g)))  # null last
        groups = listed + rest
    else:
        groups = ["all"]
    out = []
    for g in groups:
        r = rows.get(g, {"n": 0, "search": 0, "non_search": 0, "tie": 0})
        n, s, ns, t = int(r["n"]), int(r["search"]), int(r["non_search"]), int(r["tie"])
        test = preference_binomial_test(s, ns, t, split_ties=split_ties)
        row = {by: g} if by else {}
        row.update(
            n=n,
            search=s,
            non_search=ns,
            tie=t,
            share_search=s / n if n else float("nan"),
            share_non_search=ns / n if n else float("nan"),
            share_tie=t / n if n else float("nan"),
            favours="search" if s > ns else "non-search" if ns > s else "even",
            alternative=test.alternative,
            p_value=test.p_value,
        )
        out.append(row)
    return pl.DataFrame(out)


def vote_shares_long(
    table: pl.DataFrame, by: str = "intent", include: Iterable[str] | None = INTENT_ORDER
) -> pl.DataFrame:
    """Long frame (``<by>``, ``vote``, ``count``, ``share``) of a :func:`vote_table` for Figure 8."""
    if include is not None:
        table = table.filter(pl.col(by).is_in(list(include)))
    parts = []
    for vote, col in (("search", "search"), ("non-search", "non_search"), ("tie", "tie")):
        parts.append(
            table.select(
                pl.col(by),
                pl.lit(vote).alias("vote"),
                pl.col(col).alias("count"),
                (pl.col(col) / pl.col("n")).alias("share"),
            )
        )
    return pl.concat(parts)


# -------------------------------------------------------------------------------- Text Arena loader


@dataclass
class TextArenaReport:
    """What :func:`load_text_arena_report` read, dropped and why."""

    source: str
    lines: int = 0
    battles: int = 0
    dropped: dict[str, int] = field(default_factory=dict)
    conversation_field: str = ""

    def __str__(self) -> str:
        dropped = ", ".join(f"{k}: {v}" for k, v in self.dropped.items()) or "none"
        return (
            f"Text Arena {self.source}: {self.lines} line(s), {self.battles} battle(s) kept; dropped: {dropped}; "
            f"conversations read from {self.conversation_field or '—'}_a/b"
        )


def _check_conversation(value: Any, where: str) -> str:
    if not isinstance(value, list) or not value:
        raise TextArenaFormatError(
            f"{where}: expected a non-empty list of {{role, content}} messages, got {type(value).__name__}"
        )
    for i, msg in enumerate(value):
        if not isinstance(msg, Mapping) or "role" not in msg or "content" not in msg:
            raise TextArenaFormatError(f"{where}[{i}]: expected a dict with 'role' and 'content', got {msg!r:.80}")
    if value[0]["role"] != "user":
        raise TextArenaFormatError(f"{where}[0]: the first message must be the user's, got role {value[0]['role']!r}")
    content = value[0]["content"]
    if isinstance(content, list):  # multimodal content: keep the text parts
        content = " ".join(str(p.get("text", "")) if isinstance(p, Mapping) else str(p) for p in content)
    return str(content)


def _parse_text_arena_row(row: Any, where: str, search_model: str) -> tuple[dict[str, Any] | None, str, str]:
    """One validated record, or ``None`` with a drop reason; also returns the conversation field used."""
    if not isinstance(row, Mapping):
        raise TextArenaFormatError(f"{where}: expected a JSON object, got {type(row).__name__}")
    for name in ("model_a", "model_b"):
        if not isinstance(row.get(name), str) or not row.get(name):
            raise TextArenaFormatError(f"{where}, field {name!r}: missing or not a string")
    if "winner" not in row:
        raise TextArenaFormatError(f"{where}, field 'winner': missing")
    winner = row["winner"]
    if winner is not None and winner not in WINNERS:
        raise TextArenaFormatError(f"{where}, field 'winner': {winner!r} is not one of {list(WINNERS)} or null")
    intent_field = "intent" if "intent" in row else "primary_intent" if "primary_intent" in row else None
    if intent_field is None or not isinstance(row[intent_field], str) or not row[intent_field]:
        raise TextArenaFormatError(f"{where}, field 'intent' (or 'primary_intent'): missing or not a string")
    conv = "conversation" if "conversation_a" in row else "messages" if "messages_a" in row else None
    if conv is None:
        raise TextArenaFormatError(
            f"{where}: no conversation field: expected 'conversation_a'/'conversation_b' or 'messages_a'/'messages_b'"
        )
    if f"{conv}_b" not in row:
        raise TextArenaFormatError(f"{where}, field '{conv}_b': missing")
    prompt = _check_conversation(row[f"{conv}_a"], f"{where}, field '{conv}_a'")
    _check_conversation(row[f"{conv}_b"], f"{where}, field '{conv}_b'")
    a, b = row["model_a"], row["model_b"]
    if (a == search_model) == (b == search_model):
        what = "both sides are" if a == search_model else "neither side is"
        raise TextArenaFormatError(
            f"{where}, fields 'model_a'/'model_b': {what} the search model {search_model!r} ({a!r} vs {b!r})"
        )
    if winner is None:
        return None, "no vote (winner null)", conv
    turn = row.get("turn")
    record = {
        "battle_id": str(row.get("question_id") or row.get("id") or where),
        "model_a": a,
        "model_b": b,
        "winner": winner,
        "search_side": "model_a" if a == search_model else "model_b",
        "non_search_model": b if a == search_model else a,
        "intent": row[intent_field],
        "prompt": prompt,
        "turn": int(turn) if isinstance(turn, (int, float)) and not isinstance(turn, bool) else None,
        "language": row.get("language") if isinstance(row.get("language"), str) else None,
    }
    return record, "", conv


_TEXT_ARENA_SCHEMA = {
    "battle_id": pl.String,
    "model_a": pl.String,
    "model_b": pl.String,
    "winner": pl.String,
    "search_side": pl.String,
    "non_search_model": pl.String,
    "intent": pl.String,
    "prompt": pl.String,
    "turn": pl.Int64,
    "language": pl.String,
}


def load_text_arena_report(
    source: str | Path | Iterable[Mapping[str, Any]],
    *,
    search_model: str = TEXT_ARENA_SEARCH_MODEL,
    seed: int = 0,
) -> tuple[pl.DataFrame, TextArenaReport]:
    """Read the Text Arena deployment and return (battles, report).

    ``source``: a path to the released ``text_arena_battles.jsonl`` (one JSON object per line), ``"sample"``
    (544 battles, the deployment's size) or ``"sample:N"`` for :func:`analysis_lib.simulate.text_arena.text_arena`
    (``seed`` applies; the rule is :func:`analysis_lib.data.sample_size`, so a file whose name merely starts
    with "sample", such as ``sample_real.jsonl``, is read as a file), or an
    iterable of row dicts in the same schema. Each row must have ``model_a``, ``model_b`` (exactly one of them
    ``search_model``), ``winner`` (``model_a``, ``model_b``, ``tie``, ``tie (bothbad)`` or null), ``intent``
    (or ``primary_intent``) and the two conversations as ``conversation_a``/``conversation_b`` or
    ``messages_a``/``messages_b`` (lists of ``{role, content}``, user first). A malformed line raises
    :class:`TextArenaFormatError` naming the line and the field; blank lines are skipped; rows with a null
    winner are dropped and counted in the report.

    The frame has one row per battle: ``battle_id``, ``model_a``, ``model_b``, ``winner``, ``search_side``,
    ``non_search_model``, ``intent``, ``prompt``, ``turn``, ``language`` and the oriented ``vote``.
    """
    n_sample = sample_size(source, default=TEXT_ARENA_SAMPLE_SIZE)
    if n_sample is not None:
        from analysis_lib.simulate.text_arena import text_arena

        rows, _ = text_arena(n=n_sample, seed=seed)
        items: Iterable[tuple[str, Any]] = ((f"sample row {i + 1}", r) for i, r in enumerate(rows))
        label = str(source)
    elif isinstance(source, (str, Path)):
        path = Path(source)
        if not path.exists():
            raise FileNotFoundError(
                f"Text Arena file {path} not found. It is data/text_arena_battles.jsonl in "
                "github.com/lmarena/search-arena (Git LFS); pass its local path, or 'sample' for the simulator."
            )
        items = _jsonl_items(path)
        label = str(path)
    else:
        items = ((f"row {i + 1}", r) for i, r in enumerate(source))
        label = "rows"
    report = TextArenaReport(source=label)
    records, convs = [], set()
    for where, row in items:
        report.lines += 1
        record, reason, conv = _parse_text_arena_row(row, where, search_model)
        convs.add(conv)
        if record is None:
            report.dropped[reason] = report.dropped.get(reason, 0) + 1
            continue
        records.append(record)
    report.battles = len(records)
    report.conversation_field = "/".join(sorted(convs))
    frame = orient_votes(pl.DataFrame(records, schema=_TEXT_ARENA_SCHEMA))
    return frame, report


def _jsonl_items(path: Path) -> Iterable[tuple[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            where = f"{path.name}, line {lineno}"
            try:
                yield where, json.loads(line)
            except json.JSONDecodeError as err:
                raise TextArenaFormatError(f"{where}: not valid JSON ({err.msg} at column {err.colno})") from None


def load_text_arena(source: str | Path | Iterable[Mapping[str, Any]], **kwargs: Any) -> pl.DataFrame:
    """:func:`load_text_arena_report` without the report (which is logged)."""
    frame, report = load_text_arena_report(source, **kwargs)
    log.info("%s", report)
    return frame


def text_arena_kind(source: object) -> str:
    """Data kind of a Text Arena source for the Recorder: ``"simulated"`` for ``sample``/``sample:N`` (as
    :func:`analysis_lib.data.sample_size` reads them), else ``"real"``."""
    return "simulated" if sample_size(source, default=TEXT_ARENA_SAMPLE_SIZE) is not None else "real"


def search_vs_nonsearch_gains(frame: pl.DataFrame) -> pl.DataFrame:
    """Figure F.2 values as one row per model: each benchmark's search and non-search scores and the change
    ``<benchmark>_gain`` = search - non-search (points). ``frame`` is the published F.2 table (columns
    ``model``, ``variant``, ``simpleqa``, ``arenahard_v2``)."""
    wide = frame.pivot(on="variant", index="model", values=["simpleqa", "arenahard_v2"])
    return wide.with_columns(
        (pl.col(f"{b}_search") - pl.col(f"{b}_non-search")).alias(f"{b}_gain") for b in ("simpleqa", "arenahard_v2")
    )


# ------------------------------------------------------------------------ ties and per-intent tests


@dataclass(frozen=True)
class TieShareComparison:
    """Tie shares of two deployments (Figure 8), from :func:`compare_tie_shares`; shares are fractions.

    ``most_tied``: the ``k`` intents of the first table with the highest tie share (highest first);
    ``overall_first`` / ``overall_second``: tie share over all battles of each table (every row, ``Other``
    included); ``overall_difference``: first minus second; ``by_intent``: one row per intent with
    ``share_tie_first``, ``share_tie_second``, ``difference`` (first minus second, NaN where either has no
    battles); ``n_first_higher``: intents where the first share is strictly higher, out of ``n_compared``
    intents with battles in both.
    """

    most_tied: tuple[str, ...]
    overall_first: float
    overall_second: float
    overall_difference: float
    by_intent: pl.DataFrame
    n_first_higher: int
    n_compared: int


def _overall_tie_share(table: pl.DataFrame) -> float:
    n = int(table["n"].sum())
    return int(table["tie"].sum()) / n if n else float("nan")


def compare_tie_shares(
    first: pl.DataFrame,
    second: pl.DataFrame,
    k: int = 3,
    by: str = "intent",
    include: Iterable[str] | None = INTENT_ORDER,
) -> TieShareComparison:
    """Compare the tie shares of two per-intent :func:`vote_table` frames (e.g. Text Arena, Search Arena).

    The paper (§3.3, Fig 8) says the Text Arena has the most ties in Analysis, Creative Generation and Guidance
    and that ties are less frequent in the Search Arena in every category. ``most_tied`` ranks the intents of
    ``include`` (all groups if None) with at least one battle in ``first`` by tie share, highest first; equal
    shares keep the order of ``include``. The overall shares pool every row of each table.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    groups = list(include) if include is not None else first[by].to_list()

    def shares(table: pl.DataFrame) -> dict[Any, tuple[int, float]]:
        return {r[by]: (int(r["n"]), float(r["share_tie"])) for r in table.iter_rows(named=True)}

    s1, s2 = shares(first), shares(second)
    rows = []
    for g in groups:
        n1, t1 = s1.get(g, (0, float("nan")))
        n2, t2 = s2.get(g, (0, float("nan")))
        t1 = t1 if n1 else float("nan")
        t2 = t2 if n2 else float("nan")
        rows.append({by: g, "n_first": n1, "share_tie_first": t1, "n_second": n2, "share_tie_second": t2,
                     "difference": t1 - t2 if n1 and n2 else float("nan")})
    by_intent = pl.DataFrame(
        rows,
        schema={by: pl.String, "n_first": pl.Int64, "share_tie_first": pl.Float64, "n_second": pl.Int64,
                "share_tie_second": pl.Float64, "difference": pl.Float64},
    )
    ranked = sorted(
        (i for i, r in enumerate(rows) if r["n_first"]), key=lambda i: (-rows[i]["share_tie_first"], i)
    )
    most = tuple(rows[i][by] for i in ranked[:k])
    compared = by_intent.filter(pl.col("difference").is_not_nan())
    o1, o2 = _overall_tie_share(first), _overall_tie_share(second)
    return TieShareComparison(
        most_tied=most,
        overall_first=o1,
        overall_second=o2,
        overall_difference=o1 - o2,
        by_intent=by_intent,
        n_first_higher=int((compared["difference"] > 0).sum()),
        n_compared=compared.height,
    )


def intent_tests(
    table: pl.DataFrame, by: str = "intent", family: Iterable[str] | None = INTENT_ORDER
) -> pl.DataFrame:
    """The per-intent binomial tests of a :func:`vote_table`, with two-sided and Holm-adjusted p-values beside
    the paper's.

    ``p_value`` is the paper's: one-sided in the observed direction, the side chosen after seeing the counts,
    so it is half the two-sided value. Added here (ours, not the paper's): ``p_two_sided`` (exact binomial,
    ties excluded, as :func:`analysis_lib.stats.preference_binomial_test` with ``alternative="two-sided"``)
    and ``p_two_sided_holm``, Holm's step-down adjustment (``statsmodels`` ``multipletests``) of the two-sided
    values over the intents of ``family`` that have decisive votes (the paper runs eight per-intent tests per
    arena with no correction). Rows outside the family or without decisive votes get NaN in the Holm column.
    Returns ``by``, ``n``, ``search``, ``non_search``, ``tie``, ``favours``, ``p_value``, ``p_two_sided``,
    ``p_two_sided_holm``, ``in_family``.
    """
    from statsmodels.stats.multitest import multipletests

    fam = set(family) if family is not None else set(table[by].to_list())
    two = [
        preference_binomial_test(r["search"], r["non_search"], alternative="two-sided").p_value
        for r in table.iter_rows(named=True)
    ]
    out = table.select(by, "n", "search", "non_search", "tie", "favours", "p_value").with_columns(
        pl.Series("p_two_sided", two, dtype=pl.Float64),
        pl.col(by).is_in(list(fam)).fill_null(False).alias("in_family"),
    )
    p2 = out["p_two_sided"].to_numpy()
    mask = out["in_family"].to_numpy() & np.isfinite(p2)
    holm = np.full(out.height, np.nan)
    if mask.any():
        holm[mask] = multipletests(p2[mask], method="holm")[1]
    return out.with_columns(pl.Series("p_two_sided_holm", holm))


# ------------------------------------------------------------------------------------ Appendix F check


@dataclass(frozen=True)
class FactSynthTranscription:
    """What the authors' hand-typed Fact+Synth list changes in Table F.1 (see :func:`fact_synth_transcription`).

    ``table`` / ``authors``: the correlation row (:func:`analysis_lib.stats.benchmark_correlations`, no
    bootstrap) of the Fact+Synth column against ``other`` from the table and from the authors' list;
    ``repeated``: values that occur more often in the authors' list than in the table; ``missing``: table
    values that occur less often in the list; ``positions``: 1-based positions where the two differ.
    """

    table: dict[str, Any]
    authors: dict[str, Any]
    repeated: tuple[float, ...]
    missing: tuple[float, ...]
    positions: tuple[int, ...]


def fact_synth_transcription(
    f1: pl.DataFrame,
    authors: pl.DataFrame,
    column: str = "fact_synth",
    authors_column: str = "fact_synth_authors",
    other: str = "arenahard_v2",
) -> FactSynthTranscription:
    """Correlate Table F.1's ``column`` and the authors' hand-typed list with ``other`` and name the differences.

    ``f1`` is the published Table F.1 frame; ``authors`` the published
    ``search_arena_authors_fact_synth_list`` (``model``, ``fact_synth_authors``), joined on ``model``. The
    authors' notebook computes Table F.1's correlations from hand-typed lists; its Fact+Synth list is not the
    table's column, and that, not a different method, is why the paper's r for Fact+Synth vs ArenaHard-v2
    cannot be reproduced from the table.
    """
    joined = (
        f1.select("model", column, other)
        .with_row_index("_row")
        .join(authors.select("model", authors_column), on="model", how="inner")
        .sort("_row")  # table order: ordinal ranks break ties by it
        .drop("_row")
    )
    if joined.height != f1.height or joined.height != authors.height:
        raise ValueError(
            f"the authors' list and Table F.1 do not name the same models ({authors.height} vs {f1.height} rows, "
            f"{joined.height} matched)"
        )

    def corr(col: str) -> dict[str, Any]:
        return benchmark_correlations(joined.select("model", col, other), n_bootstrap=0).row(0, named=True)

    t = joined[column].to_list()
    a = joined[authors_column].to_list()
    values = sorted(set(t) | set(a), reverse=True)
    repeated = tuple(v for v in values if a.count(v) > t.count(v))
    missing = tuple(v for v in values if t.count(v) > a.count(v))
    positions = tuple(i + 1 for i, (x, y) in enumerate(zip(t, a, strict=True)) if x != y)
    return FactSynthTranscription(corr(column), corr(authors_column), repeated, missing, positions)
