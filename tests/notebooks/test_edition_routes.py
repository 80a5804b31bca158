"""The student edition's routes in (tools/student_edition), the fast checks (`make test`):
Colab's badge and set-up cell, releases committed on top of the last, the choice of PyTorch's
build in `make setup`, Binder's and the dev container's set-up, and the edition's Jupyter
configuration. The end-to-end runs (an update that keeps a student's edit, stock nbconvert
on 04, Colab's runtime) are tests/notebooks/test_edition_end_to_end.py (`make test-edition`).
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import types
from pathlib import Path

import nbformat
import pytest
from packaging.specifiers import SpecifierSet

from tests.conftest import REPO
from tools.student_edition import (
    COPIED,
    SETUP_FIRST_LINE,
    build,
    colab_url,
    github_repository,
    setup_cell_source,
)

GITHUB = "course-org/workbook-students"
ARCHIVE = f"https://github.com/{GITHUB}/archive/refs/heads/main.zip"


def git(folder: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True,
                          text=True).stdout


def source_copy(folder: Path) -> Path:
    """A git repository holding what the edition is built from (this checkout's tracked
    files of ``COPIED``, pyproject.toml and environment.yml), for a test to change."""
    names = git(REPO, "ls-files", "-z", "--", *COPIED, "pyproject.toml",
                "environment.yml").split("\0")
    for name in filter(None, names):
        if (REPO / name).is_file():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, folder / name)
    git(folder, "init", "--quiet")
    git(folder, "add", "--all")
    return folder


@pytest.fixture(scope="module")
def hosted(tmp_path_factory) -> Path:
    return build(tmp_path_factory.mktemp("hosted") / "workbook", github=GITHUB)


def notebooks(edition: Path) -> list[str]:
    return sorted(str(p.relative_to(edition)) for p in edition.glob("notebooks/*/*.ipynb"))


def test_every_notebook_opens_in_colab_from_its_badge_then_one_set_up_cell(hosted):
    names = notebooks(hosted)
    assert len(names) == len(list((REPO / "notebooks").glob("*/*.ipynb"))) > 0
    readme = (hosted / "README.md").read_text()
    for name in names:
        url = f"https://colab.research.google.com/github/{GITHUB}/blob/main/{name}"
        assert colab_url(GITHUB, "main", name) == url
        notebook = nbformat.read(hosted / name, as_version=4)
        nbformat.validate(notebook)
        badge, setup = notebook.cells[:2]
        assert badge.cell_type == "markdown" and f"]({url})" in badge.source, name
        assert setup.cell_type == "code" and setup.source.startswith(SETUP_FIRST_LINE), name
        assert f'"course_utils @ {ARCHIVE}"' in setup.source
        code_cells = [cell for cell in notebook.cells if cell.cell_type == "code"]
        assert sum(SETUP_FIRST_LINE in cell.source for cell in code_cells) == 1, name
        released = nbformat.read(REPO / name, as_version=4)
        assert notebook.cells[2:] == released.cells, f"{name}: the release's cells changed"
        assert f"]({url})" in readme, f"the README does not link {name} to Colab"
    assert f"https://mybinder.org/v2/gh/{GITHUB}/main?urlpath=lab/tree/notebooks" in readme
    assert f"https://codespaces.new/{GITHUB}?quickstart=1" in readme


def run_setup_cell(source: str, colab: bool) -> tuple[list, list, dict]:
    """Run the set-up cell as a kernel would, with or without Colab's ``google.colab``;
    returns the commands it ran, the widget-manager calls and the variables it set."""
    commands, widgets = [], []
    modules = {}
    if colab:
        output = types.SimpleNamespace(enable_custom_widget_manager=lambda: widgets.append(1))
        google = types.ModuleType("google")
        google.colab = types.ModuleType("google.colab")
        google.colab.output = output
        modules = {"google": google, "google.colab": google.colab}
    saved = {name: sys.modules.get(name) for name in modules}
    run, environ = subprocess.run, dict(os.environ)
    try:
        sys.modules.update(modules)
        for key in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):  # as on Colab: not set
            os.environ.pop(key, None)
        environ_before = dict(os.environ)
        subprocess.run = lambda command, **kwargs: commands.append((command, kwargs))
        exec(compile(source, "<set-up cell>", "exec"), {})
        changed = {key: value for key, value in os.environ.items()
                   if environ_before.get(key) != value}
    finally:
        subprocess.run = run
        os.environ.clear()
        os.environ.update(environ)
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module
    return commands, widgets, changed


def test_the_set_up_cell_does_nothing_outside_colab():
    commands, widgets, changed = run_setup_cell(setup_cell_source(GITHUB, "main"), colab=False)
    assert commands == [] and widgets == [] and changed == {}


def test_on_colab_the_set_up_cell_installs_the_workbook_from_the_edition_and_its_widgets():
    commands, widgets, changed = run_setup_cell(setup_cell_source(GITHUB, "main"), colab=True)
    ((command, options),) = commands
    assert command == [sys.executable, "-m", "pip", "install", "--quiet",
                       f"course_utils @ {ARCHIVE}"]
    assert options == {"check": True}
    # No --upgrade, --force-reinstall or pins: pip keeps whatever Colab holds in range.
    assert not any(flag in " ".join(command) for flag in ("-U", "--upgrade", "--force", "=="))
    assert widgets == [1]
    assert changed == {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def test_without_a_github_repository_the_edition_has_no_colab_cells(tmp_path):
    edition = build(tmp_path / "plain")
    for name in notebooks(edition):
        assert nbformat.read(edition / name, as_version=4) == nbformat.read(REPO / name,
                                                                            as_version=4)
    assert "colab.research.google.com/github" not in (edition / "README.md").read_text()


@pytest.mark.parametrize("url", ["https://github.com/course-org/workbook-students.git",
                                 "https://github.com/course-org/workbook-students",
                                 "git@github.com:course-org/workbook-students.git"])
def test_the_github_repository_is_read_from_the_editions_remote(tmp_path, url):
    git(tmp_path, "init", "--quiet")
    git(tmp_path, "remote", "add", "origin", url)
    assert github_repository(tmp_path) == GITHUB


def test_a_release_is_committed_on_top_of_the_last(tmp_path):
    source = source_copy(tmp_path / "source")
    edition = build(tmp_path / "edition", repo=source, github=GITHUB)
    first = git(edition, "rev-parse", "HEAD").strip()
    assert build(edition, repo=source, github=GITHUB) == edition  # the same: no commit
    assert git(edition, "rev-parse", "HEAD").strip() == first
    fix = source / "course_utils" / "quick.py"
    fix.write_text(fix.read_text() + "\n# a fix\n")
    build(edition, repo=source, github=GITHUB)
    assert git(edition, "rev-list", "--count", "HEAD").strip() == "2"
    assert git(edition, "rev-parse", "HEAD~1").strip() == first
    assert git(edition, "diff", "--name-only", "HEAD~1").split() == ["course_utils/quick.py"]
    assert git(edition, "status", "--porcelain") == ""


def test_a_release_refuses_a_dirty_edition_or_a_folder_that_is_not_one(tmp_path):
    edition = build(tmp_path / "edition")
    (edition / "README.md").write_text("edited\n")
    with pytest.raises(ValueError, match="uncommitted"):
        build(edition)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine\n")
    with pytest.raises(ValueError, match="new or empty folder"):
        build(tmp_path / "other")
    with pytest.raises(ValueError, match="not a student edition"):
        build(REPO)  # the instructors' repository itself: never overwritten


def make_dry_run(edition: Path, tmp_path: Path, gpu: bool, torch: str | None = None) -> str:
    """What `make setup` would run in ``edition`` (make -n), with or without an
    ``nvidia-smi`` on PATH, and ``TORCH=torch`` when given."""
    bin_ = tmp_path / ("gpu" if gpu else "plain")
    bin_.mkdir(exist_ok=True)
    if gpu:
        (bin_ / "nvidia-smi").write_text("#!/bin/sh\nexit 0\n")
        (bin_ / "nvidia-smi").chmod(0o755)
    path = f"{bin_}:/usr/local/bin:/usr/bin:/bin"
    command = ["make", "-n", "-B", "setup", f"PYTHON={sys.executable}",
               *([f"TORCH={torch}"] if torch else [])]
    result = subprocess.run(command, cwd=edition, capture_output=True, text=True,
                            env={"PATH": path, "HOME": str(tmp_path)})
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


CPU_STEP = re.compile(r'pip install --quiet --no-deps --index-url '
                      r'https://download\.pytorch\.org/whl/cpu "torch==2\.13\.0"')


@pytest.mark.skipif(sys.platform != "linux", reason="PyPI's Linux torch is the CUDA build")
def test_make_setup_installs_the_cpu_build_of_torch_unless_a_gpu_is_there_or_cuda_is_asked(
        hosted, tmp_path):
    plain = make_dry_run(hosted, tmp_path, gpu=False)
    assert CPU_STEP.search(plain) and "the cpu build" in plain
    assert plain.index("whl/cpu") < plain.index('-c requirements-lock.txt -e ".[lab]"')
    assert not CPU_STEP.search(make_dry_run(hosted, tmp_path, gpu=True))
    assert not CPU_STEP.search(make_dry_run(hosted, tmp_path, gpu=False, torch="cuda"))
    assert CPU_STEP.search(make_dry_run(hosted, tmp_path, gpu=True, torch="cpu"))
    # The edition's Jupyter configuration goes where the environment's Jupyter reads it.
    assert "cp -R jupyter-config/. .venv/etc/jupyter/" in plain


def test_binder_and_the_dev_container_install_as_make_setup_does(hosted):
    requires = tomllib.loads((hosted / "pyproject.toml").read_text())["project"]["requires-python"]
    runtime = (hosted / "binder" / "runtime.txt").read_text().strip()
    assert re.fullmatch(r"python-3\.\d+", runtime)
    assert SpecifierSet(requires).contains(runtime.removeprefix("python-") + ".0")
    post_build = hosted / "binder" / "postBuild"
    assert post_build.stat().st_mode & 0o111, "postBuild must be executable"
    subprocess.run(["bash", "-n", post_build], check=True)
    text = post_build.read_text()
    for step in ("--index-url https://download.pytorch.org/whl/cpu",
                 "-c requirements-lock.txt \".[lab]\"", "cp -R jupyter-config/."):
        assert step in text, step
    container = json.loads((hosted / ".devcontainer" / "devcontainer.json").read_text())
    assert container["postCreateCommand"] == "make setup"
    python = re.search(r"python:(3\.\d+)$", container["image"]).group(1)
    assert SpecifierSet(requires).contains(python + ".0")
    assert container["customizations"]["vscode"]["settings"][
        "python.defaultInterpreterPath"].endswith("/.venv/bin/python")


def nbgrader_lab_plugins() -> set[str]:
    """The plugin ids nbgrader's installed JupyterLab extension declares."""
    static = Path(sys.prefix) / "share" / "jupyter" / "labextensions" / "@jupyter" / "nbgrader"
    text = " ".join(path.read_text(errors="replace") for path in static.rglob("*.js"))
    return set(re.findall(r'"(@jupyter/nbgrader:[a-z-]+)"', text))


def test_the_editions_lab_shows_validate_and_none_of_nbgraders_course_tools(hosted):
    config = hosted / "jupyter-config"
    disabled = json.loads((config / "labconfig" / "page_config.json").read_text())[
        "disabledExtensions"]
    off = {name for name, value in disabled.items() if value}
    assert off == {f"@jupyter/nbgrader:{name}" for name in
                   ("formgrader", "create-assignment", "course-list", "assignment-list", "menu")}
    assert off <= nbgrader_lab_plugins(), "a plugin id that nbgrader does not have"
    assert "@jupyter/nbgrader:validate-assignment" in nbgrader_lab_plugins() - off
    server = json.loads((config / "jupyter_server_config.json").read_text())
    extensions = server["ServerApp"]["jpserver_extensions"]
    assert extensions == {"nbgrader.server_extensions.validate_assignment": True,
                          "nbgrader.server_extensions.formgrader": False,
                          "nbgrader.server_extensions.course_list": False,
                          "nbgrader.server_extensions.assignment_list": False}
    for name in ("jupyter_nbconvert_config.py", "nbgrader_config.py"):
        assert ('client_class = "course_utils.jupyter.kernel_client.KernelClient"'
                in (config / name).read_text()), name


def test_the_grading_never_runs_the_set_up_cell_of_a_notebook_handed_in_from_the_edition(
        hosted):
    """A notebook downloaded from Colab opens with the set-up cell, which is no cell of the
    release: the grading skips it (it would otherwise run as a cell the student added)."""
    from grader.cells import HOSTED_SETUP_ID, is_added, plain_code_cells
    from grader.running.execute import Execute
    from tools.student_edition import SETUP_ID

    assert SETUP_ID == HOSTED_SETUP_ID
    name = notebooks(hosted)[0]
    notebook = nbformat.read(hosted / name, as_version=4)
    setup = notebook.cells[1]
    plain = plain_code_cells(nbformat.read(REPO / name, as_version=4))
    assert is_added(setup, plain), "without the skip it would run as an added cell"
    setup.source += "\nimport os; os.system('echo a student edited this')"
    executed, _ = Execute(instructor_cells=plain).preprocess_cell(setup, {}, 1)
    assert executed.outputs == [] and executed.execution_count is None
