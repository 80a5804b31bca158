"""The grading round trip: solutions and correct alternatives get full marks, the blank
release zero, each wrong answer (a library twin call too) loses exactly its own
exercise's points, and a broken submission is reported without stopping the others."""

import csv

import pytest

from course_utils import checks, grading
from tests.grading_cases import all_cases
from tests.nbgrader_course import autograded_answers, solution_cells, submit

pytestmark = pytest.mark.notebook

CASES = all_cases()
NOT_JSON, KERNEL_DIES = "not_json", "kernel_dies"


@pytest.fixture(scope="module")
def graded(course):
    """Submit and autograde every case once; return the list of failures."""
    for assignment in course.assignments():
        submit(course, assignment, "solution", solution_cells(assignment))
        submit(course, assignment, "blank", {})
        cases = CASES[assignment]
        for student, answers in {**cases.WRONG, **cases.CORRECT}.items():
            submit(course, assignment, student, {**solution_cells(assignment), **answers})
    first = course.assignments()[0]
    not_json = course.root / "submitted" / NOT_JSON / first
    not_json.mkdir(parents=True)
    (not_json / f"{first}.ipynb").write_text("{ this is not a notebook")
    first_answer = next(iter(solution_cells(first)))
    submit(course, first, KERNEL_DIES, {first_answer: "import os\nos._exit(1)"})
    return grading.autograde(course)


def autograded(course, assignment, student):
    scores = grading.cell_scores(course, assignment, student)
    return {name: score for name, (score, _) in scores.items() if name.startswith("test_")}


def test_every_answer_cell_has_a_wrong_and_a_correct_alternative_case(course):
    assert set(course.assignments()) <= set(CASES)
    for assignment in course.assignments():
        cases = CASES[assignment]
        assert not set(cases.WRONG) & set(cases.CORRECT), f"{assignment}: a student in both"
        for kind, students in (("wrong", cases.WRONG), ("correct", cases.CORRECT)):
            covered = {grade_id for answers in students.values() for grade_id in answers}
            missing = autograded_answers(assignment) - covered
            assert not missing, f"{assignment}: no {kind} case for {sorted(missing)}"


def test_solution_gets_every_point_and_blank_gets_none(course, graded):
    for assignment in course.assignments():
        solution = autograded(course, assignment, "solution")
        assert len(solution) >= 3, f"{assignment} needs at least three autograded exercises"
        maxima = {n: m for n, (_, m) in grading.cell_scores(course, assignment, "solution").items()}
        assert solution == {name: maxima[name] for name in solution}, assignment
        assert set(autograded(course, assignment, "blank").values()) == {0}, assignment


def test_a_wrong_answer_loses_its_own_points_and_no_others(course, graded):
    for assignment in course.assignments():
        students = CASES[assignment].WRONG
        maxima = {n: m for n, (_, m) in grading.cell_scores(course, assignment, "solution").items()}
        for student, answers in students.items():
            got = autograded(course, assignment, student)
            lost = {f"test_{grade_id}" for grade_id in answers}
            assert lost <= set(got), f"{assignment}: no test cells for {lost - set(got)}"
            expected = {name: 0 if name in lost else maxima[name] for name in got}
            assert got == expected, f"{assignment}/{student}"


def test_a_correct_alternative_gets_every_point(course, graded):
    for assignment in course.assignments():
        maxima = {n: m for n, (_, m) in grading.cell_scores(course, assignment, "solution").items()}
        for student in CASES[assignment].CORRECT:
            got = autograded(course, assignment, student)
            expected = {name: maxima[name] for name in got}
            assert got == expected, f"{assignment}/{student} is right but lost points"


def test_broken_submissions_are_reported_and_the_rest_are_graded(course, graded, tmp_path):
    first = course.assignments()[0]
    assert sorted(graded) == [f"{KERNEL_DIES}/{first}", f"{NOT_JSON}/{first}"]
    path = grading.write_grades(course, tmp_path / "grades.csv")
    rows = {(r["student_id"], r["assignment"]): r for r in csv.DictReader(open(path))}
    assert rows[(NOT_JSON, first)]["status"] == rows[(KERNEL_DIES, first)]["status"] == "not graded"
    solution = rows[("solution", first)]
    assert solution["status"] == "graded" and float(solution["score"]) > 0
    assert float(rows[("blank", first)]["score"]) == 0


def test_answers_that_import_a_library_twin_are_flagged(course, graded, tmp_path):
    path = grading.write_grades(course, tmp_path / "grades.csv")
    rows = {(r["student_id"], r["assignment"]): r for r in csv.DictReader(open(path))}
    for assignment in course.assignments():
        assert rows[("solution", assignment)]["flags"] == "", assignment
        for student, answers in CASES[assignment].WRONG.items():
            imports = [g for g, code in answers.items() if checks.imported_twins(code, g)]
            for grade_id in imports:
                assert f"cell {grade_id} imports" in rows[(student, assignment)]["flags"]


def test_feedback_shows_each_graded_submission_its_score(course, graded):
    grading.feedback(course)
    for assignment in course.assignments():
        for student in ("solution", "blank"):
            scores = grading.cell_scores(course, assignment, student).values()
            total = sum(score for score, _ in scores)
            maximum = sum(most for _, most in scores)
            page = course.root / "feedback" / student / assignment / f"{assignment}.html"
            assert f"Score: {total} / {maximum}" in page.read_text(), f"{student}/{assignment}"
