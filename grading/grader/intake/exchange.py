"""nbgrader's exchange for this course: where ``make publish`` puts a release for students
to fetch, and where their servers submit it (the Assignment List of JupyterLab).

    publish(course, assignments, duedate)   the release, its tests and due date recorded
    collect(course, assignments)            each student's latest submission -> submitted/
    release_feedback(course, assignments)   feedback pages -> the exchange, for students
    parse_duedate("2026-06-01 17:00")       a due date in UTC (naive times are this machine's)
    inbound(course, assignment)             {student: [times]} of every submission kept

nbgrader moves the files (``grader.running.nbgrader_steps``); this module checks the folder
first, so that a missing or read-only exchange is one message that says how to fix it, and
tells what nbgrader's collect does not: who submitted more than once (every submission stays in the
exchange, the latest is graded), who was late, who is not on the roster.
"""

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

from nbgrader.api import Gradebook
from nbgrader.exchange.default import Exchange
from nbgrader.utils import parse_utc

from grader import gradebook
from grader.course import SECRET, Course
from grader.intake.submissions import seconds_late, submitted_at
from grader.running import nbgrader_steps

EVERYONE_WRITES = 0o777  # what nbgrader itself gives the exchange root it creates


class ExchangeUnavailable(RuntimeError):
    """The exchange cannot be used as it is; the message says what to run."""


def root(course: Course) -> Path:
    """The exchange folder of ``course``'s nbgrader_config.py (COURSE_EXCHANGE)."""
    configured = course.config.Exchange.get("root", Exchange.class_traits()["root"].default_value)
    if not os.path.isabs(configured):
        raise ValueError(f"the exchange: expected an absolute path (COURSE_EXCHANGE), "
                         f"got {configured!r}")
    return Path(configured)


def course_folder(course: Course) -> Path:
    """The course's folder in the exchange: outbound/, inbound/ and feedback/."""
    return root(course) / course.directory.course_id


def how_to_fix(folder: Path) -> str:
    return (f"Make it writable for everyone once:\n"
            f"    sudo mkdir -p {folder} && sudo chmod ugo+rwx {folder}\n"
            f"or use another folder, for the TA and the hub alike:\n"
            f"    export COURSE_EXCHANGE=/path/you/can/write")


def ready_to_publish(course: Course) -> Path:
    """The exchange root, created if missing; ExchangeUnavailable when we cannot write it."""
    folder = root(course)
    if not folder.exists():
        try:
            folder.mkdir(parents=True)
            folder.chmod(EVERYONE_WRITES)
        except PermissionError:
            raise ExchangeUnavailable(f"The exchange {folder} does not exist and you cannot "
                                      f"create it.\n{how_to_fix(folder)}") from None
    if not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK):
        raise ExchangeUnavailable(f"The exchange {folder} is not a folder you can write.\n"
                                  f"{how_to_fix(folder)}")
    return folder


def ready_to_collect(course: Course) -> Path:
    """The course's inbound folder; ExchangeUnavailable when nothing can be collected."""
    folder, inbound_folder = root(course), course_folder(course) / "inbound"
    if not folder.is_dir():
        raise ExchangeUnavailable(
            f"There is no exchange at {folder}: publish an assignment first (make publish), "
            "or set COURSE_EXCHANGE to the exchange the students' servers use.")
    if not inbound_folder.is_dir():
        raise ExchangeUnavailable(f"Nothing of the course {course.directory.course_id} was "
                                  f"published to {folder}: make publish first.")
    if not os.access(inbound_folder, os.R_OK | os.X_OK):
        raise ExchangeUnavailable(
            f"You cannot read {inbound_folder}: nbgrader lets only its owner (who published "
            f"first) read it. Collect as that user, or: sudo chmod o+r {inbound_folder}")
    return inbound_folder


def parse_duedate(text: str) -> datetime:
    """``text`` (ISO 8601: "2026-06-01 17:00", "2026-06-01T17:00+02:00") in UTC without a
    time zone, as nbgrader keeps times; a time without an offset is this machine's time."""
    if not isinstance(text, str):
        raise TypeError(f"due date: expected a string, got {type(text).__name__}")
    try:
        due = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f"due date: expected ISO 8601 such as '2026-06-01 17:00' or "
                         f"'2026-06-01T17:00+02:00', got {text!r}") from None
    return due.astimezone(UTC).replace(tzinfo=None)


def publish(course: Course, assignments=None, duedate: datetime | None = None) -> dict[str, str]:
    """Put each assignment's student release (notebooks/) in the exchange for students to
    fetch, its tests and ``duedate`` (UTC) in the gradebook, replacing an earlier release.

    Returns {assignment: why it failed}; the others are published. Raises
    ExchangeUnavailable before anything is done when the exchange cannot be written.
    """
    ready_to_publish(course)
    failed = {}
    for assignment in assignments or course.assignments():
        if not gradebook.knows(course, assignment):
            try:
                gradebook.record_tests(course, assignment)
            except RuntimeError as error:
                failed[assignment] = str(error)
                continue
        if duedate is not None:
            with Gradebook(course.gradebook_url, course.directory.course_id) as book:
                book.update_or_create_assignment(assignment, duedate=duedate)
        failed |= nbgrader_steps.publish(course, [assignment])
    return failed


def inbound(course: Course, assignment: str) -> dict[str, list[datetime]]:
    """{student: the times of every submission of ``assignment`` in the exchange, in order}.

    nbgrader names a submission ``student+assignment+timestamp[+random]``.
    """
    folder = course_folder(course) / "inbound"
    times = {}
    for path in sorted(folder.glob(f"*+{assignment}+*")):
        student, _, timestamp = path.name.rsplit("+", 3)[:3]
        times.setdefault(student, []).append(parse_utc(timestamp))
    return {student: sorted(found) for student, found in times.items()}


def collect(course: Course, assignments=None) -> tuple[list[str], dict[str, str]]:
    """Copy each student's latest submission from the exchange to submitted/ (nbgrader's
    collect, newer submissions replacing older ones).

    Returns (what a TA should read, {assignment: why collecting it failed}). Raises
    ExchangeUnavailable when there is no exchange or inbound folder to read.
    """
    ready_to_collect(course)
    assignments = assignments or course.assignments()
    failed = nbgrader_steps.collect(course, assignments)
    lines = []
    for assignment in assignments:
        if assignment not in failed:
            lines += collect_report(course, assignment)
    return lines, failed


def release_feedback(course: Course, assignments: list[str], students=None) -> dict[str, str]:
    """Put the feedback pages of the submissions that came through the exchange (of
    ``students`` only, if given) there for their students to fetch; pages of submissions
    from an LMS's zip stay in feedback/. Returns {assignment: why it failed}."""
    failed = {}
    for assignment in assignments:
        exchanged = [s for s in students or course.students()
                     if (course.folder("feedback", s, assignment) / SECRET).exists()]
        if exchanged:
            ready_to_collect(course)  # the exchange they came from: not a new, empty one
            failed |= nbgrader_steps.release_feedback(course, assignment, exchanged)
    return failed


def collect_report(course: Course, assignment: str) -> list[str]:
    """One line per assignment collected, and one per student submitting several times,
    late, or not on the roster."""
    submissions = inbound(course, assignment)
    roster, due = course.roster(), gradebook.duedate(course, assignment)
    lines = [f"{assignment}: {len(submissions)} students in the exchange"
             + (f", due {due:%Y-%m-%d %H:%M} UTC" if due else ", no due date")]
    for student, times in submissions.items():
        if len(times) > 1:
            lines.append(f"  {student}: submitted {len(times)} times; the latest "
                         f"({times[-1]:%Y-%m-%d %H:%M:%S} UTC) is collected, all stay in the "
                         "exchange")
        late = seconds_late(submitted_at(course, student, assignment), due)
        if late:
            lines.append(f"  {student}: late by {timedelta(seconds=late)} (h:mm:ss)")
        if roster is not None and student not in roster:
            lines.append(f"  {student}: not on the roster ({course.roster_path.name})")
    return lines
