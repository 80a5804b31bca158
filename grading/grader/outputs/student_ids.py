"""The id each student of the roster must set before starting, told to them in advance.

Notebook 04's numbers worked by hand are drawn from the student's id, and the grading
checks them against the id the submission is filed under: numbers worked under another
id score 0. On the course server the id is the login; for a course graded from an LMS
zip it is the folder ``make collect ZIP=...`` files the student under
(grader.intake.lms_zip: the roster's ``student_id`` when it is the LMS id, ``<name>_<LMS id>`` or
``<name>`` as the LMS writes them, else ``<name>``). ``make student-ids`` works that out
for every student of ``roster.csv`` with collect's own rule, from the roster's ``name``
(as the LMS writes it in its zip: Canvas's sortable name "Doe, Jane", Moodle's full name)
and ``canvas_id`` (Canvas's user id), and writes ``student_ids.csv``: ``student_id``,
``name``, ``course_student`` (the id to set: ``COURSE_STUDENT=<it> make lab``) and
``note`` (why it differs from the roster's id, which the TA should then fix in the roster).
"""

import csv
from collections import Counter
from datetime import datetime
from pathlib import Path

from grader.course import Course
from grader.intake import lms_zip
from grader.outputs.lms_grades import roster_people

COLUMNS = ("student_id", "name", "course_student", "note")
NO_TIME = datetime(1980, 1, 1)  # an entry's time: collect's rule does not read it


def ids_to_set(course: Course) -> list[dict[str, str]]:
    """One row per roster student (``COLUMNS``), in the roster's order."""
    people = roster_people(course)
    entries = {student: lms_zip.Entry(member="", name=person.get("name") or None,
                                      lms_id=person.get("canvas_id", ""), filename="",
                                      late=False, file_id=0, time=NO_TIME)
               for student, person in people.items()}
    filed, _ = lms_zip.student_ids([e for e in entries.values() if e.name or e.lms_id],
                                   course.roster())
    named = {student: filed.get((entry.name, entry.lms_id), student)
             for student, entry in entries.items()}
    shared = Counter(named.values())
    rows = []
    for student, person in people.items():
        note = ""
        if shared[named[student]] > 1:
            note = (f"shares {named[student]} with another student of the same name: give "
                    "both their LMS id (canvas_id) in roster.csv")
        elif named[student] != student:
            note = (f"collect files this student as {named[student]}, not as the roster's "
                    f"{student}: key roster.csv by the LMS's id or the name as the LMS "
                    "writes it")
        rows.append({"student_id": student, "name": person.get("name", ""),
                     "course_student": named[student], "note": note})
    return rows


def write_student_ids(course: Course, path: Path | None = None) -> tuple[Path, list[dict]]:
    """Write ``student_ids.csv`` beside the roster; (its path, its rows)."""
    path = path or course.root / "student_ids.csv"
    rows = ids_to_set(course)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    return path, rows
