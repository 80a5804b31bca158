"""nbgrader's own steps, run for each assignment and carried on past one that fails.

    release(course)        generate_assignment: solutions/ -> notebooks/, tests in the gradebook
    feedback(course)       generate_feedback: one HTML page per graded submission

Each returns the assignments that failed, with nbgrader's message, so that one broken
assignment does not stop the others (the command line reports them and exits 1).
"""

import os
import subprocess
import sys
from pathlib import Path

from grader.course import Course

# `nbgrader ARGS`, less 2 s a run: jsonschema's optional IRI format checker builds a
# grammar when imported (2.3 s), and nbgrader validates notebooks without it.
NBGRADER = [sys.executable, "-c", "import sys; sys.modules['rfc3987_syntax'] = None; "
            "from nbgrader.apps.nbgraderapp import main; sys.exit(main())"]


def nbgrader(course: Course, *args: str) -> subprocess.CompletedProcess:
    """Run ``nbgrader ARGS`` in the course root with this Python's environment."""
    environment = dict(os.environ)
    # Kernels are found on PATH: make sure it is this environment's python.
    environment["PATH"] = os.pathsep.join([str(Path(sys.executable).parent),
                                           environment.get("PATH", "")])
    return subprocess.run([*NBGRADER, *args], cwd=course.root, env=environment,
                          capture_output=True, text=True)


def _each(course: Course, assignments, *args: str) -> dict[str, str]:
    """Run ``nbgrader ARGS`` for each assignment; {assignment: nbgrader's output} of failures."""
    failed = {}
    for assignment in assignments:
        done = nbgrader(course, args[0], assignment, *args[1:])
        if done.returncode != 0:
            failed[assignment] = (done.stdout + done.stderr).strip()[-2000:]
    return failed


def release(course: Course, assignments=None, release_dir: Path | None = None) -> dict[str, str]:
    """Generate the student release of each assignment (and record its tests)."""
    extra = [f"--CourseDirectory.release_directory={release_dir}"] if release_dir else []
    return _each(course, assignments or course.assignments(), "generate_assignment", "--force",
                 *extra)


def feedback(course: Course, assignments=None, students=None) -> dict[str, str]:
    """Write the feedback pages of the graded submissions (of ``students`` only, if given)."""
    graded = [a for a in assignments or course.assignments()
              if any(course.folder("autograded", s, a).is_dir() for s in course.students())]
    others = sorted(set(course.students()) - set(students or course.students()))
    exclude = [f"--CourseDirectory.student_id_exclude={','.join(others)}"] if others else []
    return _each(course, graded, "generate_feedback", "--force", *exclude)
