"""The class's grades: one :class:`GradeRow` per student and assignment (what grades.csv, the
LMS files and the class report read), and one row per test cell.

Status of a row (:class:`grader.state.Status`):

- ``graded``: every point is in; ``score`` is the total.
- ``needs manual grading``: autograded, but a written answer waits for a TA in
  Formgrader; ``score`` counts the points given so far, not a 0 for the written answer.
- ``not graded``: nbgrader could not grade it; ``reason`` says why.
- ``missing``: a student of the roster who submitted nothing.

``reason`` also names cells that timed out or ran out of memory, notebooks saved under
another name and students who are not on the roster; ``flags`` lists the answer lines a
TA should look at (tampering, library twins). ``timestamp`` is when a submission was
submitted (UTC: the exchange's time, or the LMS zip's), and ``seconds_late`` how long after the
assignment's due date (0 on time; empty without a due date or a timestamp).
"""

import csv
from dataclasses import dataclass, replace
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook, MissingEntry

from grader import gradebook, state
from grader.cells import test_cell_results
from grader.course import Course
from grader.intake.submissions import seconds_late, submitted_at
from grader.state import Status

COLUMNS = ["student_id", "assignment", "score", "max_score", "status", "reason", "flags",
           "timestamp", "seconds_late"]
FLAG_SEPARATOR = "; "


@dataclass(frozen=True)
class GradeRow:
    """One student's result on one assignment, as every output reads it (a row of grades.csv).

    ``score`` and ``max_score`` are None where there is no score (not graded, missing);
    ``timestamp`` is when it was submitted (UTC, ``2026-06-01T17:00:00Z``; "" unknown);
    ``seconds_late`` is None without a due date or a timestamp.
    """

    student_id: str
    assignment: str
    status: Status
    reason: str = ""
    flags: tuple[str, ...] = ()
    score: float | None = None
    max_score: float | None = None
    timestamp: str = ""
    seconds_late: int | None = None

    def __post_init__(self):
        if not isinstance(self.status, Status):
            raise TypeError(f"status must be a Status, got {self.status!r}")
        if self.status == Status.GRADED and (self.score is None or not self.max_score):
            raise ValueError(f"{self.student_id}/{self.assignment} is graded but has score "
                             f"{self.score!r} of max_score {self.max_score!r}; expected "
                             "numbers, max > 0")

    def csv_fields(self) -> dict:
        """The row as grades.csv writes it (``COLUMNS``): "" for what is unknown."""
        return {"student_id": self.student_id, "assignment": self.assignment,
                "score": "" if self.score is None else self.score,
                "max_score": "" if self.max_score is None else self.max_score,
                "status": self.status.value, "reason": self.reason,
                "flags": FLAG_SEPARATOR.join(self.flags), "timestamp": self.timestamp,
                "seconds_late": "" if self.seconds_late is None else self.seconds_late}


def grade_rows(course: Course) -> list[GradeRow]:
    """One row per (student, assignment) of the roster and of everyone who submitted."""
    roster = course.roster()
    submitters = course.students()
    students = sorted(set(roster or []) | set(submitters))
    assignments = [a for a in course.assignments() if course.submissions(a)]
    outcomes = state.load(course)
    rows = []
    with Gradebook(course.gradebook_url) as book:
        for assignment in assignments:
            due = gradebook.duedate(course, assignment)
            for student in students:
                row = _submission_row(course, book, outcomes, student, assignment)
                submitted = submitted_at(course, student, assignment)
                reason = row.reason
                if roster is not None and student not in roster:
                    reason = "; ".join(filter(None, [reason, "not on the roster"]))
                rows.append(replace(
                    row, reason=reason, seconds_late=seconds_late(submitted, due),
                    timestamp=f"{submitted:%Y-%m-%dT%H:%M:%S}Z" if submitted else ""))
    return rows


def _submission_row(course, book, outcomes, student, assignment) -> GradeRow:
    if not course.folder("submitted", student, assignment).is_dir():
        return GradeRow(student, assignment, Status.MISSING, "nothing submitted")
    outcome = outcomes.get(state.key(student, assignment))
    if outcome is None:
        return GradeRow(student, assignment, Status.NOT_GRADED, "not autograded yet")
    flags = tuple(outcome.flags)
    if outcome.status != Status.GRADED:
        return GradeRow(student, assignment, Status.NOT_GRADED, outcome.reason, flags)
    try:
        submission = book.find_submission(assignment, student)
    except MissingEntry:
        return GradeRow(student, assignment, Status.NOT_GRADED, "not in the gradebook", flags)
    grades = [grade for notebook in submission.notebooks for grade in notebook.grades]
    waiting = any(grade.needs_manual_grade for grade in grades)
    return GradeRow(student, assignment,
                    Status.NEEDS_MANUAL_GRADING if waiting else Status.GRADED,
                    outcome.reason, flags, score=float(submission.score),
                    max_score=float(submission.max_score))


def cell_rows(course: Course) -> list[dict]:
    """One row per test cell of every graded submission: its score and its message."""
    rows = []
    outcomes = state.load(course)
    with Gradebook(course.gradebook_url) as book:
        for name, outcome in sorted(outcomes.items()):
            if outcome.status != Status.GRADED:
                continue
            student, assignment = state.split_key(name)
            path = course.notebook("autograded", student, assignment)
            try:
                notebook = book.find_submission_notebook(assignment, assignment, student)
            except MissingEntry:
                continue
            messages = test_cell_results(nbformat.read(path, as_version=4))
            for grade in notebook.grades:
                if grade.name in messages:
                    rows.append({"student_id": student, "assignment": assignment,
                                 "cell": grade.name, "score": grade.score,
                                 "max_score": grade.max_score, "message": messages[grade.name]})
    return rows


def write_grades(course: Course, path: Path | None = None,
                 rows: list[GradeRow] | None = None) -> Path:
    """Write grades.csv (``COLUMNS``): ``rows``, else :func:`grade_rows`."""
    path = path or course.root / "grades.csv"
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(row.csv_fields() for row in (grade_rows(course) if rows is None else rows))
    return path
