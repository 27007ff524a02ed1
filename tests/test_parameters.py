"""--set values checked against what each chapter's parameters cell declares (issue 37: `--set n_agents=1e999` or
`-1` died inside chapter 08)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bookbuild import parameters
from bookbuild.kernels import declared_parameters

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


@pytest.fixture(scope="module")
def declared():
    return {p.stem: declared_parameters(p) for p in sorted(NOTEBOOKS.glob("*.ipynb"))}


@pytest.mark.parametrize(("setting", "message"), [
    ({"n_agents": float("inf")}, "--set n_agents=inf: expected a whole number from 2 to 200"),
    ({"n_agents": -1}, "--set n_agents=-1: out of range from 2 to 200"),
    ({"n_agents": 1}, "--set n_agents=1: out of range from 2 to 200"),
    ({"n_agents": 2.5}, "--set n_agents=2.5: expected a whole number from 2 to 200"),
    ({"n_agents": True}, "--set n_agents=True: expected a whole number from 2 to 200"),
    ({"tie_threshold": float("nan")}, "--set tie_threshold=nan: expected a finite number from 0 to 1"),
    ({"tie_threshold": 3}, "--set tie_threshold=3: out of range from 0 to 1"),
    ({"topic_prompts": 5}, "--set topic_prompts=5: out of range from 100 to 100,000"),
    ({"encoder_precision": 3}, "--set encoder_precision=3: expected text"),
    ({"encoder_precision": "bogus"},
     "--set encoder_precision='bogus': expected one of 'auto', 'float32', 'bfloat16'"),  # the comment's values
    ({"topic_representation": "tfidf"}, "--set topic_representation='tfidf': expected one of 'keybert', 'c-tf-idf'"),
    ({"n_agnets": 3}, "--set n_agnets: no notebook of this build declares it in its parameters cell"),
])
def test_a_value_the_chapter_cannot_use_is_refused_by_name(declared, setting, message):
    assert parameters.check(setting, declared).startswith(message)


@pytest.mark.parametrize("setting", [
    {"n_agents": 2}, {"n_agents": 200}, {"tie_threshold": 0.1}, {"tie_threshold": 0}, {"topic_prompts": 600},
    {"topic_prompts": None}, {"rouge_battles": None}, {"n_seeds": 3}, {"n_replicates": 20}, {"cosine_battles": 50},
    {"encoder_precision": "float32"}, {"dr_agents": "a,b"}, {"encoder_precision": "bfloat16"},
    {"topic_representation": "c-tf-idf"}, {"dr_examiner_model": "any-model"},  # free text stays free
])
def test_the_values_the_suite_and_the_readme_use_pass(declared, setting):
    assert parameters.check(setting, declared) == ""


def test_declared_range_reads_the_comment():
    assert parameters.declared_range("UMAP neighbours [2, 200]") == (2.0, 200.0)
    assert parameters.declared_range("x [1_000, 24,069]") == (1000.0, 24069.0)
    assert parameters.declared_range("no range here") is None


def test_the_runner_refuses_before_any_chapter_runs(tmp_path):
    import shutil
    import subprocess
    import sys

    (tmp_path / "book").mkdir()
    for name in ("_config.yml", "_toc.yml"):
        shutil.copy(NOTEBOOKS.parent / name, tmp_path / name)
    proc = subprocess.run([sys.executable, "-m", "bookbuild", "--root", str(tmp_path), "--notebooks-dir",
                           str(NOTEBOOKS), "--only", "08_dr_arena", "--set", "n_agents=1e999", "--no-book"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1] == (
        "bookbuild: exit 2 (bad arguments or inputs): --set n_agents=inf: expected a whole number from 2 to 200")
    assert not (tmp_path / "book" / "_results" / "08_dr_arena.json").exists()
