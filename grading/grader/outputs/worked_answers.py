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


def has_tag(cell, tag: str) -> bool:
    """Whether ``cell`` carries the tag ``tag``."""
    return tag in cell.get("metadata", {}).get("tags", [])


def is_worked_answer(cell) -> bool:
    """Whether ``cell`` is a worked answer."""
    return has_tag(cell, TAG)


def check_plain(cell, tag: str = TAG) -> None:
    """A cell the release leaves out (a worked answer, a rubric) is plain prose or code:
    nbgrader must not need it (no answer, test or locked cell), since the release and the
    gradebook leave it out."""
    grade = marks(cell)
    if any(grade.get(kind) for kind in ("solution", "grade", "locked", "task")):
        raise ValueError(f"a cell tagged {tag!r}: expected a plain cell, got nbgrader's cell "
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
            for tag in self.remove_cell_tags:
                if has_tag(cell, tag):
                    check_plain(cell, tag)
        return super().preprocess(nb, resources)


def put_back(notebook: nbformat.NotebookNode, source: nbformat.NotebookNode,
             tag: str = TAG) -> nbformat.NotebookNode:
    """``notebook`` (a student's, from the release of ``source``) with ``source``'s cells
    tagged ``tag`` (its worked answers, or its rubrics) where they stand in ``source``: each
    after the cell that precedes it there.

    Cells are matched by their id, which the release keeps and JupyterLab too; a tagged
    cell whose preceding cells the student deleted follows the nearest one still there
    (at the top when none is).
    """
    present = {cell.get("id") for cell in notebook.cells} - {None}
    after: dict[str | None, list] = {}
    anchor = None
    for cell in source.cells:
        if has_tag(cell, tag):
            after.setdefault(anchor, []).append(copy.deepcopy(cell))
        elif cell.get("id") in present:
            anchor = cell.get("id")
    cells = after.pop(None, [])
    for cell in notebook.cells:
        cells.append(cell)
        cells.extend(after.pop(cell.get("id"), []))
    notebook.cells = cells
    return notebook
