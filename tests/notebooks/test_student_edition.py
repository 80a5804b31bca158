"""The student edition (tools/student_edition): it gives no answer away, and it works.

What is secret: the lines of the solutions' answer regions (`### BEGIN SOLUTION` ..
`### END SOLUTION`, code and markdown), of their hidden test blocks, of their model answers
(markdown solution cells, whole), of their worked answers (cells tagged `worked-answer`,
whole: grader.outputs.worked_answers), of their rubrics (cells tagged `rubric`, whole:
grader.outputs.rubrics) and of the grading cases' code (tests/grading_cases: WRONG,
CORRECT, CHEAT), all read from those sources, not from the release. Lines are
compared with their whitespace collapsed and their opening comment or quote
marks (`#`, `>`) left out, and trivial ones are set aside: lines the
solution notebooks also show outside their secret parts (signatures, docstrings, visible
tests, prose), nbgrader's stubs, short lines, lines without a letter or digit, imports.

course_utils is the course's reference code, which the notebooks build on after each
exercise: its lines may share a solution's, a worked answer's or a grading case's (the
grading refuses the reference while an answer runs and flags what an answer copies from
it), never a hidden test's, a model answer's or a rubric's. Every other file may share none.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

import nbformat
import pytest
from nbgrader.preprocessors import ClearSolutions

from grader.outputs.rubrics import is_rubric
from grader.outputs.worked_answers import is_worked_answer
from tests.conftest import REPO
from tests.grading_cases import all_cases
from tests.support.nbgrader_cells import by_grade_id, errors, roles
from tools.student_edition import EDITION, LINKS_MARK, build, links_table

SECRET = re.compile(r"### BEGIN (SOLUTION|HIDDEN TESTS)\n(.*?)### END \1", flags=re.S)
REFERENCE = "course_utils"  # may share lines with solutions and grading cases (above)
MINIMUM_LENGTH = 12  # characters, once whitespace is collapsed
IMPORT = re.compile(r"(from \S+ )?import [\w., ]+( as \w+)?")


def normalised(text: str) -> set[str]:
    """The lines of ``text``, each with its whitespace collapsed and without the comment or
    quote marks that open it (a line commented out or quoted is the same line)."""
    return {" ".join(re.sub(r"^[\s#>]+", "", line).split()) for line in text.splitlines()}


def trivial(line: str) -> bool:
    return len(line) < MINIMUM_LENGTH or not re.search(r"\w", line) or IMPORT.fullmatch(line)


def secret_lines() -> dict[str, dict[str, str]]:
    """{kind: {line: where it comes from}} for each kind of secret line: "solution",
    "hidden test", "model answer", "worked answer", "rubric", "grading case"."""
    secrets = {kind: {} for kind in ("solution", "hidden test", "model answer",
                                     "worked answer", "rubric", "grading case")}
    given = normalised(ClearSolutions().code_stub["python"] + "\n" + ClearSolutions().text_stub)
    for path in sorted((REPO / "solutions").glob("*/*.ipynb")):
        for number, cell in enumerate(nbformat.read(path, as_version=4).cells):
            where = f"{path.name}, cell {number}"
            for match in SECRET.finditer(cell.source):
                kind = "solution" if match.group(1) == "SOLUTION" else "hidden test"
                secrets[kind].update(dict.fromkeys(normalised(match.group(2)), where))
            if cell.cell_type == "markdown" and "answer" in roles(cell):
                secrets["model answer"].update(dict.fromkeys(normalised(cell.source), where))
            if is_worked_answer(cell):
                secrets["worked answer"].update(dict.fromkeys(normalised(cell.source), where))
            elif is_rubric(cell):
                secrets["rubric"].update(dict.fromkeys(normalised(cell.source), where))
            else:
                given |= normalised(SECRET.sub("", cell.source))
    for assignment, module in all_cases().items():
        for kind in ("WRONG", "CORRECT", "CHEAT"):
            for student, answers in getattr(module, kind).items():
                for grade_id, answer in answers.items():
                    code = getattr(answer, "code", answer)  # a CHEAT case's Cheat
                    where = f"tests/grading_cases, {assignment} {kind} {student} {grade_id}"
                    secrets["grading case"].update(dict.fromkeys(normalised(code), where))
    return {kind: {line: where for line, where in lines.items()
                   if line not in given and not trivial(line)}
            for kind, lines in secrets.items()}


def strings(value) -> list[str]:
    """Every string inside a parsed JSON value (a notebook's sources, outputs, metadata)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        value = list(value.keys()) + list(value.values())
    if isinstance(value, list):
        return [text for item in value for text in strings(item)]
    return []


def file_lines(path: Path) -> set[str]:
    text = path.read_text(errors="replace")
    if path.suffix == ".ipynb":
        text = "\n".join(strings(json.loads(text)))
    return normalised(text)


def edition_files(edition: Path) -> list[str]:
    return sorted(str(p.relative_to(edition)) for p in edition.rglob("*")
                  if p.is_file() and ".git" not in p.relative_to(edition).parts)


def leaks(edition: Path, secrets: dict[str, dict[str, str]]) -> list[str]:
    """'file: line (kind, where from)' for each secret line found in a file of ``edition``."""
    found = []
    for name in edition_files(edition):
        kinds = secrets.keys()
        if Path(name).parts[0] == REFERENCE:
            kinds = ("hidden test", "model answer", "rubric")
        for kind in kinds:
            for line in sorted(file_lines(edition / name) & secrets[kind].keys()):
                found.append(f"{name}: {line!r} ({kind}, {secrets[kind][line]})")
    return found


def git(folder: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True,
                          text=True).stdout


@pytest.fixture(scope="module")
def edition(tmp_path_factory) -> Path:
    return build(tmp_path_factory.mktemp("edition") / "workbook")


@pytest.fixture(scope="module")
def secrets() -> dict[str, dict[str, str]]:
    return secret_lines()


def test_the_edition_is_one_commit_of_what_students_receive(edition):
    assert sorted(p.name for p in edition.iterdir() if p.name != ".git") == sorted(EDITION)
    assert git(edition, "rev-list", "--count", "HEAD").strip() == "1"
    assert git(edition, "status", "--porcelain") == ""
    assert sorted(git(edition, "ls-files").splitlines()) == edition_files(edition)
    students_readme = (REPO / "tools" / "student_edition" / "README.md").read_text()
    assert LINKS_MARK in students_readme
    notebooks = sorted(str(p.relative_to(edition)) for p in edition.glob("notebooks/*/*.ipynb"))
    assert (edition / "README.md").read_text() == students_readme.replace(
        LINKS_MARK, links_table(notebooks, None, "main"))
    released = sorted(str(p.relative_to(REPO)) for p in (REPO / "notebooks").glob("*/*.ipynb"))
    assert released and set(released) <= set(edition_files(edition))


def test_the_edition_carries_the_licences_of_the_code_and_the_notebooks(edition):
    """Students receive the notebooks' text under CC BY-SA 4.0 and the code under MIT, so
    the edition must carry both licences as the repository has them."""
    for name, first_line in (("LICENSE", "MIT License"),
                             ("LICENSE-CC-BY-SA-4.0", "Attribution-ShareAlike 4.0 International")):
        text = (edition / name).read_text()
        assert text.splitlines()[0] == first_line, name
        assert text == (REPO / name).read_text(), f"{name} differs from the repository's"


def test_the_editions_pyproject_installs_course_utils_and_names_no_instructors_folder(edition):
    text = (edition / "pyproject.toml").read_text()
    assert "[tool.pytest" not in text and "[tool.ruff" not in text and "testpaths" not in text
    assert "[project]" in text and "[tool.setuptools.packages.find]" in text
    extras = tomllib.loads(text)["project"]["optional-dependencies"]
    assert sorted(extras) == ["lab"], "students get the lab extra only (no dev, slides, hub)"


# What the edition's own files (not course_utils' code) may not name: folders and commands
# of the instructors' repository that the edition does not have.
INSTRUCTORS_ONLY = re.compile(r"tests/|grading/|solutions/|tools/|deploy/|hub/|docs/|"
                              r"\.\[dev\]|\[dev\]|pip install \. --no-deps")


def test_the_editions_own_files_name_only_what_the_edition_has(edition):
    """The README, Makefile, environment files, Binder's, the dev container's and Jupyter's
    set-up speak of the edition, not of the instructors' repository they came from."""
    own = [name for name in edition_files(edition)
           if Path(name).parts[0] not in ("notebooks", "course_utils") and "LICENSE" not in name]
    assert {"README.md", "Makefile", "pyproject.toml", "environment.yml",
            "requirements-lock.txt", "binder/postBuild", ".devcontainer/devcontainer.json",
            "jupyter-config/jupyter_nbconvert_config.py"} <= set(own)
    found = [f"{name}: {line.strip()}" for name in own
             for line in (edition / name).read_text().splitlines()
             if INSTRUCTORS_ONLY.search(line)]
    assert not found, "\n".join(found)


def test_no_solution_hidden_test_model_answer_or_grading_case_is_in_the_edition(edition, secrets):
    counts = {kind: len(lines) for kind, lines in secrets.items()}
    assert all(counts[kind] for kind in counts if kind != "worked answer"), counts
    found = leaks(edition, secrets)
    assert not found, "the student edition holds secret lines:\n" + "\n".join(found[:20])


def test_a_solution_copied_into_the_edition_is_found(edition, secrets, tmp_path):
    """The search above can fail: plant a solution region and a rubric's line in a notebook's
    markdown, a hidden test in course_utils, and a grading case's line in the README of a copy."""
    planted = shutil.copytree(edition, tmp_path / "planted")
    notebook_path = next((planted / "notebooks").glob("03_*/*.ipynb"))
    notebook = nbformat.read(notebook_path, as_version=4)
    solution = next(line for line, where in secrets["solution"].items() if "03_bpe" in where)
    rubric = next(iter(secrets["rubric"]))
    notebook.cells.append(nbformat.v4.new_markdown_cell(f"Hint:\n\n    {solution}\n\n{rubric}"))
    nbformat.write(notebook, notebook_path)
    hidden = next(iter(secrets["hidden test"]))
    with open(planted / "course_utils" / "quick.py", "a") as module:
        module.write(f"\n#   {hidden}\n")
    case = next(iter(secrets["grading case"]))
    with open(planted / "README.md", "a") as readme:
        readme.write(f"\n{case}\n")
    found = "\n".join(leaks(planted, secrets))
    assert f"{notebook_path.relative_to(planted)}: {solution!r} (solution" in found
    assert f"{notebook_path.relative_to(planted)}: {rubric!r} (rubric" in found
    assert f"course_utils/quick.py: {hidden!r} (hidden test" in found
    assert f"README.md: {case!r} (grading case" in found


# A fresh clone's `make setup`, offline and in seconds: its .venv is made first, with a .pth
# file naming this environment's site-packages, so every pinned dependency is already
# installed and pip (told to use no index) downloads nothing. `make setup` then runs the
# edition's own Makefile, whose `pip install -e .` installs the clone's course_utils.
OFFLINE_PIP = {"PIP_NO_INDEX": "1", "PIP_NO_BUILD_ISOLATION": "0",  # "0": no isolation
               "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
FIRST_EXERCISE_OF = "03_bpe"


def offline_clone(edition: Path, folder: Path) -> tuple[Path, dict]:
    """A student's clone of ``edition`` set up with its own `make setup`, offline: its .venv
    sees this environment's packages (a .pth file), so pip downloads nothing and installs
    the clone's course_utils and Jupyter configuration. Returns the clone and the
    environment to run its commands in."""
    subprocess.run(["git", "clone", "--quiet", str(edition), str(folder)], check=True)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", folder / ".venv"], check=True)
    python = folder / ".venv" / "bin" / "python"
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          check=True, capture_output=True, text=True).stdout.strip()
    (Path(site) / "course-dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    environment = {**os.environ, **OFFLINE_PIP, "PYTHON": sys.executable,
                   "PATH": f"{python.parent}:{os.environ['PATH']}"}
    setup = subprocess.run(["make", "setup"], cwd=folder, env=environment, capture_output=True,
                           text=True)
    assert setup.returncode == 0, setup.stdout + setup.stderr
    return folder, environment


def short_notebook(release: Path, correct_answers: dict) -> tuple[nbformat.NotebookNode, str]:
    """The release's cells up to its first exercise's test cell, then that exercise again
    with a correct answer from the grading cases; and the exercise's grade id. A first cell
    prints where the kernel's python and course_utils come from."""
    notebook = nbformat.read(release, as_version=4)
    answer = next(i for i, cell in enumerate(notebook.cells)
                  if cell.cell_type == "code" and "answer" in roles(cell))
    grade_id = notebook.cells[answer].metadata.nbgrader.grade_id
    test = by_grade_id(notebook, f"test_{grade_id}")
    correct = next(answers[grade_id] for answers in correct_answers.values() if grade_id in answers)
    probe = nbformat.v4.new_code_cell("import sys, course_utils\nprint(sys.prefix)\n"
                                      "print(course_utils.__file__)")
    again = [nbformat.v4.new_code_cell(source, metadata=notebook.cells[i].metadata)
             for i, source in ((answer, correct), (test, notebook.cells[test].source))]
    notebook.cells = [probe, *notebook.cells[: test + 1], *again]
    return notebook, grade_id


@pytest.mark.notebook
def test_a_fresh_clone_sets_up_and_a_blank_notebooks_first_check_runs(edition, tmp_path):
    clone, environment = offline_clone(edition, tmp_path / "clone")
    python = clone / ".venv" / "bin" / "python"
    assert (clone / ".venv" / ".installed").exists()

    release = clone / "notebooks" / FIRST_EXERCISE_OF / f"{FIRST_EXERCISE_OF}.ipynb"
    notebook, grade_id = short_notebook(release, all_cases()[FIRST_EXERCISE_OF].CORRECT)
    path = release.with_name("first_exercise.ipynb")
    nbformat.write(notebook, path)
    run = subprocess.run(
        [python, "-c", "import sys, nbformat, nbclient\n"
         "notebook = nbformat.read(sys.argv[1], as_version=4)\n"
         "nbclient.NotebookClient(notebook, allow_errors=True, timeout=120,\n"
         "    resources={'metadata': {'path': sys.argv[2]}}).execute()\n"
         "nbformat.write(notebook, sys.argv[1])\n", path, path.parent],
        cwd=tmp_path, env=environment,
        capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    executed = nbformat.read(path, as_version=4)
    cells = executed.cells

    assert not errors(cells[0]), f"course_utils does not import in the clone: {errors(cells[0])}"
    printed = "".join(output.get("text", "") for output in cells[0].outputs).split()
    assert printed == [str(clone / ".venv"), str(clone / "course_utils" / "__init__.py")]
    blank_test = by_grade_id(executed, f"test_{grade_id}")  # the first of the two
    for number, cell in enumerate(cells[:blank_test]):
        assert not errors(cell), f"cell {number} before the first check: {errors(cell)}"
    failure = errors(cells[blank_test])
    assert failure and failure[0].startswith(("NotImplementedError", "AssertionError")), failure
    assert not errors(cells[-2]) and not errors(cells[-1]), errors(cells[-2]) + errors(cells[-1])
