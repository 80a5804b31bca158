"""A throw-away nbgrader course for tests, and the student submissions put into it."""

import html
import re
import shutil
from pathlib import Path

import nbformat

from grader.course import ANSWERS, Course
from grader.running.nbgrader_steps import release
from tests.conftest import REPO

SOLUTION_MARKERS = re.compile(r"^\s*### (BEGIN|END) SOLUTION\s*$", flags=re.M)


def make_course(root: Path, assignments: list[str]) -> Course:
    """A course in ``root`` over these assignments of solutions/, freshly released."""
    (root / "grading").mkdir(parents=True)
    shutil.copy(REPO / "grading" / "nbgrader_config.py", root / "grading")
    (root / "grading" / ANSWERS).symlink_to(REPO / "grading" / ANSWERS)  # make answers's
    (root / "solutions").mkdir()
    for assignment in assignments:
        (root / "solutions" / assignment).symlink_to(REPO / "solutions" / assignment)
    (root / "notebooks").mkdir()
    course = Course(root / "grading")
    failed = release(course)
    assert not failed, f"release failed: {failed}"
    return course


def grade_id(cell) -> str | None:
    return cell.metadata.get("nbgrader", {}).get("grade_id")


def solution_cells(assignment: str) -> dict[str, str]:
    """{answer grade_id: its solution, markers removed} from the instructor source."""
    source = nbformat.read(REPO / "solutions" / assignment / f"{assignment}.ipynb", as_version=4)
    return {
        grade_id(cell): SOLUTION_MARKERS.sub("", cell.source)
        for cell in source.cells
        if cell.metadata.get("nbgrader", {}).get("solution")
    }


def autograded_answers(assignment: str) -> set[str]:
    """Grade ids of the code answer cells (the written answers are graded by hand)."""
    source = nbformat.read(REPO / "solutions" / assignment / f"{assignment}.ipynb", as_version=4)
    return {
        grade_id(cell)
        for cell in source.cells
        if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("solution")
    }


def submit(course: Course, assignment: str, student: str, answers: dict[str, str],
           added: dict[str, str] | None = None, first_cell: str = "") -> None:
    """Put ``student``'s copy of the release, with ``answers`` typed into the answer cells,
    a new code cell after the answer cells ``added`` names ({grade_id: its code}), and
    ``first_cell`` put at the top of the first code cell (an instructor's cell edited)."""
    notebook = nbformat.read(course.release / assignment / f"{assignment}.ipynb", as_version=4)
    cells = []
    for cell in notebook.cells:
        if grade_id(cell) in answers:
            cell.source = answers[grade_id(cell)]
        cells.append(cell)
        if grade_id(cell) in (added or {}):
            cells.append(nbformat.v4.new_code_cell(added[grade_id(cell)]))
    if first_cell:
        first = next(cell for cell in cells if cell.cell_type == "code")
        first.source = first_cell + "\n" + first.source
    notebook.cells = cells
    folder = course.folder("submitted", student, assignment)
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, folder / f"{assignment}.ipynb")


def page_text(path: Path) -> str:
    """An HTML page's text, as a reader sees it (highlighted code splits lines into tags)."""
    return html.unescape(re.sub(r"<[^>]+>", "", path.read_text()))
