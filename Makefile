# Entry points (see README):
#   make book   build the whole book on the embedded default (or `make book DATA=path/to/release.parquet`;
#               also NUGGETS=, MATCH_LOGS=, ANSWERS=, ANSWER_LABELS=, ATTRIBUTION=, TEXT_ARENA=: see README)
#   make test   install, lint (ruff), type-check (mypy) and run the test suite
#   make lab    open notebooks/ in JupyterLab with the chapters' kernel, to re-run a chapter by hand
# Both create or reuse the virtual environment in .venv/, installed from the lock file (requirements.lock).
#   make lock     resolve the full install afresh in a scratch environment and write requirements.lock
#   make publish  push book/_build/html to the gh-pages branch of REMOTE (default origin) with ghp-import

PYTHON  ?= python3
VENV    ?= .venv
PY      := $(VENV)/bin/python
# The folder of this Makefile (the repository), so `make -f path/to/Makefile` works from another folder.
HERE    := $(dir $(abspath $(lastword $(MAKEFILE_LIST))))
# Every package of the full install (all extras, dev tools, the CPU torch) at the version CI tested.
LOCK    := $(HERE)requirements.lock
REMOTE  ?= origin
DATA    ?= sample
SEED    ?= 0
BOOTSTRAP ?= 100
# two chapters at once, the longest first, within MEMORY_GB of their measured peaks (bookbuild/schedule.py)
JOBS    ?= 2
MEMORY_GB ?= 3
NUGGETS ?=
MATCH_LOGS ?=
ANSWERS ?=
ANSWER_LABELS ?=
ATTRIBUTION ?=
TEXT_ARENA ?=
LAB_ARGS ?=
# Command-line variables are exported (expanded) to every recipe by default: not these.
unexport INSTALLER DATA SEED BOOTSTRAP JOBS MEMORY_GB NUGGETS MATCH_LOGS ANSWERS ANSWER_LABELS ATTRIBUTION TEXT_ARENA \
  LAB_ARGS
# A local mirror of the inputs pre-seeds the download cache (hashes are still checked): $ANALYSIS_DATA_MIRROR when
# set, else the library's one default, ../shared/data beside the repository when it exists
# (analysis_lib/fetch.py: fetch.default_mirror), so `make book`, `python -m bookbuild` and papermill find the same data.

.PHONY: book test lab install lock publish clean-book

# Installs exactly the locked versions (-c: constraints; the project's own ranges in pyproject.toml stay open).
# Byte-compiled at install: with PYTHONDONTWRITEBYTECODE set, as on the project's machines, an uncompiled install
# would compile every import again in every kernel and test process.
# torch comes from pip (its CPU build: pip is what finds it); the other ~200 packages from uv, itself pinned in the
# lock, which installs the same locked versions in half pip's time (INSTALLER=pip: pip for everything).
INSTALLER ?= uv
PIP_INSTALL := $(PY) -m pip install --quiet -c $(LOCK)
ifeq ($(INSTALLER),pip)
REST_INSTALL := $(PIP_INSTALL) -e "$(HERE)[all,dev]"
else
REST_INSTALL := $(PIP_INSTALL) uv && $(VENV)/bin/uv pip install --quiet --python $(PY) --compile-bytecode -c $(LOCK) -e "$(HERE)[all,dev]"
endif
$(VENV)/.installed: $(HERE)pyproject.toml $(LOCK)
	$(PYTHON) -m venv $(VENV)
	$(PIP_INSTALL) --upgrade pip
	# torch first, pinned to the CPU build: anything that pulls it in later must not drag a CUDA build.
	$(PIP_INSTALL) torch==2.13.0
	$(REST_INSTALL)
	touch $@

install: $(VENV)/.installed

# The values reach the runner through the environment, unexpanded ($(value ...)) and never through a shell
# command line, so quotes, backticks or $ in a path are just characters. GNU make exits 2 whenever a recipe fails;
# the runner's own code (1 a notebook failed, 2 bad arguments or inputs, 3 the book build) is on its last line,
# `bookbuild: exit N (...)`, and in make's closing `Error N`.
book: export BOOK_DATA = $(value DATA)
book: export BOOK_SEED = $(value SEED)
book: export BOOK_BOOTSTRAP = $(value BOOTSTRAP)
book: export BOOK_JOBS = $(value JOBS)
book: export BOOK_MEMORY_GB = $(value MEMORY_GB)
book: export BOOK_NUGGETS = $(value NUGGETS)
book: export BOOK_MATCH_LOGS = $(value MATCH_LOGS)
book: export BOOK_ANSWERS = $(value ANSWERS)
book: export BOOK_ANSWER_LABELS = $(value ANSWER_LABELS)
book: export BOOK_ATTRIBUTION = $(value ATTRIBUTION)
book: export BOOK_TEXT_ARENA = $(value TEXT_ARENA)
book: $(VENV)/.installed
	$(PY) -m bookbuild

# JupyterLab (the [lab] extra) serving notebooks/, a notebook opening in the runner's kernel (python3 of .venv/) and
# finding the data mirror as the runner's kernels do (bookbuild/lab.py); LAB_ARGS: options for jupyter lab, e.g.
# `make lab LAB_ARGS="--no-browser --port 8899"`, reaching it through the environment like the book's variables.
lab: export BOOK_LAB_ARGS = $(value LAB_ARGS)
lab: $(VENV)/.installed
	$(PY) -m bookbuild.lab

test: $(VENV)/.installed
	bash scripts/ensure_chromium.sh
	$(PY) -m ruff check .
	$(PY) -m mypy -n auto  # one worker process per core: 18 s instead of 28 s from an empty cache
	# the project's own modules byte-compiled once (PYTHONDONTWRITEBYTECODE, where set, would have every test process and
	# kernel compile them again); three workers on two cores: the kernels and subprocesses leave a quarter idle with two;
	# the files in collection order, the longest first (tests/conftest.py: LONGEST_FIRST), the 15 slowest tests and the
	# 10 slowest files printed at the end
	$(PY) -m compileall -q analysis_lib bookbuild tests
	$(PY) -m pytest -q -n 3 --dist loadfile --no-loadscope-reorder --durations=15

# A fresh resolution of the full install (torch first) in a scratch environment, frozen into the lock; then run
# `make test` (which reinstalls .venv from the new lock) and commit requirements.lock only if it passes.
lock:
	bash scripts/lock.sh "$(PYTHON)" "$(LOCK)"

# The built book (make book first) to the gh-pages branch of REMOTE: ghp-import, as Jupyter Book 1 recommends.
publish: $(VENV)/.installed
	$(PY) -m bookbuild.publish --remote "$(REMOTE)"

clean-book:
	rm -rf book/_build book/chapters book/_results .build_state
