"""The hidden comparison, in the grader's process: a test cell scores only when every value
it checked is the instructor's answer.

While nbgrader grades, each ``check_...`` a test cell calls shows the answer it checks as
plain data (``course_utils.checks.guards.report``). :class:`CompareOutside` runs right after
the kernel is done (the second of autograde's preprocessors, ``grading/nbgrader_config.py``):
it takes those outputs out of every cell, and compares those of each test cell, one by one
and in order, with the answers ``make answers`` stored from the instructor's solution
(:mod:`grader.scoring.answers`), which no kernel ever holds. Where they differ, where a value
is missing or one too many came, the cell gets an ``error`` output (``OutsideCheck``), so
that nbgrader's ``SaveAutoGrades`` scores it 0, the feedback says why, and the TA's incidents
name it. A cell that already failed in the kernel keeps its own message.

So nothing a notebook does in its kernel (a check edited, replaced or silenced, a guard
switched off) makes a wrong value score: it can only make a right one, which the guards
there (best effort) flag when the library computed it.

A stored entry is ``{"value": <encoded>}``, or ``{"per_student": true}`` for a value that
depends on the student's id (04's sentence): the grader compares those with the answer it
works out for that student (:data:`PER_STUDENT`) where it has one, and otherwise leaves
them to the kernel's verdict; or ``{"judged": true}`` for a value that many answers get right
(04's slips of a given function): the grader's judge of that test cell decides
(:data:`JUDGED`). How values compare (tolerance, order) is the exercise's
record's ``compare`` (``course_utils.exercises``).
"""

import json
from collections.abc import Callable
from pathlib import Path

from nbformat import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Bool, Unicode

from course_utils.checks.guards.report import MIME
from course_utils.exercises import rule_of
from grader.cells import OUTSIDE, errors, is_test, marks
from grader.scoring.by_hand_answers import PER_STUDENT as BY_HAND
from grader.scoring.given_slips import JUDGED as GIVEN_SLIPS
from grader.scoring.same_value import same

__all__ = ["JUDGED", "OUTSIDE", "PER_STUDENT", "REPORTED", "CompareOutside", "stored_answers",
           "take_reports"]

REPORTED = "reported"  # the cell metadata where ``record`` keeps a test cell's values
# {grade id of a test cell: function(student id, index of the value) -> expected encoded
# value, or None where the grader cannot work it out}
PER_STUDENT: dict[str, Callable[[str, int], object]] = {**BY_HAND}
# {grade id of a test cell: function(the reported value, its index) -> whether it is right}
JUDGED: dict[str, Callable[[object, int], bool]] = {**GIVEN_SLIPS}


class CompareOutside(NbGraderPreprocessor):
    """Decide each test cell on the values it reported, against the stored answers."""

    answers_directory = Unicode("", help=(
        "The folder of the stored answers, <assignment>/<notebook>.json (make answers). A "
        "notebook without a file there is graded by the kernel's verdict alone, unless one of "
        "its test cells reports values: then those cells fail (no answer to compare with).")
    ).tag(config=True)
    record = Bool(False, help=(
        "Keep each test cell's values in its metadata instead of comparing them: make "
        "answers grades the instructor's solution so (grader.scoring.answers).")
    ).tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: dict):
        about = resources.get("nbgrader", {})
        stored = stored_answers(Path(self.answers_directory), about.get("assignment", ""),
                                about.get("notebook", ""))
        for cell in nb.cells:
            reported = take_reports(cell)
            if self.record and is_test(cell):
                cell.metadata[REPORTED] = reported
            elif is_test(cell) and not errors(cell):
                problem = verdict(marks(cell).get("grade_id", ""), reported, stored,
                                  about.get("student", ""))
                if problem:
                    cell.outputs.append(NotebookNode(
                        output_type="error", ename=OUTSIDE, evalue=problem,
                        traceback=[f"{OUTSIDE}: {problem}"]))
        return nb, resources


def stored_answers(folder: Path, assignment: str, notebook: str) -> dict | None:
    """{grade id: [stored entry, ...]} of a notebook, or None when none were stored."""
    path = folder / assignment / f"{notebook}.json"
    if not folder.parts or not path.is_file():
        return None
    return json.loads(path.read_text())["tests"]


def take_reports(cell: NotebookNode) -> list:
    """The values the cell reported (its outputs of type ``MIME``), taken out of it."""
    if cell.get("cell_type") != "code":
        return []
    kept, reported = [], []
    for output in cell.get("outputs", []):
        data = output.get("data", {}) if output.get("output_type") == "display_data" else {}
        if MIME in data:
            reported.append(data[MIME].get("value") if isinstance(data[MIME], dict) else None)
        else:
            kept.append(output)
    cell.outputs = kept
    return reported


def verdict(grade_id: str, reported: list, stored: dict | None, student: str) -> str:
    """Why the cell fails on the comparison outside, or "" when every value is right."""
    if stored is None:
        return "" if not reported else (
            "this cell checked values, but the course has no stored answers for this "
            "notebook to compare them with (the instructor runs make answers)")
    rule = rule_of(grade_id.removeprefix("test_"))
    expected = stored.get(grade_id, [])
    if len(reported) < len(expected):
        return (f"the cell stopped after {len(reported)} of its {len(expected)} checks: "
                "every check must see your function's result")
    if len(reported) > len(expected):
        return (f"{len(reported)} values were checked where the test checks {len(expected)}: "
                "something else reported values while the test ran")
    for index, (got, entry) in enumerate(zip(reported, expected, strict=True)):
        want = entry.get("value")
        if entry.get("judged"):
            judge = JUDGED.get(grade_id)
            if judge is None or not judge(got, index):
                return (f"check {index + 1} of {len(expected)} got a value that is not right "
                        "(judged outside your notebook, by the grader)")
            continue
        if entry.get("per_student"):
            answer = PER_STUDENT.get(grade_id)
            want = answer(student, index) if answer else None
            if want is None:
                continue
        if not same(got, want, rule):
            return (f"check {index + 1} of {len(expected)} got a value that differs from the "
                    "expected answer (compared outside your notebook, by the grader)")
    return ""
