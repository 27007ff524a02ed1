"""``DATA=hf`` end to end, offline: a Hugging Face hub cache holding a snapshot of the pinned revision (a simulated
release written where the real one lives, in huggingface_hub's own layout), ``HF_HUB_OFFLINE=1``, and the
release read through the real ``huggingface_hub`` and ``datasets`` calls: by the loader, and by a release-reading
chapter run with papermill.

huggingface_hub reads ``HF_HUB_OFFLINE`` and ``HF_HUB_CACHE`` when it is imported, so every check runs in a fresh
process with the environment set (as a chapter's kernel does). The hub endpoint points at a closed local port: a
call that tried the network would fail rather than download.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import nbformat
import polars as pl
import pytest

from analysis_lib.search_arena import hub, loader
from analysis_lib.search_arena.simulate.conversations import simulate_release
from bookbuild import identity, inputs

REPO = Path(__file__).resolve().parents[1]
#: Conversations in the simulated release (the size of a ``sample:N`` test build, small enough to keep this quick).
N = 1500
#: A revision whose snapshot holds a blob that is not what its name (the hub's sha256) says, and one never cached.
DAMAGED = "1" * 40
ABSENT = "2" * 40
#: A revision whose blob links on to a shared store (checked by the blob's name, not the store entry's).
SHARED = "3" * 40


def hub_snapshot(cache: Path, raw: pl.DataFrame, revision: str, *, blob_name: str | None = None,
                 branch: str | None = None, shared: bool = False) -> Path:
    """``raw`` as parquet at :data:`~analysis_lib.search_arena.hub.HF_FILE` of ``revision`` in the hub cache
    ``cache``, laid out as huggingface_hub lays it out: ``datasets--lmarena-ai--search-arena-24k/blobs/<sha256>``
    (a Git LFS file's blob is named by the sha256 of its content; ``blob_name`` names it otherwise), the snapshot
    file a relative link to the blob, and ``refs/<branch>`` holding the commit. ``shared``: the blob is a link to
    an entry of a store shared between repositories (huggingface_hub 1.x+ with Xet), named by another 64-digit
    hash. Returns the blob."""
    repo = cache / f"datasets--{hub.HF_DATASET.replace('/', '--')}"
    (repo / "blobs").mkdir(parents=True, exist_ok=True)
    staged = repo / "blobs" / "staged.parquet.incomplete"
    raw.write_parquet(staged)
    blob = repo / "blobs" / (blob_name or hashlib.sha256(staged.read_bytes()).hexdigest())
    if shared:
        entry = cache / "shared" / ("f" * 64)
        entry.parent.mkdir(parents=True, exist_ok=True)
        staged.replace(entry)
        blob.symlink_to(os.path.relpath(entry, blob.parent))
    else:
        staged.replace(blob)
    link = repo / "snapshots" / revision / hub.HF_FILE
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(os.path.relpath(blob, link.parent))
    if branch:
        (repo / "refs").mkdir(exist_ok=True)
        (repo / "refs" / branch).write_text(revision)
    return blob


@dataclass(frozen=True)
class OfflineHub:
    blob: Path  # the pinned revision's blob in the hub cache
    plain: Path  # the same release as a plain parquet file
    env: dict[str, str]  # an offline session using that cache

    @property
    def cache(self) -> Path:
        return Path(self.env["HF_HUB_CACHE"])


@pytest.fixture(scope="module")
def offline_hub(tmp_path_factory: pytest.TempPathFactory) -> OfflineHub:
    """A hub cache with the pinned revision (also the ``main`` branch) and a damaged revision; the simulated
    release also as a plain parquet file; the environment of an offline session that uses that cache."""
    root = tmp_path_factory.mktemp("hf")
    raw = simulate_release(n=N, seed=3).raw
    blob = hub_snapshot(root / "hub", raw, hub.HF_REVISION, branch="main")
    hub_snapshot(root / "hub", raw.head(50), DAMAGED, blob_name="0" * 64)
    hub_snapshot(root / "hub", raw.head(60), SHARED, shared=True)
    plain = root / "release.parquet"
    raw.write_parquet(plain)
    env = {**os.environ, "HF_HOME": str(root / "home"), "HF_HUB_CACHE": str(root / "hub"),
           "HF_DATASETS_CACHE": str(root / "datasets"), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "HF_ENDPOINT": "http://127.0.0.1:9", "HF_HUB_DISABLE_TELEMETRY": "1", "PYTHONPATH": str(REPO)}
    return OfflineHub(blob, plain, env)


def _python(code: str, env: dict[str, str], *args: str) -> dict:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], env=env, cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


#: Run in a fresh process: every ``datasets.load_dataset`` call is recorded, then the loader reads ``hf`` (into
#: an empty loader cache, so nothing is served from a cache of its own), the same parquet by path, and the
#: sources that must fail.
_LOADER = """
    import json, sys
    import datasets
    calls = []
    _load = datasets.load_dataset
    def spy(*args, **kwargs):
        calls.append({"builder": args[0], "data_files": [str(f) for f in kwargs.get("data_files") or []]})
        return _load(*args, **kwargs)
    datasets.load_dataset = spy
    from analysis_lib.search_arena import loader
    from bookbuild import banner
    tidy, report = loader.load_battles_report("hf", cache_dir=sys.argv[1])
    by_path, _ = loader.load_battles_report(sys.argv[2])
    out = {"calls": calls, "label": report.source, "n_raw": report.n_raw, "rows": tidy.height,
           "same_as_path": tidy.equals(by_path),
           "main_rows": loader.load_battles_report("hf:main")[0].height,
           "shared_rows": loader.load_battles_report("hf:" + "3" * 40)[0].height}
    for source in ["hf", "hf:main"]:
        out[source] = {"kind": banner.kind_of(source), "data_kind": loader.data_kind(source),
                       "line": banner.source_line(source)}
    for source in ["hf:" + "1" * 40, "hf:" + "2" * 40, "hf:data/other.parquet"]:
        try:
            loader.load_battles_report(source)
            out[source] = "read"
        except Exception as err:
            out[source] = f"{type(err).__name__}: {err}"
    print(json.dumps(out))
"""


def test_the_loader_reads_the_pinned_release_offline_through_datasets(offline_hub, tmp_path):
    got = _python(_LOADER, offline_hub.env, str(tmp_path / "loader-cache"), str(offline_hub.plain))
    snapshot = offline_hub.cache / f"datasets--lmarena-ai--search-arena-24k/snapshots/{hub.HF_REVISION}"
    # the release came through datasets' parquet builder, reading the snapshot of the pinned revision
    assert got["calls"][0] == {"builder": "parquet", "data_files": [str(snapshot / hub.HF_FILE)]}
    assert list(Path(offline_hub.env["HF_DATASETS_CACHE"]).glob("parquet/*/*/*/*.arrow"))
    # the same frame as the same bytes read by path (polars), so nothing was lost or changed on the way
    assert got["n_raw"] == pl.read_parquet(offline_hub.blob).height and got["same_as_path"]
    assert got["label"] == f"{hub.HF_DATASET}@{hub.HF_REVISION[:8]}"
    # the pinned release is real public data, named with its revision; a branch (here pointing at the same
    # commit, read offline through refs/main) is not pinned: a branch moves, so it counts as the user's data
    assert got["hf"]["kind"] == got["hf"]["data_kind"] == "real"
    assert "the pinned public release `hf`" in got["hf"]["line"] and hub.HF_REVISION[:12] in got["hf"]["line"]
    assert got["main_rows"] == got["rows"] and got["shared_rows"] == 60
    assert got["hf:main"]["kind"] == got["hf:main"]["data_kind"] == "user"
    assert "not the project's pinned release" in got["hf:main"]["line"]
    # a blob whose content is not the hub's sha256 is refused, naming it; an uncached revision or file offline
    # is refused naming the cache and HF_HUB_OFFLINE
    assert got["hf:" + DAMAGED].startswith("DataValidationError") and "differs from the hub's 000000000000" in (
        got["hf:" + DAMAGED])
    for source in ["hf:" + ABSENT, "hf:data/other.parquet"]:
        assert got[source].startswith("HubUnavailable") and "HF_HUB_OFFLINE is set" in got[source], got[source]
        assert str(offline_hub.cache) in got[source]


def test_target_and_pinned():
    assert hub.target(None) == hub.target("") == hub.HubTarget(hub.HF_REVISION, hub.HF_FILE)
    assert hub.target("data/other.jsonl") == hub.HubTarget(hub.HF_REVISION, "data/other.jsonl")
    assert hub.target("v2") == hub.HubTarget("v2", hub.HF_FILE)
    pinned = ["hf", "hf:" + hub.HF_REVISION, "hf:" + hub.HF_REVISION.upper(), "hf:" + hub.HF_FILE]
    assert all(hub.is_pinned(s) for s in pinned)
    others = ["hf:main", "hf:" + hub.HF_REVISION[:8], "hf:data/other.parquet", "sample", "hf.parquet", "hf:", 3]
    assert not any(hub.is_pinned(s) for s in others)


def test_the_build_identity_names_the_pinned_release_and_its_revision():
    pinned = inputs._named("data_source", "hf", 0)
    assert (pinned["revision"], pinned["file"], pinned["pinned"]) == (hub.HF_REVISION, hub.HF_FILE, True)
    assert identity.describe_input({**pinned, "rows": 24069}) == (
        f"the pinned public release `hf` (revision {hub.HF_REVISION[:12]}, 24,069 rows)")
    # a file of the pinned revision is recorded at the pinned commit (it was recorded as revision "data/…")
    other = inputs._named("data_source", "hf:data/other.parquet", 0)
    assert (other["revision"], other["file"], other["pinned"]) == (hub.HF_REVISION, "data/other.parquet", False)
    assert other["id"] != pinned["id"]
    assert identity.describe_input(other).startswith("release `hf:data/other.parquet`")


@pytest.mark.slow
def test_a_release_reading_chapter_runs_on_the_offline_pinned_release(offline_hub, tmp_path):
    """Chapter 01 with ``data_source="hf"`` in the offline environment: it finishes, its banner names the pinned
    release and its revision, and its battle-data numbers are recorded as real data from the snapshot."""
    out, results = tmp_path / "01_dataset.ipynb", tmp_path / "results"
    cmd = [sys.executable, "-m", "papermill", str(REPO / "notebooks" / "01_dataset.ipynb"), str(out),
           "-p", "data_source", "hf", "-p", "n_bootstrap", "20", "-p", "results_dir", str(results),
           "-p", "cache_dir", str(tmp_path / "cache"), "-k", "python3", "--cwd", str(REPO / "notebooks"),
           "--log-level", "WARNING"]
    done = subprocess.run(cmd, env=offline_hub.env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    text = json.dumps([c.get("outputs", []) for c in nbformat.read(out, 4).cells])
    assert "the pinned public release <code>hf</code>" in text and hub.HF_REVISION[:12] in text  # the banner is HTML
    recorded = {r["quantity"]: r for r in json.loads((results / "01_dataset.json").read_text())["results"]
                if r["analysis_id"] == "SA-T1"}
    tidy, _ = loader.load_battles_report(offline_hub.plain)
    assert recorded["Search Arena conversations"]["ours"] == tidy.height
    assert recorded["Search Arena conversations with a vote"]["ours"] == tidy["winner"].is_not_null().sum()
    assert {r["data"] for r in recorded.values()} == {"real"}
