"""The course's notebooks as the browser tests find them in the repository."""

import shutil
from pathlib import Path

import nbformat

from tests.conftest import REPO
from tests.support.nbgrader_course import grade_id, solution_cells


def release(assignment: str) -> Path:
    """The student release of ``assignment`` (notebooks/)."""
    return REPO / "notebooks" / assignment / f"{assignment}.ipynb"


def solution(assignment: str) -> Path:
    """The instructor's source of ``assignment`` (solutions/)."""
    return REPO / "solutions" / assignment / f"{assignment}.ipynb"


def copy_into(notebook: Path, folder: Path) -> Path:
    """Copy ``notebook`` to ``folder/<its folder>/<its name>``, as a student downloads it."""
    copy = folder / notebook.parent.name / notebook.name
    copy.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(notebook, copy)
    return copy


def answered_copy(assignment: str, folder: Path) -> Path:
    """Copy the release of ``assignment`` into ``folder`` like ``copy_into``, with the
    instructor's answer typed into every answer cell: a student who has finished."""
    copy = copy_into(release(assignment), folder)
    notebook = nbformat.read(copy, as_version=4)
    answers = solution_cells(assignment)
    for cell in notebook.cells:
        if grade_id(cell) in answers:
            cell.source = answers[grade_id(cell)]
    nbformat.write(notebook, copy)
    return copy
