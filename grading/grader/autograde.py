"""Autograde a class: check every submission, grade the new and changed ones side by side.

    autograde(course)                      every assignment, one worker per core
    autograde(course, ["04_alpha3_by_hand"], workers=1)
    autograde(course, scheduler="tcp://host:8786")   the same jobs on a Dask cluster

Steps: read and check each submission folder (:mod:`grader.submissions`), flag answer
cells that tamper with the tests or import a library twin, skip what was graded before
unchanged, grade the rest with nbgrader in the sandbox (:mod:`grader.worker`, through
:mod:`grader.runner`), and record each result in the gradebook as it arrives. A lock
keeps two runs from writing the gradebook at once. Every submission ends ``graded`` (the
cells that could not run score 0) or ``not graded`` with a reason. Before all that, the
instructor's solution of each assignment with submissions is graded in the same worker
(:mod:`grader.selfcheck`, once per environment): if it loses points, the run stops with
:class:`~grader.selfcheck.BrokenEnvironment` and grades nobody.
"""

import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from filelock import FileLock

from grader import (
    execute,
    gradebook,
    own_numbers,
    runner,
    selfcheck,
    similarity_reference,
    state,
    steps,
)
from grader.course import Course
from grader.execute import instructor_cells_setting
from grader.machine import default_workers
from grader.sandbox import Limits, unavailable
from grader.submissions import Submission, inspect
from grader.tamper import ScanContext, read_scan_context, scan_cell
from grader.worker import Job, Result


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


def flags(source: nbformat.NotebookNode, context: ScanContext, submission: Submission) -> list[str]:
    """Lines that tamper with what the tests rely on, answers that import a library twin,
    answers alike a function of course_utils (grader.similarity_reference), and numbers
    worked by hand for another id or reached through the course's code (grader.own_numbers).

    Scanned: the answer cells, and every other code cell nbgrader does not restore from the
    gradebook (cells a student added or edited), in which only what the instructor's own
    version of the cell does not do is flagged.
    """
    from course_utils.checks import imported_twins

    original = {cell.get("id"): cell.source for cell in source.cells}
    found = []
    for number, cell in enumerate(submission.notebook.cells, start=1):
        grade = cell.metadata.get("nbgrader", {})
        restored = grade.get("locked") or (grade.get("grade") and not grade.get("solution"))
        if cell.cell_type != "code" or restored:
            continue
        name = grade.get("grade_id") or f"#{number}"  # flagged as "cell #3 line 2: ..."
        new = scan_cell(cell.source, name, context)
        if not grade.get("solution"):
            known = {(flag.family, flag.code)
                     for flag in scan_cell(original.get(cell.get("id"), ""), name, context)}
            new = [flag for flag in new if (flag.family, flag.code) not in known]
        found += [str(flag) for flag in new]
        if grade.get("solution"):
            found += [f"cell {name} imports {twin}" for twin in imported_twins(cell.source, name)]
    return (found + similarity_reference.flags(source, submission.notebook)
            + own_numbers.flags(submission))


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
    Raises :class:`~grader.selfcheck.BrokenEnvironment`, having graded nobody, when the
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
        for result in runner.run(jobs, workers, scheduler, progress=progress):
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
    outcome.status = "graded" if result.graded else "not graded"


def plan(course, assignment, workers, regrade, limits, outcomes, summary,
         students: list[str] | None = None) -> list[Job]:
    """Check each submission of ``assignment`` (of ``students`` only, if given); the jobs
    of those to grade. ``outcomes`` gets the new outcome of each new or changed one."""
    students = [s for s in course.submissions(assignment) if students is None or s in students]
    if not students:
        return []
    if not gradebook.knows(course, assignment):
        record_tests(course, assignment)
    source_path = course.source / assignment / f"{assignment}.ipynb"
    source_bytes = source_path.read_bytes()
    source = nbformat.reads(source_bytes.decode(), as_version=4)
    context = read_scan_context(source)
    config = (course.root / "nbgrader_config.py").read_text() + instructor_cells_setting(source)
    snapshot = None
    threads = max(1, default_workers() // workers)
    jobs = []
    for student in students:
        submission = inspect(course, student, assignment)
        for note in submission.notes:
            summary.note(f"{submission.name}: {note}")
        fingerprint = submission.fingerprint(source_bytes)
        previous = outcomes.get(submission.name)
        finished = previous and previous.status != state.GRADING  # not an interrupted run's
        if not regrade and finished and previous.fingerprint == fingerprint:
            summary.unchanged.append(submission.name)
            continue
        outcome = state.Outcome(state.GRADING, "; ".join(submission.notes), [], fingerprint)
        outcomes[submission.name] = outcome
        if submission.problem:
            outcome.status = "not graded"
            gradebook.forget(course, assignment, student)
            outcome.reason = "; ".join(filter(None, [outcome.reason, submission.problem]))
            summary.not_graded[submission.name] = submission.problem
            continue
        outcome.flags = flags(source, context, submission)
        snapshot = snapshot or gradebook.snapshot(course, assignment)
        jobs.append(Job(assignment, student, submission.files, snapshot, config, limits, threads))
    return jobs


def record_tests(course: Course, assignment: str) -> None:
    """Put ``assignment``'s cells and tests in the gradebook (as ``make release`` does),
    releasing into a scratch folder so that the committed release stays as it is."""
    with tempfile.TemporaryDirectory() as scratch:
        failed = steps.release(course, [assignment], release_dir=Path(scratch))
    if failed:
        raise RuntimeError(f"cannot record the tests of {assignment}:\n{failed[assignment]}")


def incidents(result: Result) -> str:
    """What made cells of the result score 0 that the TA should know: 'cell <id> timed
    out', 'ran out of memory', 'failed with its traceback hidden' (:mod:`grader.execute`),
    and 'N cells were aborted, not run (from cell <id>)'."""
    events, aborted = [], []
    for text in result.notebooks.values():
        for cell in nbformat.reads(text, as_version=4).cells:
            for output in cell.get("outputs", []):
                if output.get("output_type") != "error":
                    continue
                where = cell.metadata.get("nbgrader", {}).get("grade_id") or f"id {cell.get('id')}"
                if output.ename == "CellTimeoutError":
                    events.append(f"cell {where} timed out")
                elif output.ename == "MemoryError":
                    events.append(f"cell {where} ran out of memory")
                elif output.ename == execute.HIDDEN:
                    events.append(f"cell {where} failed with its traceback hidden")
                elif output.ename == execute.ABORTED:
                    aborted.append(where)
    if aborted:
        events.append(f"{len(aborted)} cells were aborted, not run (from cell {aborted[0]})")
    return "; ".join(events)
