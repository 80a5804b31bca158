"""The grading round trip: solutions and correct alternatives (in-place ones too) get full
marks, the blank release zero, each wrong answer (a library twin call too) loses exactly its
own exercise's points, and each cheat scores 0 on its exercise or is flagged, as it says.

One course holds every assignment and every case, and is graded as a TA grades a class:
through ``grader.scoring.autograde`` with one worker per core, each submission in its sandbox.
(Broken and malicious submissions are the adversarial class, tests/grader/.)
"""

import csv
import html
import re
from collections import Counter

import nbformat
import pytest
from nbgrader.api import Gradebook

from course_utils import checks
from course_utils.checks.core import NOT_COMPARED
from grader.cells import is_test, marks
from grader.course import Course
from grader.integrity.tamper import imported_twins
from grader.outputs.report import diagnosis, write_report
from grader.running import nbgrader_steps
from grader.running.machine import default_workers
from grader.scoring import grades
from grader.scoring.autograde import autograde
from tests.conftest import REPO
from tests.grading_cases import all_cases
from tests.support.nbgrader_cells import errors, printed, roles
from tests.support.nbgrader_course import (
    page_text,
    solution_cells,
    submit,
)

pytestmark = pytest.mark.notebook

CASES = all_cases()
ID_CALL = '# student.use_id("<your id>")'  # 04's id cell, as released
HIDDEN = re.compile(r"### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS", flags=re.S)


def submissions(assignment: str, kind: str) -> dict[str, dict]:
    """{student: answers} of the ``WRONG``, ``CORRECT`` or ``CHEAT`` cases of
    ``assignment``, those of different answer cells handed in together by one student named
    after them all (``rope_halves__no_biases_and_separate_argmax``).

    A WRONG case already holds mistakes in several cells, each of which must score 0 on its
    own test cell and leave every other cell at full marks; a submission of several cases
    is one such case. Each kernel costs seconds (06's: about 15 s of 2 cores), and 06's 39
    cases are graded as 20 submissions. Cheats handed in together must also leave every
    other cell its points. A case stays alone when its answers are worked for
    the student's own id (``PER_STUDENT``, 04's numbers) or when it is a cheat to be flagged
    (a hook or mode left behind reaches the cells after it).
    """
    module = CASES[assignment]
    alone: dict[str, dict] = {}
    together: list[tuple[list[str], dict]] = []  # (the cases, their answers)
    for name, answers in getattr(module, kind).items():
        if getattr(module, "PER_STUDENT", False) or any(
                getattr(answer, "flagged", False) or getattr(answer, "first_cell", "")
                for answer in answers.values()):
            alone[name] = answers
            continue
        for names, taken in together:
            if not taken.keys() & answers.keys():
                names.append(name)
                taken.update(answers)
                break
        else:
            together.append(([name], dict(answers)))
    return {**alone, **{"__".join(names): answers for names, answers in together}}


def record_printout(course, assignment, student, printed: dict[str, str]) -> None:
    """Give ``student``'s submitted notebook what its cells printed when the student ran
    them ({how a cell's code starts: the text}): the round trip submits notebooks never run."""
    path = course.folder("submitted", student, assignment) / f"{assignment}.ipynb"
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        for start, text in printed.items():
            if cell.cell_type == "code" and cell.source.startswith(start):
                cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)]
    nbformat.write(notebook, path)


def record_id(course, assignment, student, chosen: str) -> None:
    """Edit ``student``'s submitted notebook as a student sets their id in it: the id cell's
    call ``student.use_id`` uncommented, ``chosen`` written in (``SETS_ID``)."""
    path = course.folder("submitted", student, assignment) / f"{assignment}.ipynb"
    notebook = nbformat.read(path, as_version=4)
    edited = [cell for cell in notebook.cells if cell.cell_type == "code"
              and ID_CALL in cell.source]
    assert len(edited) == 1, f"{assignment} should have one id cell holding {ID_CALL}"
    edited[0].source = edited[0].source.replace(ID_CALL, f'student.use_id("{chosen}")')
    nbformat.write(notebook, path)


def solution_notebook(assignment):
    return nbformat.read(REPO / "solutions" / assignment / f"{assignment}.ipynb", as_version=4)


def graded_by(assignment: str, grade_id: str) -> str:
    """The grade id of the test cell that grades the answer cell ``grade_id``: the first
    test cell after it (several answer cells may feed one test cell, as 04's warm-up does)."""
    cells = solution_notebook(assignment).cells
    start = next(i for i, cell in enumerate(cells) if marks(cell).get("grade_id") == grade_id)
    return next(marks(cell)["grade_id"] for cell in cells[start:] if is_test(cell))


def grades_total(course, assignment, student):
    """(score, max score) of a submission, read from the gradebook with nbgrader's API."""
    with Gradebook(course.gradebook_url) as book:
        submission = book.find_submission(assignment, student)
        return submission.score, submission.max_score


@pytest.fixture(scope="module")
def graded(course, assignments) -> Course:
    """The session's course (released once, tests/conftest.py) with every case submitted,
    autograded in parallel."""
    for assignment in assignments:
        submit(course, assignment, "solution", solution_cells(assignment))
        submit(course, assignment, "blank", {})
        for kind in ("WRONG", "CORRECT"):
            for student, answers in submissions(assignment, kind).items():
                submit(course, assignment, student, {**solution_cells(assignment), **answers})
        for student, cheats in submissions(assignment, "CHEAT").items():
            answers = {grade_id: cheat.code for grade_id, cheat in cheats.items()}
            added = {grade_id: cheat.added for grade_id, cheat in cheats.items() if cheat.added}
            first = "\n".join(cheat.first_cell for cheat in cheats.values() if cheat.first_cell)
            submit(course, assignment, student, {**solution_cells(assignment), **answers},
                   added, first)
        for student, printed in getattr(CASES[assignment], "PRINTED", {}).items():
            record_printout(course, assignment, student, printed)
        for student, chosen in getattr(CASES[assignment], "SETS_ID", {}).items():
            record_id(course, assignment, student, chosen)
    # Without the self-check (grader.scoring.selfcheck, tests/grader/scoring/): it would grade
    # each instructor's solution once more to assert what the student "solution" asserts
    # here, full marks through the same worker (8 more notebooks, 40 s on 2 cores).
    # One worker more than the cores: part of each job starts nbgrader and its kernel rather
    # than computing (05's round trip on 2 cores: 37 s with 3 workers, 41 s with 2).
    summary = autograde(course, workers=default_workers() + 1, progress=False,
                        check_environment=False)
    assert not summary.not_graded, summary.not_graded
    return course


@pytest.fixture(scope="module")
def cells(graded) -> list[dict]:
    """One row per test cell of every graded submission (grades.cell_rows)."""
    return grades.cell_rows(graded)


def scores_of(cells, assignment, student):
    """{test cell: score} of one submission, and {test cell: maximum} of the assignment."""
    rows = [r for r in cells if r["assignment"] == assignment and r["student_id"] == student]
    assert rows, f"{student}/{assignment} has no graded test cells"
    return ({r["cell"]: r["score"] for r in rows}, {r["cell"]: r["max_score"] for r in rows})


def grade_rows(course, tmp_path):
    path = grades.write_grades(course, tmp_path / "grades.csv")
    return {(r["student_id"], r["assignment"]): r for r in csv.DictReader(open(path))}


def test_solution_gets_every_point_and_blank_gets_none(cells, assignments):
    for assignment in assignments:
        solution, maxima = scores_of(cells, assignment, "solution")
        assert len(solution) >= 3, f"{assignment} needs at least three autograded exercises"
        assert solution == maxima, assignment
        blank, _ = scores_of(cells, assignment, "blank")
        assert set(blank.values()) == {0}, assignment


def test_on_the_blank_release_only_the_answers_and_their_tests_fail(graded, assignments):
    """A student who has not answered yet can still run every other cell (Run All below an
    exercise): the cells that compare with an answer say "finish exercise n" instead."""
    for assignment in assignments:
        notebook = nbformat.read(graded.notebook("autograded", "blank", assignment), as_version=4)
        failing = {index: errors(cell) for index, cell in enumerate(notebook.cells)
                   if errors(cell) and not roles(cell)}
        assert not failing, f"{assignment}: plain cells fail before any answer: {failing}"
        confused = {index: cell.get("id") for index, cell in enumerate(notebook.cells)
                    if NOT_COMPARED in printed(cell)}
        assert not confused, f"{assignment}: say 'finish exercise n', not an error: {confused}"


def test_a_wrong_answer_loses_its_own_points_and_no_others(cells, assignments):
    for assignment in assignments:
        for student, answers in submissions(assignment, "WRONG").items():
            got, maxima = scores_of(cells, assignment, student)
            lost = {graded_by(assignment, grade_id) for grade_id in answers}
            assert lost <= set(got), f"{assignment}: no test cells for {lost - set(got)}"
            expected = {name: 0 if name in lost else maxima[name] for name in got}
            assert got == expected, f"{assignment}/{student}"


def test_a_correct_alternative_gets_every_point(cells, assignments):
    for assignment in assignments:
        for student in submissions(assignment, "CORRECT"):
            got, maxima = scores_of(cells, assignment, student)
            assert got == maxima, f"{assignment}/{student} is right but lost points"


def test_a_cheat_scores_zero_on_its_exercise_or_is_flagged_as_it_says(cells, assignments,
                                                                     graded, tmp_path):
    rows = grade_rows(graded, tmp_path)
    for assignment in assignments:
        for student, cheats in submissions(assignment, "CHEAT").items():
            got, maxima = scores_of(cells, assignment, student)
            flags = rows[student, assignment]["flags"]
            tested = {grade_id: graded_by(assignment, grade_id) for grade_id in cheats}
            if "__" in student:  # cheats handed in together: none costs another cell points
                honest = set(got) - set(tested.values())
                assert {name: got[name] for name in honest} == {
                    name: maxima[name] for name in honest}, f"{assignment}/{student}"
            for grade_id, cheat in cheats.items():
                assert cheat.zero or cheat.flagged, f"{student}: {grade_id} expects nothing"
                if cheat.zero:
                    assert got[tested[grade_id]] == 0, f"{assignment}/{student}: {grade_id}"
                if cheat.flagged:
                    assert f"cell {grade_id} " in flags, f"{assignment}/{student}: {grade_id}"


def test_grades_csv_waits_for_the_written_answers_instead_of_giving_zero(graded, tmp_path):
    rows = grade_rows(graded, tmp_path)
    written = {a for a in graded.assignments()
               if any(cell.cell_type == "markdown"
                      and cell.metadata.get("nbgrader", {}).get("solution")
                      for cell in solution_notebook(a).cells)}
    assert written, "no assignment has a written answer"
    for (student, assignment), row in rows.items():
        if not graded.folder("submitted", student, assignment).is_dir():
            assert row["status"] == "missing", row  # a student of another assignment's cases
            continue
        # an untouched written answer scores 0 at once (nbgrader: "No response")
        waits = assignment in written and student != "blank"
        expected = "needs manual grading" if waits else "graded"
        assert row["status"] == expected, (student, assignment, row)


def test_answers_that_import_a_library_twin_are_flagged(graded, assignments, tmp_path):
    rows = grade_rows(graded, tmp_path)
    flagged = 0
    for assignment in assignments:
        assert rows["solution", assignment]["flags"] == "", assignment
        for student, answers in submissions(assignment, "WRONG").items():
            for grade_id, code in answers.items():
                if imported_twins(code, grade_id):
                    assert f"cell {grade_id} imports" in rows[student, assignment]["flags"]
                    flagged += 1
    if not flagged:  # the assignments graded here (ASSIGNMENTS=) have no such case
        assert any(imported_twins(code, grade_id) for assignment in CASES
                   for answers in submissions(assignment, "WRONG").values()
                   for grade_id, code in answers.items()), (
            "no wrong-answer case imports a twin: the flags go untested")
        pytest.skip("no wrong-answer case of the assignments graded here imports a twin")


def test_numbers_worked_for_another_id_are_flagged_with_both_ids(graded, assignments, tmp_path):
    """A wrong id is not wrong arithmetic: the cells score 0 (WRONG) and are flagged."""
    rows = grade_rows(graded, tmp_path)
    for assignment in assignments:
        for student, worked_for in getattr(CASES[assignment], "WORKED_FOR", {}).items():
            for grade_id in CASES[assignment].WRONG[student]:
                flag = f"cell {grade_id}: numbers worked for id {worked_for}, submitted as "
                assert flag + student in rows[student, assignment]["flags"], (student, grade_id)


def test_the_grader_reads_the_id_a_notebook_sets(graded, assignments, tmp_path):
    """A notebook that sets its submitter's id is not flagged; one that sets another id is,
    with both ids (its numbers score 0: test_a_wrong_answer_loses_its_own_points...)."""
    rows = grade_rows(graded, tmp_path)
    for assignment in assignments:
        for student, chosen in getattr(CASES[assignment], "SETS_ID", {}).items():
            flags = rows[student, assignment]["flags"]
            if chosen == student:
                assert flags == "", (student, flags)
            else:
                assert (f"the notebook sets id {chosen} (student.use_id), submitted as "
                        f"{student}") in flags, (student, flags)


def test_feedback_shows_score_and_test_messages_but_no_hidden_test_code(graded, cells,
                                                                       assignments):
    """Feedback for the blank and solution students (one page each is enough to check)."""
    assert not nbgrader_steps.feedback(graded, assignments, students=["solution", "blank"])
    for assignment in assignments:
        source = solution_notebook(assignment).cells
        shown = {line.strip() for cell in source
                 for line in HIDDEN.sub("", cell.source).splitlines()}
        hidden = [line.strip() for cell in source for region in HIDDEN.findall(cell.source)
                  for line in region.splitlines()[1:-1]
                  if len(line.strip()) > 20 and line.strip() not in shown]
        assert hidden, f"{assignment} has no hidden test lines to hide"
        for student in ("solution", "blank"):
            total, maximum = grades_total(graded, assignment, student)
            page = page_text(graded.folder("feedback", student, assignment)
                             / f"{assignment}.html")
            assert f"Score: {total} / {maximum}" in page, f"{student}/{assignment}"
            lines = {line.strip() for line in page.splitlines()}
            for line in hidden:
                assert line not in lines, f"{assignment}: a hidden test line is shown: {line}"
            for row in cells:
                mine = (row["assignment"], row["student_id"]) == (assignment, student)
                if mine and "Error" in row["message"]:  # an exception's "Name: message"
                    assert row["message"].splitlines()[-1] in page, row


def test_the_class_report_counts_each_mistake_the_checks_named(graded, cells, assignments,
                                                                tmp_path):
    """Each exercise's most frequent diagnosis (one of them, where several tie) is in the
    report, with its count."""
    rows = grades.grade_rows(graded)
    page = write_report(rows, cells, tmp_path / "report.html").read_text()
    per_exercise = {}
    for row in cells:
        if row["message"]:
            per_exercise.setdefault((row["assignment"], row["cell"]), Counter())[
                diagnosis(row["message"])] += 1
    assert per_exercise, "no test cell failed: the wrong cases did not reach the report"
    for counts in per_exercise.values():
        top = max(counts.values())
        most = [message for message, count in counts.items() if count == top]
        assert any(re.search(re.escape(html.escape(message)) + r".*?" + f">{top}<", page, re.S)
                   for message in most), most
    if "04_alpha3_by_hand" in assignments:
        assert html.escape(checks.attention.MISTAKES["no_scale"]) in page
