"""Search Arena releases: read, validate, and derive the tidy battle frame.

``load_battles(source)`` accepts

- a path to the released parquet (``search-arena-chat-24k.parquet``, ``search-arena-v1-preference-7k.parquet``)
  or jsonl (``search_arena_24k.jsonl``; the citation-attribution subset ``citation_attribution_data.jsonl``),
- an in-memory raw frame (polars, or pandas converted with ``polars.from_pandas``),
- ``"hf"``: the pinned ``lmarena-ai/search-arena-24k`` revision through ``datasets`` (``"hf:REF"``: another
  revision, or another file of the pinned one; the grammar is :mod:`analysis_lib.sources`'s),
- ``"sample"`` or ``"sample:N"``: the project's simulator (``analysis_lib.simulate.search_arena``), N
  conversations (default 24,069), with ``seed``.

and returns one row per conversation with the columns documented in ``book/library.md``. Feature
definitions follow the authors' code (lmarena/search-arena ``scripts/utils.py``):

- ``prompt_words``: ``len(prompt.split())`` (counted as runs of non-whitespace characters);
- ``response_length_{a,b}``: mean over that side's assistant messages of their word counts;
- ``citation_count_{a,b}``: mean over the turns of ``web_search_trace`` of the number of
  ``[marker, url]`` pairs (0 for an empty trace);
- ``num_cites_<group>_{a,b}``: citations over all turns whose host (``url.split('/')[2]``) falls in
  ``<group>`` (Appendix E.2 rule, :mod:`analysis_lib.domains`); ``cites_<group>_{a,b}`` = 1 if any.

Everything is computed with polars expressions over the nested columns; no per-row Python loop.
Nothing is dropped silently: the :class:`LoadReport` counts every exclusion and every irregularity.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

import polars as pl

from analysis_lib import domains, sources
from analysis_lib.models import leaderboard_models as leaderboard_models  # re-exported
from analysis_lib.models import model_table
from analysis_lib.models import provider_of as provider_of  # re-exported
from analysis_lib.schema import ATTRIBUTION_COUNTS, MODERATION_PROMPT, SIDES, WINNERS
from analysis_lib.simulate import search_arena

if TYPE_CHECKING:
    from polars._typing import PolarsDataType

log = logging.getLogger(__name__)

HF_DATASET = "lmarena-ai/search-arena-24k"
HF_REVISION = "fac8dcf86146c8773ef020095c5694c9b2bc98d7"
HF_FILE = "data/search-arena-chat-24k.parquet"
FULL_SIZE = 24_069


_MESSAGES = pl.List(pl.Struct({"content": pl.String, "role": pl.String}))
_TRACE = pl.List(pl.List(pl.List(pl.String)))

#: Raw columns the loader needs, with the dtype it expects (nested struct fields it reads are checked too).
REQUIRED_COLUMNS: dict[str, pl.DataType | type[pl.DataType]] = {
    "model_a": pl.String,
    "model_b": pl.String,
    "winner": pl.String,
    "turn": pl.Int64,
    "messages_a": _MESSAGES,
    "messages_b": _MESSAGES,
    "system_a_metadata": pl.Struct,
    "system_b_metadata": pl.Struct,
    "primary_intent": pl.String,
    "secondary_intent": pl.String,
    "languages": pl.List(pl.String),
}
#: Every raw column the loader may use; other columns (``formatted_messages`` lives inside the metadata
#: structs, but whole extra columns of a release) are not read from disk.
READ_COLUMNS = frozenset(
    [*REQUIRED_COLUMNS, "judge", "timestamp", "conv_metadata"]
    + [f"{base}_{side}" for base in ATTRIBUTION_COUNTS for side in SIDES]
)

#: Fields of ``system_{a,b}_metadata`` the loader reads.
METADATA_FIELDS: dict[str, pl.DataType] = {
    "client_country": pl.String(),
    "conv_id": pl.String(),
    "web_search_trace": _TRACE,
}


class DataValidationError(ValueError):
    """The input does not have the shape of a Search Arena release; the message names where and what."""


@dataclass
class LoadReport:
    """What the loader dropped (with reasons) and what it flagged, with counts."""

    source: str
    n_raw: int = 0
    n_rows: int = 0
    dropped: dict[str, int] = field(default_factory=dict)
    flags: dict[str, int] = field(default_factory=dict)
    unmapped_models: list[str] = field(default_factory=list)

    def to_frame(self) -> pl.DataFrame:
        rows = [("kept", "conversations", self.n_rows)]
        rows += [("dropped", k, v) for k, v in self.dropped.items()]
        rows += [("flagged", k, v) for k, v in self.flags.items()]
        return pl.DataFrame(rows, schema={"kind": pl.String, "what": pl.String, "count": pl.Int64}, orient="row")

    def __str__(self) -> str:
        lines = [f"{self.source}: {self.n_raw:,} rows read, {self.n_rows:,} kept"]
        lines += [f"  dropped {v:,}: {k}" for k, v in self.dropped.items() if v]
        lines += [f"  flagged {v:,}: {k}" for k, v in self.flags.items() if v]
        if self.unmapped_models:
            lines.append(f"  model ids kept as-is (not in resources/model_names.csv): {self.unmapped_models}")
        return "\n".join(lines)


# --------------------------------------------------------------------------------------------------------
# Reading


def read_raw(source: str | Path | pl.DataFrame, *, seed: int = 0) -> tuple[pl.DataFrame, str]:
    """The raw release as a polars frame, and a label naming where it came from."""
    if isinstance(source, pl.DataFrame):
        return source, "in-memory frame"
    parsed = sources.parse(source)
    if parsed.kind == "sample":
        n = parsed.n if parsed.n is not None else FULL_SIZE
        raw, _ = search_arena.simulate(n=n, seed=seed)
        return raw, f"simulator (n={n:,}, seed={seed})"
    if parsed.kind == "hf":
        return _read_hf(parsed.ref), f"{HF_DATASET}@{(parsed.ref or HF_REVISION)[:40 if parsed.ref else 8]}"
    path = Path(parsed.text).expanduser()
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file (expected a Search Arena release .parquet or .jsonl)")
    if path.is_dir():
        raise DataValidationError(f"{path}: is a folder; expected a Search Arena release file (.parquet or .jsonl)")
    suffix = path.suffix.lower()
    try:
        if suffix == ".parquet":
            available = pl.read_parquet_schema(path)
            return pl.read_parquet(path, columns=[c for c in available if c in READ_COLUMNS]), str(path)
        if suffix in (".jsonl", ".json", ".ndjson"):
            lazy = pl.scan_ndjson(path, infer_schema_length=None)
            names = lazy.collect_schema().names()
            return lazy.select([c for c in names if c in READ_COLUMNS]).collect(), str(path)
    except Exception as err:  # polars raises several error types for corrupt files
        where = _first_bad_json_line(path) if suffix != ".parquet" else ""
        raise DataValidationError(
            f"{path}{where}: could not be read as {suffix[1:]} ({type(err).__name__}: {err})") from err
    raise DataValidationError(f"{path}: unsupported file type {path.suffix!r}; expected .parquet or .jsonl")


def _first_bad_json_line(path: Path) -> str:
    """``", line N"`` for the first line of a JSON-lines file that is not one JSON object ("" if none is)."""
    import json

    with path.open("rb") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                if not isinstance(json.loads(line), dict):
                    return f", line {number} (not a JSON object)"
            except ValueError:
                return f", line {number} (not valid JSON: truncated or malformed)"
    return ""


def sample_size(source: object, default: int = FULL_SIZE) -> int | None:
    """Number of simulated conversations a data source asks for, or None if it is not a simulator source.

    ``"sample"`` -> ``default``; ``"sample:N"`` -> N (``_`` and ``,`` allowed as digit separators). Anything else,
    including a file whose name merely starts with "sample", is not a simulator source.
    """
    return sources.sample_size(source, default)


def _read_hf(ref: str | None = None) -> pl.DataFrame:
    """The release through ``datasets``: the pinned revision and file, another revision (``ref``), or another
    file of the pinned revision (a ``ref`` ending in .parquet / .jsonl). Fails with a clear message when the hub
    is unreachable."""
    is_file = bool(ref) and ref.lower().endswith((".parquet", ".jsonl", ".json"))  # type: ignore[union-attr]
    revision = HF_REVISION if (not ref or is_file) else ref
    files = ref if is_file else HF_FILE
    try:
        import datasets

        ds = datasets.load_dataset(HF_DATASET, revision=revision, data_files=files, split="train")
    except Exception as err:
        raise RuntimeError(
            f"could not load {HF_DATASET} at revision {HF_REVISION} from the Hugging Face hub "
            f"({type(err).__name__}: {err}). Download {HF_FILE} by hand and pass its path instead."
        ) from err
    return pl.from_arrow(ds.data.table)  # type: ignore[return-value]


# --------------------------------------------------------------------------------------------------------
# Validation


def validate_raw(raw: pl.DataFrame, origin: str = "input") -> None:
    """Check the raw columns and nested fields the loader reads; raise naming the column and expectation."""
    schema = raw.schema
    for name, expected in REQUIRED_COLUMNS.items():
        if name not in schema:
            raise DataValidationError(f"{origin}: missing column {name!r} (expected {expected})")
        got = schema[name]
        if got == pl.Null:  # an all-null column read from jsonl
            continue
        ok = isinstance(got, pl.Struct) if expected is pl.Struct else _compatible(got, expected)
        if not ok:
            raise DataValidationError(f"{origin}: column {name!r} has type {got}, expected {expected}")
    for side in SIDES:
        meta = schema[f"system_{side}_metadata"]
        # a Struct by the column check above (an all-null metadata column fails here, as it always did)
        fields = {f.name: f.dtype for f in cast(pl.Struct, meta).fields}
        for fname, expected in METADATA_FIELDS.items():
            if fname not in fields:
                raise DataValidationError(
                    f"{origin}: column 'system_{side}_metadata' lacks field {fname!r} (expected {expected})"
                )
            if fields[fname] != pl.Null and not _compatible(fields[fname], expected):
                raise DataValidationError(
                    f"{origin}: field 'system_{side}_metadata.{fname}' has type {fields[fname]}, expected {expected}"
                )
    bad = raw.with_row_index("row").filter(pl.col("winner").is_not_null() & ~pl.col("winner").is_in(WINNERS))
    if bad.height:
        sample = ", ".join(f"row {r} = {w!r}" for r, w in bad.select("row", "winner").head(5).iter_rows())
        raise DataValidationError(
            f"{origin}: column 'winner' has {bad.height} value(s) outside {list(WINNERS)} or null: {sample}"
        )


def _compatible(got: PolarsDataType, expected: Any) -> bool:
    """Dtype equality that accepts integer widths and Null-typed nested leaves (all-null jsonl fields)."""
    if got == expected:
        return True
    if expected == pl.Int64 and got.is_integer():
        return True
    if isinstance(got, pl.List) and isinstance(expected, pl.List):
        return got.inner == pl.Null or _compatible(got.inner, expected.inner)
    if isinstance(got, pl.Struct) and isinstance(expected, pl.Struct):
        have = {f.name: f.dtype for f in got.fields}
        return all(f.name in have and _compatible(have[f.name], f.dtype) for f in expected.fields)
    return False


# --------------------------------------------------------------------------------------------------------
# Derivation


def _parse_timestamps(raw: pl.DataFrame) -> tuple[pl.DataFrame, int]:
    """``timestamp`` as Datetime(ns): parquet stores it so; jsonl has ISO strings (or epoch numbers)."""
    if "timestamp" not in raw.columns:
        return raw.with_columns(pl.lit(None, dtype=pl.Datetime("ns")).alias("timestamp")), 0
    dtype = raw.schema["timestamp"]
    if dtype == pl.String:
        parsed = pl.col("timestamp").str.to_datetime(time_unit="ns", strict=False)
    elif dtype.is_integer():  # epoch: the unit follows from the magnitude (2025 is ~1.7e9 s, 1.7e18 ns)
        # polars types Series.max() as any Python literal; an integer column gives an int (or None)
        top = cast(int, raw["timestamp"].abs().max() or 0)
        unit: Literal["s", "ms", "us", "ns"] = (
            "s" if top < 10**11 else "ms" if top < 10**14 else "us" if top < 10**17 else "ns"
        )
        parsed = pl.from_epoch(pl.col("timestamp"), time_unit=unit).cast(pl.Datetime("ns"))
    else:
        parsed = pl.col("timestamp").cast(pl.Datetime("ns"))
    out = raw.with_columns(parsed.alias("timestamp"))
    unparsed = int((out["timestamp"].is_null() & raw["timestamp"].is_not_null()).sum())
    return out, unparsed


def _normalise(raw: pl.DataFrame) -> pl.DataFrame:
    """Cast columns whose leaves were inferred as Null (all-empty lists in jsonl) to the expected dtypes."""
    casts = [
        pl.col(name).cast(dtype)
        for name, dtype in REQUIRED_COLUMNS.items()
        if dtype is not pl.Struct and raw.schema[name] != dtype
    ]
    casts += [
        pl.col(f"system_{side}_metadata").struct.with_fields(
            pl.field(name).cast(dtype) for name, dtype in METADATA_FIELDS.items()
        )
        for side in SIDES
    ]
    return raw.with_columns(casts)


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
    validate_raw(raw, origin)
    if raw.height == 0:
        raise DataValidationError(f"{origin}: the release has no rows (an empty file or an empty selection)")
    raw = _normalise(raw)
    report = LoadReport(source=origin, n_raw=raw.height)
    # The same conversation twice (a concatenated or re-exported release): the first copy is kept.
    conv = pl.col("system_a_metadata").struct.field("conv_id")
    first = conv.is_null() | conv.is_first_distinct()
    report.dropped["duplicate conversations (repeated conv_id; first kept)"] = raw.filter(~first).height
    raw = raw.filter(first)

    # Rows that cannot be analysed at all: no model ids, or no usable turn count (features are per turn).
    missing_models = pl.col("model_a").is_null() | pl.col("model_b").is_null()
    bad_turn = pl.col("turn").is_null() | (pl.col("turn") < 1)
    report.dropped["rows without model_a/model_b"] = raw.filter(missing_models).height
    report.dropped["rows whose turn is null or below 1"] = raw.filter(~missing_models & bad_turn).height
    raw = raw.filter(~missing_models & ~bad_turn)
    raw, unparsed = _parse_timestamps(raw)
    report.flags["timestamps that could not be parsed (kept as null)"] = unparsed

    names = model_table()
    mapping = dict(zip(names["raw_model"], names["model"], strict=True))
    seen = set(raw["model_a"].unique().to_list()) | set(raw["model_b"].unique().to_list())
    report.unmapped_models = sorted(m for m in seen if m not in mapping)

    cols: list[pl.Expr] = [
        pl.coalesce(
            pl.col("system_a_metadata").struct.field("conv_id"),
            pl.int_range(pl.len()).cast(pl.String),
        ).alias("conv_id"),
        pl.col("model_a").replace(mapping).alias("model_a"),
        pl.col("model_b").replace(mapping).alias("model_b"),
        pl.col("model_a").alias("raw_model_a"),
        pl.col("model_b").alias("raw_model_b"),
        pl.col("winner"),
        (pl.col("judge") if "judge" in raw.columns else pl.lit(None, dtype=pl.String)).alias("judge"),
        pl.col("turn").cast(pl.Int64),
        pl.col("timestamp"),
        pl.col("primary_intent"),
        pl.col("secondary_intent"),
        pl.col("languages"),
        pl.col("languages").list.first().alias("language"),
        _messages_of("a", "user").list.first().alias("prompt"),
        pl.col("system_a_metadata").struct.field("client_country").alias("client_country"),
    ]
    for side in SIDES:
        cols += [
            _messages_of(side, "assistant").list.eval(words_expr(pl.element())).list.mean()
            .alias(f"response_length_{side}"),
            _trace(side).list.eval(pl.element().list.len()).list.mean().fill_null(0.0).alias(f"citation_count_{side}"),
        ]
    cols += _attribution_columns(raw)
    tidy = raw.select(cols).with_columns(words_expr(pl.col("prompt")).cast(pl.Int64).alias("prompt_words"))

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

    _flag(report, raw, tidy)
    report.n_rows = tidy.height
    return tidy, report


def _attribution_columns(raw: pl.DataFrame) -> list[pl.Expr]:
    """support/irrelevant/contradict counts per turn (citation-attribution subset only)."""
    meta_fields: set[str] = set()
    if "conv_metadata" in raw.columns and isinstance(raw.schema["conv_metadata"], pl.Struct):
        meta_fields = {f.name for f in raw.schema["conv_metadata"].fields}  # type: ignore[union-attr]
    exprs: list[pl.Expr] = []
    for base in ATTRIBUTION_COUNTS:
        for side in SIDES:
            name = f"{base}_{side}"
            if name in raw.columns:
                source = pl.col(name)
            elif name in meta_fields:
                source = pl.col("conv_metadata").struct.field(name)
            else:
                continue
            exprs.append((source.cast(pl.Float64) / pl.col("turn").cast(pl.Float64)).alias(name))
    return exprs


def _flag(report: LoadReport, raw: pl.DataFrame, tidy: pl.DataFrame) -> None:
    expected = raw["turn"] * 2
    odd = (raw["messages_a"].list.len() != expected) | (raw["messages_b"].list.len() != expected)
    f = report.flags
    f["no vote (winner is null)"] = int(tidy["winner"].null_count())
    f["self-battles (model_a == model_b)"] = int((tidy["raw_model_a"] == tidy["raw_model_b"]).sum())
    f["message count differs from 2 x turn (either side)"] = int(odd.sum())
    f["moderation placeholder prompts"] = int((tidy["prompt"] == MODERATION_PROMPT).sum())
    f["no user prompt"] = int(tidy["prompt"].null_count())
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
) -> tuple[pl.DataFrame, LoadReport]:
    """Tidy battle frame and :class:`LoadReport` (see the module docstring for ``source``).

    With ``cache_dir``, the tidy frame of a simulator or file source is cached as parquet, keyed by the
    source's identity (file size and mtime, or ``sample:N`` and seed), ``match`` and the library's version
    of this module and the simulator, so every chapter of a build reuses one derivation.
    """
    key = _cache_key(source, seed, match) if cache_dir is not None else None
    if key is not None:
        cached = Path(cache_dir) / "battles" / f"{key}.parquet"  # type: ignore[arg-type]
        report_path = cached.with_suffix(".report.json")
        if cached.exists() and report_path.exists():
            import json

            meta = json.loads(report_path.read_text())
            return pl.read_parquet(cached), LoadReport(**meta)
    raw, origin = read_raw(source, seed=seed)
    tidy, report = derive(raw, origin, match=match)
    if key is not None:
        import json
        from dataclasses import asdict

        cached.parent.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_suffix(".part")
        tidy.write_parquet(tmp)
        tmp.replace(cached)
        report_path.write_text(json.dumps(asdict(report)))
    return tidy, report


def load_battles(
    source: str | Path | pl.DataFrame,
    *,
    seed: int = 0,
    match: domains.Match = "substring",
    cache_dir: str | Path | None = None,
) -> pl.DataFrame:
    """Tidy battle frame of a Search Arena release; logs the :class:`LoadReport`."""
    tidy, report = load_battles_report(source, seed=seed, match=match, cache_dir=cache_dir)
    log.info("%s", report)
    return tidy


def data_kind(source: str | Path | pl.DataFrame) -> str:
    """``simulated`` for the simulator, ``real`` otherwise (for :func:`analysis_lib.report.data_banner`)."""
    return "simulated" if sample_size(source) is not None else "real"


def _cache_key(source: str | Path | pl.DataFrame, seed: int, match: str) -> str | None:
    if isinstance(source, pl.DataFrame):
        return None
    text = str(source)
    lib = hashlib.sha256()
    pkg = Path(__file__).resolve().parent
    for path in sorted([pkg / "data.py", pkg / "domains.py", *pkg.glob("simulate/*.py"), *pkg.glob("resources/*.csv")]):
        if path.exists():
            lib.update(path.read_bytes())
    if sample_size(text) is not None:
        ident = f"{text}|seed={seed}"
    elif sources.is_named(text):  # hf or hf:REF
        ident = f"{text}|{HF_REVISION}"
    else:
        p = Path(text).expanduser()
        if not p.exists():
            return None
        st = p.stat()
        ident = f"{p.resolve()}|{st.st_size}|{st.st_mtime_ns}"
    return hashlib.sha256(f"{ident}|{match}|{lib.hexdigest()}".encode()).hexdigest()[:24]
