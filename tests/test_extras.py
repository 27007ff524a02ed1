"""Optional dependencies: a missing extra is named; an installed package's own import error is not masked."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

from analysis_lib.extras import MissingExtra, require


def test_require_returns_an_installed_module():
    assert require("json", "core").dumps([1]) == "[1]"


def test_a_missing_package_names_the_extra():
    with pytest.raises(MissingExtra, match=r"pip install 'analysis_lib\[topics\]'") as info:
        require("no_such_package_xyz.sub", "topics", purpose="topic modelling")
    assert "'no_such_package_xyz'" in str(info.value) and "topic modelling" in str(info.value)
    assert isinstance(info.value, ImportError)


def test_an_installed_package_that_fails_to_import_is_quoted_not_called_missing(tmp_path, monkeypatch):
    (tmp_path / "broken_pkg_xyz.py").write_text("import another_missing_dependency_xyz\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(MissingExtra) as info:
        require("broken_pkg_xyz", "topics")
    message = str(info.value)
    assert "installed but cannot be imported" in message and "not installed" not in message
    assert "No module named 'another_missing_dependency_xyz'" in message  # the real error, quoted
    assert "pip install 'analysis_lib[topics]'" in message
    assert info.value.name == "another_missing_dependency_xyz"
    assert isinstance(info.value.__cause__, ModuleNotFoundError)
    sys.modules.pop("broken_pkg_xyz", None)


def test_a_bare_import_error_inside_the_package_is_quoted(tmp_path, monkeypatch):
    """trafilatura without lxml_html_clean: lxml raises a bare ImportError (no ``name``); before, MissingExtra said
    "trafilatura ... not installed"."""
    text = "lxml.html.clean module is now a separate project lxml_html_clean."
    (tmp_path / "bare_broken_xyz.py").write_text(f"raise ImportError({text!r})\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(MissingExtra) as info:
        require("bare_broken_xyz", "scrape", purpose="main-text extraction")
    message = str(info.value)
    assert "not installed" not in message and "installed but cannot be imported" in message
    assert "ImportError: lxml.html.clean module is now a separate project lxml_html_clean" in message
    assert "pip install 'analysis_lib[scrape]'" in message and "main-text extraction" in message
    sys.modules.pop("bare_broken_xyz", None)


def test_torch_threads_come_from_the_environment(monkeypatch):
    from analysis_lib.extras import TORCH_THREADS_ENV, limit_torch_threads

    class Torch:
        threads = None

        def set_num_threads(self, n):
            self.threads = n

    torch = Torch()
    monkeypatch.delenv(TORCH_THREADS_ENV, raising=False)
    limit_torch_threads(torch)
    assert torch.threads is None  # unset: torch's own default
    monkeypatch.setenv(TORCH_THREADS_ENV, "1")
    limit_torch_threads(torch)
    assert torch.threads == 1
    for bad in ("0", "two", "-1"):
        monkeypatch.setenv(TORCH_THREADS_ENV, bad)
        with pytest.raises(ValueError, match="ANALYSIS_TORCH_THREADS must be a positive integer"):
            limit_torch_threads(torch)


# ---------------------------------------------------------------- each extra installs what its modules import

ROOT = Path(__file__).resolve().parents[1]
#: What each checked extra's calls import (the heavy extras, torch and Jupyter Book, are left to the full install).
EXTRA_MODULES = {"scrape": ("trafilatura",), "llm": ("openai", "jsonschema")}


def _closure(requirements: list[str], extras_of_self: dict[str, list[str]]) -> set[str]:
    """Normalised names of the installed distributions that ``requirements`` pull in (markers evaluated)."""
    from importlib import metadata

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    seen: set[str] = set()
    todo = [(Requirement(r), "") for r in requirements]
    while todo:
        req, extra = todo.pop()
        if req.marker is not None and not req.marker.evaluate({"extra": extra}):
            continue
        name = canonicalize_name(req.name)
        if name == "analysis-lib":
            todo += [(Requirement(r), "") for e in req.extras for r in extras_of_self[e]]
            continue
        for wanted in ({""} | set(req.extras)) - ({""} if name in seen else set()):
            seen.add(name)
            try:
                requires = metadata.requires(req.name) or []
            except metadata.PackageNotFoundError:
                continue
            todo += [(Requirement(r), wanted) for r in requires]
    return seen


@pytest.mark.parametrize("extra", sorted(EXTRA_MODULES))
def test_an_extra_installs_what_its_modules_import(extra):
    """A "fresh environment" for ``analysis_lib[extra]``: a subprocess refuses every installed package that neither
    the core nor the extra (declared in ``pyproject.toml``) pulls in, then imports the extra's modules. Before,
    ``[scrape]`` installed trafilatura without ``lxml_html_clean`` and trafilatura could not be imported."""
    from importlib import metadata

    from packaging.utils import canonicalize_name

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    keep = _closure(project["dependencies"] + extras[extra], extras)
    owners = metadata.packages_distributions()
    refused = sorted(top for top, dists in owners.items()
                     if top.isidentifier() and top != "analysis_lib"
                     and not any(canonicalize_name(d) in keep for d in dists)
                     and top not in sys.stdlib_module_names)
    code = textwrap.dedent(f"""
        import importlib, importlib.abc, sys
        REFUSED = set({refused!r})
        class Refuse(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in REFUSED:
                    raise ModuleNotFoundError(f"No module named {{name!r}} (not installed by the extra)", name=name)
                return None
        sys.meta_path.insert(0, Refuse())
        for module in {EXTRA_MODULES[extra]!r}:
            importlib.import_module(module)
        print("imported")
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0 and "imported" in done.stdout, done.stderr[-2000:]
    if extra == "scrape":
        assert "lxml-html-clean" in keep


def test_scrape_declares_what_trafilatura_itself_imports():
    """trafilatura imports ``lxml.html.clean`` (the separate package ``lxml_html_clean`` since lxml 5.2) but does
    not require it; only some versions of justext pull it in (``lxml[html_clean]``). The extra names it itself."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    scrape = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"]["scrape"]
    assert {"trafilatura", "lxml-html-clean"} <= {canonicalize_name(Requirement(r).name) for r in scrape}
