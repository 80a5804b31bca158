"""What a submission folder holds, checked before any kernel starts, and when it came.

A submission that cannot be a notebook (not UTF-8, not JSON, not nbformat) or has no
notebook is not graded, with the reason; a notebook saved under another name
(``04_alpha3_by_hand (1).ipynb``) is reported by name and graded as the assignment's
notebook when it is the only one.

    inspect(course, student, assignment)      the folder read and checked: a Submission
    submitted_at(course, student, assignment)  its time (timestamp.txt), None without one
    write_timestamp(folder, when)              timestamp.txt as nbgrader's collectors write it
    seconds_late(submitted, due)               0 when on time, None when either is unknown

nbgrader's exchange writes ``timestamp.txt`` beside a submission, and so does the collect of
an LMS's zip (:mod:`grader.intake.lms_zip`): lateness, and a late penalty, read it alone.
"""

import hashlib
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import nbformat
from nbgrader.utils import parse_utc

from grader import state
from grader.course import TIMESTAMP, Course


@dataclass
class Submission:
    """One student's folder for one assignment, as found on disk."""

    student: str
    assignment: str
    files: dict[str, bytes] = field(default_factory=dict)  # as graded (renamed if needed)
    notebook: nbformat.NotebookNode | None = None
    problem: str = ""  # why it cannot be graded; "" when it can
    notes: list[str] = field(default_factory=list)  # what the TA should know

    @property
    def name(self) -> str:
        return state.key(self.student, self.assignment)

    def fingerprint(self, source: bytes) -> str:
        """sha256 of the files and of the instructor source they are graded against."""
        digest = hashlib.sha256(source)
        for relative in sorted(self.files):
            digest.update(relative.encode() + b"\0" + self.files[relative] + b"\0")
        return digest.hexdigest()


def read_notebook(content: bytes) -> tuple[nbformat.NotebookNode | None, str]:
    """(the notebook, "") or (None, why these bytes are not a notebook)."""
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError as error:
        return None, f"the notebook is not UTF-8 text (byte {error.start}: {error.reason})"
    try:
        json.loads(text)
    except json.JSONDecodeError as error:
        return None, f"the notebook is not JSON ({error.msg} at line {error.lineno})"
    try:
        notebook = nbformat.reads(text, as_version=4)
        nbformat.validate(notebook)
    except Exception as error:  # noqa: BLE001 - nbformat raises several kinds
        return None, f"the file is JSON but not a notebook ({type(error).__name__})"
    return notebook, ""


def inspect(course: Course, student: str, assignment: str) -> Submission:
    """Read ``student``'s folder of ``assignment``; never raises for what is in it."""
    folder = course.folder("submitted", student, assignment)
    submission = Submission(student, assignment)
    submission.files = {
        str(path.relative_to(folder)): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and ".ipynb_checkpoints" not in path.parts
    }
    expected = f"{assignment}.ipynb"
    if expected not in submission.files:
        others = [name for name in submission.files if name.endswith(".ipynb")]
        if len(others) != 1:
            found = ", ".join(sorted(submission.files)) or "nothing"
            submission.problem = f"no {expected} in the submission (found: {found})"
            return submission
        submission.notes.append(f"saved as {others[0]!r}: graded as {expected}")
        submission.files[expected] = submission.files.pop(others[0])
    submission.notebook, submission.problem = read_notebook(submission.files[expected])
    return submission


def submitted_at(course: Course, student: str, assignment: str) -> datetime | None:
    """The UTC time of the collected submission (its timestamp.txt), None without one."""
    path = course.folder("submitted", student, assignment) / TIMESTAMP
    try:
        return parse_utc(path.read_text().strip())
    except (OSError, ValueError, OverflowError):
        return None


def write_timestamp(folder: Path, when: datetime) -> None:
    """``folder/timestamp.txt`` saying ``when`` (naive: this machine's time), in UTC with
    its offset, as nbgrader's ``parse_utc`` reads it."""
    if not isinstance(when, datetime):
        raise TypeError(f"when: expected a datetime, got {type(when).__name__}")
    (folder / TIMESTAMP).write_text(when.astimezone(UTC).isoformat(" "))


def seconds_late(submitted: datetime | None, due: datetime | None) -> int | None:
    """Whole seconds after ``due`` (0 when on time), None when either time is unknown."""
    if submitted is None or due is None:
        return None
    return max(0, round((submitted - due).total_seconds()))
