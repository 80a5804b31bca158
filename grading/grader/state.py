"""What the last grading run decided for each submission, kept beside the gradebook.

``autograde_state.json`` maps ``student/assignment`` to the fingerprint that was graded
(so that a rerun grades only new or changed submissions), the status, the reason and
the flags, which grades.csv and the class report show.
"""

import json
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from grader.course import Course

FILE_NAME = "autograde_state.json"
# The status of a submission planned for grading whose result is not in yet: left by a run
# that was interrupted, it is graded again by the next.
GRADING = "grading"


@dataclass
class Outcome:
    status: str  # "graded", "not graded", or GRADING until its result is in
    reason: str = ""
    flags: list[str] = field(default_factory=list)
    fingerprint: str = ""


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
