"""The notebooks' worked answers (cells tagged ``worked-answer``, grader.outputs.worked_answers):
none reaches the release, each sits under its exercise, and the release runs without them.

How the release and the feedback treat them is tested on a tiny course in
tests/grader/outputs/test_worked_answers.py.
"""

import ast

import nbformat
import pytest

from grader.outputs.rubrics import is_rubric
from grader.outputs.worked_answers import check_plain, is_worked_answer
from tests.conftest import ASSIGNMENTS, REPO



def notebook(folder: str, assignment: str) -> nbformat.NotebookNode:
    return nbformat.read(REPO / folder / assignment / f"{assignment}.ipynb", as_version=4)


def lines(cells) -> set[str]:
    """The lines of ``cells`` worth comparing: stripped, and longer than a word or two."""
    return {line.strip() for cell in cells for line in cell.source.splitlines()
            if len(line.strip()) > 12}


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_no_release_carries_a_worked_answer(assignment):
    source, release = notebook("solutions", assignment), notebook("notebooks", assignment)
    worked = [cell for cell in source.cells if is_worked_answer(cell)]
    others = [cell for cell in source.cells if not is_worked_answer(cell)]
    assert not {cell.id for cell in worked} & {cell.id for cell in release.cells}
    leaked = (lines(worked) - lines(others)) & lines(release.cells)
    assert not leaked, f"{assignment}: the release shows worked-answer lines {leaked}"


def is_exercise(cell) -> bool:
    """A test cell or a written answer: the end of an exercise."""
    return bool(cell.metadata.get("nbgrader", {}).get("grade"))


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_each_worked_answer_is_a_plain_cell_under_its_exercise(assignment):
    cells = notebook("solutions", assignment).cells
    for index, cell in enumerate(cells):
        if not is_worked_answer(cell):
            continue
        check_plain(cell)
        before = next(c for c in reversed(cells[:index])
                      if not is_worked_answer(c) and not is_rubric(c))
        assert is_exercise(before), (
            f"{assignment} cell {index} ({cell.source[:40]!r}): a worked answer follows its "
            f"exercise's test cell or written answer, not {before.source[:40]!r}")


def names(cell, context) -> set[str]:
    """The names a code cell binds (``ast.Store``, definitions, imports) or reads (``Load``)."""
    found = set()
    for node in ast.walk(ast.parse(cell.source)):
        if isinstance(node, ast.Name) and isinstance(node.ctx, context):
            found.add(node.id)
        elif context is ast.Store and isinstance(node, ast.FunctionDef | ast.ClassDef):
            found.add(node.name)
        elif context is ast.Store and isinstance(node, ast.Import | ast.ImportFrom):
            found |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    return found


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_the_release_needs_nothing_only_a_worked_answer_defines(assignment):
    code = [cell for cell in notebook("solutions", assignment).cells
            if cell.cell_type == "code" and not cell.source.lstrip().startswith(("%", "!"))]
    kept = [cell for cell in code if not is_worked_answer(cell)]
    only_worked = (set().union(*(names(c, ast.Store) for c in code if is_worked_answer(c)))
                   - set().union(*(names(c, ast.Store) for c in kept)))
    for cell in kept:
        needed = names(cell, ast.Load) & only_worked
        assert not needed, f"{assignment}: {cell.source[:60]!r} reads {needed}, which only a " \
                           "worked answer (left out of the release) defines"
