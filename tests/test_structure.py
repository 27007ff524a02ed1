"""Library structure: the vocabulary leaf modules, import order without cycles, and the results comparison script."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import nbformat
import polars as pl
import pytest

from analysis_lib.search_arena import models, schema

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import compare_results  # noqa: E402


def _imported_after(statement: str) -> set[str]:
    """The ``analysis_lib`` modules a fresh interpreter has loaded after ``statement``."""
    code = f"import sys; {statement}; print(' '.join(m for m in sys.modules if m.startswith('analysis_lib')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    return set(out.stdout.split())


def test_leaf_modules_import_nothing_from_the_paper_packages():
    """The vocabulary modules load only the ranking package (whose ``votes`` holds the one copy of the vote
    labels) besides themselves: nothing of the paper packages, so everything can import them without cycles."""
    loaded = _imported_after("import analysis_lib.search_arena.schema, analysis_lib.search_arena.models")
    assert "analysis_lib.ranking.votes" in loaded
    assert {m for m in loaded if not m.startswith("analysis_lib.ranking")} == {
        "analysis_lib", "analysis_lib.search_arena", "analysis_lib.search_arena.schema",
        "analysis_lib.search_arena.models",
    }


@pytest.mark.parametrize("module", ["analysis_lib.search_arena.bt", "analysis_lib.ranking",
                                    "analysis_lib.search_arena.simulate"])
def test_ranking_and_simulator_do_not_load_the_data_loader(module):
    """No cycle bt → loader → simulator → bt or loader ↔ simulator: neither the ratings nor the simulator need
    the loader."""
    assert "analysis_lib.search_arena.loader" not in _imported_after(f"import {module}")


def test_import_analysis_lib_loads_nothing_and_submodules_load_on_use():
    assert _imported_after("import analysis_lib") == {"analysis_lib"}
    loaded = _imported_after("import analysis_lib; analysis_lib.ranking.leaderboard")
    assert "analysis_lib.ranking" in loaded and "analysis_lib.search_arena.loader" not in loaded
    assert _imported_after("import bookbuild") == set()  # the book package imports none of its modules either


LIBRARY_DIRS = ("analysis_lib", "bookbuild")
MAX_MODULE_LINES = 500


def _library_modules() -> list[Path]:
    return sorted(p for d in LIBRARY_DIRS for p in (ROOT / d).rglob("*.py"))


def test_no_library_module_exceeds_500_lines():
    long = {str(p.relative_to(ROOT)): n for p in _library_modules()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert long == {}


def _function_level_library_imports(source: str) -> list[int]:
    """Line numbers of ``import analysis_lib…`` / ``from analysis_lib…`` / relative imports inside a function."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for inner in ast.walk(node):
                if isinstance(inner, ast.ImportFrom) and (inner.level > 0 or (inner.module or "").startswith(
                        ("analysis_lib", "bookbuild"))):
                    lines.append(inner.lineno)
                elif isinstance(inner, ast.Import) and any(
                        a.name.startswith(("analysis_lib", "bookbuild")) for a in inner.names):
                    lines.append(inner.lineno)
    return lines


def test_the_import_checker_finds_a_deferred_import():
    src = ("def f():\n    from analysis_lib.fetch import published\n    return published\n\n\n"
           "def g():\n    from . import x\n")
    assert _function_level_library_imports(src) == [2, 7]
    assert _function_level_library_imports("from analysis_lib import fetch\n\n\ndef f():\n    import json\n") == []


#: The one deferred library import, and why: every chapter kernel imports the recorder, which imports
#: ``bookbuild.sections``; the plotting package (matplotlib, seaborn: about 3 s of CPU) loads when a section is
#: first shown, so a kernel that records numbers without drawing (the runner's fixture notebooks) starts light.
DEFERRED_IMPORTS = {"bookbuild/sections.py": 1}


def test_no_library_import_sits_inside_a_function():
    found = {str(p.relative_to(ROOT)): hits for p in _library_modules()
             if (hits := _function_level_library_imports(p.read_text(encoding="utf-8")))}
    assert {name: len(lines) for name, lines in found.items()} == DEFERRED_IMPORTS


def test_model_table_names_the_singled_out_models():
    table = models.model_table()
    non_search = table.filter(~pl.col("search"))
    assert (non_search["raw_model"][0], non_search["model"][0]) == (models.NON_SEARCH_RAW, models.NON_SEARCH_MODEL)
    assert models.non_leaderboard_models() == (models.NON_SEARCH_MODEL,)
    assert models.ANCHOR in models.leaderboard_models()
    assert models.NON_SEARCH_MODEL not in models.leaderboard_models()
    assert pl.select(models.provider_of(pl.lit(models.ANCHOR)))[0, 0] == "OpenAI"
    assert pl.select(models.provider_of(pl.lit("unknown-model")))[0, 0] == "other"


def test_schema_vocabulary():
    """One vote vocabulary: every ordering of it holds the same four values; the outcome coding is symmetric in
    the two sides with ties as half a win, and VOTES_BY_SIDE orders the votes by the side they favour."""
    assert len(set(schema.WINNERS)) == 4
    assert set(schema.OUTCOME_OF_WINNER) == set(schema.WINNERS) == set(schema.VOTES_BY_SIDE)
    assert set(schema.DECISIVE) <= set(schema.WINNERS) and schema.BOTH_BAD not in schema.DECISIVE
    a, b = schema.DECISIVE
    assert schema.OUTCOME_OF_WINNER[a] + schema.OUTCOME_OF_WINNER[b] == 1.0
    assert {schema.OUTCOME_OF_WINNER[w] for w in set(schema.WINNERS) - set(schema.DECISIVE)} == {0.5}
    assert [schema.OUTCOME_OF_WINNER[v] for v in schema.VOTES_BY_SIDE[:3]] == [1.0, 0.5, 0.0]
    assert schema.UNASSIGNED not in schema.INTENTS and len(set(schema.INTENTS)) == len(schema.INTENTS)
    assert schema.side_columns("citation_count") == ("citation_count_a", "citation_count_b")


# ------------------------------------------------------------------------------------- compare_results.py


def _write(folder: Path, name: str, rows: list[dict]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.json").write_text(json.dumps({"notebook": name, "results": rows}))


def _row(q: str, ours, **kw) -> dict:
    return {"analysis_id": "SA-D5", "quantity": q, "ours": ours, "paper": 1.0, "status": "simulated", **kw}


def test_compare_results_identical_and_nan(tmp_path):
    rows = [_row("a", 1.5), _row("b", float("nan")), _row("b", 2.0)]
    _write(tmp_path / "x", "03", rows)
    _write(tmp_path / "y", "03", rows)
    assert compare_results.compare(tmp_path / "x", tmp_path / "y") == []
    assert compare_results.main([str(tmp_path / "x"), str(tmp_path / "y")]) == 0


def test_compare_results_lists_every_difference(tmp_path, capsys):
    _write(tmp_path / "x", "03", [_row("a", 1.5), _row("b", 2.0), _row("c", "x, y")])
    _write(tmp_path / "x", "04", [_row("a", 1.0)])
    _write(tmp_path / "y", "03", [_row("a", 1.5 + 1e-12), _row("c", "x, z"), _row("d", 3.0)])
    diffs = compare_results.compare(tmp_path / "x", tmp_path / "y")
    assert any("04.json: only in" in d for d in diffs)
    assert any("'b': only before" in d for d in diffs) and any("'d': only after" in d for d in diffs)
    assert any("'a', field 'ours': 1.5 -> 1.500000000001" in d for d in diffs)
    assert any("'c', field 'ours'" in d for d in diffs)
    assert len(diffs) == 5
    assert not any("'a'" in d for d in compare_results.compare(tmp_path / "x", tmp_path / "y", abs_tol=1e-9))
    assert compare_results.main([str(tmp_path / "x"), str(tmp_path / "y")]) == 1
    assert "5 difference(s)" in capsys.readouterr().out


def test_compare_results_bad_file_names_it(tmp_path, capsys):
    (tmp_path / "x").mkdir()
    (tmp_path / "y").mkdir()
    (tmp_path / "x" / "03.json").write_text("{not json")
    (tmp_path / "y" / "03.json").write_text("{}")
    assert compare_results.main([str(tmp_path / "x"), str(tmp_path / "y")]) == 2
    assert "03.json: cannot read results JSON" in capsys.readouterr().err


def test_paper_name_maps_raw_ids_and_keeps_unknown_names():
    got = pl.select(models.paper_name(pl.Series(["gpt-4o-search-preview-high", "sonar", "not-a-model"]))).to_series()
    assert got.to_list() == ["gpt-4o-search-high", "sonar", "not-a-model"]


def test_notebook_code_cells_are_short_and_fit_the_page():
    """Each chapter's code cells show their analysis: at most 25 lines, each at most 110 characters (the width a
    reader unfolds on the page), read from the notebooks themselves (no build needed)."""
    long = []
    for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        for i, cell in enumerate(nbformat.read(path, 4).cells):
            if cell.cell_type != "code":
                continue
            lines = cell.source.splitlines()
            long += [f"{path.name}, cell {i}: {len(lines)} lines"] if len(lines) > 25 else []
            long += [f"{path.name}, cell {i}: {line[:50]}… ({len(line)} chars)" for line in lines if len(line) > 110]
    assert long == []
