"""Worked answers: instructor-only explanations, out of the release, into late feedback.

A cell of the source (``solutions/``) tagged ``worked-answer`` explains an exercise's
answer: a derivation, a model answer to a written question, a formula or a call that
would answer the exercise if a student read it first. Such a cell is

- left out of the student release (:class:`RemoveWorkedAnswers`, the first step of
  ``GenerateAssignment.preprocessors`` in ``grading/nbgrader_config.py``: nbconvert's
  ``TagRemovePreprocessor``, so nbgrader's own steps never see it);
- shown in the full feedback once the assignment's due date has passed
  (``grader.outputs.feedback.ShowWorkedAnswers``, which puts it back with :func:`put_back`);
- kept in the instructor's decks, which are made from ``solutions/`` as they are.

The instructor puts a worked answer right under its exercise (after the test cell or the
written answer): the feedback shows it at the same place in the student's notebook.
"""

import copy

import nbformat
from nbconvert.preprocessors import TagRemovePreprocessor
from traitlets import Bool, Set, Unicode

from grader.cells import marks

TAG = "worked-answer"


def is_worked_answer(cell) -> bool:
    """Whether ``cell`` carries the mark."""
    return TAG in cell.get("metadata", {}).get("tags", [])


def check_plain(cell) -> None:
    """A worked answer is plain prose or code: nbgrader must not need it (no answer, test or
    locked cell), since the release and the gradebook leave it out."""
    grade = marks(cell)
    if any(grade.get(kind) for kind in ("solution", "grade", "locked", "task")):
        raise ValueError(f"a cell tagged {TAG!r}: expected a plain cell, got nbgrader's cell "
                         f"{grade.get('grade_id')!r}; take the tag or nbgrader's mark away")


class RemoveWorkedAnswers(TagRemovePreprocessor):
    """nbconvert's ``TagRemovePreprocessor`` that removes the cells tagged ``worked-answer``.

    Its own class, so that the tag reaches the release alone: the feedback pages' HTML
    exporter runs nbconvert's ``TagRemovePreprocessor`` too, which must keep them.
    """

    remove_cell_tags = Set(Unicode(), default_value={TAG}).tag(config=True)
    enabled = Bool(True).tag(config=True)  # as nbgrader's steps: it runs where it is listed

    def preprocess(self, nb, resources):
        for cell in nb.cells:
            if is_worked_answer(cell):
                check_plain(cell)
        return super().preprocess(nb, resources)


def put_back(notebook: nbformat.NotebookNode, source: nbformat.NotebookNode
             ) -> nbformat.NotebookNode:
    """``notebook`` (a student's, from the release of ``source``) with ``source``'s worked
    answers where they stand in ``source``: each after the cell that precedes it there.

    Cells are matched by their id, which the release keeps and JupyterLab too; a worked
    answer whose preceding cells the student deleted follows the nearest one still there
    (at the top when none is).
    """
    present = {cell.get("id") for cell in notebook.cells} - {None}
    after: dict[str | None, list] = {}
    anchor = None
    for cell in source.cells:
        if is_worked_answer(cell):
            after.setdefault(anchor, []).append(copy.deepcopy(cell))
        elif cell.get("id") in present:
            anchor = cell.get("id")
    cells = after.pop(None, [])
    for cell in notebook.cells:
        cells.append(cell)
        cells.extend(after.pop(cell.get("id"), []))
    notebook.cells = cells
    return notebook
