"""What the TA should look at in a submission, beside its grade: the ``flags`` of grades.csv.

    flags(source, context, submission)   one line per flag, as grades.csv lists them

Four scans, each its own module: lines that tamper with what the tests rely on
(:mod:`grader.integrity.tamper`), answers that import a library twin
(:mod:`grader.integrity.tamper.twins`), answers alike a function of course_utils or the
instructor's answer (:mod:`grader.integrity.similarity.reference`), and numbers worked by hand
for another id or reached through the course's code (:mod:`grader.integrity.own_numbers`).
"""

import nbformat

from grader.cells import is_answer, is_restored, marks
from grader.intake.submissions import Submission
from grader.integrity import own_numbers
from grader.integrity.similarity import reference
from grader.integrity.tamper import ScanContext, imported_twins, scan_cell


def flags(source: nbformat.NotebookNode, context: ScanContext, submission: Submission) -> list[str]:
    """The flags of ``submission``, an assignment whose instructor notebook is ``source``.

    Scanned: the answer cells, and every other code cell nbgrader does not restore from the
    gradebook (cells a student added or edited), in which only what the instructor's own
    version of the cell does not do is flagged.
    """
    original = {cell.get("id"): cell.source for cell in source.cells}
    found = []
    for number, cell in enumerate(submission.notebook.cells, start=1):
        if cell.cell_type != "code" or is_restored(cell):
            continue
        name = marks(cell).get("grade_id") or f"#{number}"  # flagged as "cell #3 line 2: ..."
        new = scan_cell(cell.source, name, context)
        if not is_answer(cell):
            known = {(flag.family, flag.code)
                     for flag in scan_cell(original.get(cell.get("id"), ""), name, context)}
            new = [flag for flag in new if (flag.family, flag.code) not in known]
        found += [str(flag) for flag in new]
        if is_answer(cell):
            found += [f"cell {name} imports {twin}" for twin in imported_twins(cell.source, name)]
    return found + reference.flags(source, submission.notebook) + own_numbers.flags(submission)
