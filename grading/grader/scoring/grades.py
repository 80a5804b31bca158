"""The class's grades: one row per student and assignment, and one per test cell.

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


def _row(student, assignment, status, reason="", flags=(), score="", max_score="") -> dict:
    return {"student_id": student, "assignment": assignment, "score": score,
            "max_score": max_score, "status": status, "reason": reason,
            "flags": "; ".join(flags), "timestamp": "", "seconds_late": ""}


def grade_rows(course: Course) -> list[dict]:
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
                row |= _lateness(course, student, assignment, due)
                if roster is not None and student not in roster:
                    row["reason"] = "; ".join(filter(None, [row["reason"], "not on the roster"]))
                rows.append(row)
    return rows


def _lateness(course, student, assignment, due) -> dict:
    """The ``timestamp`` and ``seconds_late`` of a submission; empty when unknown."""
    submitted = submitted_at(course, student, assignment)
    late = seconds_late(submitted, due)
    return {"timestamp": f"{submitted:%Y-%m-%dT%H:%M:%S}Z" if submitted else "",
            "seconds_late": "" if late is None else late}


def _submission_row(course, book, outcomes, student, assignment) -> dict:
    if not course.folder("submitted", student, assignment).is_dir():
        return _row(student, assignment, Status.MISSING, "nothing submitted")
    outcome = outcomes.get(state.key(student, assignment))
    if outcome is None:
        return _row(student, assignment, Status.NOT_GRADED, "not autograded yet")
    if outcome.status != Status.GRADED:
        return _row(student, assignment, Status.NOT_GRADED, outcome.reason, outcome.flags)
    try:
        submission = book.find_submission(assignment, student)
    except MissingEntry:
        return _row(student, assignment, Status.NOT_GRADED, "not in the gradebook",
                    outcome.flags)
    grades = [grade for notebook in submission.notebooks for grade in notebook.grades]
    waiting = any(grade.needs_manual_grade for grade in grades)
    return _row(student, assignment, Status.NEEDS_MANUAL_GRADING if waiting else Status.GRADED,
                outcome.reason, outcome.flags, score=submission.score,
                max_score=submission.max_score)


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


def write_grades(course: Course, path: Path | None = None, rows: list[dict] | None = None
                 ) -> Path:
    """Write grades.csv (``COLUMNS``): ``rows``, else :func:`grade_rows`."""
    path = path or course.root / "grades.csv"
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(grade_rows(course) if rows is None else rows)
    return path
