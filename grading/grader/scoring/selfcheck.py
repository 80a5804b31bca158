"""Before grading anyone, grade the instructor's solution: a broken environment stops the run.

    verify(course, ["04_alpha3_by_hand"], limits)   None, or raises BrokenEnvironment

A grading environment in which ``course_utils`` cannot be imported inside the sandbox, or
in which the kernel cannot start, grades every student 0 or "the kernel died", and blames
them. So each assignment's solution (``solutions/<assignment>/``, nbgrader's source) is
graded first, as a submission, by the same worker and sandbox as the class
(:mod:`grader.running.worker`), against tests released into a scratch folder (never the TA's
gradebook). Anything below full marks on an autograded test raises
:class:`BrokenEnvironment`, whose first line says what is wrong and the next lines which
cells failed and how. A success is remembered in ``selfcheck.json`` beside the gradebook,
keyed by a hash of the solution, the nbgrader configuration, the sources of
``course_utils`` and of the grader, the kernel's Python, the installed packages, where the
sandbox mounts them and the limits: a check costs one notebook per assignment until one of
them changes.
"""

import hashlib
import importlib.metadata
import json
import re
import sys
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import nbformat

from grader import gradebook, state
from grader.cells import is_test, marks
from grader.course import ANSWERS, Course
from grader.running import nbgrader_steps, pool
from grader.running.machine import default_workers
from grader.running.sandbox import Limits, read_only_folders, unavailable
from grader.running.worker import Job, Result

CACHE_FILE = "selfcheck.json"
STUDENT = "instructor"  # the solution's student id, in the worker's scratch course only
# ModuleNotFoundError's message, or `python -m`'s: "No module named ipykernel_launcher"
MISSING_MODULE = re.compile(r"No module named '?([\w.]+)")
STARTING_KERNEL_DIED = "Kernel died before replying to kernel_info"  # jupyter_client's words
KERNEL_LINES = 12  # what the details keep of a dead kernel's own output
ERRORS_SHOWN = 6  # the first errors of a notebook: the rest mostly follow from them


class BrokenEnvironment(RuntimeError):
    """The instructor's solution loses points where the class would be graded; its str is
    what the TA reads: one line saying what is wrong, then the failing cells."""


def verify(course: Course, assignments: list[str], limits: Limits,
           workers: int | None = None, scheduler: str | None = None,
           tell: Callable[[str], None] = lambda note: None) -> None:
    """Grade the solution of each of ``assignments`` not yet checked in this environment
    (side by side, as ``make autograde`` grades: ``workers``, a Dask ``scheduler``; ``tell``
    hears which, before); raise :class:`BrokenEnvironment` if one scores less than full
    marks."""
    environment = environment_hash(course, limits, scheduler)
    cache = _load(course)
    keys = {assignment: _key(course, assignment, environment) for assignment in assignments}
    unchecked = [a for a in assignments if cache.get(a, {}).get("key") != keys[a]]
    if not unchecked:
        return
    tell(f"checking the grading environment first: grading the instructor's solution of "
         f"{', '.join(unchecked)} (once per environment)")
    workers = min(workers or default_workers(), len(unchecked))
    threads = max(1, default_workers() // workers)
    jobs = [solution_job(course, assignment, limits, threads) for assignment in unchecked]
    problems = []
    for result in pool.run(jobs, workers, scheduler, progress=False):
        problem = diagnose(result, course)
        if problem:
            problems.append(problem)
        else:  # only successes are remembered
            _remember(course, result.assignment, {
                "key": keys[result.assignment], "seconds": round(result.seconds, 1),
                "checked": datetime.now(UTC).isoformat(timespec="seconds")})
    if problems:
        problems.sort(key=lambda problem: problem[0])
        headline = problems[0][1]
        details = "\n".join(detail for _, _, detail in problems)
        raise BrokenEnvironment(f"{headline}; nobody was graded\n{details}")


def environment_hash(course: Course, limits: Limits, scheduler: str | None = None) -> str:
    """sha256 of what, besides the solution, decides how a solution grades here."""
    digest = hashlib.sha256()
    for part in (sys.executable, str(Path(sys.executable).resolve()), sys.version,
                 repr(limits), str(unavailable()), str(scheduler),
                 *map(str, read_only_folders()), *installed_packages(),
                 (course.root / "nbgrader_config.py").read_text()):
        digest.update(part.encode() + b"\0")
    import course_utils  # wherever it is installed, as the sandbox finds it

    for package in (Path(course_utils.__file__).parent, Path(__file__).parent):  # and grader
        _hash_files(digest, package, "*.py")
    return digest.hexdigest()


def installed_packages() -> list[str]:
    """``name==version`` of every distribution this Python sees, sorted."""
    return sorted(f"{dist.metadata['Name']}=={dist.version}"
                  for dist in importlib.metadata.distributions())


def _hash_files(digest, folder: Path, pattern: str = "*") -> None:
    for path in sorted(folder.rglob(pattern)):
        if path.is_file() and not {"__pycache__", ".ipynb_checkpoints"} & set(path.parts):
            digest.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())


def _key(course: Course, assignment: str, environment: str) -> str:
    digest = hashlib.sha256(environment.encode())
    _hash_files(digest, course.source / assignment)
    _hash_files(digest, course.root / ANSWERS / assignment)  # the answers it must match
    return digest.hexdigest()


def solution_job(course: Course, assignment: str, limits: Limits, threads: int) -> Job:
    """The solution folder handed in as a submission, with its tests released into a
    scratch gradebook."""
    folder = course.source / assignment
    files = {str(path.relative_to(folder)): path.read_bytes()
             for path in sorted(folder.rglob("*"))
             if path.is_file() and ".ipynb_checkpoints" not in path.parts}
    config = (course.root / "nbgrader_config.py").read_text()
    return Job(assignment, STUDENT, files, tests_of(course, assignment), config, limits,
               threads, course.answers(assignment))


def tests_of(course: Course, assignment: str) -> bytes:
    """A gradebook holding ``assignment``'s tests alone: those the class is graded against
    (a copy of the TA's gradebook, which is only read), or before ``make release`` recorded
    them, those of the source, released into a scratch folder."""
    if gradebook.knows(course, assignment):
        return gradebook.snapshot(course, assignment)
    return scratch_gradebook(course, assignment)


def scratch_gradebook(course: Course, assignment: str) -> bytes:
    """A gradebook holding ``assignment``'s tests alone, released from its source into a
    scratch folder (the TA's gradebook and release stay as they are)."""
    with tempfile.TemporaryDirectory(prefix="selfcheck-") as scratch:
        database = Path(scratch) / "gradebook.db"
        run = nbgrader_steps.nbgrader(course, "generate_assignment", assignment, "--force",
                             f"--CourseDirectory.release_directory={scratch}/release",
                             f"--CourseDirectory.db_url=sqlite:///{database}")
        if run.returncode != 0:
            raise BrokenEnvironment(f"cannot release the tests of {assignment}: nobody was "
                                    f"graded\n{(run.stdout + run.stderr).strip()[-2000:]}")
        return database.read_bytes()


def _points(course: Course, assignment: str) -> dict[tuple[str, str], float]:
    """{(notebook, grade id): points} of the autograded tests of the solution."""
    points = {}
    for path in sorted((course.source / assignment).glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if is_test(cell):
                points[path.stem, marks(cell)["grade_id"]] = float(marks(cell).get("points", 0))
    return points


def diagnose(result: Result, course: Course) -> tuple[int, str, str] | None:
    """None when the solution got every autograded point, else (rank of the cause: the
    likeliest first, a headline naming it, the details: the tests below full marks and
    the notebook's first errors)."""
    name = f"the instructor's solution of {result.assignment}"
    if not result.graded:
        said = kernel_output(result.log)
        details = "\n".join([f"{name} was not graded: {result.reason}",
                             *(f"  {line}" for line in said)])
        if STARTING_KERNEL_DIED in result.log:
            cause = (1, "the grading kernel dies at start (the sandbox cannot reach its Python, "
                     "or the memory limit is too small for it)", details)
        elif "kernel died" in result.reason:
            cause = (1, f"the grading kernel dies while it runs {name} (a crash, or the memory "
                     "limit)", details)
        else:
            cause = (3, f"{name} could not be graded: {result.reason}", details)
        return _missing_module(said, details) or cause
    points = _points(course, result.assignment)
    scores = {(notebook, cell): score.auto_score or 0
              for notebook, cells in result.scores.items() for cell, score in cells.items()
              if (notebook, cell) in points and not score.needs_manual_grade}
    lost = {key: (score, points[key]) for key, score in scores.items() if score < points[key]}
    if not lost:
        return None
    errors = cell_errors(result)
    lines = [f"{name} scores {sum(scores.values()):g} of {sum(points.values()):g} "
             "autograded points"]
    lines += [f"  {notebook} {cell}: {score:g} of {maximum:g}"
              for (notebook, cell), (score, maximum) in sorted(lost.items())]
    lines += [f"  error in {where}: {error}" for where, error in errors[:ERRORS_SHOWN]]
    if len(errors) > ERRORS_SHOWN:
        lines.append(f"  and {len(errors) - ERRORS_SHOWN} more errors")
    details = "\n".join(lines)
    first = f": {errors[0][0]}: {errors[0][1]}" if errors else ""
    return (_missing_module([error for _, error in errors], details)
            or (2, f"{name} fails in the grading environment{first}", details))


def _missing_module(texts: list[str], details: str) -> tuple[int, str, str] | None:
    """The likeliest cause of all, when one of ``texts`` says a module is missing."""
    for text in texts:
        if match := MISSING_MODULE.search(text):
            return 0, f"the grading environment cannot import {match.group(1)}: {text}", details
    return None


def kernel_output(log: str) -> list[str]:
    """What the kernel itself printed before it died (bubblewrap's or Python's complaint):
    the lines of nbgrader's log between its start of the notebook and its first error."""
    lines = log.splitlines()
    starts = [i for i, line in enumerate(lines) if "] Autograding " in line]
    said = []
    for line in lines[starts[-1] + 1 if starts else 0:]:
        if "| ERROR]" in line:
            break
        if line.strip() and not line.startswith("[") and not line.startswith(" "):
            said.append(line.strip())
    return said[-KERNEL_LINES:]


def cell_errors(result: Result) -> list[tuple[str, str]]:
    """[(where: "notebook cell <grade id or #n>", "Name: message")] of every error output."""
    errors = []
    for file_name, text in sorted(result.notebooks.items()):
        for number, cell in enumerate(nbformat.reads(text, as_version=4).cells, start=1):
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id") or f"#{number}"
            errors += [(f"{Path(file_name).stem} cell {grade_id}",
                        f"{output.get('ename')}: {output.get('evalue')}".strip())
                       for output in cell.get("outputs", [])
                       if output.get("output_type") == "error"]
    return errors


def _load(course: Course) -> dict:
    """{assignment: its last success}; a damaged file is checked again, not trusted."""
    path = course.root / CACHE_FILE
    try:
        cache = json.loads(path.read_text()) if path.exists() else {}
    except json.JSONDecodeError:
        return {}
    return cache if isinstance(cache, dict) else {}


def _remember(course: Course, assignment: str, entry: dict) -> None:
    """Add ``assignment``'s success to the file as it is now (another process, the
    on-submission service, may have added its own since this one read it)."""
    cache = _load(course) | {assignment: entry}
    state.write_json(course.root / CACHE_FILE, dict(sorted(cache.items())))
