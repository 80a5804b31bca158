"""A student's code that nbgrader does not restore: what the similarity step and the flags of
pasted code read.

    student_code(source, notebook)   every such cell of a submitted ``notebook``, in order
    by_answer(source, notebook)      {code answer cell: its code and the cells read with it}

nbgrader's autograde puts the locked and test cells back from the gradebook
(:func:`grader.cells.is_restored`); every other code cell runs as the student left it:

* the answer cells (nbgrader's ``solution`` cells);
* the cells the student added: no nbgrader marks and an id that is not one of the
  instructor's plain code cells (:func:`grader.cells.is_added`, the test the grading's
  ``Execute`` runs them under the plain allowlist by);
* the instructor's plain code cells whose text the student changed (edited).

An added or edited cell is read with the code answer cell nearest before it (the first one
when none is before it): the TA finds it there, and a helper pasted into a cell of its own
is compared with the answer that calls it.
"""

from dataclasses import dataclass

import nbformat

from grader.cells import is_added, is_answer, is_restored, marks, plain_code_ids

ANSWER, ADDED, EDITED = "answer", "added", "edited"


@dataclass(frozen=True)
class Written:
    """One code cell of a submission that runs as the student left it."""

    grade_id: str  # the code answer cell it is read with ("" in a notebook without any)
    source: str
    number: int  # its place among the notebook's cells, from 1
    how: str  # ANSWER, ADDED or EDITED
    after: bool = True  # whether it comes after that answer cell

    @property
    def place(self) -> str:
        """How a flag names it: ``merge_pair``, ``merge_pair (cell #12, added after it)``."""
        if self.how == ANSWER:
            return self.grade_id
        where = f"cell #{self.number}, {self.how} {'after' if self.after else 'before'} it"
        return f"{self.grade_id} ({where})" if self.grade_id else f"#{self.number} ({self.how})"


def _how(cell, plain_ids, original: dict, given: set) -> str | None:
    """ANSWER, ADDED or EDITED for a code cell nbgrader does not restore; None otherwise."""
    if cell.get("cell_type") != "code" or is_restored(cell):
        return None
    if is_answer(cell):
        return ANSWER
    if is_added(cell, plain_ids):
        return ADDED
    text = cell.get("source", "").strip()
    unchanged = text == original[cell.get("id")] if cell.get("id") in original else text in given
    return None if unchanged else EDITED


def student_code(source: nbformat.NotebookNode, notebook: nbformat.NotebookNode) -> list[Written]:
    """The code cells of submitted ``notebook`` that run as the student left it, ``source``
    being the assignment's instructor notebook (see the module)."""
    plain_ids = plain_code_ids(source)
    original = {cell.get("id"): cell.get("source", "").strip() for cell in source.cells
                if cell.get("cell_type") == "code" and cell.get("id")}
    given = set(original.values())
    found = []  # (number, how, grade id of an answer cell, source)
    for number, cell in enumerate(notebook.cells, start=1):
        how = _how(cell, plain_ids, original, given)
        if how is not None:
            grade_id = marks(cell).get("grade_id", "") if how == ANSWER else None
            found.append((number, how, grade_id, cell.get("source", "")))
    answers = [(number, grade_id) for number, how, grade_id, _ in found if how == ANSWER]
    written = []
    for number, how, grade_id, text in found:
        after = True
        if grade_id is None:
            before = [name for place, name in answers if place < number]
            after = bool(before)
            grade_id = before[-1] if before else (answers[0][1] if answers else "")
        written.append(Written(grade_id, text, number, how, after))
    return written


def by_answer(source: nbformat.NotebookNode,
              notebook: nbformat.NotebookNode) -> dict[str, str]:
    """{code answer cell: its code, then that of the cells read with it}, each added or edited
    cell after a comment that names it (``# cell #12, added after merge_pair``)."""
    texts = {}
    for cell in student_code(source, notebook):
        if not cell.grade_id:
            continue
        if cell.how == ANSWER:
            texts[cell.grade_id] = cell.source + texts.get(cell.grade_id, "")
        else:
            side = "after" if cell.after else "before"
            texts[cell.grade_id] = (texts.get(cell.grade_id, "") + f"\n\n# cell #{cell.number}, "
                                    f"{cell.how} {side} {cell.grade_id}\n{cell.source}")
    return texts
