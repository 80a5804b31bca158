"""The grading round trip: solutions get full marks, the blank release zero, each wrong
answer loses exactly its own exercise's points, and a broken submission is reported
without stopping the others."""

import csv

import pytest

from course_utils import grading
from tests.grading_cases import all_cases
from tests.nbgrader_course import solution_cells, submit

pytestmark = pytest.mark.notebook

WRONG = all_cases()
BROKEN = "broken_json"


@pytest.fixture(scope="module")
def graded(course):
    """Submit and autograde every case once; return the list of failures."""
    for assignment in course.assignments():
        submit(course, assignment, "solution", solution_cells(assignment))
        submit(course, assignment, "blank", {})
        for student, answers in WRONG.get(assignment, {}).items():
            submit(course, assignment, student, {**solution_cells(assignment), **answers})
    first = course.assignments()[0]
    broken = course.root / "submitted" / BROKEN / first
    broken.mkdir(parents=True)
    (broken / f"{first}.ipynb").write_text("{ this is not a notebook")
    return grading.autograde(course)


def autograded(course, assignment, student):
    scores = grading.cell_scores(course, assignment, student)
    return {name: score for name, (score, _) in scores.items() if name.startswith("test_")}


def test_every_assignment_has_wrong_answer_cases(course):
    assert set(course.assignments()) <= set(WRONG)


def test_solution_gets_every_point_and_blank_gets_none(course, graded):
    for assignment in course.assignments():
        solution = autograded(course, assignment, "solution")
        assert len(solution) >= 3, f"{assignment} needs at least three autograded exercises"
        maxima = {n: m for n, (_, m) in grading.cell_scores(course, assignment, "solution").items()}
        assert solution == {name: maxima[name] for name in solution}, assignment
        assert set(autograded(course, assignment, "blank").values()) == {0}, assignment


def test_a_wrong_answer_loses_its_own_points_and_no_others(course, graded):
    for assignment in course.assignments():
        students = WRONG[assignment]
        maxima = {n: m for n, (_, m) in grading.cell_scores(course, assignment, "solution").items()}
        for student, answers in students.items():
            got = autograded(course, assignment, student)
            lost = {f"test_{grade_id}" for grade_id in answers}
            assert lost <= set(got), f"{assignment}: no test cells for {lost - set(got)}"
            expected = {name: 0 if name in lost else maxima[name] for name in got}
            assert got == expected, f"{assignment}/{student}"


def test_a_broken_submission_is_reported_and_the_rest_are_graded(course, graded, tmp_path):
    first = course.assignments()[0]
    assert graded == [f"{BROKEN}/{first}"]
    path = grading.write_grades(course, tmp_path / "grades.csv")
    rows = {(r["student_id"], r["assignment"]): r for r in csv.DictReader(open(path))}
    assert rows[(BROKEN, first)]["status"] == "not graded"
    solution = rows[("solution", first)]
    assert solution["status"] == "graded" and float(solution["score"]) > 0
    assert float(rows[("blank", first)]["score"]) == 0


def test_feedback_is_written_for_every_graded_submission(course, graded):
    grading.feedback(course)
    for assignment in course.assignments():
        page = course.root / "feedback" / "solution" / assignment / f"{assignment}.html"
        assert page.exists()
        assert "Test cell" in page.read_text() or "test_" in page.read_text()
