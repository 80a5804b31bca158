"""Feedback pages that show each test's result and message, never the hidden tests' code.

nbgrader's feedback is the autograded notebook as HTML, hidden tests included, and a
failing test's traceback quotes the line that failed. ``grading/nbgrader_config.py``
adds :class:`HideTestCode` to ``GenerateFeedback.preprocessors``, so that every
feedback page (``make feedback`` or Formgrader's button) keeps of a test cell its
visible part and, for an error, its last line (``AssertionError: <the diagnosis>``).
It adds :class:`ShowWorkedAnswers` too: once the due date has passed, a page shows the
source's worked answers (:mod:`grader.outputs.worked_answers`) under their exercises.
"""

from datetime import UTC, datetime
from pathlib import Path

import nbformat
from nbconvert.exporters import HTMLExporter
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import ClearHiddenTests, NbGraderPreprocessor

from grader.cells import errors, is_test
from grader.outputs.worked_answers import put_back

HIDDEN = "# (hidden tests ran here; their code is not shown)"


class HideTestCode(ClearHiddenTests):
    """Remove hidden test regions, and reduce tracebacks of test cells to their message."""

    def preprocess_cell(self, cell, resources, cell_index):
        if not is_test(cell):
            return cell, resources
        if self._remove_hidden_test_region(cell):
            cell.source = cell.source.rstrip("\n") + "\n" + HIDDEN
        for output in errors(cell):
            output.traceback = [f"{output.ename}: {output.evalue}"]
        return cell, resources


class FeedbackExporter(HTMLExporter):
    """nbconvert's HTML exporter, named for the feedback pages alone (nbgrader's
    ``GenerateFeedback.exporter_class``), so that the course's page template is set on them
    and not on Formgrader's grading page, which is an ``HTMLExporter`` too."""


def due_date_passed(db_url: str, assignment: str, now: datetime | None = None) -> bool:
    """Whether ``assignment``'s due date in the gradebook has passed (``now``: UTC, without
    a time zone, as nbgrader keeps dates). No due date: not passed, since the assignment is
    still open and a worked answer would hand the answer to whoever has not submitted yet;
    the instructor shows them by setting one (``make publish DUEDATE=...``)."""
    with Gradebook(db_url) as book:
        try:
            due = book.find_assignment(assignment).duedate
        except MissingEntry:
            return False
    return due is not None and (now or datetime.now(UTC).replace(tzinfo=None)) >= due


class ShowWorkedAnswers(NbGraderPreprocessor):
    """After the due date, put the source's worked answers into the student's notebook at
    their place; before it, or with no due date, leave the notebook as it is.

    The source is ``solutions/<assignment>/<notebook>.ipynb`` (nbgrader's source folder of
    the course whose configuration runs this step).
    """

    def preprocess(self, nb, resources):
        ids = resources["nbgrader"]
        if not due_date_passed(ids["db_url"], ids["assignment"]):
            return nb, resources
        course = CourseDirectory(parent=self)
        folder = course.format_path(course.source_directory, ".", ids["assignment"])
        source = Path(folder) / f"{ids['notebook']}.ipynb"
        if not source.exists():  # a notebook the assignment does not have: nothing to add
            return nb, resources
        return put_back(nb, nbformat.read(source, as_version=4)), resources
