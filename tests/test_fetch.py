"""Manifest parsing, mirror seeding with hash checks, and failure messages."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from analysis_lib import fetch
from analysis_lib.fetch import DataFetchError

HEADER = "id,url,sha256,bytes,licence,mirror_path,analyses,note\n"


def write_manifest(tmp_path: Path, rows: list[str]) -> Path:
    path = tmp_path / "manifest.csv"
    path.write_text(HEADER + "".join(r + "\n" for r in rows))
    return path


def test_repository_manifest_lists_every_mirrored_file():
    entries = fetch.read_manifest()
    mirror = os.environ.get(fetch.MIRROR_ENV)
    if not mirror:
        pytest.skip(f"no local mirror of the inputs: set ${fetch.MIRROR_ENV} (make test sets it when one exists)")
    sums = Path(mirror) / "SHA256SUMS"
    assert sums.exists(), f"${fetch.MIRROR_ENV}={mirror} holds no SHA256SUMS"
    listed = {e.mirror_path: e.sha256 for e in entries.values() if e.mirror_path}
    for line in sums.read_text().splitlines():
        digest, path = line.split(maxsplit=1)
        assert listed.get(path) == digest, f"{path} missing from data_manifest.csv or with another hash"


def test_mirror_seeds_cache_after_hash_check(tmp_path):
    mirror = tmp_path / "mirror"
    (mirror / "sub").mkdir(parents=True)
    payload = b"a,b\n1,2\n"
    (mirror / "sub" / "f.csv").write_bytes(payload)
    digest = hashlib.sha256(payload).hexdigest()
    manifest = write_manifest(tmp_path, [f"x/f,https://127.0.0.1:9/f.csv,{digest},8,MIT,sub/f.csv,SA-T1,"])
    path = fetch.fetch("x/f", cache_dir=tmp_path / "cache", mirror=mirror, manifest=manifest)
    assert path.read_bytes() == payload and path.parent == tmp_path / "cache"
    (mirror / "sub" / "f.csv").unlink()  # now served from the cache alone
    assert fetch.fetch("x/f", cache_dir=tmp_path / "cache", mirror=mirror, manifest=manifest) == path


def test_mirror_with_wrong_hash_is_refused(tmp_path):
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "f.csv").write_bytes(b"tampered")
    manifest = write_manifest(tmp_path, [f"x/f,https://127.0.0.1:9/f.csv,{'0' * 64},8,MIT,f.csv,SA-T1,"])
    with pytest.raises(DataFetchError,
                       match=r"x/f: the mirror copy .*f.csv has sha256 .* but the manifest expects 0{64}"):
        fetch.fetch("x/f", cache_dir=tmp_path / "cache", mirror=mirror, manifest=manifest)


def test_unreachable_url_names_id_url_and_remedy(tmp_path):
    manifest = write_manifest(tmp_path, [f"x/f,http://127.0.0.1:9/f.csv,{'1' * 64},8,MIT,f.csv,SA-T1,"])
    with pytest.raises(DataFetchError,
                       match=r"x/f: could not download http://127.0.0.1:9/f.csv .*ANALYSIS_DATA_MIRROR"):
        fetch.fetch("x/f", cache_dir=tmp_path / "cache", mirror=tmp_path / "empty", manifest=manifest)


def test_bad_manifest_rows_are_named(tmp_path):
    manifest = write_manifest(tmp_path, ["x/f,https://h/f.csv,nothex,8,MIT,f.csv,SA-T1,"])
    with pytest.raises(DataFetchError, match=r"row 2, column sha256: expected 64 hex digits"):
        fetch.read_manifest(manifest)
    dup = write_manifest(tmp_path, [f"x,https://h/a,{'a' * 64},1,MIT,a,,", f"x,https://h/b,{'b' * 64},1,MIT,b,,"])
    with pytest.raises(DataFetchError, match=r"row 3, column id: duplicate id 'x'"):
        fetch.read_manifest(dup)


def test_unknown_id_lists_known_ids(tmp_path):
    with pytest.raises(DataFetchError, match="unknown data id 'nope'"):
        fetch.fetch("nope")


def test_published_files_are_hash_checked():
    path = fetch.published("search_arena_table_d1_leaderboard")
    assert path.name == "search_arena_table_d1_leaderboard.csv"
    assert "gpt-4o-search" in path.read_text()


def test_default_cache_is_the_build_cache_never_the_package(tmp_path, monkeypatch):
    mirror = os.environ.get(fetch.MIRROR_ENV)
    if not mirror:
        pytest.skip(f"no local mirror of the inputs: set ${fetch.MIRROR_ENV}")
    from analysis_lib import paths
    from analysis_lib.search_arena import prompt_sets

    monkeypatch.delenv(fetch.CACHE_ENV, raising=False)
    monkeypatch.setenv(paths.CACHE_ENV, str(tmp_path / "buildcache"))
    before = {p for p in paths.package_dir().rglob("*") if "__pycache__" not in p.parts}
    prompts = prompt_sets.search_arena_prompts("all")  # no cache_dir: the default
    assert len(prompts) > 4000
    assert list((tmp_path / "buildcache" / "data").glob("describing_diffs__*"))
    after = {p for p in paths.package_dir().rglob("*") if "__pycache__" not in p.parts}
    assert after == before  # nothing written into the package


def test_atomic_write_leaves_the_old_file_whole_when_the_write_fails(tmp_path):
    from analysis_lib import paths

    target = tmp_path / "sub" / "file.txt"
    paths.atomic_write(target, lambda tmp: tmp.write_text("first"))
    assert target.read_text() == "first"

    def half(tmp):
        tmp.write_text("par")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        paths.atomic_write(target, half)
    assert target.read_text() == "first" and [p.name for p in target.parent.iterdir()] == ["file.txt"]
