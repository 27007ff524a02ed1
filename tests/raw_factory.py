"""Hand-written raw Search Arena rows (the release schema of DATA.md), for loader tests.

Independent of the simulator: each conversation is spelled out so that expected features can be computed
by hand in the tests.
"""

from __future__ import annotations

from typing import Any

import polars as pl

MESSAGES = pl.List(pl.Struct({"content": pl.String, "role": pl.String}))
METADATA = pl.Struct(
    {
        "citation_format_standardized": pl.String,
        "client_country": pl.String,
        "conv_id": pl.String,
        "web_search_trace": pl.List(pl.List(pl.List(pl.String))),
    }
)
RAW_SCHEMA = {
    "model_a": pl.String,
    "model_b": pl.String,
    "winner": pl.String,
    "judge": pl.String,
    "turn": pl.Int64,
    "messages_a": MESSAGES,
    "messages_b": MESSAGES,
    "system_a_metadata": METADATA,
    "system_b_metadata": METADATA,
    "primary_intent": pl.String,
    "secondary_intent": pl.String,
    "languages": pl.List(pl.String),
}


def conversation(
    *,
    model_a: str = "sonar",
    model_b: str = "gpt-4o-search-preview",
    winner: str | None = "model_a",
    user: list[str] = ("What is new?",),  # type: ignore[assignment]
    answers_a: list[str] = ("Answer a",),  # type: ignore[assignment]
    answers_b: list[str] = ("Answer b",),  # type: ignore[assignment]
    trace_a: list[list[list[str]]] | None = None,
    trace_b: list[list[list[str]]] | None = None,
    conv_id: str = "c0",
    country: str | None = "US",
    intent: str = "Factual Lookup",
    languages: list[str] = ("English",),  # type: ignore[assignment]
    turn: int | None = None,
) -> dict[str, Any]:
    def msgs(answers: list[str]) -> list[dict[str, str]]:
        out = []
        for k, u in enumerate(user):
            out.append({"content": u, "role": "user"})
            if k < len(answers):
                out.append({"content": answers[k], "role": "assistant"})
        return out

    def meta(trace: list[list[list[str]]] | None) -> dict[str, Any]:
        return {
            "citation_format_standardized": "true",
            "client_country": country,
            "conv_id": conv_id,
            "web_search_trace": trace if trace is not None else [[] for _ in user],
        }

    return {
        "model_a": model_a,
        "model_b": model_b,
        "winner": winner,
        "judge": "anon",
        "turn": turn if turn is not None else len(user),
        "messages_a": msgs(list(answers_a)),
        "messages_b": msgs(list(answers_b)),
        "system_a_metadata": meta(trace_a),
        "system_b_metadata": meta(trace_b),
        "primary_intent": intent,
        "secondary_intent": "Unassigned",
        "languages": list(languages),
    }


def make_raw(rows: list[dict[str, Any]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=RAW_SCHEMA)
