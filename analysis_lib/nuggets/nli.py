"""NG-NLI: nugget factuality by multilingual natural-language inference.

The paper checks that nuggets are entailed by at least one of their sources (the retrieved chunks and the two
responses): 99.5% are. A nugget counts as entailed when, for some source s, the NLI model's top label for the
pair (premise s, hypothesis nugget) is ``entailment``; the share is over all nuggets checked.

The model is a multilingual NLI cross-encoder from the Hugging Face hub (default
``MoritzLaurer/mDeBERTa-v3-base-xnli-multilingual-nli-2mil7``), loaded with ``transformers`` from the local cache
only: without a cached copy (no internet on the build machines) :func:`load_nli` raises
:class:`NLIUnavailable` with the reason, and the caller records NG-NLI as not run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np
import polars as pl

from analysis_lib.extras import MissingExtra, limit_torch_threads, require
from analysis_lib.nuggets.records import NuggetRecords
from analysis_lib.nuggets.sampling import sample_rows

DEFAULT_NLI_MODEL = "MoritzLaurer/mDeBERTa-v3-base-xnli-multilingual-nli-2mil7"
Classifier = Callable[[Sequence[str], Sequence[str]], list[str]]


class NLIUnavailable(RuntimeError):
    """The NLI model could not be loaded: the message says why in plain words (a reader-facing reason);
    ``detail`` names the underlying exception's type, for logs and notes."""

    def __init__(self, message: str, detail: str = ""):
        super().__init__(message)
        self.detail = detail


def load_nli(model: str = DEFAULT_NLI_MODEL, batch_size: int = 16) -> Classifier:
    """A classifier ``(premises, hypotheses) -> top labels`` (lower case) from the locally cached model."""
    try:
        torch = require("torch", "topics", purpose="the NLI model")
        limit_torch_threads(torch)
        transformers = require("transformers", "topics", purpose="the NLI model")
        tok = transformers.AutoTokenizer.from_pretrained(model, local_files_only=True)
        net = transformers.AutoModelForSequenceClassification.from_pretrained(model, local_files_only=True).eval()
    except MissingExtra as err:  # the message names the extra to install
        raise NLIUnavailable(f"the NLI model needs torch and transformers: {err}", type(err).__name__) from err
    except ImportError as err:
        raise NLIUnavailable("the NLI model needs torch and transformers, which this environment lacks",
                             type(err).__name__) from err
    except Exception as err:
        raise NLIUnavailable("the NLI model is not in the local Hugging Face cache and the hub is not reachable "
                             f"from this build (model {model})", type(err).__name__) from err
    labels = {i: str(n).lower() for i, n in net.config.id2label.items()}

    def classify(premises: Sequence[str], hypotheses: Sequence[str]) -> list[str]:
        out: list[str] = []
        for k in range(0, len(premises), batch_size):
            enc = tok(list(premises[k:k + batch_size]), list(hypotheses[k:k + batch_size]), truncation=True,
                      padding=True, return_tensors="pt")
            with torch.no_grad():
                pred = net(**enc).logits.argmax(dim=-1).tolist()
            out += [labels[p] for p in pred]
        return out

    return classify


def entailed_share(
    nuggets: Sequence[str], sources: Sequence[Sequence[str]], classify: Classifier
) -> tuple[float, np.ndarray]:
    """Share (%) of nuggets entailed by at least one of their sources (``sources[i]`` for ``nuggets[i]``), and the
    per-nugget booleans."""
    if len(nuggets) != len(sources):
        raise ValueError(f"{len(nuggets)} nuggets but {len(sources)} source lists")
    owner = np.repeat(np.arange(len(nuggets)), [len(s) for s in sources])
    premises = [p for s in sources for p in s]
    hyps = [nuggets[i] for i in owner]
    labels = np.asarray(classify(premises, hyps), dtype=object) if premises else np.array([], dtype=object)
    entailed = np.zeros(len(nuggets), dtype=bool)
    np.logical_or.at(entailed, owner, labels == "entailment")
    return (100.0 * entailed.mean() if len(nuggets) else float("nan")), entailed


class Entailment(NamedTuple):
    """NG-NLI on records: the share (%) of the ``nuggets`` checked that one of their sources entails, over the
    ``battles`` drawn."""

    share: float
    nuggets: int
    battles: int


def records_entailed_share(records: NuggetRecords, classify: Classifier, *, n_battles: int | None = None,
                           seed: int = 0) -> Entailment:
    """NG-NLI on nugget records: the share (%) of nuggets entailed by one of their battle's sources (its
    ``chunks`` and both responses' ``answer_text``), over ``n_battles`` battles drawn at random (all when None)
    among those whose records carry chunks."""
    usable = records.battle_texts(both_responses=False).sort("qid")
    if usable.height == 0:
        raise ValueError(f"{records.origin}: no battle carries retrieved chunks (field chunks)")
    usable = sample_rows(usable, n_battles, seed)
    sources = {r["qid"]: [*r["chunks"], *(t for t in (r["text_a"], r["text_b"]) if t)]
               for r in usable.iter_rows(named=True)}
    nug = records.nuggets.filter((pl.col("side") == "a") & pl.col("qid").is_in(list(sources))).sort("qid", "position")
    share, entailed = entailed_share(nug["text"].to_list(), [sources[q] for q in nug["qid"]], classify)
    return Entailment(share, int(entailed.size), usable.height)
