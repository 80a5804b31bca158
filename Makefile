# Thin targets; the work is done by pip, pytest, JupyterLab and course_utils.grading.
# `make lab` and `make test` set everything up on a fresh machine (Python 3.11+ and make).

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
DEV    := $(VENV)/.installed-dev

# Kernels started by Jupyter, nbval and nbgrader are found on PATH: use the venv's.
export PATH := $(CURDIR)/$(BIN):$(PATH)
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
# Jupyter refuses to run as root (containers, CI) unless told to.
LAB_FLAGS := $(if $(filter 0,$(shell id -u)),--allow-root)

.PHONY: setup lab formgrader test release autograde feedback grades bench clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python 3.11+ is needed, found " + sys.version.split()[0]'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	touch $(STAMP)

# The developers' tools (pytest, nbval, ruff): the `dev` extra.
$(DEV): $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(DEV)

lab: setup
	$(BIN)/jupyter lab $(LAB_FLAGS) notebooks/

# The TAs' JupyterLab: nbgrader's Formgrader reads grading/nbgrader_config.py.
formgrader: setup
	cd grading && ../$(BIN)/jupyter lab $(LAB_FLAGS) --ServerApp.root_dir=.. --ServerApp.default_url=/formgrader

test: $(DEV)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest

release: setup
	$(BIN)/python -m course_utils.grading release

autograde: setup
	$(BIN)/python -m course_utils.grading autograde

feedback: setup
	$(BIN)/python -m course_utils.grading feedback

grades: setup
	$(BIN)/python -m course_utils.grading grades

bench: $(DEV)
	$(BIN)/python -m tests.benchmarks

clean:
	rm -rf $(VENV) grading/autograded grading/feedback grading/gradebook.db grading/grades.csv
