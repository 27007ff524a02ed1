"""nuggetizer's three AutoNuggetizer prompts as public functions (issue 34: no private method of nuggetizer).

castorini/nuggetizer builds its prompts in methods of its ``Nuggetizer`` class; version 0.0.5, the one the
project pins (the newest on PyPI), keeps them private (``_create_nugget_prompt``, ``_create_score_prompt``,
``_create_assign_prompt``), and later versions export them as public functions from ``nuggetizer.prompts``
(``create_nugget_prompt``, ``create_score_prompt``, ``create_assign_prompt``). :func:`prompt_functions` returns
nuggetizer's public functions when the installed nuggetizer has them, else this module's functions, which have the
same signatures and write 0.0.5's prompts verbatim (Apache-2.0, Copyright castorini). A test checks that they
equal what 0.0.5's public ``Nuggetizer.create`` and ``Nuggetizer.assign`` send.

A request is nuggetizer's ``Request`` (``query.text``, ``documents[i].segment``); nuggets are its ``Nugget`` /
``ScoredNugget`` (``.text``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

Messages = list[dict[str, str]]

CREATOR_SYSTEM = ("You are NuggetizeLLM, an intelligent assistant that can update a list of atomic nuggets to best "
                  "provide all the information required for the query.")
SCORER_SYSTEM = ("You are NuggetizeScoreLLM, an intelligent assistant that can label a list of atomic nuggets based "
                 "on their importance for a given search query.")
ASSIGNER_SYSTEM = ("You are NuggetizeAssignerLLM, an intelligent assistant that can label a list of atomic nuggets "
                   "based on if they are captured by a given passage.")


def create_nugget_prompt(request: Any, start: int, end: int, nuggets: Sequence[str],
                         creator_max_nuggets: int = 30) -> Messages:
    """The creation prompt: documents ``start:end`` of ``request`` (numbered from 1 within the window) update the
    list ``nuggets`` to at most ``creator_max_nuggets``."""
    nuggets = list(nuggets)
    context = "\n".join(f"[{i + 1}] {doc.segment}" for i, doc in enumerate(request.documents[start:end]))
    query = request.query.text
    user = f"""Update the list of atomic nuggets of information (1-12 words), if needed, so they best provide the information required for the query. Leverage only the initial list of nuggets (if exists) and the provided context (this is an iterative process).  Return only the final list of all nuggets in a Pythonic list format (even if no updates). Make sure there is no redundant information. Ensure the updated nugget list has at most {creator_max_nuggets} nuggets (can be less), keeping only the most vital ones. Order them in decreasing order of importance. Prefer nuggets that provide more interesting information.

Search Query: {query}
Context:
{context}
Search Query: {query}
Initial Nugget List: {nuggets}
Initial Nugget List Length: {len(nuggets)}

Only update the list of atomic nuggets (if needed, else return as is). Do not explain. Always answer in short nuggets (not questions). List in the form ["a", "b", ...] and a and b are strings with no mention of ".
Updated Nugget List:"""  # noqa: E501 - verbatim
    return [{"role": "system", "content": CREATOR_SYSTEM}, {"role": "user", "content": user}]


def create_score_prompt(query: str, nuggets: Sequence[Any]) -> Messages:
    """The importance prompt: label each of ``nuggets`` ``vital`` or ``okay`` for ``query``."""
    user = f"""Based on the query, label each of the {len(nuggets)} nuggets either a vital or okay based on the following criteria. Vital nuggets represent concepts that must be present in a “good” answer; on the other hand, okay nuggets contribute worthwhile information about the target but are not essential. Return the list of labels in a Pythonic list format (type: List[str]). The list should be in the same order as the input nuggets. Make sure to provide a label for each nugget.

Search Query: {query}
Nugget List: {[nugget.text for nugget in nuggets]}

Only return the list of labels (List[str]). Do not explain.
Labels:"""  # noqa: E501 - verbatim
    return [{"role": "system", "content": SCORER_SYSTEM}, {"role": "user", "content": user}]


def create_assign_prompt(query: str, context: str, nuggets: Sequence[Any], assigner_mode: Any = None) -> Messages:
    """The assignment prompt: label each of ``nuggets`` ``support`` / ``partial_support`` / ``not_support``
    against the passage ``context`` (nuggetizer's 3-grade mode; its 2-grade mode, ``support`` / ``not_support``,
    when ``assigner_mode`` is ``NuggetAssignMode.SUPPORT_GRADE_2``)."""
    texts = [nugget.text for nugget in nuggets]
    if getattr(assigner_mode, "name", None) == "SUPPORT_GRADE_2":
        instruction = f"""Based on the query and passage, label each of the {len(nuggets)} nuggets either as support or not_support using the following criteria. A nugget that is fully captured in the passage should be labeled as support; otherwise, label them as not_support. Return the list of labels in a Pythonic list format (type: List[str]). The list should be in the same order as the input nuggets. Make sure to provide a label for each nugget."""  # noqa: E501 - verbatim
    else:
        instruction = f"""Based on the query and passage, label each of the {len(nuggets)} nuggets either as support, partial_support, or not_support using the following criteria. A nugget that is fully captured in the passage should be labeled as support. A nugget that is partially captured in the passage should be labeled as partial_support. If the nugget is not captured at all, label it as not_support. Return the list of labels in a Pythonic list format (type: List[str]). The list should be in the same order as the input nuggets. Make sure to provide a label for each nugget."""  # noqa: E501 - verbatim
    user = f"""{instruction}

Search Query: {query}
Passage: {context}
Nugget List: {texts}
Only return the list of labels (List[str]). Do not explain.
Labels:"""
    return [{"role": "system", "content": ASSIGNER_SYSTEM}, {"role": "user", "content": user}]


class PromptFunctions(NamedTuple):
    """The three prompt builders and where they come from (``"nuggetizer.prompts"`` or this module)."""

    create_nugget_prompt: Callable[..., Messages]
    create_score_prompt: Callable[..., Messages]
    create_assign_prompt: Callable[..., Messages]
    source: str


def prompt_functions() -> PromptFunctions:
    """nuggetizer's public prompt functions when the installed nuggetizer exports them, else this module's."""
    try:
        from nuggetizer import prompts as theirs  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        theirs = None
    names = ("create_nugget_prompt", "create_score_prompt", "create_assign_prompt")
    if theirs is not None and all(callable(getattr(theirs, n, None)) for n in names):
        return PromptFunctions(theirs.create_nugget_prompt, theirs.create_score_prompt, theirs.create_assign_prompt,
                               source="nuggetizer.prompts")
    return PromptFunctions(create_nugget_prompt, create_score_prompt, create_assign_prompt, source=__name__)
