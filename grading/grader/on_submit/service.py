"""The service that grades each submission as it arrives and gives the student its feedback.

:class:`Service` is what ``python -m grader.on_submit`` (:mod:`grader.on_submit.__main__`)
runs. Every ``POLL_S`` seconds it lists
nbgrader's inbound folder in the exchange (polling: the exchange may be a network folder,
where change notifications do not arrive). For each student's latest complete submission
of an assignment without its feedback yet, a job on the queue (:mod:`grader.on_submit.queue`,
one worker per core as ``make autograde``, never two jobs of one student's assignment at
once):

1. collects it to ``submitted/`` (nbgrader's collect, for that student);
2. grades it as ``make autograde`` does (:func:`grader.scoring.autograde.plan` and
   :func:`grader.scoring.autograde.settle`, the same sandboxed worker, the same gradebook and
   ``autograde_state.json``), unless that state says this very submission was graded;
3. writes the page the instructor chose (:mod:`grader.on_submit.pages`: the visible
   tests' results, all, or none before the due date; the full page after it) and releases
   it to the exchange, where the student's *Fetch Feedback* finds it.

What was released for which submission is kept in ``on_submit_state.json`` beside the
gradebook, written after the release: a stopped service (a restart of the hub) starts again
where it was. A submission graded but not yet released is not graded again (step 2 finds it
in the state of ``make autograde``); one interrupted while grading is graded from the start,
its half-done run left nowhere. When a due date passes, the early pages of that assignment
are replaced by full ones, and so are full pages given before it (``all``), which lack the
worked answers (:class:`grader.outputs.feedback.ShowWorkedAnswers` adds them after the due date).
Before it grades anyone, the instructor's solutions are graded
(:func:`grader.scoring.selfcheck.verify`): in a broken environment the service grades nobody and
says why in the hub's log.
"""

import logging
import os
import shutil
import signal
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime

import nbformat
import psutil
from nbgrader.api import Gradebook
from nbgrader.utils import parse_utc

from grader import gradebook, state
from grader.course import SECRET, Course
from grader.intake import exchange, submissions
from grader.on_submit.pages import (
    cell_results,
    early_feedback_mode,
    early_page,
    full_page_banner,
    with_banner,
)
from grader.on_submit.queue import KeyedQueue
from grader.running import nbgrader_steps, worker
from grader.running.machine import default_workers
from grader.running.sandbox import Limits
from grader.scoring import autograde, selfcheck
from grader.state import Status

POLL_S = 2.0
RETRY_S = 300  # a job that failed (not a submission that cannot be graded) is tried again
STATE_FILE = "on_submit_state.json"
FULL_EARLY = "full before the due date"  # an `all` page: no worked answer yet
EARLY_KINDS = ("early", "none", FULL_EARLY)  # pages that a full one replaces after the due date

log = logging.getLogger("grader.on_submit")


@dataclass
class Released:
    """The page given for a student's assignment: of which submission (its folder in the
    inbound exchange), and what kind: early, none (received only), full, not graded."""

    submission: str
    page: str


def load_released(course: Course) -> dict[str, Released]:
    return state.read_records(course.root / STATE_FILE, Released)


def save_released(course: Course, released: dict[str, Released]) -> None:
    state.write_records(course.root / STATE_FILE, released)


def latest_submissions(course: Course) -> dict[tuple[str, str], str]:
    """{(student, assignment): the folder of the latest complete submission in the
    exchange}. nbgrader's submit writes ``submission_secret.txt`` last, so a folder
    without it is still being copied."""
    inbound = exchange.course_folder(course) / "inbound"
    assignments = set(course.assignments())
    latest: dict[tuple[str, str], tuple[datetime, str]] = {}
    for folder in inbound.glob("*+*+*") if inbound.is_dir() else []:
        student, assignment, timestamp = folder.name.rsplit("+", 3)[:3]
        secret = folder / SECRET
        if assignment not in assignments or not secret.is_file() or not secret.stat().st_size:
            continue
        try:
            submitted = parse_utc(timestamp)
        except ValueError:
            continue
        key = (student, assignment)
        if key not in latest or submitted > latest[key][0]:
            latest[key] = (submitted, folder.name)
    return {key: name for key, (_, name) in latest.items()}


def to_do(latest: dict[tuple[str, str], str], released: dict[str, Released],
          due: dict[str, datetime | None], now: datetime) -> list[tuple[str, str]]:
    """The keys whose latest submission has no page yet, or an early one past the due
    date (``due`` and ``now`` in UTC without a time zone, as nbgrader keeps them)."""
    keys = []
    for (student, assignment), submission in sorted(latest.items()):
        given = released.get(state.key(student, assignment))
        if given is None or given.submission != submission:
            keys.append((student, assignment))
        elif given.page in EARLY_KINDS and due.get(assignment) and now >= due[assignment]:
            keys.append((student, assignment))
    return keys


def utc_now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


class Later(Exception):
    """Leave this job where it is, to be done at a later poll or the next start (the
    service is stopping, or a newer submission is still arriving)."""


class Service:
    """The polling loop, the queue, and the job that grades and gives feedback."""

    def __init__(self, course: Course, workers: int | None = None, limits: Limits | None = None):
        self.course = course
        self.workers = workers or default_workers()
        self.limits = limits or Limits()
        self.stopping = threading.Event()
        self.lock = threading.Lock()  # of self.released and its file
        self.released = load_released(course)
        self.failed: dict[tuple[str, str], tuple[str, float]] = {}  # (submission, when)
        self.verified: set[str] = set()  # assignments whose solution grades in full here
        self.verifying = threading.Lock()
        self.queue = KeyedQueue(self.workers, self.handle)

    def poll(self, now: datetime | None = None) -> None:
        """Queue what is to do now (never waits for grading)."""
        latest = latest_submissions(self.course)
        with self.lock:
            released = dict(self.released)
        waiting = {assignment for (student, assignment) in latest
                   if getattr(released.get(state.key(student, assignment)), "page", "")
                   in EARLY_KINDS}
        due = {assignment: gradebook.duedate(self.course, assignment) for assignment in waiting}
        for key in to_do(latest, released, due, now or utc_now()):
            submission, when = self.failed.get(key, ("", 0.0))
            if submission != latest[key] or time.monotonic() - when > RETRY_S:
                self.queue.submit(key, latest[key])

    def handle(self, key: tuple[str, str]) -> None:
        """Collect, grade if new, write and release the page of ``key``'s latest
        submission; remember what was released."""
        student, assignment = key
        submission = latest_submissions(self.course).get(key)
        if submission is None or self.stopping.is_set():
            return
        try:
            self.verify([assignment])
            self.collect(student, assignment, submission)
            outcome = self.grade(student, assignment)
            page = self.release(student, assignment, outcome)
        except Later:
            return
        except Exception:
            self.failed[key] = (submission, time.monotonic())
            raise
        with self.lock:
            self.released[state.key(student, assignment)] = Released(submission, page)
            save_released(self.course, self.released)
        log.info("released %s feedback to %s/%s (submission %s)", page, student, assignment,
                 submission)

    def verify(self, assignments: list[str]) -> None:
        """Grade the instructor's solution of those of ``assignments`` not verified yet
        (:func:`grader.scoring.selfcheck.verify`, which keeps a success per environment); raise
        :class:`~grader.scoring.selfcheck.BrokenEnvironment` if one loses points."""
        with self.verifying:
            new = [assignment for assignment in assignments if assignment not in self.verified]
            if new:
                selfcheck.verify(self.course, new, self.limits, self.workers)
                self.verified.update(new)

    def collect(self, student: str, assignment: str, submission: str) -> None:
        """nbgrader's collect of ``student``'s latest submission, checked: a copy made
        while a newer one was still arriving is removed, and collected again later."""
        done = nbgrader_steps.nbgrader(self.course, "collect", assignment, "--update",
                              f"--CourseDirectory.student_id={student}")
        if done.returncode != 0:
            raise RuntimeError(f"collect {student}/{assignment}:\n{done.stdout}{done.stderr}")
        folder = self.course.folder("submitted", student, assignment)
        expected = parse_utc(submission.rsplit("+", 3)[2])
        if submissions.submitted_at(self.course, student, assignment) != expected or \
                not (folder / SECRET).is_file():
            shutil.rmtree(folder, ignore_errors=True)
            raise Later  # the newer submission has its turn once complete

    def grade(self, student: str, assignment: str) -> state.Outcome:
        """Grade the collected submission as ``make autograde`` would, if it is new or
        changed; its outcome. The course's lock is held only to plan and to record."""
        name, summary = state.key(student, assignment), autograde.Summary(tell=log.info)
        with autograde.lock(self.course):
            outcomes = state.load(self.course)
            jobs = autograde.plan(self.course, assignment, self.workers, False, self.limits,
                                  outcomes, summary, [student])
            outcome = outcomes[name]
            if not jobs:  # graded before, or a submission that cannot be graded
                state.save(self.course, outcomes)
                return outcome
        result = worker.grade(jobs[0])
        if self.stopping.is_set():
            raise Later
        with autograde.lock(self.course):
            outcomes = state.load(self.course)
            outcomes[name] = outcome
            autograde.settle(self.course, result, outcome, summary)
            state.save(self.course, outcomes)
        log.info("graded %s in %.1f s: %s", name, result.seconds,
                 outcome.status + (f" ({outcome.reason})" if outcome.reason else ""))
        return outcome

    def release(self, student: str, assignment: str, outcome: state.Outcome) -> str:
        """Write ``student``'s page of ``assignment`` and put it in the exchange; its kind."""
        due, mode = gradebook.duedate(self.course, assignment), early_feedback_mode(
            self.course, assignment)
        submitted = submissions.submitted_at(self.course, student, assignment)
        folder = self.course.folder("feedback", student, assignment)
        if outcome.status != Status.GRADED:
            page = "not graded"
            self.write_pages(student, assignment, {
                path.stem: early_page(path.stem, student, submitted, due, [], graded=False)
                for path in self.course.folder("submitted", student, assignment).glob("*.ipynb")})
        elif mode == "all" or (due is not None and utc_now() >= due):
            page = "full" if due is not None and utc_now() >= due else FULL_EARLY
            failed = nbgrader_steps.feedback(self.course, [assignment], [student])
            if failed:
                raise RuntimeError(f"feedback {student}/{assignment}:\n{failed[assignment]}")
            for path in folder.glob("*.html"):
                path.write_text(with_banner(path.read_text(), full_page_banner(submitted)))
        else:
            page = "early" if mode == "visible" else "none"
            self.write_pages(student, assignment, {
                notebook: early_page(notebook, student, submitted, due,
                                     cells if page == "early" else [])
                for notebook, cells in self.early_results(student, assignment).items()})
        if self.stopping.is_set():
            raise Later
        failed = exchange.release_feedback(self.course, [assignment], [student])
        if failed:
            raise RuntimeError(f"release feedback {student}/{assignment}:\n{failed[assignment]}")
        return page

    def early_results(self, student: str, assignment: str) -> dict:
        """{notebook: its cells as the early page shows them}."""
        results = {}
        with Gradebook(self.course.gradebook_url) as book:
            for path in sorted(self.course.folder("autograded", student, assignment)
                               .glob("*.ipynb")):
                graded = book.find_submission_notebook(path.stem, assignment, student)
                scores = {grade.name: (grade.score, grade.max_score, grade.needs_manual_grade)
                          for grade in graded.grades}
                results[path.stem] = cell_results(nbformat.read(path, as_version=4), scores)
        return results

    def write_pages(self, student: str, assignment: str, pages: dict[str, str]) -> None:
        """Put ``pages`` {notebook: HTML} in the student's feedback folder, with the files
        of the submission that name them in the exchange, in place of what was there."""
        folder = self.course.folder("feedback", student, assignment)
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        submitted = self.course.folder("submitted", student, assignment)
        for name in gradebook.EXCHANGE_FILES:
            shutil.copy(submitted / name, folder / name)
        for notebook, page in pages.items():
            (folder / f"{notebook}.html").write_text(page)

    def stop(self) -> None:
        """Stop: no new job; running ones stop after their step, a grading run at once
        (killed, kernel included), and are done again at the next start. nbgrader's short
        steps (collect, feedback) finish: a copy cut in half would look complete."""
        self.stopping.set()
        for child in psutil.Process().children():
            try:
                if os.getpgid(child.pid) == child.pid:  # a grading run's session of its own
                    os.killpg(child.pid, signal.SIGKILL)
            except (ProcessLookupError, psutil.NoSuchProcess):
                pass
        self.queue.close()

    def run(self) -> None:
        """Poll until stopped."""
        while not self.stopping.is_set():
            try:
                self.poll()
            except Exception:  # the exchange or the gradebook, unreadable for a moment
                log.exception("polling the exchange failed")
            self.stopping.wait(POLL_S)
