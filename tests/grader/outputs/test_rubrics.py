"""Rubrics: out of the release, on Formgrader's grading page under the student's answer,
in no feedback page (grader.outputs.rubrics; Formgrader's real page in
tests/browser/test_student_path.py, the notebooks' rubrics in tests/notebooks/test_docs.py).
"""

import pytest
from nbconvert.exporters import HTMLExporter
from nbformat.v4 import new_markdown_cell, new_notebook
from nbgrader.server_extensions.formgrader.formgrader import FormgradeExtension

from grader.course import load_config
from grader.outputs.rubrics import LABEL, RemoveRubrics, ShowRubrics
from tests.grader.tiny_course import ASSIGNMENT, RUBRIC, WORKED, make_tiny_course, released

RUBRIC_LINE = RUBRIC.splitlines()[-1]
# What Formgrader's grading page puts in the resources of its export (nbgrader's
# SubmissionHandler), and what a feedback page's export carries instead.
FORMGRADER = {"submission_id": "s1", "assignment_id": ASSIGNMENT, "notebook_id": ASSIGNMENT,
              "index": 0, "total": 1, "base_url": "", "student": "ada", "last_name": None,
              "first_name": None, "notebook_path": f"autograded/ada/{ASSIGNMENT}"}
FEEDBACK = {"nbgrader": {"assignment": ASSIGNMENT, "notebook": ASSIGNMENT, "student": "ada"}}


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    return make_tiny_course(tmp_path_factory.mktemp("rubrics"), worked=True)


def show(course, notebook, resources):
    config = load_config(course.root)
    return ShowRubrics(config=config).preprocess(notebook, dict(resources))[0]


def texts(notebook) -> list[str]:
    return [cell.source for cell in notebook.cells]


@pytest.mark.notebook
def test_formgrader_s_page_shows_the_rubric_right_under_the_written_answer(course):
    notebook = show(course, released(course), FORMGRADER)
    written = next(i for i, cell in enumerate(notebook.cells)
                   if cell.metadata.get("nbgrader", {}).get("grade_id") == "written")
    assert notebook.cells[written + 1].source == f"{LABEL}\n\n{RUBRIC}"
    assert sum(RUBRIC_LINE in text for text in texts(notebook)) == 1
    assert not any(worked in text for text in texts(notebook) for worked in WORKED.values())


@pytest.mark.notebook
@pytest.mark.parametrize("resources", [FEEDBACK, {**FORMGRADER, "notebook_id": "other"}, {}],
                         ids=["a feedback page", "a notebook without source", "nothing"])
def test_any_other_export_is_left_as_it_is(course, resources):
    notebook = released(course)
    assert texts(show(course, released(course), resources)) == texts(notebook)


@pytest.mark.notebook
def test_formgrader_s_exporter_finds_its_template_under_the_course_s_configuration(course):
    """Formgrader exports the autograded notebook with its own template, "formgrade", and
    the course's configuration on top: a template set for every HTMLExporter (as the
    feedback's once was) breaks the page with TemplateNotFound."""
    config = FormgradeExtension().build_extra_config()
    config.merge(load_config(course.root))
    html, _ = HTMLExporter(config=config).from_notebook_node(released(course), dict(FORMGRADER))
    score_box = html.index('class="score tabbable" id="written"')  # the TA's, for the answer
    assert score_box < html.index(RUBRIC_LINE)


def test_a_rubric_is_a_plain_cell_and_only_rubrics_are_removed():
    marked = new_markdown_cell(RUBRIC, metadata={"tags": ["rubric"], "nbgrader": {
        "grade_id": "x", "solution": True, "grade": True, "locked": False, "points": 1}})
    with pytest.raises(ValueError, match="a cell tagged 'rubric': expected a plain cell"):
        RemoveRubrics().preprocess(new_notebook(cells=[marked]), {})
    plain = new_notebook(cells=[new_markdown_cell("Why?"),
                                new_markdown_cell(RUBRIC, metadata={"tags": ["rubric"]}),
                                new_markdown_cell("w", metadata={"tags": ["worked-answer"]})])
    kept, _ = RemoveRubrics().preprocess(plain, {})
    assert texts(kept) == ["Why?", "w"]
