# Thin targets; the work is done by pip, pytest, JupyterLab and the TA tools (grading/grader).
# `make lab` and `make test` set everything up on a fresh machine (Python 3.11+ and make).
# Each target's reader documents it: docs/students.md, docs/tas.md, docs/instructors.md,
# docs/course-server.md, docs/development.md (`make docs` builds them as a site).

# The students' targets, setup and lab (.venv, PYTHON, BIN, STAMP, the exported PATH, HF_*
# and LAB_FLAGS), are the student edition's own Makefile, the same for everyone.
include tools/student_edition/Makefile

DEV    := $(VENV)/.installed-dev

.PHONY: formgrader test test-notebooks test-grading collect release answers autograde feedback grades report bench clean \
	npm slides slide-metadata rubrics-page present publish hub test-hub test-browser similarity student-ids student-edition \
	docs test-edition

# The TAs' tools (grading/grader, not part of the students' package); the course's
# configuration of nbconvert (its kernel client), linked where the environment's Jupyter
# reads it; and bubblewrap, the sandbox of the grading kernels (installed when missing and
# we may: as root).
TA     := $(VENV)/.installed-ta
$(TA): $(STAMP) grading/pyproject.toml grading/jupyter_nbconvert_config.py
	$(BIN)/python -m pip install --quiet -c $(LOCK) -e grading
	mkdir -p $(VENV)/etc/jupyter
	ln -sf ../../../grading/jupyter_nbconvert_config.py $(VENV)/etc/jupyter/
	@command -v bwrap >/dev/null || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null \
	  && (apt-get update -qq && apt-get install -y -qq bubblewrap >/dev/null); } \
	  || echo "bubblewrap is missing: grading will run without its sandbox (see README)"
	touch $(TA)

# The developers' tools (pytest, nbval, ruff): the `dev` extra, and the TAs' tools.
$(DEV): $(TA)
	$(BIN)/python -m pip install --quiet -c $(LOCK) -e ".[dev]"
	touch $(DEV)

# What students receive (docs/instructors.md, "The student edition"): the release, course_utils, the environment
# files, the students' README and Makefile, Binder's and the dev container's set-up
# (tools/student_edition/), written to DEST: a new git repository, or, when DEST is already
# one (a clone of the edition's repository), a new commit on top of its last release.
# REPO=owner/name (the edition's GitHub repository; otherwise read from DEST's remote) and
# BRANCH=main give the Colab, Binder and Codespaces links. Only Python's standard library.
student-edition:
	@test -n "$(DEST)" || { echo "Say where: make student-edition DEST=<folder> [REPO=owner/name]" >&2; exit 1; }
	$(PYTHON) -m tools.student_edition "$(DEST)" $(if $(REPO),--repo "$(REPO)") $(if $(BRANCH),--branch "$(BRANCH)")

# The TAs' JupyterLab: nbgrader's Formgrader reads grading/nbgrader_config.py.
formgrader: $(TA)
	cd grading && ../$(BIN)/jupyter lab $(LAB_FLAGS) --ServerApp.root_dir=.. --LabApp.default_url=/formgrader

# The instructors' slides (docs/instructors.md, "Slides and presenting"). `make slides` writes a reveal.js deck per
# solution notebook to slides/ from its committed outputs (tools/slides.py); npm fetches the
# pinned JavaScript the decks load (Debian's nodejs and npm are installed when missing and we
# may: as root). `make present` opens solutions/ in JupyterLab with its live slideshow (the
# `slides` extra). `make slide-metadata` marks the cells' slide types again after an edit.
LIVE   := $(VENV)/.installed-slides
$(LIVE): $(STAMP)
	$(BIN)/python -m pip install --quiet -c $(LOCK) -e ".[slides]"
	touch $(LIVE)

npm:
	@command -v npm >/dev/null || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null \
	  && (apt-get update -qq && apt-get install -y -qq nodejs npm >/dev/null); } \
	  || echo "npm is missing: make slides needs Node.js's npm (the slide tests skip their deck)"

slides: setup npm
	$(BIN)/python -m tools.slides

slide-metadata: setup
	$(BIN)/python -m tools.slide_metadata

# The rubrics page of the docs (docs/rubrics.md) from the rubric cells of solutions/
# (docs/instructors.md: adding an exercise).
rubrics-page: setup
	$(BIN)/python -m tools.rubrics_page

# Notebook 04's numbers by hand need a student id: the instructor's own unless one is set.
present: $(LIVE)
	COURSE_STUDENT=$${COURSE_STUDENT:-instructor} $(BIN)/jupyter lab $(LAB_FLAGS) solutions/

test: $(DEV) npm
	$(BIN)/ruff check .
	$(BIN)/python -m pytest

# The documentation site (docs/, Sphinx with MyST from the `dev` extra), offline, into
# docs/_build/html: warnings are errors and every cross-reference must resolve (-n).
# tests/notebooks/test_docs.py builds it too, in make test, and follows every internal link
# (docs/development.md, "The documentation").
docs: $(DEV)
	$(BIN)/sphinx-build -W --keep-going -n -q -b html docs docs/_build/html

# Every solution notebook top to bottom under nbval, its `# NBVAL_CHECK_OUTPUT` cells
# compared with their committed outputs (about 3 minutes on 2 cores; docs/development.md);
# then every function students receive pasted into each exercise it fits, which must fail
# its tests (tests/notebooks/test_shipped_answers.py, about 6 minutes).
test-notebooks: $(DEV)
	$(BIN)/python -m pytest solutions tests/notebooks/test_shipped_answers.py

# The class round trip (tests/notebooks/test_grading.py; docs/development.md): every grading case of every notebook handed in
# and graded as a TA grades, through nbgrader and the sandboxed worker (about 18 minutes on
# 2 cores). `ASSIGNMENTS="05_masked_attention ..."` grades only those.
test-grading: $(DEV)
	$(BIN)/python -m pytest -o addopts="-ra --durations=12" tests/notebooks/test_grading.py \
	  $(foreach a,$(ASSIGNMENTS),--assignment $(a))

# The student edition as students get it (tests/notebooks/test_edition_end_to_end.py;
# docs/instructors.md, "The student edition"): a release pulled with `make update` that keeps
# a student's edit, stock nbconvert on 04 in the edition's environment, and the workbook
# installed into Colab's published versions (PyPI needed; a few minutes the first time,
# while pip's cache fills).
test-edition: $(DEV)
	$(BIN)/python -m pytest -o addopts="-ra --durations=12" tests/notebooks/test_edition_end_to_end.py

# The TA's steps (docs/tas.md, "The weekly cycle"). Options: ASSIGNMENTS="04_alpha3_by_hand ...",
# WORKERS=n (default: one per core), SCHEDULER=tcp://host:8786 (a Dask cluster),
# REGRADE=1 (also unchanged submissions), MEMORY_GB=4 (per kernel), STUDENTS="ada bob".
GRADER := $(BIN)/python -m grader --course-root $(CURDIR)/grading
GRADE_OPTIONS := $(if $(WORKERS),--workers $(WORKERS)) $(if $(SCHEDULER),--scheduler $(SCHEDULER)) \
	$(if $(REGRADE),--regrade) $(if $(MEMORY_GB),--memory-gb $(MEMORY_GB))

# Through nbgrader's exchange (grading/nbgrader_config.py; COURSE_EXCHANGE): `make publish`
# (DUEDATE="2026-06-01 17:00", this machine's time, or with an offset), then `make collect`.
publish: $(TA)
	$(GRADER) publish $(if $(DUEDATE),--duedate "$(DUEDATE)") $(ASSIGNMENTS)

# From the exchange, or from an LMS's zip with ZIP=path/to/submissions.zip.
collect: $(TA)
	$(GRADER) collect $(if $(ZIP),--zip "$(ZIP)") $(ASSIGNMENTS)

release: $(TA)
	$(GRADER) release $(ASSIGNMENTS)

# The values the solutions' test cells check, stored in grading/answers/ (instructors only):
# the grader compares each student's values with them, outside the student's kernel. Run
# after any change to a solution or a test cell (grader.scoring.answers; about 4 minutes).
answers: $(TA)
	$(GRADER) answers $(GRADE_OPTIONS) $(ASSIGNMENTS)

autograde: $(TA)
	$(GRADER) autograde $(GRADE_OPTIONS) $(ASSIGNMENTS)

feedback: $(TA)
	$(GRADER) feedback $(foreach s,$(STUDENTS),--student $(s)) $(ASSIGNMENTS)

# FORMAT=canvas or FORMAT=moodle: the LMS's gradebook import file (grader.outputs.lms_grades), with
# MISSING_AS_ZERO=1 (0 for nothing submitted, not blank) and LATE_PENALTY="10%/day, max 50%".
grades: $(TA)
	$(GRADER) grades $(if $(FORMAT),--format $(FORMAT)) \
	  $(if $(filter 1,$(MISSING_AS_ZERO)),--missing-as-zero) \
	  $(if $(LATE_PENALTY),--late-penalty "$(LATE_PENALTY)")

report: $(TA)
	$(GRADER) report

# Similar answers (grader.integrity.similarity.matches): every pair of submissions per answer cell, with
# copydetect's winnowing; writes grading/similarity.csv (`make report` shows the pairs).
# SIMILARITY=0.8: the threshold of a match, for this and `make report`.
similarity: $(TA)
	$(GRADER) similarity $(ASSIGNMENTS)

# The id each student of grading/roster.csv sets before starting (grader.outputs.student_ids): for an
# LMS course, the folder `make collect ZIP=...` will file them under; writes student_ids.csv.
student-ids: $(TA)
	$(GRADER) student-ids

# The course server (docs/course-server.md): JupyterHub (the `hub` extra) and its proxy,
# configurable-http-proxy from npm, pinned, in .venv/node (4.x runs on Debian's Node.js 18;
# 5.x needs 20). `make test-hub` runs tests/hub, the hub end to end with several users.
HUB    := $(VENV)/.installed-hub
PROXY_VERSION := 4.6.3
$(HUB): $(TA) pyproject.toml | npm
	$(BIN)/python -m pip install --quiet -c $(LOCK) -e ".[hub]"
	npm install --silent --no-audit --no-fund --prefix $(VENV)/node \
	  configurable-http-proxy@$(PROXY_VERSION)
	touch $(HUB)

hub: $(HUB)
	$(BIN)/jupyterhub -f hub/jupyterhub_config.py

test-hub: $(HUB) $(DEV)
	$(BIN)/python -m pytest tests/hub

# The browser tests (docs/development.md, "Browser tests"): Playwright (the `browser` extra) drives
# Debian's Chromium, installed when missing and we may (as root); screenshots go to
# tests/browser/artifacts/. `make test` leaves tests/browser out (--ignore in pyproject).
BROWSER := $(VENV)/.installed-browser
$(BROWSER): $(DEV)
	$(BIN)/python -m pip install --quiet -c $(LOCK) -e ".[dev,browser]"
	@command -v chromium >/dev/null || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null \
	  && (apt-get update -qq && apt-get install -y -qq chromium >/dev/null); } \
	  || { echo "chromium is missing: install Debian's chromium package"; exit 1; }
	touch $(BROWSER)

# axe-core (npm, pinned, in .venv/node) checks the pages against WCAG 2.1 A and AA
# (tests/browser/test_accessibility.py); Playwright injects it into each page.
AXE_VERSION := 4.14.1
AXE := $(VENV)/.installed-axe-$(AXE_VERSION)
$(AXE): | npm
	npm install --silent --no-audit --no-fund --prefix $(VENV)/node axe-core@$(AXE_VERSION)
	touch $(AXE)

test-browser: $(BROWSER) $(AXE) npm
	$(BIN)/python -m pytest -o addopts="-ra --durations=12" tests/browser

# Speed against the course's peers (tests/benchmarks; docs/development.md, "Benchmarks").
bench: $(DEV)
	$(BIN)/python -m tests.benchmarks

# The GPU path (README and docs/development.md, "A GPU"): with a CUDA build of torch and a GPU, `make test-gpu` runs
# tests/course_utils/test_cuda.py (GPU against CPU), the unit tests that compare with PyTorch on the
# notebooks' device, and the nine solution notebooks, all with COURSE_DEVICE=cuda. Without
# CUDA, tools/require_cuda.py says what is missing and it stops before running anything.
.PHONY: test-gpu
GPU_TESTS := tests/course_utils/test_cuda.py tests/course_utils/models/test_attention.py tests/course_utils/models/test_transformer.py \
	tests/course_utils/models/test_gpt.py tests/course_utils/models/test_linear_attention.py tests/course_utils/models/test_random_features.py
test-gpu:
	@test -x $(BIN)/python || { echo "No $(VENV) yet, so nothing was run: make setup, then" \
	  "install a CUDA build of torch as the README says (\"A GPU\")." >&2; exit 1; }
	@$(BIN)/python -m tools.require_cuda
	@$(MAKE) --no-print-directory $(DEV)
	COURSE_DEVICE=cuda $(BIN)/python -m pytest $(GPU_TESTS) solutions

clean:
	rm -rf $(VENV) grading/autograded grading/feedback grading/gradebook.db grading/grades.csv \
	  grading/grades_canvas.csv grading/grades_moodle.csv grading/autograde_state.json \
	  grading/on_submit_state.json grading/report.html grading/similarity.csv
