"""Answer records in the released AEE layout, the factual-support results JSONL, and the conversion of records
into :class:`.metrics.Answer` matrices.

Record layout (``data/ans_eng_eval_0.1.json`` of SalesforceAIResearch/answer-engine-eval: a JSON list, one
object per answer):

- ``id``, ``Question``, ``Output`` (the engine's markdown answer with bracketed citations ``[1]``, ``[2, 3]``),
  ``answer_engine`` (engine name) and ``is_charged`` (true for debate queries, false for expertise queries);
- ``S1`` … ``S10``: the listed source URLs (empty string when absent) and ``S{i}_content``: the scraped text
  (absent when not scraped);
- after the judging steps (:mod:`.pipeline`): ``core_statements``, a list of ``{"id", "sentence", "core":
  "1"|"0", "citations": [source numbers], "supporting_sources": [source numbers], "opinion_balance":
  "agree"|"disagree"|"neutral"}`` and ``confidence_score`` (one of :data:`CONFIDENCE_LABELS`).

Support results (``*_support_results.jsonl``): one JSON object per judged (answer, source, statement) pair,
``{"verif_id": "{answer id}_{source index}_{statement id}", "sample_id", "source_idx", "core_statement_id",
"support": "full"|"partial"|"none"}``. Only ``full`` counts as support, as in the released pipeline.

Conversion: rows are all statements of the answer (``core`` = relevant), columns the listed sources whose
scrape passed the convention's test (:mod:`.conventions`: ``Title:`` at the start of the text under
``"released"``, as the released notebook filters; non-blank text under ``"paper"``); the others are dropped and
counted. Citations to a source number that is not listed, or whose scrape failed, are counted, not silently lost.
Each answer also keeps its highest listed slot and the source numbers cited in its whole text (``Output``, read
with the released notebook's pattern), for the released Uncited Sources.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import polars as pl

from analysis_lib.reading import DataValidationError, check_file, json_lines, name_key, parse_json_file, quote

from .conventions import DEFAULT_CONVENTION, Convention, check_convention
from .metrics import Answer

#: The released ``ans_eng_eval_0.1.json`` is about 132 MB; a gigabyte leaves room for larger releases.
MAX_ANSWERS_BYTES = 1 << 30
#: Support-results JSONL: one short line per judged (answer, source, statement) pair.
MAX_SUPPORT_BYTES = 1 << 30

N_SOURCE_SLOTS = 10
CONFIDENCE_LABELS: dict[str, int] = {"Strongly Not Confident": 1, "Not Confident": 2, "Neutral": 3,
                                     "Confident": 4, "Strongly Confident": 5}
STANCE_OF: dict[str, str] = {"agree": "pro", "disagree": "con", "neutral": "neutral"}
SUPPORT_LABELS = ("full", "partial", "none")
RATE_LIMIT_TEXT = "You've hit the rate limit"
ScrapeRule = Literal["nonempty", "jina"]
#: The scrape rule of each convention (when ``scrape_rule`` is not given).
SCRAPE_RULE_OF: dict[Convention, ScrapeRule] = {"released": "jina", "paper": "nonempty"}

_CITATION = re.compile(r"\[([\d,\s]+)\]")
#: Exclusion reason when sources have text but none passes the released ``Title:`` test (text from a scraper
#: other than r.jina.ai, such as :mod:`analysis_lib.scrape`, has no ``Title:`` line).
NO_TITLE_REASON = ("no source passed the released Title: scrape test (text from another scraper: "
                   "scrape_rule='nonempty')")
#: ``utils_misc.extract_citations`` of the release: digits, commas and spaces inside brackets.
_RELEASED_CITATION = re.compile(r"\[([\d, ]+)\]")


def parse_citations(text: str) -> tuple[int, ...]:
    """Source numbers cited by bracket markers in ``text`` (``[1]``, ``[2, 3]``), in order of appearance."""
    out: list[int] = []
    for group in _CITATION.findall(text):
        out += [_cite_int(tok) for tok in re.split(r"[,\s]+", group.strip()) if tok]
    return tuple(out)


def _cite_int(token: str) -> int:
    """A citation number; one of more than 18 digits (never a listed source) is read as 10^18, so a long run
    of digits in an answer cannot stop the reader (Python refuses ``int`` of more than 4,300 digits)."""
    return int(token) if len(token) <= 18 else 10**18


def text_citations(text: str) -> tuple[int, ...]:
    """Source numbers cited in ``text`` as the released ``utils_misc.extract_citations`` reads them: bracket groups
    of digits, commas and spaces only (``[1]``, ``[2, 3]``; not ``[1\\n2]``). Where the released function would
    fail (``[1 2]``: ``int("1 2")``), both numbers are read."""
    out: list[int] = []
    for group in _RELEASED_CITATION.findall(text):
        out += [_cite_int(tok) for tok in re.split(r"[, ]+", group.strip()) if tok]
    return tuple(out)


@dataclass(frozen=True)
class Statement:
    id: str
    sentence: str
    core: bool
    citations: tuple[int, ...]
    supporting_sources: tuple[int, ...] | None = None
    opinion: str | None = None  # agree / disagree / neutral


@dataclass(frozen=True)
class AnswerRecord:
    id: str
    question: str
    output: str
    engine: str
    debate: bool
    sources: tuple[str, ...]  # N_SOURCE_SLOTS URLs, "" when absent
    contents: tuple[str | None, ...]  # scraped text per slot, None when not scraped
    statements: tuple[Statement, ...] | None = None
    confidence: int | None = None

    @property
    def query_type(self) -> str:
        return "debate" if self.debate else "expertise"

    def listed(self) -> list[int]:
        """1-based numbers of the listed sources."""
        return [i + 1 for i, url in enumerate(self.sources) if url]


def _fail(origin: str, k: int, rid: object, field: str, problem: str) -> DataValidationError:
    return DataValidationError(f"{origin}: record {k} (id {quote(rid)}), field {field!r}: {problem}")


def as_bool(value: Any) -> bool | None:
    """A released-layout flag (``core``, ``is_charged``): true / false, 1 / 0 or their strings; else ``None``."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, str)) and value in (0, 1, "0", "1", "true", "false", "True", "False"):
        return str(value).lower() in ("1", "true")
    return None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _identifier(value: Any) -> str | None:
    """An id as the released layout writes them: a non-blank string or an integer (not a bool, a float, a
    list or null), as a string; ``None`` when it is none of these."""
    if isinstance(value, str) and value.strip():
        return value
    if _is_int(value):
        return str(value)
    return None


def _source_numbers(value: Any, lo: int, hi: int | None) -> tuple[int, ...] | None:
    """A list of integer source numbers in ``[lo, hi]`` (``hi`` None: no upper bound), else ``None``."""
    if not isinstance(value, list) or not all(_is_int(c) and c >= lo and (hi is None or c <= hi) for c in value):
        return None
    return tuple(value)


def _parse_statement(raw: Any, origin: str, k: int, rid: str, j: int) -> Statement:
    where = f"core_statements[{j}]"
    if not isinstance(raw, Mapping):
        raise _fail(origin, k, rid, where, f"expected an object, got {type(raw).__name__}")
    sentence = raw.get("sentence")
    if not isinstance(sentence, str):
        raise _fail(origin, k, rid, f"{where}.sentence", f"expected a string, got {quote(sentence)}")
    core = as_bool(raw.get("core"))
    if core is None:
        raise _fail(origin, k, rid, f"{where}.core", f"expected '1' or '0', got {quote(raw.get('core'))}")
    sid = _identifier(raw.get("id", str(j)))
    if sid is None:
        raise _fail(origin, k, rid, f"{where}.id", f"expected a string or integer id, got {quote(raw.get('id'))}")
    cites: tuple[int, ...] | None
    if raw.get("citations") is None:
        cites = parse_citations(sentence)
    else:
        cites = _source_numbers(raw["citations"], 0, None)
        if cites is None:
            raise _fail(origin, k, rid, f"{where}.citations",
                        f"expected a list of source numbers (integers >= 0), got {quote(raw['citations'])}")
    sup = None
    if raw.get("supporting_sources") is not None:
        sup = _source_numbers(raw["supporting_sources"], 1, N_SOURCE_SLOTS)
        if sup is None:
            raise _fail(origin, k, rid, f"{where}.supporting_sources",
                        f"expected a list of source numbers 1–{N_SOURCE_SLOTS}, got {quote(raw['supporting_sources'])}")
    opinion = raw.get("opinion_balance")
    if opinion is not None and (not isinstance(opinion, str) or opinion not in STANCE_OF):
        raise _fail(origin, k, rid, f"{where}.opinion_balance",
                    f"expected one of {sorted(STANCE_OF)}, got {quote(opinion)}")
    return Statement(sid, sentence, core, cites, sup, opinion)


def parse_record(raw: Any, origin: str = "<records>", k: int = 1) -> AnswerRecord:
    """Validate one record of the released layout (see the module docstring); ``k`` is its number, from 1."""
    if not isinstance(raw, Mapping):
        raise DataValidationError(f"{origin}: record {k}: expected an object, got {type(raw).__name__}")
    rid = _identifier(raw.get("id"))
    if rid is None:
        raise _fail(origin, k, raw.get("id"), "id",
                    f"expected a non-empty string or an integer, got {quote(raw.get('id'))}")
    for field in ("Question", "Output", "answer_engine"):
        if not isinstance(raw.get(field), str):
            raise _fail(origin, k, rid, field, f"expected a string, got {quote(raw.get(field))}")
    engine = name_key(raw["answer_engine"])
    if not engine:
        raise _fail(origin, k, rid, "answer_engine", "expected an engine name, got an empty string")
    debate = as_bool(raw.get("is_charged"))
    if debate is None:
        raise _fail(origin, k, rid, "is_charged", f"expected true or false, got {quote(raw.get('is_charged'))}")
    urls, contents = [], []
    for i in range(1, N_SOURCE_SLOTS + 1):
        url = raw.get(f"S{i}", "")
        if not isinstance(url, str):
            raise _fail(origin, k, rid, f"S{i}", f"expected a URL string, got {quote(url)}")
        content = raw.get(f"S{i}_content")
        if content is not None and not isinstance(content, str):
            raise _fail(origin, k, rid, f"S{i}_content", f"expected text, got {quote(content)}")
        urls.append(url.strip())
        contents.append(content)
    statements = None
    if "core_statements" in raw:
        if not isinstance(raw["core_statements"], list):
            raise _fail(origin, k, rid, "core_statements", f"expected a list, got {quote(raw['core_statements'])}")
        statements = tuple(_parse_statement(s, origin, k, rid, j) for j, s in enumerate(raw["core_statements"]))
        first: dict[str, int] = {}
        for j, st in enumerate(statements):
            if st.id in first:
                raise _fail(origin, k, rid, f"core_statements[{j}].id",
                            f"duplicate of core_statements[{first[st.id]}] ({quote(st.id)}): support is keyed by it")
            first[st.id] = j
    confidence = None
    if raw.get("confidence_score") is not None:
        c = raw["confidence_score"]
        if isinstance(c, str) and c in CONFIDENCE_LABELS:
            confidence = CONFIDENCE_LABELS[c]
        elif _is_int(c) and 1 <= c <= 5:
            confidence = c
        else:
            raise _fail(origin, k, rid, "confidence_score",
                        f"expected one of {list(CONFIDENCE_LABELS)} or 1–5, got {quote(c)}")
    return AnswerRecord(rid, raw["Question"], raw["Output"], engine, debate, tuple(urls),
                        tuple(contents), statements, confidence)


def parse_records(raw: Any, origin: str = "<records>") -> list[AnswerRecord]:
    """Validate a non-empty list of records; an empty list and duplicated ids are errors naming ``origin``."""
    if not isinstance(raw, list):
        raise DataValidationError(f"{origin}: expected a JSON list of answer records, got {type(raw).__name__}")
    if not raw:
        raise DataValidationError(f"{origin}: no answer records (an empty list); expected at least one")
    out = [parse_record(r, origin, k) for k, r in enumerate(raw, start=1)]
    seen: dict[str, int] = {}
    for k, r in enumerate(out, start=1):
        if r.id in seen:
            raise _fail(origin, k, r.id, "id", f"duplicate of record {seen[r.id]}")
        seen[r.id] = k
    return out


ANSWERS_EXPECTED = "a JSON list of answer records"


def read_answer_json(path: str | Path, limit: int = MAX_ANSWERS_BYTES) -> list[Any]:
    """The raw JSON list of an answer-records file, read by :func:`analysis_lib.reading.parse_json_file` (a
    regular, non-empty UTF-8 file of at most ``limit`` bytes) and checked to be a non-empty list; records are not
    validated here (:func:`parse_records` does)."""
    raw = parse_json_file(path, ANSWERS_EXPECTED, "json", max_bytes=limit)
    if not isinstance(raw, list):
        raise DataValidationError(f"{path}: expected {ANSWERS_EXPECTED}, got a JSON {type(raw).__name__}")
    if not raw:
        raise DataValidationError(f"{path}: no answer records (an empty list); expected at least one")
    return raw


def load_answer_records(path: str | Path, limit: int = MAX_ANSWERS_BYTES) -> list[AnswerRecord]:
    """Read and validate an answer-records JSON file (released layout)."""
    return parse_records(read_answer_json(path, limit), str(path))


SUPPORT_SCHEMA = {"verif_id": pl.String, "sample_id": pl.String, "source_idx": pl.Int64,
                  "core_statement_id": pl.String, "support": pl.String, "n_lines": pl.Int64}


def _support_row(d: Any, origin: str) -> dict[str, Any]:
    if not isinstance(d, dict):
        raise DataValidationError(f"{origin}: expected a JSON object, got a JSON {type(d).__name__}")
    ids = {}
    for field in ("sample_id", "core_statement_id"):
        ids[field] = _identifier(d.get(field))
        if ids[field] is None:
            raise DataValidationError(f"{origin}, field {field!r}: expected a string or integer id, "
                                      f"got {quote(d.get(field))}")
    src = d.get("source_idx")
    if not (isinstance(src, int) and not isinstance(src, bool) and 1 <= src <= N_SOURCE_SLOTS):
        raise DataValidationError(f"{origin}, field 'source_idx': expected an integer 1–{N_SOURCE_SLOTS}, "
                                  f"got {quote(src)}")
    if not isinstance(d.get("support"), str) or d["support"] not in SUPPORT_LABELS:
        raise DataValidationError(f"{origin}, field 'support': expected one of {SUPPORT_LABELS}, "
                                  f"got {quote(d.get('support'))}")
    vid = d.get("verif_id")
    if vid is not None and not isinstance(vid, str):
        raise DataValidationError(f"{origin}, field 'verif_id': expected a string, got {quote(vid)}")
    return {"verif_id": vid or f"{ids['sample_id']}_{src}_{ids['core_statement_id']}", **ids, "source_idx": src,
            "support": d["support"]}


def load_support_results(path: str | Path, limit: int = MAX_SUPPORT_BYTES) -> pl.DataFrame:
    """Read a support-results JSONL (one judged pair a line; blank lines are not pairs), validating each line.
    When a pair was judged more than once (an appended, resumed run), the last line wins and ``n_lines`` says
    how many lines judged it (``n_lines - 1`` superseded, counted rather than lost). An empty file, or one with
    only blank lines, is refused."""
    path = check_file(path, "support results (JSONL)", "jsonl", max_bytes=limit)[0]
    rows = [_support_row(value, f"{path}, line {line_no}") for line_no, value in json_lines(path)]
    if not rows:
        raise DataValidationError(f"{path}: is empty (only blank lines); expected support results, one JSON object "
                                  "per line")
    frame = pl.DataFrame(rows, schema={k: v for k, v in SUPPORT_SCHEMA.items() if k != "n_lines"})
    counts = frame.group_by("verif_id").agg(n_lines=pl.len())
    return (frame.unique(subset="verif_id", keep="last", maintain_order=True)
            .join(counts, on="verif_id", how="left").select(list(SUPPORT_SCHEMA)))


def merge_support(*frames: pl.DataFrame | None) -> pl.DataFrame | None:
    """Support-results frames (:func:`load_support_results`) as one, later frames winning a pair judged in
    several (``n_lines`` summed, so superseded judgements stay counted); ``None`` when every frame is."""
    given = [f for f in frames if f is not None]
    if not given:
        return None
    both = pl.concat(given, how="vertical")
    counts = both.group_by("verif_id").agg(pl.col("n_lines").sum())
    return (both.unique(subset="verif_id", keep="last", maintain_order=True).drop("n_lines")
            .join(counts, on="verif_id", how="left").select(list(SUPPORT_SCHEMA)))


def scrape_ok(content: str | None, rule: ScrapeRule = "nonempty") -> bool:
    """Did a source's scrape succeed? ``"nonempty"``: text present, non-blank and not the scraper's rate-limit
    page; ``"jina"``: exactly the released notebook's test for its r.jina.ai scrapes, text present and
    ``content[:6] == "Title:"``."""
    if rule == "jina":
        return content is not None and content[:6] == "Title:"
    return content is not None and bool(content.strip()) and RATE_LIMIT_TEXT not in content


@dataclass(frozen=True)
class ConvertedAnswers:
    """Answers ready for the metrics: ``answers[k]`` belongs to row *k* of ``meta`` (``id, engine, debate,
    query_type, confidence, n_listed, n_sources, n_dropped_sources, n_statements, n_core, missing_support,
    unlisted_citations``); ``excluded`` lists records with no statements or no usable source and why;
    ``unused_support`` counts support judgements that match no (core statement, kept source) pair of the
    records (another file's answers, a dropped source, a non-core statement)."""

    answers: list[Answer]
    meta: pl.DataFrame
    excluded: pl.DataFrame
    unused_support: int = 0

    def summary(self) -> str:
        m = self.meta
        unused = (f", {self.unused_support} support judgements matching no (core statement, kept source) pair"
                  if self.unused_support else "")
        return (f"{m.height} answers converted, {self.excluded.height} excluded; "
                f"{int(m['n_dropped_sources'].sum())} listed sources dropped (scrape failed), "
                f"{int(m['missing_support'].sum())} (core statement, source) pairs without a support judgement "
                f"(read as unsupported), {int(m['unlisted_citations'].sum())} citations to unlisted or dropped sources"
                + unused)


def records_to_answers(records: Sequence[AnswerRecord], support: pl.DataFrame | None = None, *,
                       convention: Convention = DEFAULT_CONVENTION,
                       scrape_rule: ScrapeRule | None = None) -> ConvertedAnswers:
    """Build each record's statements × kept-sources citation and support matrices.

    Kept sources follow ``scrape_rule``, by default the convention's (:data:`SCRAPE_RULE_OF`: ``"jina"``, the
    released notebook's ``Title:`` test, under ``"released"``; ``"nonempty"`` under ``"paper"``). Support for a
    (core statement, source) pair comes from ``support`` (a :func:`load_support_results` frame) when given, else
    from the statement's ``supporting_sources``. Stance (pro / con / neutral from ``opinion_balance``; non-core
    statements neutral) is set on debate answers whose statements carry it. Each :class:`.metrics.Answer` also
    gets ``max_slot`` (highest listed slot) and ``text_citations`` (:func:`text_citations` of ``Output``).
    """
    rule = SCRAPE_RULE_OF[check_convention(convention)] if scrape_rule is None else scrape_rule
    judged: dict[tuple[str, int, str], bool] = {}
    if support is not None:
        for sid, src, stid, lab in support.select(
            "sample_id", "source_idx", "core_statement_id", "support"
        ).iter_rows():
            judged[(sid, src, stid)] = lab == "full"
    answers: list[Answer] = []
    meta: list[dict[str, Any]] = []
    excluded: list[dict[str, str]] = []
    used = 0
    for r in records:
        if r.statements is None:
            excluded.append({"id": r.id, "engine": r.engine, "reason": "not judged (no core_statements)"})
            continue
        listed = r.listed()
        kept = [i for i in listed if scrape_ok(r.contents[i - 1], rule)]
        if not r.statements or not kept:
            untitled = rule == "jina" and any(scrape_ok(r.contents[i - 1], "nonempty") for i in listed)
            reason = ("no statements" if not r.statements else NO_TITLE_REASON if untitled else "no source scraped")
            excluded.append({"id": r.id, "engine": r.engine, "reason": reason})
            continue
        col = {s: j for j, s in enumerate(kept)}
        n, m = len(r.statements), len(kept)
        cit, sup = np.zeros((n, m), bool), np.zeros((n, m), bool)
        missing = unlisted = 0
        for i, st in enumerate(r.statements):
            for c in st.citations:
                if c in col:
                    cit[i, col[c]] = True
                else:
                    unlisted += 1
            if not st.core:
                continue
            for s in kept:
                if support is not None:
                    value = judged.get((r.id, s, st.id))
                    missing += value is None
                    used += value is not None
                    sup[i, col[s]] = bool(value)
                elif st.supporting_sources is None:
                    missing += 1
                else:
                    sup[i, col[s]] = s in st.supporting_sources
        has_stance = r.debate and any(st.opinion is not None for st in r.statements if st.core)
        stance = tuple(STANCE_OF[st.opinion] if st.core and st.opinion else "neutral" for st in r.statements) \
            if has_stance else None
        answers.append(Answer(np.array([st.core for st in r.statements]), cit, sup, stance, r.confidence,
                              max(listed), text_citations(r.output)))
        meta.append({"id": r.id, "engine": r.engine, "debate": r.debate, "query_type": r.query_type,
                     "confidence": r.confidence, "n_listed": len(listed), "n_sources": m,
                     "n_dropped_sources": len(listed) - m, "n_statements": n,
                     "n_core": sum(st.core for st in r.statements), "missing_support": missing,
                     "unlisted_citations": unlisted})
    meta_schema = {"id": pl.String, "engine": pl.String, "debate": pl.Boolean, "query_type": pl.String,
                   "confidence": pl.Int64, "n_listed": pl.Int64, "n_sources": pl.Int64, "n_dropped_sources": pl.Int64,
                   "n_statements": pl.Int64, "n_core": pl.Int64, "missing_support": pl.Int64,
                   "unlisted_citations": pl.Int64}
    return ConvertedAnswers(answers, pl.DataFrame(meta, schema=meta_schema),
                            pl.DataFrame(excluded, schema={"id": pl.String, "engine": pl.String, "reason": pl.String}),
                            len(judged) - used)


def confidence_frame(records: Iterable[AnswerRecord]) -> pl.DataFrame:
    """``id, engine, query_type, confidence`` for every record with a confidence score (Fig 8b input; the
    released notebook counts confidence on all answers, including those without usable sources)."""
    rows = [{"id": r.id, "engine": r.engine, "query_type": r.query_type, "confidence": r.confidence}
            for r in records if r.confidence is not None]
    return pl.DataFrame(rows, schema={"id": pl.String, "engine": pl.String, "query_type": pl.String,
                                      "confidence": pl.Int64})
