"""What the last grading run decided for each submission, kept beside the gradebook.

``autograde_state.json`` maps ``student/assignment`` to the fingerprint that was graded
(so that a rerun grades only new or changed submissions), the status, the reason and
the flags, which grades.csv and the class report show.
"""

import json
from dataclasses import asdict, dataclass, field

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


def load(course: Course) -> dict[str, Outcome]:
    path = course.root / FILE_NAME
    if not path.exists():
        return {}
    return {name: Outcome(**fields) for name, fields in json.loads(path.read_text()).items()}


def save(course: Course, outcomes: dict[str, Outcome]) -> None:
    path = course.root / FILE_NAME
    ordered = {name: asdict(outcomes[name]) for name in sorted(outcomes)}
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(ordered, indent=1, ensure_ascii=False))
    temporary.replace(path)  # atomic: a crash never leaves half a file
