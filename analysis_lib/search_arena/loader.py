"""Search Arena releases: read, validate, and derive the tidy battle frame.

``load_battles(source)`` accepts

- a path to the released parquet (``search-arena-chat-24k.parquet``, ``search-arena-v1-preference-7k.parquet``)
  or jsonl (``search_arena_24k.jsonl``; the citation-attribution subset ``citation_attribution_data.jsonl``),
- an in-memory raw frame (polars, or pandas converted with ``polars.from_pandas``),
- ``"hf"``: the pinned ``lmarena-ai/search-arena-24k`` revision through ``datasets`` (``"hf:REF"``: another
  revision, or another file of the pinned one; the grammar is :mod:`analysis_lib.sources`'s),
- ``"sample"`` or ``"sample:N"``: the project's simulator (``analysis_lib.search_arena.simulate.conversations``), N
  conversations (default 24,069), with ``seed``.

and returns one row per conversation with the columns documented in ``book/library.md``. Feature
definitions follow the authors' code (lmarena/search-arena ``scripts/utils.py``):

- ``prompt_words``: ``len(prompt.split())`` (counted as runs of non-whitespace characters);
- ``response_length_{a,b}``: mean over that side's assistant messages of their word counts;
- ``citation_count_{a,b}``: mean over the turns of ``web_search_trace`` of the number of
  ``[marker, url]`` pairs (0 for an empty trace);
- ``num_cites_<group>_{a,b}``: citations over all turns whose host (``url.split('/')[2]``) falls in
  ``<group>`` (Appendix E.2 rule, :mod:`analysis_lib.search_arena.domains`); ``cites_<group>_{a,b}`` = 1 if any;
- ``api_model``, ``search_context``, ``user_location``, ``citation_format`` ``_{a,b}``: each side's configuration
  from ``system_{a,b}_metadata`` (:mod:`analysis_lib.search_arena.system_config`; null where the release lacks it).

Reading and schema validation of the raw release are :mod:`analysis_lib.search_arena.release`'s.
Everything is computed with polars expressions over the nested columns; no per-row Python loop.
Nothing is dropped silently: the :class:`LoadReport` counts every exclusion and every irregularity.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Collection
from dataclasses import asdict, dataclass, field
from pathlib import Path

import polars as pl
from filelock import FileLock

from analysis_lib import cache_keys, fetch, sources
from analysis_lib.memory import release_freed_memory
from analysis_lib.paths import atomic_write
from analysis_lib.reading import READ_ERRORS, DataValidationError, polars_failure, quote
from analysis_lib.search_arena import domains, duplicates, hub, languages, system_config
from analysis_lib.search_arena.models import model_table, paper_name
from analysis_lib.search_arena.release import (
    HF_REVISION,
    OPTIONAL_COLUMNS,
    absent_fields,
    normalise,
    parse_timestamps,
    read_raw,
    v1_7k_traces,
    validate_raw,
)
from analysis_lib.search_arena.release import (
    validate_release as validate_release,
)
from analysis_lib.search_arena.schema import FULL_SIZE, MAX_RELEASE_BYTES, MODERATION_PROMPT, SIDES

log = logging.getLogger(__name__)

@dataclass
class LoadReport:
    """What the loader dropped (with reasons) and what it flagged, with counts; ``absent``: the optional fields
    (:data:`OPTIONAL_FIELDS`) the release does not have, or has with no value in any kept row; ``derived``: those
    the loader derived instead, with how (``languages``: detected offline from the prompt)."""

    source: str
    n_raw: int = 0
    n_rows: int = 0
    dropped: dict[str, int] = field(default_factory=dict)
    flags: dict[str, int] = field(default_factory=dict)
    unmapped_models: list[str] = field(default_factory=list)
    absent: list[str] = field(default_factory=list)
    derived: dict[str, str] = field(default_factory=dict)

    def has(self, name: str) -> bool:
        """Whether the release holds the field ``name`` (one of :data:`OPTIONAL_FIELDS`) or the loader derived it."""
        return name not in self.absent or name in self.derived

    def to_frame(self) -> pl.DataFrame:
        rows: list[tuple[str, str, int | None]] = [("kept", "conversations", self.n_rows)]
        rows += [("dropped", k, v) for k, v in self.dropped.items()]
        rows += [("flagged", k, v) for k, v in self.flags.items()]
        rows += [("absent", f"{k} (derived: {self.derived[k]})" if k in self.derived else k, None)
                 for k in self.absent]
        return pl.DataFrame(rows, schema={"kind": pl.String, "what": pl.String, "count": pl.Int64}, orient="row")

    def __str__(self) -> str:
        lines = [f"{self.source}: {self.n_raw:,} rows read, {self.n_rows:,} kept"]
        lines += [f"  dropped {v:,}: {k}" for k, v in self.dropped.items() if v]
        lines += [f"  flagged {v:,}: {k}" for k, v in self.flags.items() if v]
        lines += [f"  absent: {k}" + (f" (derived: {self.derived[k]})" if k in self.derived else "")
                  for k in self.absent]
        if self.unmapped_models:
            lines.append(f"  model ids kept as-is (not in resources/model_names.csv): {self.unmapped_models}")
        return "\n".join(lines)


def sample_size(source: object, default: int = FULL_SIZE) -> int | None:
    """Number of simulated conversations a data source asks for, or None if it is not a simulator source.

    ``"sample"`` -> ``default``; ``"sample:N"`` -> N (``_`` and ``,`` allowed as digit separators). Anything else,
    including a file whose name merely starts with "sample", is not a simulator source.
    """
    return sources.sample_size(source, default)


def words_expr(expr: pl.Expr) -> pl.Expr:
    """Whitespace word count of each string (``len(s.split())``): runs of non-whitespace characters."""
    return expr.str.count_matches(r"\S+")


def _messages_of(side: str, role: str) -> pl.Expr:
    return pl.col(f"messages_{side}").list.eval(
        pl.element().filter(pl.element().struct.field("role") == role).struct.field("content")
    )


def _trace(side: str) -> pl.Expr:
    return pl.col(f"system_{side}_metadata").struct.field("web_search_trace")


def _citation_features(raw: pl.DataFrame, side: str, match: domains.Match) -> tuple[pl.DataFrame, dict[str, int]]:
    """Per-row group counts of one side's citations, plus counts of malformed pairs and URLs."""
    pairs = (
        raw.select(pl.int_range(pl.len(), dtype=pl.UInt32).alias("row"), _trace(side).alias("pair"))
        .explode("pair")
        .explode("pair")
        .filter(pl.col("pair").is_not_null())
    )
    pairs = pairs.with_columns(
        url=pl.when(pl.col("pair").list.len() == 2).then(pl.col("pair").list.get(1, null_on_oob=True))
    )
    pairs = pairs.with_columns(host=domains.host_expr(pl.col("url")))
    groups = pairs.select(pl.col("host").unique()).with_columns(group=domains.group_expr(pl.col("host"), match))
    pairs = pairs.join(groups, on="host", how="left", nulls_equal=True)
    issues = {
        f"citation pairs that are not [marker, url] (side {side}; counted, grouped as other)": int(
            pairs.filter(pl.col("url").is_null()).height
        ),
        f"citation URLs without a host (side {side}; counted, grouped as other)": int(
            pairs.filter(pl.col("url").is_not_null() & pl.col("host").is_null()).height
        ),
    }
    counts = pairs.group_by("row", "group").len()
    wide = counts.pivot(on="group", index="row", values="len", on_columns=list(domains.DOMAIN_GROUPS))
    for g in domains.DOMAIN_GROUPS:
        if g not in wide.columns:
            wide = wide.with_columns(pl.lit(0, dtype=pl.UInt32).alias(g))
    wide = wide.select(
        "row",
        *[pl.col(g).fill_null(0).cast(pl.Int64).alias(f"num_cites_{g}_{side}") for g in domains.DOMAIN_GROUPS],
    )
    return wide, issues


def derive(
    raw: pl.DataFrame, origin: str = "input", *, match: domains.Match = "substring"
) -> tuple[pl.DataFrame, LoadReport]:
    """Validated raw release -> tidy battle frame and report (see module docstring for definitions)."""
    raw, v1_7k = v1_7k_traces(raw, origin)
    validate_raw(raw, origin)
    if raw.height == 0:
        raise DataValidationError(f"{origin}: the release has no rows (an empty file or an empty selection)")
    raw = normalise(raw).with_row_index("_row", offset=1)  # the file's row, for flags naming rows
    report = LoadReport(source=origin, n_raw=raw.height, absent=absent_fields(raw))
    if v1_7k:
        report.flags["rows with v1-7k search traces (search results read as citations)"] = raw.height
    # The same conversation twice (a concatenated or re-exported release): the first copy is kept.
    conv = pl.col("system_a_metadata").struct.field("conv_id")
    first = conv.is_null() | conv.is_first_distinct()
    report.dropped["duplicate conversations (repeated conv_id; first kept)"] = raw.filter(~first).height
    raw = raw.filter(first)
    # ... and the same conversation twice without a conv_id: by its content (duplicates.CONTENT_KEY)
    repeated = duplicates.repeated_without_id(raw)
    report.dropped[duplicates.REPEATED] = int(repeated.sum())
    raw = raw.filter(~repeated)

    # Rows that cannot be analysed at all: no model ids, or no usable turn count (features are per turn).
    missing_models = pl.col("model_a").is_null() | pl.col("model_b").is_null()
    bad_turn = pl.col("turn").is_null() | (pl.col("turn") < 1)
    report.dropped["rows without model_a/model_b"] = raw.filter(missing_models).height
    report.dropped["rows whose turn is null or below 1"] = raw.filter(~missing_models & bad_turn).height
    raw = raw.filter(~missing_models & ~bad_turn)
    raw, timestamp_flags = parse_timestamps(raw)
    report.flags.update(timestamp_flags)

    known = set(model_table()["raw_model"].to_list())
    seen = set(raw["model_a"].unique().to_list()) | set(raw["model_b"].unique().to_list())
    report.unmapped_models = sorted(quote(m, 60).strip("'") for m in seen if m not in known)

    cols: list[pl.Expr] = [
        pl.coalesce(
            pl.col("system_a_metadata").struct.field("conv_id"),
            pl.int_range(pl.len()).cast(pl.String),
        ).alias("conv_id"),
        paper_name(pl.col("model_a")).alias("model_a"),
        paper_name(pl.col("model_b")).alias("model_b"),
        pl.col("model_a").alias("raw_model_a"),
        pl.col("model_b").alias("raw_model_b"),
        pl.col("winner"),
        (pl.col("judge") if "judge" in raw.columns else pl.lit(None, dtype=pl.String)).alias("judge"),
        pl.col("turn").cast(pl.Int64),
        pl.col("timestamp"),
        *[(pl.col(c) if c in raw.columns else pl.lit(None, dtype=OPTIONAL_COLUMNS[c])).alias(c)
          for c in ("primary_intent", "secondary_intent", "languages")],
        _messages_of("a", "user").list.first().alias("prompt"),
        pl.col("system_a_metadata").struct.field("client_country").alias("client_country"),
        *system_config.config_columns(raw, SIDES, origin),
    ]
    for side in SIDES:
        cols += [
            _messages_of(side, "assistant").list.eval(words_expr(pl.element())).list.mean()
            .alias(f"response_length_{side}"),
            _trace(side).list.eval(pl.element().list.len()).list.mean().fill_null(0.0).alias(f"citation_count_{side}"),
        ]
    cols += _attribution_columns(raw)
    tidy = raw.select(cols).with_columns(words_expr(pl.col("prompt")).cast(pl.Int64).alias("prompt_words"))
    if "languages" in report.absent:  # as the paper labelled them: a detector on the prompt (one language each)
        detected = languages.detect_languages(tidy["prompt"].to_list())
        tidy = tidy.with_columns(pl.Series("languages", [[x] for x in detected], dtype=pl.List(pl.String)))
        report.derived["languages"] = (f"detected offline from the first prompt ({languages.DETECTOR}; one per "
                                       "conversation)")
    tidy = tidy.with_columns(pl.col("languages").list.first().alias("language"))
    # a column that is there but null in every row (all timestamps unparseable, say) holds nothing either
    report.absent += [c for c in ("primary_intent", "secondary_intent", "timestamp", "judge")
                      if c not in report.absent and tidy.height and tidy[c].null_count() == tidy.height]

    for side in SIDES:
        wide, issues = _citation_features(raw, side, match)
        report.flags.update(issues)
        tidy = (
            tidy.with_row_index("row")
            .join(wide, on="row", how="left")
            .drop("row")
            .with_columns(pl.col(f"num_cites_{g}_{side}").fill_null(0) for g in domains.DOMAIN_GROUPS)
            .with_columns(
                (pl.col(f"num_cites_{g}_{side}") > 0).cast(pl.Int64).alias(f"cites_{g}_{side}")
                for g in domains.DOMAIN_GROUPS
            )
        )

    for side, bad in system_config.unrecognised_styles(raw, SIDES, origin).items():
        report.flags[f"citation_format_standardized values that are neither style (side {side}; kept as null)"] = bad
    _flag(report, raw, tidy)
    report.n_rows = tidy.height
    return tidy, report


def _attribution_columns(raw: pl.DataFrame) -> list[pl.Expr]:
    """support/irrelevant/contradict counts per turn (citation-attribution subset only), each read from the top
    level or, where null there, from ``conv_metadata`` (:func:`analysis_lib.search_arena.duplicates.attribution_counts`:
    no record drops out of a file that holds them in both places)."""
    return [(count / pl.col("turn").cast(pl.Float64)).alias(count.meta.output_name())
            for count in duplicates.attribution_counts(raw)]


def _flag(report: LoadReport, raw: pl.DataFrame, tidy: pl.DataFrame) -> None:
    expected = raw["turn"] * 2
    odd = (raw["messages_a"].list.len() != expected) | (raw["messages_b"].list.len() != expected)
    f = report.flags
    f["no vote (winner is null)"] = int(tidy["winner"].null_count())
    f["self-battles (model_a == model_b)"] = int((tidy["raw_model_a"] == tidy["raw_model_b"]).sum())
    f["message count differs from 2 x turn (either side)"] = int(odd.sum())
    f["moderation placeholder prompts"] = int((tidy["prompt"] == MODERATION_PROMPT).sum())
    f["no user prompt"] = int(tidy["prompt"].null_count())
    if "primary_intent" in raw.columns:
        f["null primary_intent"] = int(tidy["primary_intent"].null_count())
    f["null client_country"] = int(tidy["client_country"].null_count())
    for side in SIDES:
        f[f"no assistant message (side {side}; response_length null)"] = int(
            tidy[f"response_length_{side}"].null_count()
        )
        f[f"no citations in any turn (side {side})"] = int((tidy[f"citation_count_{side}"] == 0).sum())


def load_battles_report(
    source: str | Path | pl.DataFrame,
    *,
    seed: int = 0,
    match: domains.Match = "substring",
    cache_dir: str | Path | None = None,
    max_bytes: int = MAX_RELEASE_BYTES,
) -> tuple[pl.DataFrame, LoadReport]:
    """Tidy battle frame and :class:`LoadReport` (see the module docstring for ``source``).

    A file source must be a regular, non-empty file of at most ``max_bytes``; anything the release does not
    allow raises :class:`DataValidationError` naming the file (and line or column) and what was expected.

    With ``cache_dir``, the tidy frame of a simulator or file source is cached as parquet, keyed by the
    source's identity (a file's sha256, or ``sample:N`` and seed), ``match`` and the library's version
    of this module and the simulator, so every process of a build reuses one derivation; a simulated release is
    kept too (:func:`read_release` reads it back). Files are written under a temporary name and renamed, so
    processes running at once never read a half-written one.
    """
    key = _cache_key(source, seed, match) if cache_dir is not None else None
    if key is None:
        return _derive_release(source, seed, match, None, max_bytes)
    cached = Path(cache_dir) / "battles" / f"{key}.parquet"  # type: ignore[arg-type]
    report_path = cached.with_suffix(".report.json")
    with _one_writer(cached):  # processes starting at once: the first derives it, the others wait and read it
        if cached.exists() and report_path.exists():
            return pl.read_parquet(cached), LoadReport(**json.loads(report_path.read_text()))
        tidy, report = _derive_release(source, seed, match, cache_dir, max_bytes)
        # the report first: a reader takes the frame only when both exist
        atomic_write(report_path, lambda tmp: tmp.write_text(json.dumps(asdict(report))))
        atomic_write(cached, tidy.write_parquet)
    return tidy, report


def _derive_release(source: str | Path | pl.DataFrame, seed: int, match: domains.Match,
                    cache_dir: str | Path | None, max_bytes: int) -> tuple[pl.DataFrame, LoadReport]:
    raw, origin = read_raw(source, seed=seed, max_bytes=max_bytes)
    _keep_simulated(raw, source, seed, cache_dir)
    try:
        tidy, report = derive(raw, origin, match=match)
    except READ_ERRORS as err:
        if isinstance(err, DataValidationError):
            raise
        # a value the schema allows but the derivation cannot use (the property tests look for these)
        raise DataValidationError(f"{origin}: could not derive the battle frame ({polars_failure(err)})") from None
    del raw
    release_freed_memory()  # the release's texts: whatever the caller loads next need not sit on top of them
    return tidy, report


def read_release(
    source: str | Path | pl.DataFrame,
    *,
    seed: int = 0,
    cache_dir: str | Path | None = None,
    columns: Collection[str] | None = None,
) -> pl.DataFrame:
    """The raw release's ``columns`` (None: every column the loader reads), for what the battle frame does not
    keep (the citation traces of NG-C, say). A simulated release that :func:`load_battles_report` simulated with
    the same ``cache_dir`` is read back from its parquet (only ``columns``), not simulated again; with
    ``cache_dir``, one simulated here is kept for the next reader. A file reads only ``columns``."""
    path = _simulated_path(source, seed, cache_dir)
    if path is None:
        return read_raw(source, seed=seed, columns=columns)[0]
    with _one_writer(path):
        if not path.exists():
            raw, _ = read_raw(source, seed=seed)
            _keep_simulated(raw, source, seed, cache_dir)
            del raw
    return pl.read_parquet(path, columns=[c for c in pl.read_parquet_schema(path) if columns is None or c in columns])


def _one_writer(path: Path) -> FileLock:
    """An exclusive lock on ``<path>.lock``: of the processes making the same cache file at once (notebooks of one
    build), one makes it and the others wait, then read it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return FileLock(path.with_name(path.name + ".lock"))


def _simulated_path(source: object, seed: int, cache_dir: str | Path | None) -> Path | None:
    """Where a simulated release is kept (None: not a simulator source, or no cache)."""
    if cache_dir is None or isinstance(source, pl.DataFrame) or sample_size(source) is None:
        return None
    return Path(cache_dir) / "battles" / f"{_cache_key(source, seed, 'raw')}.release.parquet"  # type: ignore[arg-type]


def _keep_simulated(raw: pl.DataFrame, source: object, seed: int, cache_dir: str | Path | None) -> None:
    path = _simulated_path(source, seed, cache_dir)
    if path is not None and not path.exists():
        # the simulator's freed pages go back first: the writer's buffers would come on top (1.62 -> 1.22 GB peak)
        release_freed_memory()
        atomic_write(path, raw.write_parquet)


def load_battles(
    source: str | Path | pl.DataFrame,
    *,
    seed: int = 0,
    match: domains.Match = "substring",
    cache_dir: str | Path | None = None,
    max_bytes: int = MAX_RELEASE_BYTES,
) -> pl.DataFrame:
    """Tidy battle frame of a Search Arena release; logs the :class:`LoadReport`."""
    tidy, report = load_battles_report(source, seed=seed, match=match, cache_dir=cache_dir, max_bytes=max_bytes)
    log.info("%s", report)
    return tidy


def data_kind(source: str | Path | pl.DataFrame) -> str:
    """Where a release comes from (:data:`analysis_lib.fetch.Provenance`): ``simulated`` for the simulator; ``real``
    for the pinned hub revision (``hf``) or a file whose sha256 is in the data manifest; ``user`` for anything else
    (a user's file, an in-memory frame, another hub revision): the library cannot vouch for what it holds."""
    if isinstance(source, pl.DataFrame):
        return "user"
    if sample_size(source) is not None:
        return "simulated"
    parsed = sources.parse(source)
    if parsed.kind == "hf":  # only the pinned file at the pinned commit is in the manifest
        return "real" if hub.is_pinned(parsed.text) else "user"
    return fetch.provenance(parsed.text)


def _cache_key(source: str | Path | pl.DataFrame, seed: int, match: str) -> str | None:
    """:func:`analysis_lib.cache_keys.digest` of the source's identity (``sample:N`` and seed, ``hf`` and the pinned
    revision, or a file's sha256 and suffix: its content and the reader that reads it, never its size and mtime),
    ``match`` and the code that derives the frame (each file of the reader and the simulator and each resource
    CSV, by name), cut to 24 hex digits; None for a frame or a missing file (nothing cached)."""
    if isinstance(source, pl.DataFrame):
        return None
    text = str(source)
    here = Path(__file__).resolve().parent  # this package: the loader, the release reader, the simulator
    code = [here / name for name in ("loader.py", "release.py", "system_config.py", "domains.py",
                                     "models.py", "languages.py", "duplicates.py")] + [here.parent / "reading.py"]
    code += list(here.glob("simulate/*.py"))
    files = {path.relative_to(here.parent).as_posix(): cache_keys.file_digest(path)
             for path in sorted([*code, *(here.parent / "resources").glob("*.csv")]) if path.exists()}
    ident: list[str | int]
    if sample_size(text) is not None:
        ident = [text, seed]
    elif sources.is_named(text):  # hf or hf:REF
        ident = [text, HF_REVISION]
    else:
        p = Path(text).expanduser()
        if not p.is_file():
            return None
        ident = [cache_keys.file_digest(p), p.suffix.lower()]
    return cache_keys.digest({"source": ident, "match": match, "code": files})[:24]
