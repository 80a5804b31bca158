"""What a student sees of a submission graded on arrival, before and after the due date.

The instructor chooses what the early feedback shows, for the course and per assignment,
in ``grading/nbgrader_config.py``::

    c.GradeOnSubmit.early_feedback = "visible"          # or "all", "none"
    c.GradeOnSubmit.early_feedback_by_assignment = {"08_random_features": "none"}

(``early_feedback`` defaults to the environment's ``COURSE_EARLY_FEEDBACK``, else
``visible``):

- ``visible``: each test cell's visible tests, their result and message, and the points
  of the cells whose result they decide; whatever the hidden tests decide is "after the
  due date". The page is written here (:func:`early_page`), from the autograded notebook;
- ``all``: the full feedback at once, nbgrader's page as ``make feedback`` writes it;
- ``none``: a page that says the submission was received, and when the results come.

After the due date, the full page replaces the early one (:func:`full_page_banner` says
which of the two a page is).

A test cell holds its visible tests, then ``### BEGIN HIDDEN TESTS``; Python runs it top
to bottom, so where it failed tells which part failed: the last line of the cell in its
traceback (``Cell In[12], line 3``). Before the hidden region, the visible tests failed,
with their message; in it, the visible tests passed, and the hidden ones' result waits
for the due date; so is a cell that fails only on the grader's comparison of the values its
hidden tests reported (``OutsideCheck``, :mod:`grader.scoring.outside`: the visible tests
report none). A cell that fails without saying where (its traceback hidden, a time
limit, output on stderr) is "after the due date" as a whole, and so is the score of every
cell with hidden tests that the visible tests do not decide.
"""

import os
import re
from dataclasses import dataclass
from datetime import datetime

import jinja2
import nbformat
from nbgrader.preprocessors import ClearHiddenTests

from grader.cells import OUTSIDE, errors, marks
from grader.course import Course

MODES = ("visible", "all", "none")
DEFAULT_MODE = "visible"
ANSI = re.compile(r"\x1b\[[0-9;]*m")
CELL_LINE = re.compile(r"^(Cell In\[\d+\]), line (\d+)")


def early_feedback_mode(course: Course, assignment: str) -> str:
    """``visible``, ``all`` or ``none``: what ``assignment``'s early feedback shows."""
    settings = course.config.GradeOnSubmit
    mode = settings.get("early_feedback_by_assignment", {}).get(assignment) or settings.get(
        "early_feedback", os.environ.get("COURSE_EARLY_FEEDBACK") or DEFAULT_MODE)
    if mode not in MODES:
        raise ValueError(f"early feedback of {assignment}: expected one of {', '.join(MODES)} "
                         f"(GradeOnSubmit in nbgrader_config.py, COURSE_EARLY_FEEDBACK), "
                         f"got {mode!r}")
    return mode


@dataclass
class CellResult:
    """One graded cell as the early page shows it; ``score`` None: not shown yet."""

    name: str
    points: float
    result: str  # "passed", "failed", "visible tests passed", "visible tests failed", ...
    score: float | None = None
    message: str = ""

    @property
    def shown_score(self) -> str:
        """'2 / 3', or '? / 3' while the score is not shown."""
        return f"{'?' if self.score is None else f'{self.score:g}'} / {self.points:g}"


def hidden_from(source: str) -> int | None:
    """The line (counted from 1) of the cell's ``BEGIN HIDDEN TESTS``, None without one."""
    begin = ClearHiddenTests().begin_test_delimeter
    for number, line in enumerate(source.splitlines(), start=1):
        if begin in line:
            return number
    return None


def failed_at(error) -> int | None:
    """The line of the cell where it raised ``error`` (an error output), if the traceback
    says so: its first frame is the cell's own, and the last frame of that cell is where it
    failed (a test cell runs its checks in a function it defines, ``def _():``)."""
    frames = [found.groups() for entry in error.get("traceback", [])
              if (found := CELL_LINE.match(ANSI.sub("", entry)))]
    if not frames:
        return None
    cell = frames[0][0]
    return int([line for name, line in frames if name == cell][-1])


def message(error) -> str:
    """An error output's last line, as the full feedback shows it."""
    return f"{error.ename}: {error.evalue}"


def cell_results(notebook: nbformat.NotebookNode, scores: dict[str, tuple[float, float, bool]]
                 ) -> list[CellResult]:
    """The early page's view of each graded cell of an autograded notebook, given
    ``scores`` {grade id: (score, points, needs manual grade)} from the gradebook."""
    results = []
    for cell in notebook.cells:
        grade = marks(cell)
        if not grade.get("grade") or grade.get("grade_id") not in scores:
            continue
        score, points, manual = scores[grade["grade_id"]]
        if manual:
            results.append(CellResult(grade["grade_id"], points, "graded by the course staff"))
            continue
        results.append(_test_result(grade["grade_id"], cell.source, score, points,
                                    errors(cell)))
    return results


def _test_result(name, source, score, points, errors) -> CellResult:
    hidden = hidden_from(source)
    full = score >= points
    if hidden is None:
        return CellResult(name, points, "passed" if full else "failed", score,
                          message(errors[0]) if errors else "")
    line = failed_at(errors[0]) if errors else None
    if errors and errors[0].get("ename") == OUTSIDE:  # the hidden tests' values, compared
        line = hidden
    if not full and line is not None and line < hidden:
        return CellResult(name, points, "visible tests failed", score, message(errors[0]))
    if full or line is not None:
        return CellResult(name, points, "visible tests passed; hidden tests after the due date")
    return CellResult(name, points, "after the due date")


def when(due: datetime | None) -> str:
    return f"after the due date, {due:%Y-%m-%d %H:%M} UTC" if due else \
        "after the due date (your instructor has not set one yet)"


ENVIRONMENT = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
PAGE = ENVIRONMENT.from_string("""<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>{{ notebook }}: early feedback</title>
<style>
body { font-family: sans-serif; max-width: 60em; margin: 1em auto; padding: 0 1em; }
.kind { border: 2px solid #8a6d3b; background: #fcf8e3; padding: 0.5em 1em; }
table { border-collapse: collapse; width: 100%; }
th, td { border: 1px solid #999; padding: 0.3em 0.6em; text-align: left; vertical-align: top; }
pre { white-space: pre-wrap; margin: 0; }
</style></head>
<body>
<h1>{{ notebook }}</h1>
<div class="kind" role="note">
<p><strong>Early feedback</strong> on {{ student }}'s submission of
{{ submitted }} UTC{{ shown }}.</p>
<p>The full feedback, every test's result and your score, replaces this page
{{ arrives }}: press <em>Fetch Feedback</em> again then.</p>
</div>
{% if cells %}
<p>Points so far: {{ known }} of the {{ counted }} these results decide
({{ total }} in all).</p>
<table>
<thead><tr><th scope="col">Cell</th><th scope="col">Result</th><th scope="col">Score</th>
<th scope="col">Message</th></tr></thead>
<tbody>
{% for cell in cells %}<tr><td>{{ cell.name }}</td><td>{{ cell.result }}</td>
<td>{{ cell.shown_score }}</td>
<td><pre>{{ cell.message }}</pre></td></tr>
{% endfor %}</tbody>
</table>
{% endif %}
</body>
</html>
""")


def early_page(notebook: str, student: str, submitted: datetime | None, due: datetime | None,
               cells: list[CellResult], graded: bool = True) -> str:
    """The early feedback page; ``cells`` empty: the results wait for the due date
    (``graded`` False: it could not be graded automatically)."""
    if not graded:
        shown = ": it could not be graded automatically, the course staff will look at it"
    elif cells:
        shown = ": the visible tests' results; the hidden tests' wait"
    else:
        shown = ": it was received and graded; your instructor shows the results later"
    known = [cell for cell in cells if cell.score is not None]
    return PAGE.render(
        notebook=notebook, student=student, cells=cells,
        submitted=f"{submitted:%Y-%m-%d %H:%M:%S}" if submitted else "(unknown time)",
        shown=shown,
        arrives=when(due), known=f"{sum(c.score for c in known):g}",
        counted=f"{sum(c.points for c in known):g}", total=f"{sum(c.points for c in cells):g}")


def full_page_banner(submitted: datetime | None) -> str:
    """What the top of a full page says: that it is the full feedback, and on what."""
    time = f"{submitted:%Y-%m-%d %H:%M:%S} UTC" if submitted else "(unknown time)"
    return ('<div class="alert alert-info" role="note"><strong>Full feedback</strong> on '
            f'your submission of {time}: every test\'s result, the hidden tests\' '
            'included (not their code), and your score.</div>')


def with_banner(page: str, banner: str) -> str:
    """nbgrader's feedback ``page`` with ``banner`` at the top of its body."""
    body = re.search(r"<body[^>]*>", page)
    if body is None:
        raise ValueError("a feedback page: expected HTML with a <body>, got none")
    return page[:body.end()] + "\n" + banner + page[body.end():]
