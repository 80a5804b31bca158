"""collect_zip: Canvas's and Moodle's zips filed under submitted/, every problem reported."""

import os
import shutil
import zipfile
from datetime import datetime

import nbformat
import pytest

from grader.course import TIMESTAMP, Course
from grader.intake.lms_zip import collect_zip
from grader.intake.submissions import submitted_at
from tests.conftest import REPO

SKIPGRAM, ALPHA = "02_skipgram", "04_alpha3_by_hand"
MAY_1 = (2024, 5, 1, 10, 0, 0)


def notebook(text: str) -> bytes:
    """A tiny valid notebook whose one cell says ``text`` (so each version is told apart)."""
    cell = nbformat.v4.new_code_cell(text, id="the-cell")
    return nbformat.writes(nbformat.v4.new_notebook(cells=[cell])).encode()


@pytest.fixture
def tmp_course(tmp_path) -> Course:
    """A course over two assignments, with stub instructor notebooks and no submission."""
    (tmp_path / "grading").mkdir()
    shutil.copy(REPO / "grading" / "nbgrader_config.py", tmp_path / "grading")
    for assignment in (SKIPGRAM, ALPHA):
        (tmp_path / "solutions" / assignment).mkdir(parents=True)
        (tmp_path / "solutions" / assignment / f"{assignment}.ipynb").write_bytes(notebook("x"))
    return Course(tmp_path / "grading")


def make_zip(path, files: dict[str, bytes], times: dict[str, tuple] | None = None):
    """A zip of ``files`` (its member: content), dated 1 May 2024 unless ``times`` says."""
    with zipfile.ZipFile(path, "w") as archive:
        for member, content in files.items():
            archive.writestr(zipfile.ZipInfo(member, (times or {}).get(member, MAY_1)), content)
    return path


def submitted(course: Course, student: str, assignment: str):
    """Where ``student``'s notebook of ``assignment`` is expected."""
    return course.root / "submitted" / student / assignment / f"{assignment}.ipynb"


def filed_files(course: Course) -> set[str]:
    """Every file under the course's submitted/, as student/assignment/name, but the
    timestamp.txt beside each notebook (the tests of the zip's times read it)."""
    root = course.root / "submitted"
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()
            and p.name != TIMESTAMP}


def the_problem(report, kind: str, member: str) -> str:
    """The one problem line of this kind naming this member of the zip."""
    lines = [line for line in report.problems if line.startswith(kind + ":") and member in line]
    assert len(lines) == 1, f"{kind} {member!r} in {report.problems}"
    return lines[0]


CANVAS = {
    f"doejane_101_9001_{ALPHA}.ipynb": notebook("jane 04"),
    f"doejane_101_9002_{SKIPGRAM}.ipynb": notebook("jane 02"),
    f"smithbob_LATE_102_9003_{ALPHA}-1.ipynb": notebook("bob first"),
    f"smithbob_LATE_102_9004_{ALPHA}-2.ipynb": notebook("bob second"),
    f"leeann_103_9005_Copy of {ALPHA}.ipynb": notebook("ann 04"),
    "leeann_103_9006_data.csv": b"a,b\n1,2\n",
    "leeann_103_9007_helper.py": b"import numpy\n",
    f"kimsam_104_9008_{SKIPGRAM}.ipynb": b"\xff\xfe not a notebook",
    f"kimsam_104_9009_{ALPHA}.pdf": b"%PDF-1.4",
    "parkjo_105_9010_homework.ipynb": notebook("jo"),
    f"anon_x7Yq2_9011_{SKIPGRAM}.ipynb": notebook("anonymous"),
    "random_notes.txt": b"whose?",
}


def test_canvas_zip_files_each_notebook_and_reports_each_problem(tmp_course, tmp_path):
    # Canvas's file ids tell the order of uploads, whatever the zip's times say
    times = {f"smithbob_LATE_102_9003_{ALPHA}-1.ipynb": (2024, 5, 1, 11, 0, 0)}
    report = collect_zip(tmp_course, make_zip(tmp_path / "canvas.zip", CANVAS, times))

    assert filed_files(tmp_course) == {
        f"doejane/{ALPHA}/{ALPHA}.ipynb",
        f"doejane/{SKIPGRAM}/{SKIPGRAM}.ipynb",
        f"smithbob/{ALPHA}/{ALPHA}.ipynb",
        f"leeann/{ALPHA}/{ALPHA}.ipynb",
        f"kimsam/{SKIPGRAM}/{SKIPGRAM}.ipynb",
        f"kimsam/{ALPHA}/{ALPHA}.pdf",
        f"anon_x7Yq2/{SKIPGRAM}/{SKIPGRAM}.ipynb",
    }
    assert len(report.filed) == 7
    assert ("doejane", ALPHA, submitted(tmp_course, "doejane", ALPHA)) in report.filed
    assert submitted(tmp_course, "doejane", ALPHA).read_bytes() == notebook("jane 04")
    assert submitted(tmp_course, "smithbob", ALPHA).read_bytes() == notebook("bob second")
    assert submitted(tmp_course, "leeann", ALPHA).read_bytes() == notebook("ann 04")
    # not a notebook: filed byte for byte all the same, so that grading says why
    assert submitted(tmp_course, "kimsam", SKIPGRAM).read_bytes() == b"\xff\xfe not a notebook"

    versions = the_problem(report, "several versions", f"smithbob/{ALPHA}")
    assert f"newest 'smithbob_LATE_102_9004_{ALPHA}-2.ipynb'" in versions
    assert f"not filed: 'smithbob_LATE_102_9003_{ALPHA}-1.ipynb'" in versions
    the_problem(report, "misnamed", f"smithbob_LATE_102_9004_{ALPHA}-2.ipynb")
    the_problem(report, "misnamed", f"leeann_103_9005_Copy of {ALPHA}.ipynb")
    the_problem(report, "late", f"smithbob_LATE_102_9004_{ALPHA}-2.ipynb")
    the_problem(report, "extra file", "leeann_103_9006_data.csv")
    the_problem(report, "extra file", "leeann_103_9007_helper.py")
    assert "not UTF-8" in the_problem(report, "not a notebook", f"kimsam_104_9008_{SKIPGRAM}")
    the_problem(report, "not a notebook", f"kimsam_104_9009_{ALPHA}.pdf")
    the_problem(report, "unknown assignment", "parkjo_105_9010_homework.ipynb")
    the_problem(report, "unknown student", "random_notes.txt")
    assert len(report.problems) == 10  # and nothing else: doejane's and anon's are fine


MOODLE_FILES = {
    f"Jane Doe_4242_assignsubmission_file_/{ALPHA}.ipynb": notebook("jane"),
    # the newer version comes first in the zip: its order must not decide
    f"Bob Smith_4243_assignsubmission_file_/Copy of {ALPHA}.ipynb": notebook("bob at 11"),
    f"Bob Smith_4243_assignsubmission_file_/{ALPHA}.ipynb": notebook("bob at 10"),
    f"Bob Smith_4243_assignsubmission_file_/{SKIPGRAM}.ipynb": notebook("bob 02"),
    f"Bob Smith_4243_assignsubmission_file_/{SKIPGRAM}.py": b"x = 1\n",
    "Ann Lee_4244_assignsubmission_onlinetext_/onlinetext.html": b"<p>hi</p>",
    f"Sam Kim_4245_assignsubmission_file_{SKIPGRAM}.ipynb": notebook("flat layout"),
    f"Sam Kim_4245_assignsubmission_file_{ALPHA} (1).ipynb": notebook("sam second"),
    f"Sam Kim_4245_assignsubmission_file_{ALPHA}.ipynb": notebook("sam first"),
    f"Participant_4246_assignsubmission_file_/sub/{SKIPGRAM}.ipynb": notebook("blind"),
}


def test_moodle_zip_in_folders_flat_and_blind(tmp_course, tmp_path):
    times = {f"Bob Smith_4243_assignsubmission_file_/Copy of {ALPHA}.ipynb": (2024, 5, 1, 11, 0, 0)}
    report = collect_zip(tmp_course, make_zip(tmp_path / "moodle.zip", MOODLE_FILES, times))

    assert filed_files(tmp_course) == {
        f"janedoe/{ALPHA}/{ALPHA}.ipynb",
        f"bobsmith/{ALPHA}/{ALPHA}.ipynb",
        f"bobsmith/{SKIPGRAM}/{SKIPGRAM}.ipynb",
        f"samkim/{SKIPGRAM}/{SKIPGRAM}.ipynb",
        f"samkim/{ALPHA}/{ALPHA}.ipynb",
        f"participant_4246/{SKIPGRAM}/{SKIPGRAM}.ipynb",
    }
    # the later of two versions with no copy number, by the zip's time
    assert submitted(tmp_course, "bobsmith", ALPHA).read_bytes() == notebook("bob at 11")
    path = submitted(tmp_course, "bobsmith", ALPHA)
    assert datetime.fromtimestamp(path.stat().st_mtime) == datetime(2024, 5, 1, 11, 0, 0)
    assert submitted(tmp_course, "samkim", SKIPGRAM).read_bytes() == notebook("flat layout")
    # at the same time, the higher copy number
    assert submitted(tmp_course, "samkim", ALPHA).read_bytes() == notebook("sam second")

    versions = the_problem(report, "several versions", f"bobsmith/{ALPHA}")
    assert f"not filed: 'Bob Smith_4243_assignsubmission_file_/{ALPHA}.ipynb'" in versions
    the_problem(report, "misnamed", f"Copy of {ALPHA}.ipynb")
    the_problem(report, "several versions", f"samkim/{ALPHA}")
    the_problem(report, "misnamed", f"Sam Kim_4245_assignsubmission_file_{ALPHA} (1).ipynb")
    the_problem(report, "extra file", f"Bob Smith_4243_assignsubmission_file_/{SKIPGRAM}.py")
    the_problem(report, "extra file", "Ann Lee_4244_assignsubmission_onlinetext_/onlinetext.html")
    assert len(report.problems) == 6


def test_roster_names_the_ids_and_reports_who_is_not_on_it(tmp_course, tmp_path):
    (tmp_course.root / "roster.csv").write_text("student_id,name\ndoejane,Jane Doe\n102,Bob\n")
    files = {
        f"doejane_101_9001_{ALPHA}.ipynb": notebook("jane"),
        f"smithbob_102_9002_{ALPHA}.ipynb": notebook("bob"),
        f"leeann_103_9003_{ALPHA}.ipynb": notebook("ann"),
    }
    report = collect_zip(tmp_course, make_zip(tmp_path / "canvas.zip", files))

    assert filed_files(tmp_course) == {
        f"doejane/{ALPHA}/{ALPHA}.ipynb",
        f"102/{ALPHA}/{ALPHA}.ipynb",  # the roster keys Bob by his Canvas user id
        f"leeann/{ALPHA}/{ALPHA}.ipynb",
    }
    assert report.problems == ["not on the roster: leeann (leeann)"]


def test_two_students_of_one_name_are_kept_apart(tmp_course, tmp_path):
    files = {
        f"smithjohn_201_9001_{ALPHA}.ipynb": notebook("first john"),
        f"smithjohn_202_9002_{ALPHA}.ipynb": notebook("second john"),
    }
    report = collect_zip(tmp_course, make_zip(tmp_path / "canvas.zip", files))

    assert submitted(tmp_course, "smithjohn_201", ALPHA).read_bytes() == notebook("first john")
    assert submitted(tmp_course, "smithjohn_202", ALPHA).read_bytes() == notebook("second john")
    assert len([line for line in report.problems if line.startswith("same name:")]) == 2


def test_existing_submissions_newer_kept_older_replaced_same_unchanged(tmp_course, tmp_path):
    files = {
        f"doejane_101_9001_{ALPHA}.ipynb": notebook("jane from the zip"),
        f"smithbob_102_9002_{ALPHA}.ipynb": notebook("bob from the zip"),
        f"leeann_103_9003_{ALPHA}.ipynb": notebook("ann"),
    }
    zip_path = make_zip(tmp_path / "canvas.zip", files)
    for student, text, year in (("doejane", "jane's fix", 2030), ("smithbob", "bob old", 2020)):
        path = submitted(tmp_course, student, ALPHA)
        path.parent.mkdir(parents=True)
        path.write_bytes(notebook(text))
        os.utime(path, (datetime(year, 1, 1).timestamp(),) * 2)

    report = collect_zip(tmp_course, zip_path)
    assert submitted(tmp_course, "doejane", ALPHA).read_bytes() == notebook("jane's fix")
    assert submitted(tmp_course, "smithbob", ALPHA).read_bytes() == notebook("bob from the zip")
    the_problem(report, "kept the newer copy", f"doejane_101_9001_{ALPHA}.ipynb")
    the_problem(report, "replaced", f"smithbob_102_9002_{ALPHA}.ipynb")
    assert {student for student, _, _ in report.filed} == {"smithbob", "leeann"}

    again = collect_zip(tmp_course, zip_path)
    assert again.filed == []
    assert {student for student, _, _ in again.unchanged} == {"smithbob", "leeann"}
    assert len(again.problems) == 1  # jane's newer copy, still kept

    forced = collect_zip(tmp_course, zip_path, replace=True)
    assert submitted(tmp_course, "doejane", ALPHA).read_bytes() == notebook("jane from the zip")
    assert [student for student, _, _ in forced.filed] == ["doejane"]


def stamped(course: Course, student: str, assignment: str) -> datetime | None:
    """The submission's time as nbgrader's autograde reads it (its timestamp.txt), in UTC."""
    folder = course.folder("submitted", student, assignment)
    return course.directory.get_existing_timestamp(str(folder))


def test_a_filed_notebook_has_the_zips_time_read_in_this_machines_zone(
    tmp_course, tmp_path, machine_five_hours_behind_utc
):
    files = {
        f"doejane_101_9001_{ALPHA}.ipynb": notebook("jane"),
        f"Bob Smith_4243_assignsubmission_file_/{ALPHA}.ipynb": notebook("bob"),
    }
    times = {f"Bob Smith_4243_assignsubmission_file_/{ALPHA}.ipynb": (2024, 5, 1, 23, 30, 0)}
    collect_zip(tmp_course, make_zip(tmp_path / "lms.zip", files, times))
    # 10:00 and 23:30 on 1 May, five hours behind UTC
    assert stamped(tmp_course, "doejane", ALPHA) == datetime(2024, 5, 1, 15, 0, 0)
    assert stamped(tmp_course, "bobsmith", ALPHA) == datetime(2024, 5, 2, 4, 30, 0)
    assert submitted_at(tmp_course, "bobsmith", ALPHA) == datetime(2024, 5, 2, 4, 30, 0)


def test_a_replaced_notebook_takes_the_zips_time_and_a_kept_one_keeps_its_own(
    tmp_course, tmp_path, machine_five_hours_behind_utc
):
    member = f"doejane_101_9001_{ALPHA}.ipynb"
    first = make_zip(tmp_path / "first.zip", {member: notebook("first")})
    later = {member: (2024, 5, 3, 9, 0, 0)}
    second = make_zip(tmp_path / "second.zip", {member: notebook("second")}, later)
    collect_zip(tmp_course, first)
    assert stamped(tmp_course, "doejane", ALPHA) == datetime(2024, 5, 1, 15, 0, 0)
    collect_zip(tmp_course, second)  # newer and different: replaces
    assert stamped(tmp_course, "doejane", ALPHA) == datetime(2024, 5, 3, 14, 0, 0)
    report = collect_zip(tmp_course, first)  # older: the newer copy and its time are kept
    the_problem(report, "kept the newer copy", member)
    assert stamped(tmp_course, "doejane", ALPHA) == datetime(2024, 5, 3, 14, 0, 0)


def test_only_the_assignments_asked_for(tmp_course, tmp_path):
    files = {
        f"doejane_101_9001_{ALPHA}.ipynb": notebook("jane 04"),
        f"doejane_101_9002_{SKIPGRAM}.ipynb": notebook("jane 02"),
    }
    report = collect_zip(tmp_course, make_zip(tmp_path / "c.zip", files), assignments=[SKIPGRAM])

    assert filed_files(tmp_course) == {f"doejane/{SKIPGRAM}/{SKIPGRAM}.ipynb"}
    the_problem(report, "not asked for", f"doejane_101_9001_{ALPHA}.ipynb")
    with pytest.raises(ValueError, match="05_masked_attention"):
        collect_zip(tmp_course, tmp_path / "c.zip", assignments=["05_masked_attention"])


def test_bad_input_raises_naming_it(tmp_course, tmp_path):
    with pytest.raises(ValueError, match="missing.zip"):
        collect_zip(tmp_course, tmp_path / "missing.zip")
    (tmp_path / "notes.zip").write_text("not a zip")
    with pytest.raises(ValueError, match="notes.zip"):
        collect_zip(tmp_course, tmp_path / "notes.zip")
    with pytest.raises(TypeError, match="Course"):
        collect_zip(str(tmp_course.root), tmp_path / "notes.zip")


def test_summary_counts_and_lists_every_problem(tmp_course, tmp_path):
    files = {
        f"doejane_101_9001_{ALPHA}.ipynb": notebook("jane"),
        f"smithbob_102_9002_{ALPHA} (1).ipynb": notebook("bob"),
        "smithbob_102_9003_data.csv": b"1,2\n",
    }
    text = str(collect_zip(tmp_course, make_zip(tmp_path / "canvas.zip", files)))

    assert text.splitlines()[0] == "Filed 2 files of 2 students. 2 problems:"
    assert f"  misnamed: smithbob_102_9002_{ALPHA} (1).ipynb: filed as {ALPHA}.ipynb" in text
    assert "  extra file: smithbob_102_9003_data.csv" in text


def test_copy_number_is_read_after_the_assignment_id(tmp_course, tmp_path):
    (tmp_path / "solutions" / "09_gpt-2").mkdir()
    (tmp_path / "solutions" / "09_gpt-2" / "09_gpt-2.ipynb").write_bytes(notebook("x"))
    files = {
        "Jane Doe_4242_assignsubmission_file_/09_gpt-2 (1).ipynb": notebook("second"),
        "Jane Doe_4242_assignsubmission_file_/09_gpt-2.ipynb": notebook("first"),
    }
    collect_zip(tmp_course, make_zip(tmp_path / "moodle.zip", files))

    assert submitted(tmp_course, "janedoe", "09_gpt-2").read_bytes() == notebook("second")
