"""The TA's gradebook: what a grading job needs from it, what it brings back, and what the
course's other steps read in it (an assignment's tests, its due date).

    knows(course, a)          whether the tests of ``a`` are recorded
    record_tests(course, a)   record them (as ``make release`` does)
    duedate(course, a)        the due date of ``make publish``, or None
    snapshot(course, a)       a copy holding ``a`` alone, for a grading job
    record(course, result)    a graded result in; ``forget`` a submission out

Only the process that runs the grading writes the gradebook, one result at a time,
through nbgrader's own API, so that parallel jobs can never corrupt it.
"""

import shutil
import sqlite3
import tempfile
import warnings
from datetime import datetime
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry
from sqlalchemy.exc import SAWarning

from grader.course import SECRET, TIMESTAMP, Course
from grader.running import nbgrader_steps
from grader.running.worker import Result

# What nbgrader's exchange writes beside a submission: its time, and the secret that names
# its feedback page in the exchange (release_feedback).
EXCHANGE_FILES = (TIMESTAMP, SECRET)


def knows(course: Course, assignment: str) -> bool:
    """Whether ``make release`` has recorded ``assignment`` (its tests) in the gradebook."""
    if not course.gradebook_path.exists():
        return False
    with Gradebook(course.gradebook_url) as book:
        try:
            book.find_assignment(assignment)
        except MissingEntry:
            return False
    return True


def record_tests(course: Course, assignment: str) -> None:
    """Put ``assignment``'s cells and tests in the gradebook (as ``make release`` does),
    releasing into a scratch folder so that the committed release stays as it is."""
    with tempfile.TemporaryDirectory() as scratch:
        failed = nbgrader_steps.release(course, [assignment], release_dir=Path(scratch))
    if failed:
        raise RuntimeError(f"cannot record the tests of {assignment}:\n{failed[assignment]}")


def duedate(course: Course, assignment: str) -> datetime | None:
    """The due date the gradebook holds for ``assignment`` (UTC), or None."""
    if not course.gradebook_path.exists():
        return None
    with Gradebook(course.gradebook_url) as book:
        try:
            return book.find_assignment(assignment).duedate
        except MissingEntry:
            return None


def snapshot(course: Course, assignment: str) -> bytes:
    """A copy of the gradebook that holds ``assignment`` alone: no student, no submission.

    A grading job carries it (to a Dask worker too), so it must not carry the class.
    """
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / "gradebook.db"
        with sqlite3.connect(course.gradebook_path) as source, sqlite3.connect(copy) as target:
            source.backup(target)  # a consistent copy even while another process reads it
        with Gradebook(f"sqlite:///{copy}") as book:
            for other in book.assignments:
                if other.name != assignment:
                    book.remove_assignment(other.name)
            for student in book.students:
                for submission in list(student.submissions):
                    book.remove_submission(submission.assignment.name, student.id)
                book.remove_student(student.id)
        with sqlite3.connect(copy) as database:
            database.execute("VACUUM")
        return copy.read_bytes()


def record(course: Course, result: Result) -> None:
    """Save a graded ``result`` in the gradebook and its notebooks in ``autograded/``."""
    timestamp = datetime.fromisoformat(result.timestamp) if result.timestamp else None
    with Gradebook(course.gradebook_url) as book, warnings.catch_warnings():
        # nbgrader's own autograde warns so too when it creates a submission
        warnings.filterwarnings("ignore", "Object of type", category=SAWarning)
        book.update_or_create_student(result.student)
        extra = {"timestamp": timestamp} if timestamp else {}
        submission = book.update_or_create_submission(result.assignment, result.student, **extra)
        for notebook in submission.notebooks:
            scores = result.scores.get(notebook.name, {})
            for grade in notebook.grades:
                if grade.name in scores:
                    grade.auto_score = scores[grade.name].auto_score
                    grade.needs_manual_grade = scores[grade.name].needs_manual_grade
            comments = result.comments.get(notebook.name, {})
            for comment in notebook.comments:
                comment.auto_comment = comments.get(comment.name, comment.auto_comment)
        book.db.commit()
    folder = course.folder("autograded", result.student, result.assignment)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for name, text in result.notebooks.items():
        (folder / name).write_text(text)
    submitted = course.folder("submitted", result.student, result.assignment)
    for name in EXCHANGE_FILES:  # kept as nbgrader's autograde keeps them, for the feedback
        if (submitted / name).is_file():
            shutil.copy(submitted / name, folder / name)


def forget(course: Course, assignment: str, student: str) -> None:
    """Remove a submission's grades and autograded notebooks (it could not be graded)."""
    shutil.rmtree(course.folder("autograded", student, assignment), ignore_errors=True)
    with Gradebook(course.gradebook_url) as book:
        try:
            book.remove_submission(assignment, student)
        except MissingEntry:
            pass
