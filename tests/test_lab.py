"""make lab: JupyterLab in the locked environment, serving the chapter notebooks, a chapter re-run in the kernel it
lists (bookbuild.lab)."""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from importlib import metadata
from pathlib import Path

import nbformat
import pytest
from jupyter_client.kernelspec import KernelSpecManager
from nbclient import NotebookClient
from papermill.iorw import load_notebook_node
from papermill.parameterize import parameterize_notebook

from analysis_lib.fetch import MIRROR_ENV
from bookbuild import lab
from bookbuild.config import DEFAULT_KERNEL
from bookbuild.kernels import ipc_kernels

REPO = Path(__file__).resolve().parents[1]
JUPYTER = Path(sys.executable).with_name("jupyter")
#: The smallest run of chapter 03 that executes every cell: 300 simulated conversations, 5 bootstrap rounds.
SMALL = {"data_source": "sample:300", "n_bootstrap": 5}


def test_jupyter_lab_is_installed_at_the_locked_version():
    done = subprocess.run([str(JUPYTER), "lab", "--version"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == metadata.version("jupyterlab")


def test_lab_serves_the_notebooks_with_the_runners_kernel_and_mirror(tmp_path, monkeypatch):
    command = lab.lab_command(REPO, ["--no-browser"])
    assert command[:2] == [str(JUPYTER), "lab"] and command[-1] == "--no-browser"
    assert f"--ServerApp.root_dir={REPO / 'notebooks'}" in command
    assert f"--MappingKernelManager.default_kernel_name={DEFAULT_KERNEL}" in command
    mirror = tmp_path / "shared" / "data"
    mirror.mkdir(parents=True)
    assert lab.lab_environment(tmp_path / "repo", {"PATH": "/bin"}) == {"PATH": "/bin", MIRROR_ENV: str(mirror)}
    assert lab.lab_environment(tmp_path / "repo", {MIRROR_ENV: "/elsewhere"}) == {MIRROR_ENV: "/elsewhere"}
    assert lab.lab_environment(tmp_path / "shared" / "repo", {}) == {}  # no ../shared/data beside it: unset


def test_lab_outside_the_repository_or_with_bad_options_stops_with_exit_2(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert lab.main([]) == 2 and "no notebooks/ in" in capsys.readouterr().err
    monkeypatch.chdir(REPO)
    monkeypatch.setenv(lab.ARGS_ENV, '--port "8899')
    assert lab.main([]) == 2 and "LAB_ARGS: No closing quotation" in capsys.readouterr().err


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(url: str, token: str | None) -> tuple[int, dict]:
    request = urllib.request.Request(url, headers={"Authorization": f"token {token}"} if token else {})
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as err:
        return err.code, {}


@pytest.mark.slow
def test_a_chapter_opened_through_jupyter_lab_runs_in_the_kernel_it_lists(tmp_path):
    """``python -m bookbuild.lab`` (make lab) headless on a loopback port with a token; chapter 03 read through the
    contents API, executed to the end (nbclient) in the kernel the server lists as its default, at the smallest
    sizes; its numbers land in the ``results_dir`` it is given."""
    port, token = _free_port(), secrets.token_hex(16)
    options = ["--no-browser", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
               f"--IdentityProvider.token={token}", *(["--allow-root"] if os.geteuid() == 0 else [])]
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
           "JUPYTER_CONFIG_DIR": str(tmp_path / "config")}  # no user configuration, no runtime files of the user's
    env.pop(lab.ARGS_ENV, None)
    log = (tmp_path / "server.log").open("w")
    server = subprocess.Popen([sys.executable, "-m", "bookbuild.lab", *options], cwd=REPO, env=env, stdout=log,
                              stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert server.poll() is None, (tmp_path / "server.log").read_text()[-3000:]
            try:
                if _get(f"{base}/api/status", token)[0] == 200:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, (tmp_path / "server.log").read_text()[-3000:]
            time.sleep(0.5)
        assert _get(f"{base}/api/kernelspecs", None)[0] == 403  # nothing without the token
        status, specs = _get(f"{base}/api/kernelspecs", token)
        name = specs["default"]
        assert status == 200 and name == DEFAULT_KERNEL
        here = KernelSpecManager().get_kernel_spec(name)  # the server's spec is this environment's ipykernel
        assert specs["kernelspecs"][name]["spec"]["argv"] == here.argv
        assert Path(here.resource_dir).is_relative_to(sys.prefix)
        status, opened = _get(f"{base}/api/contents/03_preferences.ipynb?type=notebook&content=1", token)
        assert status == 200 and opened["type"] == "notebook"
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()
    served = tmp_path / "03_preferences.ipynb"
    nbformat.write(nbformat.from_dict(opened["content"]), served)
    nb = load_notebook_node(str(served))  # as papermill reads a notebook (its metadata fields added)
    results = tmp_path / "results"
    nb = parameterize_notebook(nb, {**SMALL, "results_dir": str(results)})
    client = NotebookClient(nb, kernel_name=name, timeout=600, kernel_manager_class=ipc_kernels(),
                            resources={"metadata": {"path": str(REPO / "notebooks")}})
    client.execute()  # a failing cell raises CellExecutionError
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code)
    assert not [o for c in code for o in c.get("outputs", []) if o.get("output_type") == "error"]
    recorded = json.loads((results / "03_preferences.json").read_text())
    assert recorded["results"] and {"SA-D5"} <= {r["analysis_id"] for r in recorded["results"]}
