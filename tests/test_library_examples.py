"""The library page (book/library.md) as a reader uses it: every ```python block runs as it stands, in page order
and in one namespace, on the offline simulator; its module map names every module of analysis_lib."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "book" / "library.md"
PACKAGE = REPO / "analysis_lib"


_BLOCK = re.compile(r"^(?P<indent>[ \t]*)```python[ \t]*\n(?P<code>.*?)^(?P=indent)```[ \t]*$"
                    r"(?:\n(?:[ \t]*\n)*(?P=indent)```text[ \t]*\n(?P<out>.*?)^(?P=indent)```[ \t]*$)?",
                    re.MULTILINE | re.DOTALL)


def _dedent(text: str, indent: int) -> str:
    return "\n".join(line[indent:] for line in text.splitlines())


def python_blocks(text: str) -> list[tuple[int, str, str | None]]:
    """(line number, code, shown output) of every fenced ```python block (indented fences inside list items
    included); the shown output is the ```text block right after it (blank lines between allowed), if any."""
    blocks = []
    for m in _BLOCK.finditer(text):
        indent = len(m.group("indent"))
        out = None if m.group("out") is None else _dedent(m.group("out"), indent)
        blocks.append((text.count("\n", 0, m.start()) + 1, _dedent(m.group("code"), indent), out))
    return blocks


def test_the_block_finder():
    text = ("x\n```python\na = 1\n```\n- item\n\n  ```python\n  b = 2\n  ```\n\n  ```text\n  2\n  ```\n"
            "```bash\nls\n```\n")
    assert python_blocks(text) == [(2, "a = 1", None), (7, "b = 2", "2")]


def _same_output(printed: str, shown: str) -> bool:
    """Equal up to trailing spaces on each line and blank lines at the ends."""
    def norm(t: str) -> str:
        return "\n".join(line.rstrip() for line in t.strip("\n").splitlines())
    return norm(printed) == norm(shown)


def test_every_python_example_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for var in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "ANALYSIS_LLM_MODEL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("ANALYSIS_LLM_CACHE", str(tmp_path / "llm-cache"))
    blocks = python_blocks(PAGE.read_text(encoding="utf-8"))
    assert len(blocks) >= 4, "the library page should show runnable examples"
    namespace: dict = {"__name__": "library_examples"}
    for line, code, shown in blocks:
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                exec(compile(code, f"{PAGE.name}:{line}", "exec"), namespace)  # noqa: S102 - the page's own examples
        except Exception as exc:  # noqa: BLE001 - name the block that failed
            pytest.fail(f"the example at {PAGE.name}, line {line} failed: {type(exc).__name__}: {exc}\n{code}")
        # the output the page shows under an example is what the example prints
        assert shown is None or _same_output(out.getvalue(), shown), (
            f"{PAGE.name}, line {line}: the example prints\n{out.getvalue()}\nbut the page shows\n{shown}")
    assert sum(shown is not None for _, _, shown in blocks) >= 6, "show what the examples print"
    assert "battles" in namespace and namespace["battles"].height == 2000


def modules() -> list[str]:
    """Dotted names (relative to analysis_lib) of every module and subpackage of the library."""
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).with_suffix("")
        parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
        if parts and "__pycache__" not in parts:
            names.append(".".join(parts))
    return names


def test_module_map_lists_every_module():
    text = PAGE.read_text(encoding="utf-8")
    table = text[text.index("## Module map"):]
    table = table[: table.index("\n## ")] if "\n## " in table else table
    named = set(re.findall(r"`([a-z_][a-z0-9_.]*)`", table))
    # a package with its modules in parentheses: `pkg` (`a`, `b`) names pkg.a and pkg.b
    for parent, children in re.findall(r"`([a-z_][a-z0-9_.]*)` \(((?:`[a-z_][a-z0-9_]*`(?:, )?)+)\)", table):
        named |= {f"{parent}.{child}" for child in re.findall(r"`([a-z0-9_]+)`", children)}
    missing = [m for m in modules() if m not in named]
    assert len(modules()) > 15
    assert missing == [], f"add these modules to the module map of {PAGE.relative_to(REPO)}: {missing}"
