"""``make answers``: the values the instructor's solution checks, stored for the grader.

    store(course, ["05_masked_attention"])   {assignment: why it failed}, {} when all stored

Each assignment's solution is graded as a submission, by the same sandboxed worker that
grades the class (:mod:`grader.scoring.selfcheck`'s job), with
``CompareOutside.record`` on: the values each test cell checks are kept in the cell's
metadata instead of compared. It is graded twice, under two student ids, and a value that
differs between them depends on the student (04's own sentence): it is stored as
``{"per_student": true}``; a value the grader judges (``outside.JUDGED``: many answers are
right) as ``{"judged": true}``, once its judge accepts the solution's; every other as
``{"value": ...}``. The result is
``answers/<assignment>/<notebook>.json`` beside ``nbgrader_config.py``::

    {"tests": {"test_attention_update": [{"value": {"array": ...}}, ...], ...}}

Students never receive this folder; grading jobs carry it to the grader's process
(:mod:`grader.scoring.outside`), never into the kernel. Run it after every change to a test
cell or a solution: the self-check fails (``BrokenEnvironment``) while the stored answers
and the solution disagree.
"""

import dataclasses
import json

import nbformat

from course_utils.exercises import rule_of
from grader.cells import errors, is_test, marks
from grader.course import ANSWERS, Course
from grader.running import pool
from grader.running.machine import default_workers
from grader.running.sandbox import Limits
from grader.running.worker import Result
from grader.scoring import selfcheck
from grader.scoring.outside import JUDGED, REPORTED
from grader.scoring.same_value import kept, same

__all__ = ["SECOND", "store"]

SECOND = "instructor-2"  # the second id the solution is graded under
RECORD = "\nc.CompareOutside.record = True\n"


def store(course: Course, assignments: list[str] | None = None,
          limits: Limits | None = None, workers: int | None = None) -> dict[str, str]:
    """Grade each solution twice and write its stored answers; {assignment: why not}."""
    limits = limits or Limits()
    assignments = assignments or course.assignments()
    jobs = []
    for assignment in assignments:
        job = selfcheck.solution_job(course, assignment, limits, threads=1)
        job = dataclasses.replace(job, config=job.config + RECORD, answers={})
        jobs += [job, dataclasses.replace(job, student=SECOND)]
    results: dict[str, dict[str, Result]] = {}
    for result in pool.run(jobs, workers or default_workers(), None, progress=False):
        results.setdefault(result.assignment, {})[result.student] = result
    failed = {}
    for assignment, pair in results.items():
        try:
            seconds = _notebooks(pair[SECOND])
            stored = {name: entries(text, seconds.get(name, ""))
                      for name, text in _notebooks(pair[selfcheck.STUDENT]).items()}
        except ValueError as error:
            failed[assignment] = str(error)
            continue
        folder = course.root / ANSWERS / assignment
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.glob("*.json"):
            old.unlink()
        for name, tests in stored.items():
            (folder / f"{name.removesuffix('.ipynb')}.json").write_text(
                json.dumps({"tests": tests}, indent=None, separators=(",", ":")) + "\n")
    return failed


def _notebooks(result: Result) -> dict[str, str]:
    if not result.graded:
        raise ValueError(f"the solution could not be graded: {result.reason}")
    return result.notebooks


def entries(first: str, second: str) -> dict[str, list[dict]]:
    """{test cell: its stored entries} from the two gradings of one solution notebook."""
    cells = [_reported(nbformat.reads(text, as_version=4)) for text in (first, second)]
    stored = {}
    for grade_id, values in cells[0].items():
        others = cells[1].get(grade_id, [])
        if len(others) != len(values):
            raise ValueError(f"{grade_id} checks {len(values)} values under one id and "
                             f"{len(others)} under another")
        if grade_id in JUDGED:
            stored[grade_id] = [_judged(grade_id, value, index)
                                for index, value in enumerate(values)]
            continue
        rule = rule_of(grade_id.removeprefix("test_"))
        stored[grade_id] = [{"value": kept(value, rule)} if same(other, kept(value, rule), rule)
                            else {"per_student": True}
                            for value, other in zip(values, others, strict=True)]
    return stored


def _judged(grade_id: str, value, index: int) -> dict:
    """The stored entry of a judged value: the judge must accept the solution's."""
    if not JUDGED[grade_id](value, index):
        raise ValueError(f"the solution's value {index + 1} of {grade_id} is not right by "
                         "its judge (grader.scoring.outside.JUDGED)")
    return {"judged": True}


def _reported(notebook) -> dict[str, list]:
    """{test cell: the values it reported} of a solution graded with ``record`` on; a test
    cell that failed is an error: its stored answers would be wrong."""
    tests = {}
    for cell in notebook.cells:
        if not is_test(cell):
            continue
        if errors(cell):
            error = errors(cell)[0]
            raise ValueError(f"the solution fails {marks(cell)['grade_id']}: "
                             f"{error.get('ename')}: {error.get('evalue')}")
        tests[marks(cell)["grade_id"]] = cell.metadata.get(REPORTED, [])
    return tests
