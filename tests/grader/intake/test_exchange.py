"""The exchange as a TA meets it: due dates, lateness, what collect reports, and an exchange
that is missing or read-only (each message says how to fix it). No nbgrader run: the
exchange's folders are laid out as nbgrader's submit names them; tests/hub runs the
real exchange end to end."""

import os
import shutil
import time
from datetime import datetime
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from grader.__main__ import main
from grader.course import Course
from grader.intake import exchange, submissions
from grader.scoring import grades
from tests.conftest import REPO
from tests.grader.tiny_course import ASSIGNMENT, tiny_source

DUE = datetime(2026, 6, 1, 15, 0)  # UTC


@pytest.fixture
def course(tmp_path, monkeypatch) -> Course:
    """A course over ``tiny`` (not released) whose exchange is tmp_path/exchange."""
    monkeypatch.setenv("COURSE_EXCHANGE", str(tmp_path / "exchange"))
    (tmp_path / "grading").mkdir()
    shutil.copy(REPO / "grading" / "nbgrader_config.py", tmp_path / "grading")
    (tmp_path / "solutions" / ASSIGNMENT).mkdir(parents=True)
    nbformat.write(tiny_source(), tmp_path / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")
    return Course(tmp_path / "grading")


def submitted(course: Course, student: str, timestamp: str | None) -> None:
    """``student``'s collected submission, with nbgrader's timestamp.txt if ``timestamp``."""
    folder = course.folder("submitted", student, ASSIGNMENT)
    folder.mkdir(parents=True)
    (folder / f"{ASSIGNMENT}.ipynb").write_text("{}")
    if timestamp:
        (folder / "timestamp.txt").write_text(timestamp)


def in_exchange(course: Course, *names: str) -> None:
    """Submission folders in the course's inbound, named as nbgrader's submit names them."""
    for name in names:
        (exchange.course_folder(course) / "inbound" / name).mkdir(parents=True)


def test_a_due_date_is_iso_8601_kept_in_utc(monkeypatch):
    assert exchange.parse_duedate("2026-06-01T17:00+02:00") == DUE
    assert exchange.parse_duedate("2026-06-01 15:00Z") == DUE
    monkeypatch.setenv("TZ", "Europe/Paris")  # a time without an offset is the machine's
    time.tzset()
    try:
        assert exchange.parse_duedate("2026-06-01 17:00") == DUE  # summer time: UTC+2
        assert exchange.parse_duedate("2026-01-15 17:00") == datetime(2026, 1, 15, 16, 0)
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
    with pytest.raises(ValueError, match="ISO 8601.*'next friday'"):
        exchange.parse_duedate("next friday")
    with pytest.raises(TypeError, match="expected a string, got int"):
        exchange.parse_duedate(20260601)


def test_the_command_line_says_what_a_due_date_looks_like(capsys):
    with pytest.raises(SystemExit):
        main(["publish", "--duedate", "next friday"])
    assert "--duedate: due date: expected ISO 8601" in capsys.readouterr().err


def test_lateness_is_whole_seconds_after_the_due_date():
    assert submissions.seconds_late(datetime(2026, 6, 1, 16, 30), DUE) == 5400
    assert submissions.seconds_late(datetime(2026, 6, 1, 15, 0, 0, 600_000), DUE) == 1
    assert submissions.seconds_late(datetime(2026, 5, 30), DUE) == 0
    assert submissions.seconds_late(None, DUE) is None
    assert submissions.seconds_late(datetime(2026, 6, 2), None) is None


def test_publishing_creates_a_missing_exchange_that_everyone_may_write(course, tmp_path):
    folder = exchange.ready_to_publish(course)
    assert folder == tmp_path / "exchange"
    assert folder.stat().st_mode & 0o777 == 0o777


def test_an_exchange_that_cannot_be_created_or_written_says_how_to_fix_it(course, tmp_path,
                                                                          monkeypatch, capsys):
    folder = tmp_path / "exchange"
    fix = f"sudo mkdir -p {folder} && sudo chmod ugo+rwx {folder}"

    def refused(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    with monkeypatch.context() as patch:
        patch.setattr(Path, "mkdir", refused)
        with pytest.raises(exchange.ExchangeUnavailable, match="does not exist") as missing:
            exchange.ready_to_publish(course)
    assert fix in str(missing.value) and "COURSE_EXCHANGE" in str(missing.value)

    folder.mkdir()
    monkeypatch.setattr(os, "access", lambda path, mode: False)  # root writes anyway
    with pytest.raises(exchange.ExchangeUnavailable, match="not a folder you can write") as ro:
        exchange.ready_to_publish(course)
    assert fix in str(ro.value)
    assert main(["publish", "--course-root", str(course.root)]) == 2  # nothing else ran
    assert fix in capsys.readouterr().err


def test_a_relative_exchange_is_refused(tmp_path, monkeypatch, course):
    monkeypatch.setenv("COURSE_EXCHANGE", "exchange")
    with pytest.raises(ValueError, match="absolute path.*'exchange'"):
        exchange.root(Course(course.root))


def test_collecting_without_a_published_assignment_says_to_publish_first(course, tmp_path):
    with pytest.raises(exchange.ExchangeUnavailable, match="make publish"):
        exchange.ready_to_collect(course)
    (tmp_path / "exchange").mkdir()
    with pytest.raises(exchange.ExchangeUnavailable, match=f"Nothing of the course "
                       f"{course.directory.course_id} was published"):
        exchange.ready_to_collect(course)


def test_collect_reports_resubmissions_late_work_and_students_off_the_roster(course):
    in_exchange(course, f"ada+{ASSIGNMENT}+2026-06-01 14:00:00.000000 UTC+Xa1",
                f"ada+{ASSIGNMENT}+2026-06-01 14:30:00.000000 UTC+Xa2",
                f"zed+{ASSIGNMENT}+2026-06-01 16:01:05.000000 UTC+Xz1")
    submitted(course, "ada", "2026-06-01 14:30:00.000000 UTC")
    submitted(course, "zed", "2026-06-01 16:01:05.000000 UTC")
    course.roster_path.write_text("student_id\nada\n")
    with Gradebook(course.gradebook_url) as book:
        book.add_assignment(ASSIGNMENT, duedate=DUE)
    assert exchange.inbound(course, ASSIGNMENT) == {
        "ada": [datetime(2026, 6, 1, 14, 0), datetime(2026, 6, 1, 14, 30)],
        "zed": [datetime(2026, 6, 1, 16, 1, 5)]}
    assert exchange.collect_report(course, ASSIGNMENT) == [
        f"{ASSIGNMENT}: 2 students in the exchange, due 2026-06-01 15:00 UTC",
        "  ada: submitted 2 times; the latest (2026-06-01 14:30:00 UTC) is collected, "
        "all stay in the exchange",
        "  zed: late by 1:01:05 (h:mm:ss)",
        "  zed: not on the roster (roster.csv)",
    ]


def test_grades_show_when_each_submission_came_and_how_late(course):
    submitted(course, "ada", "2026-06-01 14:30:00.000000 UTC")
    submitted(course, "zed", "2026-06-01 17:00:00+02:00")  # with an offset: 15:00 UTC
    submitted(course, "lms", None)  # put there by hand: no timestamp
    course.roster_path.write_text("student_id\nada\nzed\nlms\nbea\n")
    with Gradebook(course.gradebook_url) as book:
        book.add_assignment(ASSIGNMENT, duedate=datetime(2026, 6, 1, 14, 0))
    rows = {row.student_id: row for row in grades.grade_rows(course)}
    assert (rows["ada"].timestamp, rows["ada"].seconds_late) == ("2026-06-01T14:30:00Z",
                                                                       1800)
    assert (rows["zed"].timestamp, rows["zed"].seconds_late) == ("2026-06-01T15:00:00Z",
                                                                       3600)
    assert (rows["lms"].timestamp, rows["lms"].seconds_late) == ("", None)
    assert (rows["bea"].status, rows["bea"].seconds_late) == ("missing", None)
    assert set(grades.COLUMNS) >= {"timestamp", "seconds_late"}
