# Two entry points (see README):
#   make book   build the whole book on the embedded default (or `make book DATA=path/to/release.parquet`)
#   make test   install and run the test suite
# Both create or reuse the virtual environment in .venv/.

PYTHON  ?= python3
VENV    ?= .venv
PY      := $(VENV)/bin/python
DATA    ?= sample
SEED    ?= 0
BOOTSTRAP ?= 100
# A local mirror of the inputs pre-seeds the download cache (hashes are still checked).
ANALYSIS_DATA_MIRROR ?= $(wildcard $(CURDIR)/../shared/data)
export ANALYSIS_DATA_MIRROR

.PHONY: book test install clean-book

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# torch first, pinned to the CPU build: anything that pulls it in later must not drag a CUDA build.
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e ".[dev]"
	touch $@

install: $(VENV)/.installed

book: $(VENV)/.installed
	$(PY) -m analysis_lib.build --data "$(DATA)" --seed $(SEED) --bootstrap $(BOOTSTRAP)

test: $(VENV)/.installed
	bash scripts/ensure_chromium.sh
	$(PY) -m pytest -q

clean-book:
	rm -rf book/_build book/chapters book/_results .build_state
