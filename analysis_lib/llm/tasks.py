"""LLM tasks: the paper's prompt templates, the structured-task description and the steps built from them
(re-exported by :mod:`analysis_lib.llm`).

:func:`load_prompt` reads a verbatim template from ``resources/prompts/``; :func:`fill` replaces its
``{name}`` placeholders; a :class:`Task` says how to build the chat messages for one input, how to read the
reply (:func:`parse_json` by default) and the JSON schema the reply must satisfy. A :class:`Step` is one
analysis's requests: a task and the items it runs on, built from an analysis's inputs by a builder next to the
task (e.g. :func:`analysis_lib.search_arena.intents.intent_step`), so the run and the cost estimate
(:mod:`analysis_lib.llm.estimate`) send and count the same requests.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from analysis_lib import paths

PROMPTS_DIR = paths.resource("prompts")


# --------------------------------------------------------------------------------------------- templates


def load_prompt(name: str) -> str:
    """A prompt template from ``resources/prompts/<name>.txt`` (verbatim from the paper, see its README)."""
    path = PROMPTS_DIR / f"{name}.txt"
    if not path.exists():
        raise FileNotFoundError(f"no prompt template {name!r} in {PROMPTS_DIR}")
    return path.read_text(encoding="utf-8").rstrip("\n")


def fill(template: str, **values: str) -> str:
    """Replace each ``{name}`` placeholder; other braces (JSON examples) are left alone. Unknown names fail."""
    out = template
    for name, value in values.items():
        placeholder = "{" + name + "}"
        if placeholder not in template:
            raise KeyError(f"template has no placeholder {placeholder}")
        out = out.replace(placeholder, str(value))
    return out


# ------------------------------------------------------------------------------------------------ tasks


def _plain_json(content: str) -> Any:
    text = content.strip()
    fence = re.match(r"^```(?:json)?\s*(.*?)\s*```$", text, flags=re.S)
    if fence:
        text = fence.group(1)
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        # the paper's own format example ends with a trailing comma; models sometimes copy it
        relaxed = re.sub(r",\s*([}\]])", r"\1", text)
        return json.loads(relaxed)


def extract_json_object(text: str) -> dict[str, Any]:
    """The first JSON object inside ``text`` ("Sure! {...} Hope this helps"): the first ``{`` from which a
    whole object decodes. Raises ``json.JSONDecodeError`` when there is none (the message never quotes text)."""
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start >= 0:
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict):
            return value
        start = text.find("{", start + 1)
    raise json.JSONDecodeError("no JSON object in the reply", "", 0)


def needs_extraction(content: str) -> bool:
    """True when :func:`parse_json` reads ``content`` only by finding an object inside other text (the reply of
    a server without JSON mode, counted in ``RunStats.json_extracted``)."""
    try:
        _plain_json(content)
    except json.JSONDecodeError:
        return True
    return False


def parse_json(content: str) -> Any:
    """Parse a JSON reply; tolerates a Markdown code fence and one trailing comma before a closing brace, and
    else takes the first JSON object inside the text (:func:`extract_json_object`)."""
    try:
        return _plain_json(content)
    except json.JSONDecodeError as err:
        try:
            return extract_json_object(content)
        except json.JSONDecodeError:
            raise err from None


@dataclass(frozen=True)
class Task:
    """A structured LLM task.

    ``build(item)`` returns the chat messages for one input; ``parse(content)`` turns the reply text into a
    JSON-like object (raise ``ValueError`` when it cannot); the object must satisfy ``schema``. With
    ``json_mode`` the request asks for structured output (``response_format`` of type ``json_schema``).
    ``params`` are extra request fields (``max_tokens``, ``temperature``...); ``model`` overrides the client's.
    """

    name: str
    schema: Mapping[str, Any]
    build: Callable[[Any], list[dict[str, str]]]
    parse: Callable[[str], Any] = parse_json
    params: Mapping[str, Any] = field(default_factory=dict)
    json_mode: bool = True
    model: str | None = None

    def request_params(self) -> dict[str, Any]:
        params = dict(self.params)
        if self.json_mode:
            params["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": self.name, "schema": dict(self.schema)},
            }
        return params


@dataclass(frozen=True)
class Step:
    """One LLM step of an analysis: the ``task`` run over ``items`` with ``model`` (``None``: the client's).

    An analysis runs it with ``client.run(step.task, step.items, model=step.model)``; the estimate counts its
    requests and prompt tokens without sending anything. A stage whose inputs are earlier replies (the reduce
    and rank stages of describing differences, DR-Arena's later turns) cannot be built before those replies
    exist: it has no items and ``at_most`` bounds its requests instead. ``analysis`` is the catalogue id
    (``SA-B5``); ``note`` says what was assumed.
    """

    analysis: str
    task: Task
    items: Sequence[Any] = ()
    model: str | None = None
    at_most: int | None = None
    note: str = ""

    @property
    def requests(self) -> int:
        """Requests the step sends when nothing is cached: one per item, or the bound of a later stage."""
        return len(self.items) if self.at_most is None else self.at_most
