"""nbgrader's own steps, run for each assignment and carried on past one that fails.

    release(course)        generate_assignment: solutions/ -> notebooks/, tests in the gradebook
    publish(course)        release_assignment: notebooks/ -> the exchange, for students to fetch
    collect(course)        collect: each student's latest submission, exchange -> submitted/
    feedback(course)       generate_feedback: one HTML page per graded submission (one
                           assignment per core at a time: it only reads the gradebook)
    release_feedback(...)  release_feedback: those pages -> the exchange, for students to fetch

Each returns the assignments that failed, with nbgrader's message, so that one broken
assignment does not stop the others (the command line reports them and exits 1).
"""

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from grader.course import Course
from grader.running.machine import NBGRADER, default_workers


def nbgrader(course: Course, *args: str) -> subprocess.CompletedProcess:
    """Run ``nbgrader ARGS`` in the course root with this Python's environment."""
    environment = dict(os.environ)
    # Kernels are found on PATH: make sure it is this environment's python.
    environment["PATH"] = os.pathsep.join([str(Path(sys.executable).parent),
                                           environment.get("PATH", "")])
    return subprocess.run([*NBGRADER, *args], cwd=course.root, env=environment,
                          capture_output=True, text=True)


def _each(course: Course, assignments, *args: str, workers: int = 1) -> dict[str, str]:
    """Run ``nbgrader ARGS`` for each assignment, ``workers`` at a time; {assignment:
    nbgrader's output} of failures. Only steps that leave the gradebook as it is may run
    side by side (SQLite takes one writer at a time)."""
    with ThreadPoolExecutor(max_workers=workers) as pool:
        runs = [(assignment, pool.submit(nbgrader, course, args[0], assignment, *args[1:]))
                for assignment in assignments]
    done = {assignment: run.result() for assignment, run in runs}
    return {assignment: (run.stdout + run.stderr).strip()[-2000:]
            for assignment, run in done.items() if run.returncode != 0}


def release(course: Course, assignments=None, release_dir: Path | None = None) -> dict[str, str]:
    """Generate the student release of each assignment (and record its tests)."""
    extra = [f"--CourseDirectory.release_directory={release_dir}"] if release_dir else []
    return _each(course, assignments or course.assignments(), "generate_assignment", "--force",
                 *extra)


def publish(course: Course, assignments=None) -> dict[str, str]:
    """Copy each assignment's release to the exchange (replacing an earlier one)."""
    return _each(course, assignments or course.assignments(), "release_assignment", "--force")


def collect(course: Course, assignments=None) -> dict[str, str]:
    """Copy each student's latest submission from the exchange to submitted/, replacing an
    older one collected before."""
    return _each(course, assignments or course.assignments(), "collect", "--update")


def feedback(course: Course, assignments=None, students=None) -> dict[str, str]:
    """Write the feedback pages of the graded submissions (of ``students`` only, if given)."""
    graded = [a for a in assignments or course.assignments()
              if any(course.folder("autograded", s, a).is_dir() for s in course.students())]
    others = sorted(set(course.students()) - set(students or course.students()))
    return _each(course, graded, "generate_feedback", "--force", *_excluding(others),
                 workers=default_workers())


def release_feedback(course: Course, assignment: str, students: list[str]) -> dict[str, str]:
    """Copy the feedback pages of ``students`` to the exchange, where they fetch them."""
    others = sorted(set(course.students()) - set(students))
    return _each(course, [assignment], "release_feedback", *_excluding(others))


def _excluding(students: list[str]) -> list[str]:
    """nbgrader's option that leaves ``students`` out of a step."""
    return [f"--CourseDirectory.student_id_exclude={','.join(students)}"] if students else []
