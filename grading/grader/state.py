"""What the last grading run decided for each submission, kept beside the gradebook.

``autograde_state.json`` maps ``student/assignment`` (:func:`key`) to the fingerprint that
was graded (so that a rerun grades only new or changed submissions), the status, the reason
and the flags, which grades.csv and the class report show. :class:`Status` names every
status a submission can have, here and in grades.csv.
"""

import json
import tempfile
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from pathlib import Path

from grader.course import Course

FILE_NAME = "autograde_state.json"


class Status(StrEnum):
    """A submission's status: strings as grades.csv and autograde_state.json write them."""

    GRADED = "graded"  # every point is in
    NEEDS_MANUAL_GRADING = "needs manual grading"  # a written answer waits for a TA
    NOT_GRADED = "not graded"  # the reason says why
    MISSING = "missing"  # a student of the roster who submitted nothing
    # planned for grading, its result not in yet: left by a run that was interrupted, it
    # is graded again by the next (autograde_state.json only)
    GRADING = "grading"


def key(student: str, assignment: str) -> str:
    """The name of one student's submission of one assignment: ``student/assignment``."""
    return f"{student}/{assignment}"


def split_key(name: str) -> tuple[str, str]:
    """``(student, assignment)`` of a :func:`key`."""
    student, assignment = name.split("/")
    return student, assignment


@dataclass
class Outcome:
    status: Status  # GRADED, NOT_GRADED, or GRADING until its result is in
    reason: str = ""
    flags: list[str] = field(default_factory=list)
    fingerprint: str = ""

    def __post_init__(self):
        self.status = Status(self.status)  # as read back from JSON: one spelling, or ValueError


def read_records(path: Path, record_type: type) -> dict:
    """``{key: record_type(**fields)}`` from a JSON file written by :func:`write_records`
    (empty when there is none yet)."""
    if not path.exists():
        return {}
    return {key: record_type(**fields) for key, fields in json.loads(path.read_text()).items()}


def write_json(path: Path, data: dict) -> None:
    """``data`` as JSON at ``path``, replaced atomically through a temporary file of its
    own: a crash never leaves half a file, and two processes writing at once never share
    one temporary name."""
    with tempfile.NamedTemporaryFile("w", dir=path.parent, prefix=f".{path.name}.",
                                     delete=False) as temporary:
        json.dump(data, temporary, indent=1, ensure_ascii=False)
    Path(temporary.name).replace(path)


def write_records(path: Path, records: dict) -> None:
    """``records`` (dataclasses by key) as JSON, keys sorted (:func:`write_json`)."""
    write_json(path, {key: asdict(records[key]) for key in sorted(records)})


def load(course: Course) -> dict[str, Outcome]:
    return read_records(course.root / FILE_NAME, Outcome)


def save(course: Course, outcomes: dict[str, Outcome]) -> None:
    write_records(course.root / FILE_NAME, outcomes)
