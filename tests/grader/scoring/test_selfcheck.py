"""The grader grades the instructor's solution before anyone: a broken environment stops
the run with its cause and leaves the gradebook as it was; a working one grades as before,
and is checked once (grader.scoring.selfcheck)."""

import os
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

import course_utils
from grader.__main__ import main
from grader.running import sandbox
from grader.running.nbgrader_steps import release
from grader.running.worker import Result
from grader.scoring import selfcheck
from grader.scoring.autograde import autograde
from tests.grader.tiny_course import ASSIGNMENT, LIMITS, answered, hand_in, make_tiny_course

pytestmark = pytest.mark.notebook


def edit_solution(course, old: str, new: str) -> None:
    """Replace ``old`` by ``new`` in the instructor's source of ``tiny``."""
    path = course.source / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    notebook = nbformat.read(path, as_version=4)
    cells = [cell for cell in notebook.cells if old in cell.source]
    assert len(cells) == 1, f"{old!r} is in {len(cells)} cells"
    cells[0].source = cells[0].source.replace(old, new)
    nbformat.write(notebook, path)


def class_of_two(course) -> None:
    hand_in(course, "right", {f"{ASSIGNMENT}.ipynb": answered(course, {})})
    hand_in(course, "wrong", {f"{ASSIGNMENT}.ipynb": answered(
        course, {"double": "def double(x):\n    return x + 2"})})


def untouched(course):
    """What a run that grades nobody must leave as it was: the gradebook's bytes (or its
    absence), and no autograded notebook, grading state or cached check."""
    book = course.gradebook_path
    return (book.read_bytes() if book.exists() else None,
            course.folder("autograded").exists(),
            (course.root / "autograde_state.json").exists(),
            (course.root / selfcheck.CACHE_FILE).exists())


@pytest.mark.usefixtures("sandbox")
def test_a_sandbox_without_course_utils_stops_grading_with_that_message(
        tmp_path, monkeypatch, capsys):
    """course_utils installed in editable mode outside what the sandbox mounts: the
    solution's setup cell cannot import it; make autograde says so first, grades nobody."""
    course = make_tiny_course(tmp_path)
    edit_solution(course, "import numpy as np",
                  "import numpy as np\nfrom course_utils.checks import check_close")
    edit_solution(course, "assert np.allclose(square(np.arange(3)), [0, 1, 4]), "
                  "'square of an array'", "check_close(square(np.arange(3)), [0, 1, 4])")
    assert not release(course)
    class_of_two(course)
    mounted = sandbox.read_only_folders()
    package = Path(course_utils.__file__).parent.resolve()
    monkeypatch.setattr(sandbox, "read_only_folders",
                        lambda: [folder for folder in mounted if folder != package])
    before = untouched(course)

    code = main(["autograde", "--course-root", str(course.root), "--workers", "2"])

    lines = capsys.readouterr().err.splitlines()
    assert code == 3
    assert lines[0] == ("autograde STOPPED: the grading environment cannot import "
                        "course_utils: ModuleNotFoundError: No module named 'course_utils'; "
                        "nobody was graded")
    assert f"  {ASSIGNMENT} test_square: 0 of 1" in lines
    assert f"  error in {ASSIGNMENT} cell setup: ModuleNotFoundError: No module named " \
           "'course_utils'" in lines
    assert untouched(course) == before


@pytest.mark.usefixtures("sandbox")
def test_a_kernel_that_cannot_start_in_the_sandbox_stops_grading(tmp_path, monkeypatch):
    """Python reached through a link outside the mounted folders (a .venv linked from
    elsewhere): the kernel dies at start, and what it said is in the details. A TA's first
    run, before the gradebook exists: the check releases the tests into a scratch one."""
    course = make_tiny_course(tmp_path / "course")
    class_of_two(course)
    course.gradebook_path.unlink()
    link = tmp_path / "linked-venv" / "python"
    link.parent.mkdir()
    link.symlink_to(os.path.realpath(sandbox.sys.executable))
    monkeypatch.setattr(sandbox.sys, "executable", str(link))
    before = untouched(course)

    with pytest.raises(selfcheck.BrokenEnvironment) as stopped:
        autograde(course, limits=LIMITS, progress=False)

    headline, *details = str(stopped.value).splitlines()
    assert headline.startswith("the grading kernel dies at start")
    assert headline.endswith("; nobody was graded")
    assert any(f"{link}: No such file or directory" in line for line in details), details
    assert untouched(course) == before


@pytest.mark.usefixtures("sandbox")
def test_a_working_environment_grades_as_before_and_is_checked_once(tmp_path, monkeypatch):
    course = make_tiny_course(tmp_path)
    class_of_two(course)
    told = []
    summary = autograde(course, limits=LIMITS, progress=False, tell=told.append)
    assert told == ["checking the grading environment first: grading the instructor's "
                    f"solution of {ASSIGNMENT} (once per environment)"]
    assert sorted(summary.graded) == [f"right/{ASSIGNMENT}", f"wrong/{ASSIGNMENT}"]
    with Gradebook(course.gradebook_url) as book:  # double is worth 2 points, square 1
        assert book.find_submission(ASSIGNMENT, "right").score == 3
        assert book.find_submission(ASSIGNMENT, "wrong").score == 1

    hand_in(course, "late", {f"{ASSIGNMENT}.ipynb": answered(course, {})})
    with monkeypatch.context() as patched:
        patched.setattr(selfcheck, "solution_job", lambda *args: pytest.fail("checked twice"))
        summary = autograde(course, limits=LIMITS, progress=False, tell=told.append)
    assert summary.graded == [f"late/{ASSIGNMENT}"] and len(told) == 1

    edit_solution(course, "return 2 * x", "return 3 * x")  # a new solution is checked again
    hand_in(course, "later", {f"{ASSIGNMENT}.ipynb": answered(course, {})})
    with pytest.raises(selfcheck.BrokenEnvironment) as stopped:
        autograde(course, limits=LIMITS, progress=False)
    assert str(stopped.value).startswith(
        f"the instructor's solution of {ASSIGNMENT} fails in the grading environment: "
        f"{ASSIGNMENT} cell test_double: AssertionError: double(2) should be 4")
    assert f"  {ASSIGNMENT} test_double: 0 of 2" in str(stopped.value).splitlines()
    with Gradebook(course.gradebook_url) as book:
        graded = sorted(s.student.id for s in book.assignment_submissions(ASSIGNMENT))
    assert graded == ["late", "right", "wrong"]


# nbgrader's log of a kernel that died while starting, under a memory cap of 20 MB (a run's
# own lines, with the paths shortened and nbgrader's traceback cut)
DIED_AT_START = """\
[AutogradeApp | INFO] Autograding /tmp/g/course/autograded/instructor/tiny/tiny.ipynb
[AutogradeApp | INFO] Converting notebook /tmp/g/course/autograded/instructor/tiny/tiny.ipynb
Traceback (most recent call last):
  File "<frozen runpy>", line 198, in _run_module_as_main
object type name: MemoryError
lost sys.stderr
[AutogradeApp | ERROR] Error occurred while starting new kernel client for kernel f4d6: \
Kernel died before replying to kernel_info
[AutogradeApp | ERROR] There was an error processing assignment: /tmp/g/course/submitted
"""


@pytest.mark.parametrize("log, headline", [
    (DIED_AT_START, "the grading kernel dies at start"),
    (DIED_AT_START.replace("Kernel died before replying to kernel_info", "DeadKernelError"),
     "the grading kernel dies while it runs the instructor's solution of tiny"),
    (DIED_AT_START.replace("object type name: MemoryError", "/venv/bin/python: No module "
                           "named ipykernel_launcher"),
     "the grading environment cannot import ipykernel_launcher: /venv/bin/python: No module"),
])
def test_a_dead_kernel_is_told_by_what_it_said(log, headline):
    result = Result(ASSIGNMENT, selfcheck.STUDENT, graded=False, log=log,
                    reason="the kernel died (the code exits, crashes or is killed)")
    _, told, details = selfcheck.diagnose(result, course=None)
    assert told.startswith(headline)
    assert "  Traceback (most recent call last):" in details.splitlines()
    assert not any("File " in line or "AutogradeApp" in line for line in details.splitlines())
