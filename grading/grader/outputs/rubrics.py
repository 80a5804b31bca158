"""Rubrics: how a written answer earns its points, under it in the source, shown in Formgrader.

A markdown cell of the source (``solutions/``) tagged ``rubric``, right under a written
answer (a manually graded cell), gives the answer's points part by part: what earns full,
partial and no credit, and the wrong answers TAs meet most. It opens with a heading
"### <title> (`<grade id>`, <n> points)". Such a cell is

- left out of the student release (:class:`RemoveRubrics`, second of
  ``GenerateAssignment.preprocessors`` in ``grading/nbgrader_config.py``);
- shown on Formgrader's manual grading page, under the student's answer
  (:class:`ShowRubrics`, in ``HTMLExporter.preprocessors``: the page is the autograded
  notebook, which holds no rubric, as HTML);
- never in a feedback page: those are made from the autograded notebook too, and
  :class:`ShowRubrics` acts only on Formgrader's page, whose resources name the submission;
- skipped in the decks (``tools/slide_metadata.py``) and gathered into the documentation's
  rubrics page (``make rubrics-page``: ``docs/rubrics.md``).
"""

from pathlib import Path

import nbformat
from nbconvert.preprocessors import Preprocessor
from nbgrader.coursedir import CourseDirectory
from traitlets import Set, Unicode

from grader.outputs.worked_answers import RemoveWorkedAnswers, has_tag, put_back

TAG = "rubric"
# What Formgrader's grading page (nbgrader's SubmissionHandler) puts in the resources it
# exports the autograded notebook with; a feedback page has none of them.
FORMGRADER_PAGE = ("submission_id", "assignment_id", "notebook_id")
# The line that opens a rubric on Formgrader's page, above the rubric's own heading.
LABEL = "**Rubric** (for the course staff: not in the release, nor in any feedback)"


def is_rubric(cell) -> bool:
    """Whether ``cell`` is a rubric."""
    return has_tag(cell, TAG)


class RemoveRubrics(RemoveWorkedAnswers):
    """The release's step that removes the cells tagged ``rubric`` (plain cells only)."""

    remove_cell_tags = Set(Unicode(), default_value={TAG}).tag(config=True)


class ShowRubrics(Preprocessor):
    """On Formgrader's grading page, put the source's rubrics under the student's answers.

    The source is ``solutions/<assignment>/<notebook>.ipynb`` (nbgrader's source folder of
    the course whose configuration runs Formgrader). Any other export is left as it is.
    """

    def preprocess(self, nb, resources):
        if not all(resources.get(key) for key in FORMGRADER_PAGE):
            return nb, resources
        course = CourseDirectory(parent=self)
        folder = course.format_path(course.source_directory, ".", resources["assignment_id"])
        source = Path(folder) / f"{resources['notebook_id']}.ipynb"
        if not source.exists():
            return nb, resources
        rubrics = nbformat.read(source, as_version=4)
        for cell in filter(is_rubric, rubrics.cells):
            cell.source = f"{LABEL}\n\n{cell.source}"
        return put_back(nb, rubrics, TAG), resources
