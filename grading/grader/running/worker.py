"""One submission graded by nbgrader in a course of its own: data in, data out.

A :class:`Job` carries everything the grading needs (the submission's files, a
gradebook that knows only this assignment, the course's nbgrader configuration), so that
:func:`grade` can run in a thread here, in a process, or on a Dask worker on another
machine. It builds a scratch course, runs ``nbgrader autograde`` there with the kernel
in the sandbox (:mod:`grader.running.sandbox`), and returns a :class:`Result`: the autograded
notebooks and the scores nbgrader saved. The TA's gradebook is written only by the
process that collects the results (:mod:`grader.gradebook`), one result at a time.
"""

import os
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from grader.course import ANSWERS
from grader.running.machine import NBGRADER
from grader.running.sandbox import Limits, kernel_argv, make_home, write_kernelspec
from grader.state import key

# What a Result keeps of nbgrader's log when a submission could not be graded.
LOG_TAIL = 3000
# What a Result keeps of it for the self-check (grader.scoring.selfcheck): the kernel's own words
# come before nbgrader's traceback.
KEPT_LOG = 30_000


@dataclass
class Job:
    """One student's submission of one assignment, and what grading it needs."""

    assignment: str
    student: str
    files: dict[str, bytes]  # the submission folder: {relative path: content}
    gradebook: bytes  # an SQLite gradebook holding this assignment (its tests) only
    config: str  # the course's nbgrader_config.py
    limits: Limits = field(default_factory=Limits)
    threads: int = 1  # OMP_NUM_THREADS of the kernel: cores / workers
    # the stored answers the grader compares with (grader.scoring.outside), {path under the
    # course's answers/ folder: content}; the kernel never sees them
    answers: dict[str, bytes] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return key(self.student, self.assignment)


@dataclass
class Score:
    """What nbgrader's autograde saved for one grade cell."""

    auto_score: float | None
    needs_manual_grade: bool


@dataclass
class Result:
    """A graded submission (``notebooks`` and ``scores``), or why it was not graded."""

    assignment: str
    student: str
    graded: bool
    reason: str = ""
    notebooks: dict[str, str] = field(default_factory=dict)  # {file name: autograded JSON}
    scores: dict[str, dict[str, Score]] = field(default_factory=dict)  # {notebook: {cell: }}
    comments: dict[str, dict[str, str | None]] = field(default_factory=dict)
    timestamp: str | None = None  # the submission's timestamp.txt, as nbgrader read it
    seconds: float = 0.0
    log: str = ""  # the tail of nbgrader's log, when it produced no notebook

    @property
    def name(self) -> str:
        return key(self.student, self.assignment)


def grade(job: Job) -> Result:
    """Autograde ``job`` in a scratch course; never raises for anything the submission does."""
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="grading-") as scratch:
        result = _grade_in(Path(scratch), job)
    result.seconds = time.perf_counter() - start
    return result


def _grade_in(scratch: Path, job: Job) -> Result:
    course = scratch / "course"
    submitted = course / "submitted" / job.student / job.assignment
    submitted.mkdir(parents=True)
    (course / "nbgrader_config.py").write_text(job.config)
    (course / "gradebook.db").write_bytes(job.gradebook)
    for folder, files in ((submitted, job.files), (course / ANSWERS, job.answers)):
        for relative, content in files.items():
            (folder / relative).parent.mkdir(parents=True, exist_ok=True)
            (folder / relative).write_bytes(content)

    workdir = course / "autograded" / job.student / job.assignment
    sockets, home = scratch / "run", make_home(scratch / "home")
    sockets.mkdir()
    argv = kernel_argv(workdir, home, sockets, job.limits, job.threads, student=job.student)
    write_kernelspec(scratch / "jupyter", argv)
    command = [
        *NBGRADER, "autograde", job.assignment,
        "--student", job.student, "--force",
        "--CourseDirectory.root=" + str(course),
        "--CourseDirectory.source_directory=source",
        "--Execute.kernel_name=course-sandbox",
        "--KernelManager.transport=ipc",
        f"--KernelManager.ip={sockets / 'kernel'}",
    ]
    if job.limits.cell_timeout:
        command.append(f"--Execute.timeout={job.limits.cell_timeout}")
    # Without the sandbox the kernel inherits this environment: the student's id too, so
    # that exercises drawn from it (course_utils.student) are checked as Validate did.
    environment = dict(os.environ, JUPYTER_PATH=str(scratch / "jupyter"),
                       JUPYTER_RUNTIME_DIR=str(sockets), TMPDIR=str(sockets),
                       OMP_NUM_THREADS=str(job.threads), COURSE_STUDENT=job.student)
    (course / "source" / job.assignment).mkdir(parents=True)
    try:
        log = _run(command, course, environment, job.limits.notebook_timeout)
    except subprocess.TimeoutExpired:
        return Result(job.assignment, job.student, graded=False,
                      reason=f"the notebook ran over its {job.limits.notebook_timeout} s limit")
    notebooks = {path.name: path.read_text() for path in sorted(workdir.glob("*.ipynb"))}
    if not notebooks:
        return Result(job.assignment, job.student, graded=False, reason=_failure(log),
                      log=log[-KEPT_LOG:])
    return _read_scores(course / "gradebook.db", job, notebooks)


def _run(command: list[str], cwd: Path, environment: dict, timeout: int) -> str:
    """Run ``command`` in a session of its own and return its log; on timeout kill it all
    (kernel included). The log goes to a file, not a pipe: a process the student starts in
    a session of its own (possible without the sandbox) would hold a pipe open forever."""
    with tempfile.TemporaryFile("w+", errors="replace") as log:  # the kernel may write any bytes
        process = subprocess.Popen(command, cwd=cwd, env=environment, stdout=log,
                                   stderr=subprocess.STDOUT, start_new_session=True)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            raise
        log.seek(0)
        return log.read()


def _failure(log: str) -> str:
    """Why nbgrader produced no autograded notebook, in a line a TA can act on."""
    if "DeadKernelError" in log or "Kernel died" in log:
        return "the kernel died (the code exits, crashes or is killed)"
    errors = [line.strip() for line in log.splitlines() if "[ERROR]" in line or "Error:" in line]
    return errors[-1][:300] if errors else "nbgrader could not grade it: " + log[-LOG_TAIL:]


def _read_scores(gradebook: Path, job: Job, notebooks: dict[str, str]) -> Result:
    """The autograded notebooks with the scores and comments nbgrader saved for them."""
    from nbgrader.api import Gradebook

    result = Result(job.assignment, job.student, graded=True, notebooks=notebooks)
    with Gradebook(f"sqlite:///{gradebook}") as book:
        submission = book.find_submission(job.assignment, job.student)
        result.timestamp = submission.timestamp.isoformat() if submission.timestamp else None
        for notebook in submission.notebooks:
            result.scores[notebook.name] = {
                grade.name: Score(grade.auto_score, grade.needs_manual_grade)
                for grade in notebook.grades
            }
            result.comments[notebook.name] = {
                comment.name: comment.auto_comment for comment in notebook.comments
            }
    return result
