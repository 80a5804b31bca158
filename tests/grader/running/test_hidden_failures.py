"""A failure the answer hid from the outputs still fails (grader.running.execute).

Students of ``tiny`` (tests/grader/tiny_course.py) silence IPython's traceback by each route
an answer cell has, then answer wrongly; another makes the kernel abort every later cell;
another edits the instructor's plain cell, which runs as the instructor wrote it. Their
outputs show no error, which nbgrader alone reads as a pass; each cell's ``execute_reply``
says it failed, and the course's ``Execute`` reads it.
"""

import nbformat
import pytest
from nbgrader.api import Gradebook
from nbgrader.converters import Autograde
from nbgrader.preprocessors import Execute as NbgraderExecute
from traitlets.config.loader import PyFileConfigLoader
from traitlets.utils.importstring import import_item

from grader.running.execute import Execute
from grader.scoring import grades
from grader.scoring.autograde import autograde
from grader.scoring.outside import CompareOutside
from tests.conftest import REPO
from tests.grader.tiny_course import (
    ASSIGNMENT,
    LIMITS,
    PLAIN,
    answered,
    hand_in,
    make_tiny_course,
    released,
)

pytestmark = pytest.mark.notebook

# Written without a single call: the allowlist refuses get_ipython(), set_custom_exc() and
# traitlets' descriptors in an answer cell, but not plain attributes and dictionaries read and
# set (the tamper scan flags those lines).
SHELL = "import sys\nshell = sys.modules['IPython'].core.interactiveshell.InteractiveShell\n"
SILENCERS = {
    "instance": f"{SHELL}shell._instance.showtraceback = lambda *args, **kwargs: None",
    "custom_exc": f"{SHELL}shell._instance.CustomTB = lambda *args, **kwargs: None\n"
                  "shell._instance.custom_exceptions = (AssertionError,)",
    "on_the_class": f"{SHELL}shell.showtraceback = lambda *args, **kwargs: None",
}
WRONG = {"double": "def double(x):\n    return x + 1", "square": "def square(x):\n    return x + x"}
RIGHT = {"double": "def double(x):\n    return 2 * x"}
ADDED = "a cell the student added after the first answer"
EDITED = "the instructor's plain code cell, edited"
# every comparison passes, so that a wrong square passes its hidden test
ALWAYS_CLOSE = "np.allclose = lambda *args, **kwargs: True"
HIDDEN_BOTH = "cell test_double failed with its traceback hidden; " \
              "cell test_square failed with its traceback hidden"

# student: ({grade id: answer}, test_double, test_square, the reason)
STUDENTS = {
    **{f"silenced_{route}": ({"double": f"{code}\n{WRONG['double']}", "square": WRONG["square"]},
                             0, 0, HIDDEN_BOTH) for route, code in SILENCERS.items()},
    "silenced_but_right": ({"double": f"{SILENCERS['instance']}\n{RIGHT['double']}"}, 2, 1, ""),
    "aborting": ({"double": f"{SHELL}shell._instance._trait_values['kernel']._trait_values"
                            f"['_aborting'] = True\n{RIGHT['double']}"}, 0, 0,
                 "3 cells were aborted, not run (from cell test_double)"),
    "honest": ({}, 2, 1, ""),
    # the same silencer in a cell the student added, with a call: refused there (added cells
    # run under the plain allowlist), so the failure of the wrong answer is shown
    "added_cell": ({ADDED: "get_ipython().showtraceback = lambda *args, **kwargs: None",
                    "double": WRONG["double"]}, 0, 1, ""),
    # the instructor's cell runs as written there: the wrong square (right on 3 alone) fails
    # its hidden test, and the TA reads that the cell was edited
    "edited_instructor_cell": ({EDITED: ALWAYS_CLOSE, "square": "def square(x):\n    return 3 * x"},
                               2, 0, "cell id {plain} was edited (an instructor's cell: it ran "
                               "as the instructor wrote it)"),
}


@pytest.fixture(scope="module")
def course(tmp_path_factory, sandbox):
    course = make_tiny_course(tmp_path_factory.mktemp("hidden"))
    for student, (answers, *_) in STUDENTS.items():
        notebook = answered(course, {k: v for k, v in answers.items() if k not in (ADDED, EDITED)})
        if EDITED in answers:
            plain_cell(notebook).source = answers[EDITED]
        if ADDED in answers:
            first_answer = next(n for n, cell in enumerate(notebook.cells)
                                if cell.metadata.get("nbgrader", {}).get("solution"))
            notebook.cells.insert(first_answer + 1, nbformat.v4.new_code_cell(answers[ADDED]))
        hand_in(course, student, {f"{ASSIGNMENT}.ipynb": notebook})
    summary = autograde(course, workers=2, limits=LIMITS, progress=False)
    assert len(summary.graded) == len(STUDENTS), summary
    return course


def plain_cell(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The notebook's code cell that nbgrader does not mark (the instructor's)."""
    [cell] = [cell for cell in notebook.cells
              if cell.cell_type == "code" and "nbgrader" not in cell.metadata]
    return cell


@pytest.mark.parametrize("student", sorted(STUDENTS))
def test_a_hidden_failure_scores_0_and_the_ta_reads_why(course, student):
    _, double, square, reason = STUDENTS[student]
    reason = reason.format(plain=plain_cell(released(course)).id)
    with Gradebook(course.gradebook_url) as book:
        notebook = book.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, student)
        scores = {grade.name: grade.score for grade in notebook.grades}
    assert (scores["test_double"], scores["test_square"]) == (double, square), scores
    row = {row.student_id: row for row in grades.grade_rows(course)}[student]
    assert row.reason == reason, row


def test_the_feedback_says_what_the_cell_raised(course):
    notebook = nbformat.read(course.notebook("autograded", "silenced_custom_exc", ASSIGNMENT),
                             as_version=4)
    test = next(cell for cell in notebook.cells
                if cell.metadata.get("nbgrader", {}).get("grade_id") == "test_double")
    [error] = [output for output in test.outputs if output.output_type == "error"]
    assert error.ename == "HiddenFailure"
    assert error.evalue == ("the cell raised AssertionError: double(2) should be 4, but its "
                            "traceback was hidden, so it counts as failed")


def test_the_graded_notebook_holds_the_instructor_s_code_of_an_edited_cell(course):
    notebook = nbformat.read(course.notebook("autograded", "edited_instructor_cell", ASSIGNMENT),
                             as_version=4)
    cell = plain_cell(notebook)
    assert cell.source == PLAIN
    assert [output.ename for output in cell.outputs if output.output_type == "error"] == [
        "CellRestored"]


def test_the_course_runs_nbgrader_s_autograde_steps_with_its_own_execute_and_comparison():
    """When nbgrader changes its list, the course's list must follow: nbgrader's steps with
    the course's Execute, and the comparison outside the kernel before the output is
    limited and the scores saved."""
    config = PyFileConfigLoader("nbgrader_config.py", str(REPO / "grading")).load_config()
    course = [import_item(name) for name in config.Autograde.autograde_preprocessors]
    default = [Execute if step is NbgraderExecute else step
               for step in Autograde.autograde_preprocessors.default()]
    assert course.pop(course.index(CompareOutside)) is CompareOutside
    assert course == default
    steps = config.Autograde.autograde_preprocessors
    assert steps.index("grader.scoring.outside.CompareOutside") + 1 == steps.index(
        "nbgrader.preprocessors.LimitOutput")


def test_a_finished_cells_late_outputs_are_waited_for_longer_than_nbgraders_4_s():
    """On a loaded machine a cell's outputs came more than 4 s after its reply, nbgrader
    raised, and the submission went ungraded (04's brute-force cheat, 2026-11-28)."""
    assert NbgraderExecute().iopub_timeout == 4
    assert Execute().iopub_timeout >= 30
