"""The grading round trip: solutions and correct alternatives get full marks, the blank
release zero, each wrong answer (a library twin call too) loses exactly its own
exercise's points, and a broken submission is reported without stopping the others.

Each assignment is graded in a course of its own (its own gradebook), the courses side
by side, one per core: the same nbgrader runs, in about half the time on two cores.
"""

import csv
import os
from concurrent.futures import ThreadPoolExecutor

import pytest

from course_utils import checks, grading
from tests.grading_cases import all_cases
from tests.nbgrader_course import autograded_answers, make_course, solution_cells, submit

pytestmark = pytest.mark.notebook

CASES = all_cases()
NOT_JSON, KERNEL_DIES = "not_json", "kernel_dies"


def grade_one(root, assignment, broken: bool):
    """A course over ``assignment`` with every case submitted and autograded."""
    course = make_course(root, [assignment])
    submit(course, assignment, "solution", solution_cells(assignment))
    submit(course, assignment, "blank", {})
    cases = CASES[assignment]
    for student, answers in {**cases.WRONG, **cases.CORRECT}.items():
        submit(course, assignment, student, {**solution_cells(assignment), **answers})
    if broken:
        not_json = course.root / "submitted" / NOT_JSON / assignment
        not_json.mkdir(parents=True)
        (not_json / f"{assignment}.ipynb").write_text("{ this is not a notebook")
        first_answer = next(iter(solution_cells(assignment)))
        submit(course, assignment, KERNEL_DIES, {first_answer: "import os\nos._exit(1)"})
    return course, grading.autograde(course)


@pytest.fixture(scope="module")
def graded(tmp_path_factory, assignments):
    """{assignment: (its graded course, the submissions it could not grade)}.

    The courses run side by side, one per core, so each kernel gets one thread
    (OMP_NUM_THREADS=1): with PyTorch's default of one thread per core in every kernel they
    fought over the cores (grading 06 and 07 together took 231 s, with one thread 133 s).
    """
    with (
        pytest.MonkeyPatch.context() as environment,
        ThreadPoolExecutor(max_workers=os.cpu_count()) as pool,
    ):
        environment.setenv("OMP_NUM_THREADS", "1")
        futures = {
            assignment: pool.submit(
                grade_one, tmp_path_factory.mktemp(assignment), assignment, n == 0
            )
            for n, assignment in enumerate(assignments)
        }
        return {assignment: future.result() for assignment, future in futures.items()}


def scores_of(graded, assignment, student):
    """{test cell: score} of one submission, and {test cell: maximum} of the assignment."""
    course, _ = graded[assignment]
    scores = grading.cell_scores(course, assignment, student)
    got = {name: score for name, (score, _) in scores.items() if name.startswith("test_")}
    return got, {name: most for name, (_, most) in scores.items()}


def grade_rows(graded, assignment, tmp_path):
    course, _ = graded[assignment]
    path = grading.write_grades(course, tmp_path / f"{assignment}.csv")
    return {r["student_id"]: r for r in csv.DictReader(open(path))}


def test_every_answer_cell_has_a_wrong_and_a_correct_alternative_case(assignments):
    assert set(assignments) <= set(CASES)
    for assignment in assignments:
        cases = CASES[assignment]
        assert not set(cases.WRONG) & set(cases.CORRECT), f"{assignment}: a student in both"
        for kind, students in (("wrong", cases.WRONG), ("correct", cases.CORRECT)):
            covered = {grade_id for answers in students.values() for grade_id in answers}
            missing = autograded_answers(assignment) - covered
            assert not missing, f"{assignment}: no {kind} case for {sorted(missing)}"


def test_solution_gets_every_point_and_blank_gets_none(graded):
    for assignment in graded:
        solution, maxima = scores_of(graded, assignment, "solution")
        assert len(solution) >= 3, f"{assignment} needs at least three autograded exercises"
        assert solution == {name: maxima[name] for name in solution}, assignment
        blank, _ = scores_of(graded, assignment, "blank")
        assert set(blank.values()) == {0}, assignment


def test_a_wrong_answer_loses_its_own_points_and_no_others(graded):
    for assignment in graded:
        for student, answers in CASES[assignment].WRONG.items():
            got, maxima = scores_of(graded, assignment, student)
            lost = {f"test_{grade_id}" for grade_id in answers}
            assert lost <= set(got), f"{assignment}: no test cells for {lost - set(got)}"
            expected = {name: 0 if name in lost else maxima[name] for name in got}
            assert got == expected, f"{assignment}/{student}"


def test_a_correct_alternative_gets_every_point(graded):
    for assignment in graded:
        for student in CASES[assignment].CORRECT:
            got, maxima = scores_of(graded, assignment, student)
            expected = {name: maxima[name] for name in got}
            assert got == expected, f"{assignment}/{student} is right but lost points"


def test_broken_submissions_are_reported_and_the_rest_are_graded(graded, tmp_path):
    first = next(iter(graded))
    _, failed = graded[first]
    assert sorted(failed) == [f"{KERNEL_DIES}/{first}", f"{NOT_JSON}/{first}"]
    assert all(not failed for _, failed in list(graded.values())[1:])
    rows = grade_rows(graded, first, tmp_path)
    assert rows[NOT_JSON]["status"] == rows[KERNEL_DIES]["status"] == "not graded"
    assert rows["solution"]["status"] == "graded" and float(rows["solution"]["score"]) > 0
    assert float(rows["blank"]["score"]) == 0


def test_answers_that_import_a_library_twin_are_flagged(graded, tmp_path):
    flagged = 0
    for assignment in graded:
        rows = grade_rows(graded, assignment, tmp_path)
        assert rows["solution"]["flags"] == "", assignment
        for student, answers in CASES[assignment].WRONG.items():
            for grade_id, code in answers.items():
                if checks.imported_twins(code, grade_id):
                    assert f"cell {grade_id} imports" in rows[student]["flags"], student
                    flagged += 1
    assert flagged, "no wrong-answer case imports a twin: the flags go untested"


def test_feedback_shows_each_graded_submission_its_score(graded):
    for assignment, (course, _) in graded.items():
        grading.feedback(course)
        for student in ("solution", "blank"):
            scores = grading.cell_scores(course, assignment, student).values()
            total = sum(score for score, _ in scores)
            maximum = sum(most for _, most in scores)
            page = course.root / "feedback" / student / assignment / f"{assignment}.html"
            assert f"Score: {total} / {maximum}" in page.read_text(), f"{student}/{assignment}"
