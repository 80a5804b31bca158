"""Grades back to the LMS: the gradebook import files of Canvas and Moodle.

``make grades FORMAT=canvas`` writes ``grades_canvas.csv``, ``FORMAT=moodle``
``grades_moodle.csv``, from the grade rows (``grades.grade_rows``): one row per
student of ``roster.csv`` and one column per assignment, in the roster's order.

- Canvas (*Grades → Import*): the columns of Canvas's own gradebook export, ``Student, ID,
  SIS User ID, SIS Login ID, Section``, then one per assignment, and a second row
  ``Points Possible``. Canvas finds each student by ``ID`` (its user id), else ``SIS User
  ID``, else ``SIS Login ID`` (the roster must give one of them), and each assignment by the
  id in its column's title, ``Title (12345)``, else by the exact title; a column it does not
  find becomes a new assignment (its points from the Points Possible row) when the
  instructor accepts the import. UTF-8 with a byte-order mark, as Canvas's exports can be
  (its importer reads the header with or without one; Excel needs it for accents).
- Moodle (*Grade administration → Import → CSV file*): one identifier column (``Email
  address``, ``Username`` or ``ID number``, from the roster's ``email``, ``username`` or
  ``idnumber``) and one column per grade item; the form then maps the identifier and each
  column to a grade item (or a new one). UTF-8 without a byte-order mark, comma-separated.

A cell is left blank (both read it as "no grade") unless the submission is graded:
missing (nothing submitted; 0 with ``missing_as_zero``), not graded (the grader failed:
never 0, which would blame the student) or waiting for a written answer's grade. Scores
have a dot and at most two decimals (Canvas's own precision). A late penalty
(``grader.outputs.late_penalty``), when the course has one, lowers late scores. What was left blank,
penalised or left out (students not on the roster) comes back as notes to print.

The course's settings are ``lms.toml`` beside ``nbgrader_config.py`` (all optional)::

    late_penalty = "10%/day, max 50%"   # LATE_PENALTY=... overrides it
    missing_as_zero = false             # MISSING_AS_ZERO=1 overrides it

    [canvas.columns]                    # assignment = the title of its Canvas column
    04_alpha3_by_hand = "Notebook 04: alpha3 by hand (48213)"

    [moodle]
    identifier = "email"                # or "username", "idnumber"
    [moodle.columns]
    04_alpha3_by_hand = "Notebook 04"
"""

import csv
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry

from grader.course import Course
from grader.outputs.late_penalty import LatePenalty
from grader.scoring import grades
from grader.state import Status

SETTINGS_FILE = "lms.toml"
CANVAS_HEADER = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
CANVAS_ROSTER = ["name", "canvas_id", "sis_user_id", "sis_login_id", "section"]
CANVAS_IDS = ["canvas_id", "sis_user_id", "sis_login_id"]  # Canvas finds a student by these
MOODLE_IDENTIFIERS = {"email": "Email address", "username": "Username", "idnumber": "ID number"}


class LmsError(ValueError):
    """Something the instructor must fix first: the roster or lms.toml."""


@dataclass
class Settings:
    """How this course's grades go to its LMS (lms.toml, then the command line's options)."""

    lms: str  # "canvas" or "moodle"
    columns: dict[str, str] = field(default_factory=dict)  # assignment -> column title
    moodle_identifier: str = "email"
    late_penalty: LatePenalty | None = None
    missing_as_zero: bool = False


def load_settings(course: Course, lms: str, late_penalty: str | None = None,
                  missing_as_zero: bool | None = None) -> Settings:
    """``lms.toml``'s settings for ``lms``, with the options given here in their place."""
    path = course.root / SETTINGS_FILE
    try:
        table = tomllib.loads(path.read_text()) if path.exists() else {}
    except tomllib.TOMLDecodeError as error:
        raise LmsError(f"{path}: {error}") from None
    section = table.get(lms, {})
    settings = Settings(lms, dict(section.get("columns", {})),
                        section.get("identifier", "email"),
                        missing_as_zero=bool(table.get("missing_as_zero", False)))
    if missing_as_zero is not None:
        settings.missing_as_zero = missing_as_zero
    penalty = late_penalty if late_penalty is not None else table.get("late_penalty")
    if penalty:
        try:
            settings.late_penalty = LatePenalty.parse(penalty)
        except ValueError as error:
            raise LmsError(str(error)) from None
    if settings.moodle_identifier not in MOODLE_IDENTIFIERS:
        raise LmsError(f"{path}: [moodle] identifier: expected one of "
                       f"{', '.join(MOODLE_IDENTIFIERS)}, got {settings.moodle_identifier!r}")
    return settings


def roster_people(course: Course) -> dict[str, dict[str, str]]:
    """{student_id: that student's row of roster.csv}, in the roster's order."""
    path = course.roster_path
    if not path.exists():
        raise LmsError(f"{path} is missing: the LMS's files need a roster with a column "
                       f"student_id and the LMS's identifiers of each student (Canvas: "
                       f"{', '.join(CANVAS_ROSTER)}; Moodle: {', '.join(MOODLE_IDENTIFIERS)})")
    with open(path, newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        if "student_id" not in (reader.fieldnames or []):
            raise LmsError(f"{path}: expected a column student_id, found {reader.fieldnames}")
        rows = [{key: (value or "").strip() for key, value in row.items() if key}
                for row in reader]
    return {row["student_id"]: row for row in rows if row["student_id"]}


def number(value: float) -> str:
    """A score as both LMSs read it: a dot, at most two decimals, no trailing zeros."""
    return f"{round(value, 2):.2f}".rstrip("0").rstrip(".")


def cell(row: grades.GradeRow, settings: Settings) -> tuple[str, str]:
    """(the LMS's cell, a note saying what was done) for one grade row."""
    where = f"{row.student_id} {row.assignment}"
    if row.status == Status.MISSING:
        if settings.missing_as_zero:
            return "0", f"{where}: missing, 0 (missing as zero)"
        return "", f"{where}: missing, left blank"
    if row.status != Status.GRADED:
        reason = f" ({row.reason})" if row.reason else ""
        return "", f"{where}: {row.status}{reason}, left blank"
    score, late = row.score, row.seconds_late
    if settings.late_penalty is None or not late:
        return number(score), ""
    percent = settings.late_penalty.percent_for(late)
    penalised = score * (1 - percent / 100)
    return number(penalised), (f"{where}: {late} s late, -{percent:g}% "
                               f"({settings.late_penalty}): {number(score)} -> "
                               f"{number(penalised)}")


def column_titles(assignments: list[str], settings: Settings) -> list[str]:
    """Each assignment's column title: lms.toml's, or the assignment's id."""
    unknown = sorted(set(settings.columns) - set(assignments))
    if unknown:
        raise LmsError(f"{SETTINGS_FILE} [{settings.lms}.columns] names assignments without "
                       f"grades: {', '.join(unknown)}; graded: {', '.join(assignments)}")
    titles = [settings.columns.get(assignment, assignment) for assignment in assignments]
    if len(set(titles)) < len(titles):
        raise LmsError(f"{SETTINGS_FILE} [{settings.lms}.columns]: two assignments share a "
                       f"title: {titles}")
    return titles


def identity(person: dict[str, str], settings: Settings) -> list[str]:
    """The student's identifying cells: Canvas's five columns, or Moodle's identifier."""
    if settings.lms == "canvas":
        if not any(person.get(column) for column in CANVAS_IDS):
            raise LmsError(f"roster.csv: {person['student_id']} has none of "
                           f"{', '.join(CANVAS_IDS)}, by which Canvas finds a student")
        return [person.get(column, "") for column in CANVAS_ROSTER]
    value = person.get(settings.moodle_identifier, "")
    if not value:
        raise LmsError(f"roster.csv: {person['student_id']} has no "
                       f"{settings.moodle_identifier}, by which Moodle finds a student "
                       f"(Moodle stops the whole import at a row it cannot match)")
    return [value]


def points_possible(course: Course, assignments: list[str]) -> list[str]:
    """Each assignment's maximum score, from the gradebook."""
    points = []
    with Gradebook(course.gradebook_url) as book:
        for assignment in assignments:
            try:
                points.append(number(book.find_assignment(assignment).max_score))
            except MissingEntry:
                points.append("")
    return points


def table(course: Course, settings: Settings) -> tuple[list[list[str]], list[str]]:
    """(the file's rows, the notes: what was penalised, left blank or left out)."""
    people = roster_people(course)
    rows = grades.grade_rows(course)
    assignments = sorted({row.assignment for row in rows})
    by_key = {(row.student_id, row.assignment): row for row in rows}
    titles = column_titles(assignments, settings)
    if settings.lms == "canvas":
        lines = [CANVAS_HEADER + titles,
                 ["Points Possible", "", "", "", "", *points_possible(course, assignments)]]
    else:
        lines = [[MOODLE_IDENTIFIERS[settings.moodle_identifier], *titles]]
    notes = []
    for student, person in people.items():
        cells = [cell(by_key[student, assignment], settings) for assignment in assignments]
        lines.append(identity(person, settings) + [value for value, _ in cells])
        notes += [note for _, note in cells if note]
    outsiders = sorted({row.student_id for row in rows} - set(people))
    notes += [f"{student}: not on the roster, left out" for student in outsiders]
    return lines, notes


def write_lms_grades(course: Course, settings: Settings,
                     path: Path | None = None) -> tuple[Path, list[str]]:
    """Write ``grades_<lms>.csv`` (RFC 4180 quoting, CRLF); returns it and the notes."""
    lines, notes = table(course, settings)
    path = path or course.root / f"grades_{settings.lms}.csv"
    encoding = "utf-8-sig" if settings.lms == "canvas" else "utf-8"
    with open(path, "w", newline="", encoding=encoding) as handle:
        csv.writer(handle).writerows(lines)
    return path, notes
