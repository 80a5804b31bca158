"""Autograding throughput: submissions of notebook 04 per minute, with 1 and N workers,
and one student's notebooks (all of them) against design.md's budget (90 s), with the allowlist of
the guards (course_utils/checks/guards/allowlist.py) and without it (COURSE_ALLOWLIST=off).

The same class (the solution, the blank release and the wrong answers of
tests/grading_cases/alpha3_by_hand.py) is graded twice from scratch, each submission by
nbgrader with its kernel in the sandbox; N is one worker per core.
"""

import os
import tempfile
import time
from pathlib import Path
from unittest import mock

from grader.running.machine import default_workers
from grader.running.sandbox import Limits
from grader.scoring import selfcheck
from grader.scoring.autograde import autograde
from tests.benchmarks.timing import Row
from tests.grading_cases import all_cases
from tests.support.nbgrader_course import make_course, solution_cells, submit

ASSIGNMENT = "04_alpha3_by_hand"


def graded_in(workers: int, assignments=(ASSIGNMENT,), class_of_04=True) -> tuple[int, float]:
    """(submissions, seconds) of grading with ``workers`` workers: the class of 04, or one
    student's solutions of ``assignments``."""
    with tempfile.TemporaryDirectory() as root:
        course = make_course(Path(root), list(assignments))
        for assignment in assignments:
            submit(course, assignment, "solution", solution_cells(assignment))
        if class_of_04:
            submit(course, ASSIGNMENT, "blank", {})
            for student, answers in all_cases()[ASSIGNMENT].WRONG.items():
                submit(course, ASSIGNMENT, student, {**solution_cells(ASSIGNMENT), **answers})
        # the instructor's solutions are checked once per environment, before the clock
        selfcheck.verify(course, list(assignments), Limits(), workers)
        start = time.perf_counter()
        summary = autograde(course, workers=workers, progress=False)
        seconds = time.perf_counter() - start
    assert not summary.not_graded, summary.not_graded
    return len(summary.graded), seconds


def run():
    cores = default_workers()
    rates = {}
    for workers in sorted({1, cores}):
        count, seconds = graded_in(workers)
        rates[workers] = 60 * count / seconds
        yield Row(f"autograde {count} submissions of {ASSIGNMENT}",
                  f"grader, {workers} worker(s), sandboxed", rates[workers], "subm/min",
                  f"{seconds:.0f} s; {rates[workers] / rates[1]:.2f}x one worker")
    every = sorted(all_cases())
    for allowlist in ("on", "off"):
        with mock.patch.dict(os.environ, COURSE_ALLOWLIST=allowlist):
            count, seconds = graded_in(cores, every, class_of_04=False)
        yield Row(f"autograde one student's {count} notebooks",
                  f"grader, {cores} worker(s), allowlist {allowlist}", seconds, "s",
                  "design.md's budget: 90 s")

