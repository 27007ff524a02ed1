"""The boundary between the library and the book (issue 34): ``analysis_lib`` imports nothing of ``bookbuild`` and
holds no chapter module; each paper package has one face (one ``__all__``, every name in it resolves); the LLM
layer has no import cycle.

Imports are read from the source (``ast``), at any depth (module level, in functions, in ``try``), together with
``importlib.import_module("...")`` / ``__import__("...")`` calls on a constant name; imports under
``if TYPE_CHECKING:`` are left out (they never run).
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = ROOT / "analysis_lib"
PAPER_PACKAGES = ("search_arena", "nuggets", "dr_arena", "answer_engine")


def _module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(path: Path, root: Path = ROOT) -> list[tuple[int, str, list[str]]]:
    """``(line, absolute module, imported names)`` of every import in ``path`` (names empty for ``import x``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    name = _module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    skipped = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If) and _is_type_checking(node)
               for stmt in node.body for n in ast.walk(stmt)}
    found: list[tuple[int, str, list[str]]] = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            found.append((node.lineno, module, [alias.name for alias in node.names]))
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name in ("import_module", "__import__"):
                found.append((node.lineno, node.args[0].value, []))
    return found


def _library_files() -> list[Path]:
    return sorted(p for p in LIBRARY.rglob("*.py") if "__pycache__" not in p.parts)


def test_the_import_reader_sees_every_kind_of_import(tmp_path):
    pkg = tmp_path / "analysis_lib" / "llm"
    pkg.mkdir(parents=True)
    src = pkg / "m.py"
    src.write_text("import bookbuild.x\nfrom typing import TYPE_CHECKING\nfrom . import a\nfrom ..b import c\n"
                   "if TYPE_CHECKING:\n    from bookbuild import y\n"
                   "def f():\n    import importlib\n    return importlib.import_module('bookbuild.z')\n")
    assert _imports(src, tmp_path) == [
        (1, "bookbuild.x", []), (2, "typing", ["TYPE_CHECKING"]), (3, "analysis_lib.llm", ["a"]),
        (4, "analysis_lib.b", ["c"]), (8, "importlib", []), (9, "bookbuild.z", []),
    ]


def test_the_library_imports_nothing_of_the_book():
    """Book plumbing imports the library, never the other way round: every import of ``bookbuild`` in
    ``analysis_lib``, named by module and line."""
    found = [f"{p.relative_to(ROOT)}:{line} imports {module}" for p in _library_files()
             for line, module, _ in _imports(p) if module == "bookbuild" or module.startswith("bookbuild.")]
    assert found == []


def test_the_library_holds_no_chapter_module():
    """Chapter and section builders are the book's (``bookbuild/papers/``): no module or package under
    ``analysis_lib`` is named ``*chapter*``."""
    found = sorted(str(p.relative_to(ROOT)) for p in LIBRARY.rglob("*")
                   if "chapter" in p.name.lower() and "__pycache__" not in p.parts)
    assert found == []


def test_the_library_speaks_of_analyses_not_of_the_books_pages():
    """The library knows no chapter and names no book module, even as a string (a ``module:function`` default
    the import checks cannot see): its code, docstrings and comments speak of analyses, notebooks and processes."""
    found = [f"{p.relative_to(ROOT)}:{i}" for p in _library_files()
             for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if "chapter" in line.lower() or "bookbuild" in line]
    assert found == []


def _all_assignments(init: Path) -> list[int]:
    """Lines that bind or extend ``__all__`` anywhere in the module."""
    lines = []
    for node in ast.walk(ast.parse(init.read_text(encoding="utf-8"))):
        targets = (node.targets if isinstance(node, ast.Assign) else [node.target]
                   if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else [])
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            lines.append(node.lineno)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and isinstance(node.func.value, ast.Name) and node.func.value.id == "__all__"):
            lines.append(node.lineno)  # __all__.append / extend
    return lines


@pytest.mark.parametrize("package", PAPER_PACKAGES)
def test_each_paper_package_has_one_face(package):
    """One ``__all__`` in the package's ``__init__.py``, bound once and never extended, of distinct names that all
    resolve on the package."""
    lines = _all_assignments(LIBRARY / package / "__init__.py")
    assert len(lines) == 1, f"analysis_lib/{package}/__init__.py binds or extends __all__ on lines {lines}"
    module = importlib.import_module(f"analysis_lib.{package}")
    names = list(module.__all__)
    assert len(names) == len(set(names)), f"repeated in __all__: {sorted({n for n in names if names.count(n) > 1})}"
    missing = [n for n in names if not hasattr(module, n)]
    assert missing == [], f"analysis_lib.{package}.__all__ names what the package does not have: {missing}"


def _llm_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Module → the ``analysis_lib.llm`` modules it imports (``from analysis_lib.llm import x`` is the submodule
    ``x`` where there is one, else the package itself)."""
    files = {_module_name(p, root): p for p in (root / "analysis_lib" / "llm").glob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        for _, module, imported in _imports(path, root):
            if module == "analysis_lib.llm":
                for n in imported:
                    graph[name].add(f"{module}.{n}" if f"{module}.{n}" in files else module)
            elif module in files:
                graph[name].add(module)
        graph[name].discard(name)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected component with more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_cycle_finder_finds_a_cycle(tmp_path):
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []
    llm = tmp_path / "analysis_lib" / "llm"
    llm.mkdir(parents=True)
    (llm / "__init__.py").write_text("from analysis_lib.llm.client import Client\n")
    (llm / "client.py").write_text("from analysis_lib.llm import batch\n")
    (llm / "batch.py").write_text("from . import records\n\n\ndef f():\n    from .client import Client\n")
    (llm / "records.py").write_text("from analysis_lib.llm import NAME\n")  # the package: a cycle through it
    assert _cycles(_llm_graph(tmp_path)) == [["analysis_lib.llm", "analysis_lib.llm.batch", "analysis_lib.llm.client",
                                              "analysis_lib.llm.records"]]


def test_the_llm_layer_has_no_import_cycle():
    assert _cycles(_llm_graph()) == []
