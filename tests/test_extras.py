"""Optional dependencies: a missing extra is named; an installed package's own import error is not masked."""

from __future__ import annotations

import sys

import pytest

from analysis_lib.extras import MissingExtra, require


def test_require_returns_an_installed_module():
    assert require("json", "core").dumps([1]) == "[1]"


def test_a_missing_package_names_the_extra():
    with pytest.raises(MissingExtra, match=r"pip install 'analysis_lib\[topics\]'") as info:
        require("no_such_package_xyz.sub", "topics", purpose="topic modelling")
    assert "'no_such_package_xyz'" in str(info.value) and "topic modelling" in str(info.value)
    assert isinstance(info.value, ImportError)


def test_an_installed_package_that_fails_to_import_keeps_its_error(tmp_path, monkeypatch):
    (tmp_path / "broken_pkg_xyz.py").write_text("import another_missing_dependency_xyz\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ImportError) as info:
        require("broken_pkg_xyz", "topics")
    assert not isinstance(info.value, MissingExtra)
    assert info.value.name == "another_missing_dependency_xyz"
    sys.modules.pop("broken_pkg_xyz", None)


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
