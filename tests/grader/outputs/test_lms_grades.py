"""The LMS's import files (grader.outputs.lms_grades) against the formats as Canvas and Moodle
read them.

The class is built the way grades.csv reads a graded class, without grading anyone: the
submissions' folders and time stamps, the gradebook's scores through nbgrader's Gradebook
API, and the grading run's outcomes (grader.state); well under a second. The expected
files are worked out by hand from the formats:

- Canvas's gradebook importer (canvas-lms, app/models/gradebook_importer.rb) takes a header
  ``Student, ID, SIS User ID, SIS Login ID, Section, <assignment>...``, a row whose first
  cell holds "Points Possible", then one row per student; blank or "-" is no score.
- Moodle's CSV import (grade/import/csv/classes/load_data.php) takes a header row, one
  identifier column (id, username, idnumber or email) and a column per grade item; "" or
  "-" is no grade, and a row it cannot match to a user stops the whole import.
Both are RFC 4180 CSV: a field with a comma or a quote is quoted, its quotes doubled.
"""

import csv
import shutil
import zipfile
from datetime import datetime, timedelta

import nbformat
import pytest
from nbformat.v4 import new_notebook
from nbgrader.api import Gradebook

from grader import state
from grader.__main__ import main
from grader.course import Course
from grader.intake.lms_zip import collect_zip
from grader.outputs.late_penalty import LatePenalty
from grader.outputs.lms_grades import LmsError, Settings, load_settings, write_lms_grades
from tests.conftest import REPO

# nbgrader's add_submission builds its rows before adding them to its session, which
# SQLAlchemy warns about (nbgrader's own autograde does the same)
pytestmark = pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")

DUE = datetime(2026, 6, 1, 17, 0)  # UTC, as nbgrader keeps it
CELLS = {"01_intro": {"test_a": 2, "test_b": 1, "written": 1}, "02_more": {"test_c": 3}}
ROSTER = [  # student_id, name, canvas_id, sis_user_id, sis_login_id, section, email, idnumber
    ["ada", "Lovelace, Ada", "101", "S1", "ada@uni", "A", "ada@example.org", "9001"],
    ["bob", 'Bob "The Builder" O\'Neil', "102", "S2", "bob@uni", "A", "bob@example.org", "9002"],
    ["cy", "Cy", "", "", "cy@uni", "B", "cy@example.org", "9003"],
    ["dee", "Dee", "104", "", "", "B", "dee@example.org", "9004"],
    ["emile", "Zoë Émile", "105", "S5", "emile@uni", "B", "emile@example.org", "9005"],
]
ROSTER_COLUMNS = ["student_id", "name", "canvas_id", "sis_user_id", "sis_login_id", "section",
                  "email", "idnumber"]


def submit(course, book, student, assignment, scores, late=None, waiting=False):
    """A graded submission: ``scores`` {cell: points}, handed in ``late`` seconds after the
    due date (no time stamp when None); ``waiting``: the written answer waits for a TA."""
    folder = course.folder("submitted", student, assignment)
    folder.mkdir(parents=True)
    if late is not None:
        (folder / "timestamp.txt").write_text(f"{DUE + timedelta(seconds=late)} UTC")
    book.update_or_create_student(student)
    book.add_submission(assignment, student)
    for name, points in scores.items():
        grade = book.find_grade(name, assignment, assignment, student)
        grade.auto_score = points
        grade.needs_manual_grade = waiting and name == "written"
    book.db.commit()


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    """ada: full marks, 02 1 s late; bob: 01 partly, 02 2 days and 1 s late; cy: 01
    missing, 02 10 days late; dee: 01 waits for its written answer, 02 not graded; emile:
    01 with a quarter point, 02 without a time stamp; zed: not on the roster."""
    tmp_path = tmp_path_factory.mktemp("class")
    (tmp_path / "grading").mkdir()
    shutil.copy(REPO / "grading" / "nbgrader_config.py", tmp_path / "grading")
    (tmp_path / "notebooks").mkdir()
    for assignment in CELLS:
        (tmp_path / "solutions" / assignment).mkdir(parents=True)
        nbformat.write(new_notebook(), tmp_path / "solutions" / assignment / f"{assignment}.ipynb")
    course = Course(tmp_path / "grading")
    with open(course.roster_path, "w", newline="") as handle:
        csv.writer(handle).writerows([ROSTER_COLUMNS, *ROSTER])
    with Gradebook(course.gradebook_url) as book:
        for assignment, cells in CELLS.items():
            book.update_or_create_assignment(assignment, duedate=DUE)
            book.add_notebook(assignment, assignment)
            for name, points in cells.items():
                book.add_grade_cell(name, assignment, assignment, max_score=points,
                                    cell_type="markdown" if name == "written" else "code")
        full = {"test_a": 2, "test_b": 1, "written": 1}
        submit(course, book, "ada", "01_intro", full, late=0)
        submit(course, book, "ada", "02_more", {"test_c": 3}, late=1)
        submit(course, book, "bob", "01_intro", {"test_a": 0, "test_b": 1, "written": 1})
        submit(course, book, "bob", "02_more", {"test_c": 3}, late=2 * 86400 + 1)
        submit(course, book, "cy", "02_more", {"test_c": 3}, late=10 * 86400)
        submit(course, book, "dee", "01_intro", full, late=0, waiting=True)
        submit(course, book, "emile", "01_intro", {"test_a": 1.25, "test_b": 1, "written": 1})
        submit(course, book, "emile", "02_more", {"test_c": 3})
        submit(course, book, "zed", "01_intro", full, late=0)
    course.folder("submitted", "dee", "02_more").mkdir(parents=True)
    outcomes = {f"{s}/{a}": state.Outcome("graded") for s in ["ada", "bob", "cy", "dee",
                                                              "emile", "zed"]
                for a in CELLS if course.folder("submitted", s, a).is_dir()}
    outcomes["dee/02_more"] = state.Outcome("not graded", "the kernel died")
    state.save(course, outcomes)
    return tmp_path


@pytest.fixture
def course(graded_class, tmp_path) -> Course:
    """A copy of the class of its own for each test (a second to build, a few ms to copy)."""
    shutil.copytree(graded_class, tmp_path, dirs_exist_ok=True)
    return Course(tmp_path / "grading")


def read(path, encoding="utf-8"):
    with open(path, newline="", encoding=encoding) as handle:
        return list(csv.reader(handle))


CANVAS_STUDENTS = [["Lovelace, Ada", "101", "S1", "ada@uni", "A"],
                   ['Bob "The Builder" O\'Neil', "102", "S2", "bob@uni", "A"],
                   ["Cy", "", "", "cy@uni", "B"],
                   ["Dee", "104", "", "", "B"],
                   ["Zoë Émile", "105", "S5", "emile@uni", "B"]]


def test_canvas_file_is_its_gradebook_csv_one_row_per_student_of_the_roster(course):
    path, _ = write_lms_grades(course, Settings("canvas"))
    assert path == course.root / "grades_canvas.csv"
    assert read(path, "utf-8-sig") == [
        ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "01_intro", "02_more"],
        ["Points Possible", "", "", "", "", "4", "3"],
        # blank: cy's missing 01, dee's 01 waiting for a TA and 02 not graded; zed left out
        CANVAS_STUDENTS[0] + ["4", "3"],
        CANVAS_STUDENTS[1] + ["2", "3"],
        CANVAS_STUDENTS[2] + ["", "3"],
        CANVAS_STUDENTS[3] + ["", ""],
        CANVAS_STUDENTS[4] + ["3.25", "3"],
    ]


def test_canvas_file_is_rfc_4180_utf8_with_a_byte_order_mark(course):
    raw = write_lms_grades(course, Settings("canvas"))[0].read_bytes()
    assert raw.startswith(b"\xef\xbb\xbfStudent,ID,SIS User ID,SIS Login ID,Section,")
    text = raw.decode("utf-8-sig")
    assert '\r\n"Lovelace, Ada",101,S1,ada@uni,A,4,3\r\n' in text
    assert '\r\n"Bob ""The Builder"" O\'Neil",102,S2,bob@uni,A,2,3\r\n' in text
    assert "\r\nZoë Émile,105,S5,emile@uni,B,3.25,3\r\n" in text
    assert text.count("\r\n") == 7 and text.endswith("\r\n")


def test_moodle_file_has_one_identifier_column_and_one_per_grade_item(course):
    path, _ = write_lms_grades(course, Settings("moodle"))
    raw = path.read_bytes()
    assert path.name == "grades_moodle.csv" and raw.startswith(b"Email address,01_intro,")
    assert raw.decode("utf-8").splitlines() == [
        "Email address,01_intro,02_more", "ada@example.org,4,3", "bob@example.org,2,3",
        "cy@example.org,,3", "dee@example.org,,", "emile@example.org,3.25,3"]


def test_column_titles_and_the_moodle_identifier_come_from_lms_toml(course):
    (course.root / "lms.toml").write_text(
        '[canvas.columns]\n01_intro = "Notebook 1, \\"intro\\" (4711)"\n'
        '[moodle]\nidentifier = "idnumber"\n[moodle.columns]\n02_more = "Notebook 2"\n')
    canvas, _ = write_lms_grades(course, load_settings(course, "canvas"))
    assert canvas.read_bytes().decode("utf-8-sig").startswith(
        'Student,ID,SIS User ID,SIS Login ID,Section,"Notebook 1, ""intro"" (4711)",02_more\r\n')
    moodle, _ = write_lms_grades(course, load_settings(course, "moodle"))
    assert read(moodle)[:2] == [["ID number", "01_intro", "Notebook 2"], ["9001", "4", "3"]]


def test_missing_as_zero_gives_0_for_nothing_submitted_and_blank_for_not_graded(course):
    _, notes = write_lms_grades(course, Settings("moodle", missing_as_zero=True))
    rows = read(course.root / "grades_moodle.csv")
    assert rows[3] == ["cy@example.org", "0", "3"]
    assert rows[4] == ["dee@example.org", "", ""]  # waiting for a TA, and a grader failure
    assert "cy 01_intro: missing, 0 (missing as zero)" in notes
    assert "dee 02_more: not graded (the kernel died), left blank" in notes
    assert "dee 01_intro: needs manual grading, left blank" in notes
    assert "zed: not on the roster, left out" in notes


def test_late_penalty_takes_its_percentage_per_day_begun_up_to_its_maximum(course):
    settings = Settings("canvas", late_penalty=LatePenalty.parse("10%/day, max 50%"))
    path, notes = write_lms_grades(course, settings)
    scores = {row[0]: row[6] for row in read(path, "utf-8-sig")[2:]}
    # ada 1 s late: -10%; bob 2 days 1 s: -30%; cy 10 days: -50% (the maximum);
    # emile has no time stamp and ada's 01 was on time: as they are
    assert scores == {"Lovelace, Ada": "2.7", 'Bob "The Builder" O\'Neil': "2.1", "Cy": "1.5",
                      "Dee": "", "Zoë Émile": "3"}
    penalised = [note for note in notes if "late" in note]
    assert penalised == [
        "ada 02_more: 1 s late, -10% (10%/day, max 50%): 3 -> 2.7",
        "bob 02_more: 172801 s late, -30% (10%/day, max 50%): 3 -> 2.1",
        "cy 02_more: 864000 s late, -50% (10%/day, max 50%): 3 -> 1.5"]


def test_a_notebook_from_an_lms_zip_is_late_by_the_zips_time(
    course, tmp_path, machine_five_hours_behind_utc
):
    """emile's 02 had no time stamp; filed again from Canvas's zip dated 12:00:02 on this
    machine, five hours behind UTC, it came 2 s after the due date (17:00 UTC). (A zip
    keeps times to 2 s.)"""
    archive = tmp_path / "canvas.zip"
    with zipfile.ZipFile(archive, "w") as lms:
        member = zipfile.ZipInfo("emile_105_9001_02_more.ipynb", (2026, 6, 1, 12, 0, 2))
        lms.writestr(member, nbformat.writes(new_notebook()))
    assert [student for student, _, _ in collect_zip(course, archive).filed] == ["emile"]
    root = ["--course-root", str(course.root)]
    assert main(["grades", *root]) == 0
    rows = {(row[0], row[1]): row for row in read(course.root / "grades.csv")}
    header = read(course.root / "grades.csv")[0]
    emile = dict(zip(header, rows["emile", "02_more"], strict=True))
    assert (emile["timestamp"], emile["seconds_late"]) == ("2026-06-01T17:00:02Z", "2")
    settings = Settings("canvas", late_penalty=LatePenalty.parse("10%/day, max 50%"))
    _, notes = write_lms_grades(course, settings)
    assert "emile 02_more: 2 s late, -10% (10%/day, max 50%): 3 -> 2.7" in notes


@pytest.mark.parametrize("text, seconds, percent", [
    ("10%/day", 1, 10), ("10%/day", 86400, 10), ("10%/day", 86401, 20),
    ("10%/day, max 50%", 10 * 86400, 50), ("2.5%/hour", 3601, 5), ("10 % / DAY", 1, 10)])
def test_late_penalty_counts_each_unit_begun(text, seconds, percent):
    assert LatePenalty.parse(text).percent_for(seconds) == pytest.approx(percent)


@pytest.mark.parametrize("text", ["10", "10%/week", "ten%/day", "10%/day max", "-5%/day"])
def test_a_late_penalty_it_cannot_read_is_an_error_that_shows_the_syntax(text):
    with pytest.raises(ValueError, match="10%/day, max 50%"):
        LatePenalty.parse(text)


def test_a_late_penalty_over_100_percent_is_an_error():
    with pytest.raises(ValueError, match="at most 100%, got '150%/day'"):
        LatePenalty.parse("150%/day")


def test_a_student_the_lms_cannot_find_stops_the_file_and_is_named(course):
    rows = [ROSTER_COLUMNS, *ROSTER[:3], ["dee", "Dee", "", "", "", "B", "", "9004"]]
    with open(course.roster_path, "w", newline="") as handle:
        csv.writer(handle).writerows(rows)
    with pytest.raises(LmsError, match="dee has none of canvas_id, sis_user_id, sis_login_id"):
        write_lms_grades(course, Settings("canvas"))
    with pytest.raises(LmsError, match="dee has no email"):
        write_lms_grades(course, Settings("moodle"))
    course.roster_path.unlink()
    with pytest.raises(LmsError, match="roster.csv is missing"):
        write_lms_grades(course, Settings("moodle"))


def test_lms_toml_naming_an_assignment_without_grades_is_an_error(course):
    (course.root / "lms.toml").write_text('[canvas.columns]\n"01_intr" = "Notebook 1"\n')
    with pytest.raises(LmsError, match="01_intr; graded: 01_intro, 02_more"):
        write_lms_grades(course, load_settings(course, "canvas"))


def test_make_grades_format_writes_the_file_and_says_what_it_did(course, capsys):
    root = ["--course-root", str(course.root)]
    assert main(["grades", "--format", "canvas", "--late-penalty", "10%/day, max 50%",
                 "--missing-as-zero", *root]) == 0
    out = capsys.readouterr().out
    assert "bob 02_more: 172801 s late, -30% (10%/day, max 50%): 3 -> 2.1" in out
    assert "cy 01_intro: missing, 0 (missing as zero)" in out
    assert out.endswith(f"wrote {course.root / 'grades_canvas.csv'}\n")
    assert not (course.root / "grades.csv").exists()
    assert main(["grades", "--format", "moodle", "--late-penalty", "10%/week", *root]) == 2
    assert "10%/day, max 50%" in capsys.readouterr().err
    assert main(["grades", *root]) == 0  # without a format: grades.csv, as before
    assert (course.root / "grades.csv").exists()
