"""The TA's commands go on past a broken assignment, and the roster shows who is missing."""

import csv
import zipfile
from datetime import datetime

import nbformat
import pytest
from nbgrader.api import Gradebook

from grader import state
from grader.__main__ import main
from grader.course import Course
from grader.scoring import grades
from tests.grader.tiny_course import (
    ASSIGNMENT,
    answered,
    make_tiny_course,
    tiny_source,
)
from tests.support.nbgrader_course import page_text

pytestmark = pytest.mark.notebook  # runs nbgrader (a few seconds)

BROKEN = "broken"


@pytest.fixture
def course_with_a_broken_assignment(tmp_path) -> Course:
    """``tiny``, and ``broken`` whose solution region is never closed."""
    course = make_tiny_course(tmp_path)
    broken = tiny_source()
    broken.cells[2].source = "### BEGIN SOLUTION\ndef double(x):\n    return 2 * x"
    (course.source / BROKEN).mkdir()
    nbformat.write(broken, course.source / BROKEN / f"{BROKEN}.ipynb")
    return course


def test_release_goes_on_past_a_failing_assignment(course_with_a_broken_assignment, capsys):
    course = course_with_a_broken_assignment
    (course.release / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").unlink()
    assert main(["release", "--course-root", str(course.root)]) == 1
    assert f"release FAILED for {BROKEN}" in capsys.readouterr().err
    assert (course.release / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").exists()  # released anyway


def test_the_roster_lists_who_is_missing_and_who_is_not_on_it(tmp_path):
    course = make_tiny_course(tmp_path)
    for student in ("ada", "zed"):
        (course.folder("submitted", student, ASSIGNMENT)).mkdir(parents=True)
    state.save(course, {f"zed/{ASSIGNMENT}": state.Outcome("not graded", "not JSON")})
    with open(course.roster_path, "w", newline="") as handle:
        csv.writer(handle).writerows([["student_id", "name"], ["ada", "Ada"], ["bea", "Bea"]])
    rows = {row.student_id: row for row in grades.grade_rows(course)}
    assert rows["bea"].status == "missing"
    assert rows["ada"].status == "not graded" and rows["ada"].reason == "not autograded yet"
    assert rows["zed"].status == "not graded"
    assert rows["zed"].reason == "not JSON; not on the roster"


def test_from_an_lms_zip_to_grades_feedback_and_report_in_four_commands(
    tmp_path, sandbox, machine_five_hours_behind_utc
):
    """collect, autograde, feedback, similarity, report: what the README's TA section
    promises, down to the copied answer shown side by side, and the time the zip gives a
    notebook (this machine's, five hours behind UTC) in nbgrader's gradebook."""
    course = make_tiny_course(tmp_path / "course")
    archive = tmp_path / "canvas.zip"
    with zipfile.ZipFile(archive, "w") as lms:  # Canvas: <name>_<user id>_<file id>_<file>
        ada = zipfile.ZipInfo(f"ada_101_5001_{ASSIGNMENT}.ipynb", (2026, 6, 1, 12, 30, 0))
        lms.writestr(ada, nbformat.writes(answered(course, {})))
        wrong = answered(course, {"double": "def double(x):\n    return 2 * abs(x)"})
        lms.writestr(f"bob_102_5002_{ASSIGNMENT}.ipynb", nbformat.writes(wrong))
        copied = {"double": "def double(x):\n    # twice x\n    return 2 * abs(x)"}
        copied = answered(course, copied)
        lms.writestr(f"cy_103_5003_{ASSIGNMENT}.ipynb", nbformat.writes(copied))
    root = ["--course-root", str(course.root)]
    for step in (["collect", "--zip", str(archive)], ["autograde", "--workers", "2"],
                 ["feedback"], ["similarity"], ["report"]):
        assert main(step + root) == 0, step
    with open(course.root / "grades.csv", newline="") as handle:
        rows = {row["student_id"]: row for row in csv.DictReader(handle)}
    assert (rows["ada"]["status"], float(rows["ada"]["score"])) == ("needs manual grading", 3)
    assert rows["ada"]["timestamp"] == "2026-06-01T17:30:00Z"
    with Gradebook(course.gradebook_url) as book:
        assert book.find_submission(ASSIGNMENT, "ada").timestamp == datetime(2026, 6, 1, 17, 30)
    assert (rows["bob"]["status"], float(rows["bob"]["score"])) == ("needs manual grading", 1)
    page = page_text(course.folder("feedback", "bob", ASSIGNMENT) / f"{ASSIGNMENT}.html")
    assert "AssertionError: double(-3) should be -6 (secret check)" in page  # its message
    assert "assert double(-3)" not in page  # and not its code
    assert "assert double(2) == 4" in page  # the visible test is shown
    assert "Score: 1.0 / 4.0" in page
    report = page_text(course.root / "report.html")
    assert "double(-3) should be -6 (secret check)" in report
    with open(course.root / "similarity.csv", newline="") as handle:
        pairs = {(r["cell"], r["student_a"], r["student_b"]) for r in csv.DictReader(handle)}
    assert ("double", "bob", "cy") in pairs  # bob's mistake, handed in by cy with a comment
    assert not any("ada" in pair and "double" in pair for pair in pairs)
    assert "Similar answers" in report and "twice x" in report  # the two answers side by side


def test_from_another_checkout_the_grader_refuses_and_says_why(tmp_path, monkeypatch, capsys):
    """A second checkout whose .venv is the first's: the steps would act on the first."""
    (tmp_path / "grading").mkdir()
    (tmp_path / "grading" / "nbgrader_config.py").write_text("c = get_config()\n")
    monkeypatch.chdir(tmp_path)
    assert main(["release"]) == 2
    said = capsys.readouterr().err
    assert "make setup" in said and f"--course-root {tmp_path / 'grading'}" in said
