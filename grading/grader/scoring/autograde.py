"""Autograde a class: check every submission, grade the new and changed ones side by side.

    autograde(course)                      every assignment, one worker per core
    autograde(course, ["04_alpha3_by_hand"], workers=1)
    autograde(course, scheduler="tcp://host:8786")   the same jobs on a Dask cluster

Each submission folder is read and checked (:mod:`grader.intake.submissions`), then goes
through :data:`PLAN`, one step after another as nbgrader's preprocessors do: tell the TA its
notes, skip it if it was graded before unchanged, leave out one that cannot be graded, and
flag what the TA should look at (:mod:`grader.integrity.flags`). The rest are graded with
nbgrader in the sandbox (:mod:`grader.running.worker`, through :mod:`grader.running.pool`),
and each result is recorded in the gradebook as it arrives. A lock keeps two runs from
writing the gradebook at once. Every submission ends ``graded`` (the cells that could not
run score 0) or ``not graded`` with a reason. Before all that, the instructor's solution of
each assignment with submissions is graded in the same worker
(:mod:`grader.scoring.selfcheck`, once per environment): if it loses points, the run stops
with :class:`~grader.scoring.selfcheck.BrokenEnvironment` and grades nobody.
"""

from collections.abc import Callable
from dataclasses import dataclass, field

import nbformat
from filelock import FileLock

from grader import gradebook, state
from grader.cells import errors, marks
from grader.course import Course
from grader.intake.submissions import Submission, inspect
from grader.integrity.flags import flags
from grader.integrity.tamper import ScanContext, read_scan_context
from grader.running import execute, pool
from grader.running.execute import instructor_cells_setting
from grader.running.machine import default_workers
from grader.running.sandbox import Limits, unavailable
from grader.running.worker import Job, Result
from grader.scoring import outside, selfcheck
from grader.state import Status


@dataclass
class Summary:
    """What a run did: graded, not graded (with reasons), skipped as unchanged, notes."""

    graded: list[str] = field(default_factory=list)
    not_graded: dict[str, str] = field(default_factory=dict)
    unchanged: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    tell: Callable[[str], None] = field(default=lambda note: None, repr=False)

    def note(self, text: str) -> None:
        """Keep ``text`` and tell it now (the TA reads it before the grading starts)."""
        self.notes.append(text)
        self.tell(text)


def lock(course: Course) -> FileLock:
    """The course's grading lock: one run at a time writes the gradebook."""
    return FileLock(course.root / ".grading.lock")


def autograde(
    course: Course,
    assignments: list[str] | None = None,
    workers: int | None = None,
    scheduler: str | None = None,
    regrade: bool = False,
    limits: Limits | None = None,
    progress: bool = True,
    tell: Callable[[str], None] = print,
    check_environment: bool = True,
) -> Summary:
    """Grade every new or changed submission (all of them if ``regrade``); ``tell`` hears
    what the TA should know (no sandbox, a notebook saved under another name) at once.
    Raises :class:`~grader.scoring.selfcheck.BrokenEnvironment`, having graded nobody, when the
    instructor's solution loses points here (unless not ``check_environment``)."""
    workers = workers or default_workers()
    limits = limits or Limits()
    summary = Summary(tell=tell)
    if limits.sandbox and unavailable():
        summary.note(unavailable())
    with lock(course):
        if check_environment:
            selfcheck.verify(course, [a for a in assignments or course.assignments()
                                      if course.submissions(a)], limits, workers, scheduler, tell)
        outcomes = state.load(course)
        jobs = []
        for assignment in assignments or course.assignments():
            jobs += plan(course, assignment, workers, regrade, limits, outcomes, summary)
        state.save(course, outcomes)
        for result in pool.run(jobs, workers, scheduler, progress=progress):
            settle(course, result, outcomes[result.name], summary)
            state.save(course, outcomes)
    return summary


def settle(course: Course, result: Result, outcome: state.Outcome, summary: Summary) -> None:
    """Record ``result`` in the gradebook (or forget a submission that could not be
    graded) and in its ``outcome``; the caller holds the course's lock."""
    if result.graded:
        gradebook.record(course, result)
        summary.graded.append(result.name)
        outcome.reason = "; ".join(filter(None, [outcome.reason, incidents(result)]))
    else:
        gradebook.forget(course, result.assignment, result.student)
        summary.not_graded[result.name] = result.reason
        outcome.reason = "; ".join(filter(None, [outcome.reason, result.reason]))
    outcome.status = Status.GRADED if result.graded else Status.NOT_GRADED


@dataclass
class Planning:
    """One assignment's planning: what each step of :data:`PLAN` reads, and what it writes
    (``outcomes``: the new outcome of each new or changed submission; ``summary``)."""

    course: Course
    source: nbformat.NotebookNode  # the instructor's notebook
    source_bytes: bytes
    context: ScanContext  # what the tamper scan needs of the source
    outcomes: dict[str, state.Outcome]
    summary: Summary
    regrade: bool


def tell_notes(planning: Planning, submission: Submission) -> bool:
    """What the TA should know of the folder (a notebook saved under another name)."""
    for note in submission.notes:
        planning.summary.note(f"{submission.name}: {note}")
    return True


def new_or_changed(planning: Planning, submission: Submission) -> bool:
    """Skip a submission graded before unchanged (unless regrading); else start its outcome."""
    fingerprint = submission.fingerprint(planning.source_bytes)
    previous = planning.outcomes.get(submission.name)
    finished = previous and previous.status != Status.GRADING  # not an interrupted run's
    if not planning.regrade and finished and previous.fingerprint == fingerprint:
        planning.summary.unchanged.append(submission.name)
        return False
    planning.outcomes[submission.name] = state.Outcome(
        Status.GRADING, "; ".join(submission.notes), [], fingerprint)
    return True


def gradable(planning: Planning, submission: Submission) -> bool:
    """Leave out a submission that cannot be graded (not a notebook, no notebook)."""
    if not submission.problem:
        return True
    outcome = planning.outcomes[submission.name]
    outcome.status = Status.NOT_GRADED
    gradebook.forget(planning.course, submission.assignment, submission.student)
    outcome.reason = "; ".join(filter(None, [outcome.reason, submission.problem]))
    planning.summary.not_graded[submission.name] = submission.problem
    return False


def flagged(planning: Planning, submission: Submission) -> bool:
    """Flag what the TA should look at (grader.integrity.flags); graded all the same."""
    planning.outcomes[submission.name].flags = flags(planning.source, planning.context,
                                                     submission)
    return True


# Each submission's way to a grading job: a step returns False to stop it there.
PLAN: list[Callable[[Planning, Submission], bool]] = [
    tell_notes, new_or_changed, gradable, flagged]


def plan(course, assignment, workers, regrade, limits, outcomes, summary,
         students: list[str] | None = None) -> list[Job]:
    """The jobs of those submissions of ``assignment`` (of ``students`` only, if given)
    that pass every step of :data:`PLAN`."""
    students = [s for s in course.submissions(assignment) if students is None or s in students]
    if not students:
        return []
    if not gradebook.knows(course, assignment):
        gradebook.record_tests(course, assignment)
    source_bytes = (course.source / assignment / f"{assignment}.ipynb").read_bytes()
    source = nbformat.reads(source_bytes.decode(), as_version=4)
    planning = Planning(course, source, source_bytes, read_scan_context(source), outcomes,
                        summary, regrade)
    config = (course.root / "nbgrader_config.py").read_text() + instructor_cells_setting(source)
    snapshot = None
    threads = max(1, default_workers() // workers)
    jobs = []
    for student in students:
        submission = inspect(course, student, assignment)
        if all(step(planning, submission) for step in PLAN):
            snapshot = snapshot or gradebook.snapshot(course, assignment)
            jobs.append(Job(assignment, student, submission.files, snapshot, config, limits,
                            threads, course.answers(assignment)))
    return jobs


def incidents(result: Result) -> str:
    """What made cells of the result score 0 that the TA should know: 'cell <id> timed
    out', 'ran out of memory', 'failed with its traceback hidden', 'was edited' (an
    instructor's cell, run as the instructor wrote it) (:mod:`grader.running.execute`),
    'passed in the kernel but not on the grader's comparison' (:mod:`grader.scoring.outside`:
    a check the notebook changed, or values reported twice), and 'N cells were aborted, not
    run (from cell <id>)'."""
    events, aborted = [], []
    for text in result.notebooks.values():
        for cell in nbformat.reads(text, as_version=4).cells:
            for output in errors(cell):
                where = marks(cell).get("grade_id") or f"id {cell.get('id')}"
                if output.ename == "CellTimeoutError":
                    events.append(f"cell {where} timed out")
                elif output.ename == "MemoryError":
                    events.append(f"cell {where} ran out of memory")
                elif output.ename == execute.HIDDEN:
                    events.append(f"cell {where} failed with its traceback hidden")
                elif output.ename == execute.RESTORED:
                    events.append(f"cell {where} was edited (an instructor's cell: it ran as "
                                  "the instructor wrote it)")
                elif output.ename == execute.ABORTED:
                    aborted.append(where)
                elif output.ename == outside.OUTSIDE:
                    events.append(f"cell {where} passed in the kernel but not on the grader's "
                                  "comparison")
    if aborted:
        events.append(f"{len(aborted)} cells were aborted, not run (from cell {aborted[0]})")
    return "; ".join(events)
