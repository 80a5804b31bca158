"""A student's path through notebook 04 in JupyterLab and Notebook 7, and a TA's Formgrader.

The student opens the release, runs every cell, moves the softmax-scale slider, answers
an exercise right and then wrong, works the scores of exercise 1 from the sentence the
notebook printed for the student's id, and presses
nbgrader's Validate; then runs the same
notebook in Notebook 7. The expectations come from elsewhere: which cells may fail from
the notebook's nbgrader metadata, the right answer from the solution notebook, the wrong
one and its diagnosis from the grading cases and ``course_utils.checks``.
"""

import json
import math
import re

import nbformat
import pytest
from nbgrader.api import Gradebook

from course_utils.checks.attention import MISTAKES
from grader.outputs.rubrics import is_rubric
from tests.browser.conftest import GRADED, STUDENT
from tests.browser.controls import Slider, displayed, wait_for_new_picture
from tests.browser.course import copy_into, release, solution
from tests.browser.jupyter_server import running_server
from tests.browser.notebook_page import NotebookPage, menu, open_in_lab
from tests.browser.steps import PageErrors
from tests.conftest import ASSIGNMENTS
from tests.grading_cases.alpha3_by_hand import ASSIGNMENT, WRONG
from tests.notebooks.test_docs import manually_graded
from tests.support.nbgrader_cells import (
    by_code,
    by_grade_id,
    errors,
    exercise_cells,
    graded_cells,
    roles,
)
from tests.support.nbgrader_course import page_text

RELEASE = release(ASSIGNMENT)
EXERCISE = "causal_attention"
WRONG_ANSWER = WRONG["forgets_sqrt_dk"][EXERCISE].strip()
SLIDER_CELL = "softmax_scale_slider("
SOLUTION_MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION")
FAILED_CELL = "The following cell failed:"
OWN_SENTENCE_CELL = "yours = own_sentence()"
BY_HAND = ("scores_3_by_hand", "alpha_3_by_hand", "a_3_by_hand")  # the warm-up's answers
BY_HAND_TEST = "test_a_3_by_hand"  # the one test cell of the three
VECTOR = re.compile(r"\b([qkv]_\d) = (\[[-\d., ]+\])")
VALIDATE_TIMEOUT_S = 180


def warm_up_worked_from(shown: str) -> dict[str, list[float]]:
    """The warm-up worked, as a student would, from the vectors the notebook printed (lines
    "q_3 = [...]", "k_j = [...]", "v_j = [...]"): the scores q_3 · k_j / √4 to 2 decimals,
    α₃ to 3 from them, a₃ to 2 from those; {answer's grade id: numbers}."""
    vectors = {name: json.loads(values) for name, values in VECTOR.findall(shown)}
    scores = [round(sum(q * k for q, k in zip(vectors["q_3"], vectors[f"k_{j}"], strict=True))
                    / 2, 2) for j in (1, 2, 3)]
    exponentials = [math.exp(score) for score in scores]
    alpha = [round(e / sum(exponentials), 3) for e in exponentials]
    a_3 = [round(sum(a * vectors[f"v_{j}"][i] for j, a in enumerate(alpha, 1)), 2)
           for i in range(len(vectors["v_1"]))]
    return dict(zip(BY_HAND, (scores, alpha, a_3), strict=True))


def solution_code(grade_id: str) -> str:
    """The instructor's answer of ``grade_id``, without nbgrader's solution markers."""
    source = nbformat.read(solution(ASSIGNMENT), as_version=4)
    cell = source.cells[by_grade_id(source, grade_id)]
    return "\n".join(line for line in cell.source.splitlines()
                     if line.strip() not in SOLUTION_MARKERS)


def check_only_blank_answers_fail(saved) -> None:
    """Only answer and test cells failed, every test cell did, and every code cell ran."""
    unexpected = {i: errors(cell) for i, cell in enumerate(saved.cells)
                  if errors(cell) and not roles(cell)}
    assert not unexpected, f"errors outside answer and test cells: {unexpected}"
    passing_tests = [i for i, cell in enumerate(saved.cells)
                     if cell.cell_type == "code" and "test" in roles(cell) and not errors(cell)]
    assert not passing_tests, f"test cells that pass on a blank release: {passing_tests}"
    not_run = [i for i, cell in enumerate(saved.cells)
               if cell.cell_type == "code" and cell.execution_count is None]
    assert not not_run, f"cells that never ran: {not_run}"


def read_validation(page) -> str:
    """Wait for nbgrader's result dialog, return its text and close it with Ok."""
    dialog = page.locator(".jp-Dialog", has_text="Validation Results")
    dialog.wait_for(timeout=VALIDATE_TIMEOUT_S * 1000)
    text = dialog.inner_text()
    dialog.get_by_role("button", name="Ok").click()
    return text


def test_student_works_through_04_in_jupyterlab(page, steps, student_server, workspace):
    blank = nbformat.read(RELEASE, as_version=4)
    answer, test = by_grade_id(blank, EXERCISE), by_grade_id(blank, f"test_{EXERCISE}")

    with steps("opens the release in JupyterLab"):
        notebook = open_in_lab(page, student_server, copy_into(RELEASE, workspace))

    with steps("runs every cell; only blank answers and their tests fail"):
        notebook.run_in_sections(alone=exercise_cells(blank))
        notebook.save()
        check_only_blank_answers_fail(notebook.saved())

    with steps("moves the softmax-scale slider and the bars change"):
        view = notebook.cell(by_code(blank, SLIDER_CELL)).locator(".widget-interact")
        output = view.locator(".widget-output")
        picture = displayed(output)
        before, after = Slider("c", to=0.9).move(view)
        assert float(after) > float(before), f"the slider stayed at {before}"
        wait_for_new_picture(output, picture)

    with steps("writes the right answer; its test passes"):
        notebook.type_code(answer, solution_code(EXERCISE))
        notebook.run_cell(answer)
        notebook.run_cell(test)
        notebook.save()
        saved = notebook.saved().cells
        assert not errors(saved[answer]) and not errors(saved[test]), errors(saved[test])

    with steps("writes a wrong answer; the test names the mistake"):
        notebook.type_code(answer, WRONG_ANSWER)
        notebook.run_cell(answer)
        notebook.run_cell(test)
        assert MISTAKES["no_scale"] in notebook.output_text(test)

    with steps("reads their own sentence at exercise 1 and works the warm-up; the test passes"):
        shown = notebook.output_text(by_code(blank, OWN_SENTENCE_CELL))
        assert f"Student id: {STUDENT}" in shown, shown
        for grade_id, numbers in warm_up_worked_from(shown).items():
            by_hand = by_grade_id(blank, grade_id)
            notebook.type_code(by_hand, f"{grade_id} = {numbers}")
            notebook.run_cell(by_hand)
        its_test = by_grade_id(blank, BY_HAND_TEST)
        notebook.run_cell(its_test)
        notebook.save()
        failed = errors(notebook.saved().cells[its_test])
        assert not failed, failed

    with steps("presses Validate and reads the verdict"):
        notebook.save()
        page.locator(".jp-NotebookPanel-toolbar").get_by_text("Validate", exact=True).click()
        verdict = read_validation(page)
        assert verdict.count(FAILED_CELL) == len(graded_cells(blank)) - 1, verdict
        assert MISTAKES["no_scale"] in verdict and BY_HAND_TEST not in verdict


def test_student_runs_04_in_notebook7(context, page, steps, own_server):
    blank = nbformat.read(RELEASE, as_version=4)
    copy = copy_into(RELEASE, own_server.root)

    with steps("opens the file browser of Notebook 7"):
        page.goto(own_server.page_url("tree"))
        page.locator(".jp-DirListing-item", has_text=ASSIGNMENT).first.dblclick()

    with steps("opens the notebook, which comes up in a new tab"):
        with context.expect_page() as new_tab:
            page.locator(".jp-DirListing-item", has_text=copy.name).dblclick()
        steps.page = new_tab.value
        assert "/notebooks/" in steps.page.url
        notebook = NotebookPage(steps.page, copy)
        notebook.wait_until_open()

    with steps("runs every cell; only blank answers and their tests fail"):
        notebook.run_in_sections(alone=exercise_cells(blank))
        notebook.save()
        check_only_blank_answers_fail(notebook.saved())


@pytest.mark.xfail(strict=True, reason=(
    "jupyter_server 2.21.1 remembers static files by name for JupyterLab and Notebook 7 "
    "alike (FileFindHandler._static_paths): once JupyterLab has served MathJax's fonts, "
    "Notebook 7 gets 403 for its own copies and draws formulas without them; it also "
    "restores JupyterLab's file browser state with a command it lacks"))
def test_notebook7_draws_math_after_jupyterlab(context, own_server):
    errors = PageErrors(context)
    copy = copy_into(RELEASE, own_server.root)
    lab = context.new_page()
    open_in_lab(lab, own_server, copy)
    lab.locator("mjx-container").first.wait_for()
    lab.wait_for_load_state("networkidle")
    classic = context.new_page()
    classic.goto(own_server.page_url(f"notebooks/{copy.relative_to(own_server.root)}"))
    NotebookPage(classic, copy).wait_until_open()
    classic.locator("mjx-container").first.wait_for()
    classic.wait_for_load_state("networkidle")
    assert not errors.reported, errors.reported


def test_ta_sees_every_assignment_in_formgrader(page, steps, ta_server):
    with steps("opens the TAs' JupyterLab"):
        page.goto(ta_server.page_url("lab"))
        page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").wait_for()

    with steps("opens Formgrader from the Nbgrader menu and sees every assignment"):
        menu(page, "Nbgrader", "Formgrader")
        formgrader = page.frame_locator(".jp-MainAreaWidget:not(.lm-mod-hidden) iframe")
        formgrader.get_by_role("heading", name="Manage Assignments").wait_for()
        names = formgrader.locator("table tbody tr td:first-child")
        names.nth(len(ASSIGNMENTS) - 1).wait_for()
        assert names.all_inner_texts() == ASSIGNMENTS


def test_formgrader_s_grading_page_shows_each_rubric_under_the_answer_and_no_feedback_does(
        context, graded_course, tmp_path):
    """The TA grading the right submission's written answer in Formgrader reads its rubric
    right under it (grader.outputs.rubrics); the student's feedback page holds none of it.
    A page without the console check (Formgrader's page loads MathJax from a CDN)."""
    source = graded_course.source / GRADED / f"{GRADED}.ipynb"
    cells = nbformat.read(source, as_version=4).cells
    written = next(iter(manually_graded(source)))  # the first written answer, and its rubric
    at = next(index for index, cell in enumerate(cells)
              if cell.metadata.get("nbgrader", {}).get("grade_id") == written)
    rubric = next(cell.source for cell in cells[at:] if is_rubric(cell))
    title = rubric.splitlines()[0].removeprefix("### ").replace("`", "")  # as rendered
    with Gradebook(graded_course.gradebook_url) as book:
        submission = book.find_submission_notebook(GRADED, GRADED, "right").id
    page = context.new_page()
    with running_server(graded_course.root.parent, cwd=graded_course.root,
                        state=tmp_path / "jupyter") as server:
        page.goto(server.page_url(f"formgrader/submissions/{submission}/"))
        page.get_by_text("Rubric", exact=True).first.wait_for()
        html, text = page.content(), page.inner_text("body")
    score_box = html.index(f'class="score tabbable" id="{written}"')
    assert score_box < html.index("<strong>Rubric</strong>") < html.index(f"<code>{written}</code>")
    assert text.count(title) == 1
    feedback = graded_course.folder("feedback", "right", GRADED) / f"{GRADED}.html"
    assert title not in page_text(feedback)
