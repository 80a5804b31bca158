"""Worked answers: out of the release, in the full feedback after the due date only, under
their exercise (grader.outputs.worked_answers, grader.outputs.feedback.ShowWorkedAnswers).

``tiny`` (tests/grader/tiny_course.py) with a worked answer under exercise ``double``'s
test and one under the written answer; the notebooks' own worked answers are
checked against their releases in tests/notebooks/test_worked_answers.py.
"""

from datetime import UTC, datetime, timedelta

import nbformat
import pytest
from nbconvert.preprocessors import TagRemovePreprocessor
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook
from nbgrader.api import Gradebook
from nbgrader.converters import GenerateAssignment
from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader
from traitlets.utils.importstring import import_item

from grader.outputs.feedback import ShowWorkedAnswers, due_date_passed
from grader.outputs.rubrics import RemoveRubrics
from grader.outputs.worked_answers import RemoveWorkedAnswers, put_back
from grader.running import nbgrader_steps
from grader.scoring.autograde import autograde
from tests.conftest import REPO
from tests.grader.tiny_course import (
    ASSIGNMENT,
    LIMITS,
    RUBRIC,
    WORKED,
    answered,
    hand_in,
    make_tiny_course,
    worked_cell,
)
from tests.support.nbgrader_course import page_text

# --- where a worked answer goes back -------------------------------------------------------


def cells(*names: str) -> list:
    """Plain cells whose ids are ``names``; a name starting with "w" is a worked answer."""
    return [worked_cell(name) if name.startswith("w") else new_markdown_cell(name)
            for name in names]


def with_ids(notebook_cells: list, names: tuple[str, ...]) -> list:
    for cell, name in zip(notebook_cells, names, strict=True):
        cell.id = name
    return notebook_cells


def ids(notebook) -> list[str]:
    return [cell.id for cell in notebook.cells]


SOURCE = ("a", "w1", "b", "c", "w2", "w3", "d")


@pytest.mark.parametrize(("student", "expected"), [
    (("a", "b", "c", "d"), ["a", "w1", "b", "c", "w2", "w3", "d"]),  # as in the source
    (("a", "b", "new", "c", "d"), ["a", "w1", "b", "new", "c", "w2", "w3", "d"]),
    (("a", "b", "d"), ["a", "w1", "b", "w2", "w3", "d"]),  # c deleted: after b
    (("b", "d"), ["w1", "b", "w2", "w3", "d"]),  # nothing before w1 left: at the top
    (("d", "c", "b"), ["w1", "d", "c", "w2", "w3", "b"]),  # cells moved: still after c
])
def test_a_worked_answer_follows_the_cell_it_follows_in_the_source(student, expected):
    source = new_notebook(cells=with_ids(cells(*SOURCE), SOURCE))
    notebook = new_notebook(cells=with_ids(cells(*student), student))
    assert ids(put_back(notebook, source)) == expected


def test_a_worked_answer_is_a_plain_cell():
    answer = new_code_cell("x = 1", metadata={"tags": ["worked-answer"], "nbgrader": {
        "grade_id": "x", "solution": True, "grade": False, "locked": False}})
    with pytest.raises(ValueError, match="expected a plain cell, got nbgrader's cell 'x'"):
        RemoveWorkedAnswers().preprocess(new_notebook(cells=[answer]), {})


def test_the_release_runs_nbgrader_s_own_steps_after_leaving_worked_answers_out():
    """When nbgrader changes its list, the course's list must follow."""
    config = PyFileConfigLoader("nbgrader_config.py", str(REPO / "grading")).load_config()
    course = [import_item(name) for name in config.GenerateAssignment.preprocessors]
    assert course == [RemoveWorkedAnswers, RemoveRubrics,
                      *GenerateAssignment.preprocessors.default()]
    assert issubclass(RemoveWorkedAnswers, TagRemovePreprocessor)
    assert "TagRemovePreprocessor" not in config  # HTML pages keep the tagged cells


def test_the_due_date_decides_and_a_notebook_without_source_is_left_as_it_is(tmp_path):
    db_url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    due = datetime(2026, 6, 1, 17)
    with Gradebook(db_url) as book:
        book.update_or_create_assignment("a", duedate=due)
        book.update_or_create_assignment("open")
    assert not due_date_passed(db_url, "a", due - timedelta(seconds=1))
    assert due_date_passed(db_url, "a", due)
    assert not due_date_passed(db_url, "open", due) and not due_date_passed(db_url, "gone")
    config = Config()
    config.CourseDirectory.root = str(tmp_path)
    (tmp_path / "source" / "a").mkdir(parents=True)
    notebook = new_notebook(cells=with_ids(cells("x"), ("x",)))
    resources = {"nbgrader": {"db_url": db_url, "assignment": "a", "notebook": "extra"}}
    shown, _ = ShowWorkedAnswers(config=config).preprocess(notebook, resources)
    assert ids(shown) == ["x"]


# --- the tiny course: release, then feedback before and after the due date -----------------

@pytest.fixture(scope="module")
def course(tmp_path_factory, sandbox):
    """``tiny`` with worked answers, released, and ada's submission autograded."""
    course = make_tiny_course(tmp_path_factory.mktemp("worked"), worked=True)
    hand_in(course, "ada", {f"{ASSIGNMENT}.ipynb": answered(course, {})})
    summary = autograde(course, workers=1, limits=LIMITS, progress=False)
    assert summary.graded == [f"ada/{ASSIGNMENT}"], summary
    return course


@pytest.mark.notebook
def test_the_release_holds_no_worked_answer_and_nbgrader_s_steps_ran(course):
    release = nbformat.read(course.release / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    text = nbformat.writes(release)
    for worked in [*WORKED.values(), RUBRIC]:
        assert worked.splitlines()[-1] not in text
    assert "### BEGIN SOLUTION" not in text and "raise NotImplementedError()" in text
    assert "secret check" not in text and "=== BEGIN MARK SCHEME" not in text
    assert all(cell.metadata.get("nbgrader", {}).get("checksum") for cell in release.cells
               if cell.metadata.get("nbgrader", {}).get("grade"))
    with Gradebook(course.gradebook_url) as book:  # SaveCells ran: the tests are recorded
        notebook = book.find_notebook(ASSIGNMENT, ASSIGNMENT)
        assert {cell.name for cell in notebook.grade_cells} == {
            "test_double", "test_square", "written"}
    assert len(release.cells) == 8  # the source's 11, less the 2 worked answers and the rubric


def feedback_with_due_date(course, due: datetime | None) -> str:
    """ada's feedback page, written with ``due`` as the assignment's due date."""
    with Gradebook(course.gradebook_url) as book:
        book.update_or_create_assignment(ASSIGNMENT, duedate=due)
    assert not nbgrader_steps.feedback(course, [ASSIGNMENT])
    return page_text(course.folder("feedback", "ada", ASSIGNMENT) / f"{ASSIGNMENT}.html")


NOW = datetime.now(UTC).replace(tzinfo=None)


@pytest.mark.notebook
@pytest.mark.parametrize("due", [None, NOW + timedelta(days=7)], ids=["no due date", "before"])
def test_feedback_before_the_due_date_shows_no_worked_answer(course, due):
    page = feedback_with_due_date(course, due)
    assert "double(2) should be 4" in page or "assert double(2) == 4" in page  # the page
    for worked in [*WORKED.values(), RUBRIC]:
        assert worked.splitlines()[-1] not in page


@pytest.mark.notebook
def test_feedback_after_the_due_date_shows_each_worked_answer_under_its_exercise(course):
    page = feedback_with_due_date(course, NOW - timedelta(minutes=1))
    double_test, square = page.index("assert double(2) == 4"), page.index("def square(x)")
    assert double_test < page.index(WORKED["test_double"]) < square
    assert page.index("Because doubling is adding") < page.index(WORKED["written"])
    label = "Worked answer (shown after the due date)"
    assert page.count(label) == 2 and page.index(label) < page.index(WORKED["test_double"])
    assert RUBRIC.splitlines()[-1] not in page  # a rubric is for the course staff alone
