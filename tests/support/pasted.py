"""Whether a function students receive answers an exercise, decided by the real tests.

A student could paste any function of the ``course_utils`` they receive, with what it
calls, into an exercise's answer cell. :func:`leaks_in` finds, for one notebook, every
(candidate, exercise) pair where that would score:

1. the solution notebook runs once, top to bottom, in a kernel started as nbgrader's
   autograde starts it (``NBGRADER_EXECUTION=autograde``: hidden tests report their
   values as display outputs, ``course_utils.checks.guards.report``), under the student id
   nbval uses, with the guards off from its start (``COURSE_ALLOWLIST=off``, and
   ``in_kernel.switch_guards_off`` before the notebook's first cell: no twin refused);
2. right after each code exercise's test cell, for each candidate that fits the
   exercise's signature (``shipped_functions.fits``), one cell binds the exercise's name
   to the candidate, runs the test cell's whole source from the solutions (visible and
   hidden tests) within a time limit, and puts the solution's function back
   (``in_kernel.run``);
3. the candidate answers the exercise when that cell scores as the grader scores a test
   cell: nothing raised in the kernel, and every reported value equal to the stored answer
   (``grader.scoring.outside.CompareOutside`` on the cell, with ``grading/answers/``).

Two controls run the same way on every code exercise, so that a run that sees nothing
proves something: the solution's own function must be found answering its exercise
(before the candidates, and again after them: no candidate left the kernel unfit to
judge), and a wrong one (the solution stuck on its first answer, ``in_kernel.STUCK``)
must not.
"""

import copy
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
from nbformat import NotebookNode

from grader.cells import errors, is_answer, is_test, marks
from grader.scoring.outside import CompareOutside
from tests.support import in_kernel
from tests.support.shipped_functions import Candidate, required_positional

__all__ = ["Exercise", "Findings", "Probe", "code_exercises", "leaks_in"]

REPO = Path(__file__).resolve().parents[2]
STUDENT = "instructor"  # nbval's student id (solutions/conftest.py), the kernel's and the grader's
KERNEL_ENVIRONMENT = {"NBGRADER_EXECUTION": "autograde", "COURSE_ALLOWLIST": "off",
                      "COURSE_STUDENT": STUDENT, "HF_HUB_OFFLINE": "1",
                      "TRANSFORMERS_OFFLINE": "1"}
CELL_TIMEOUT = 300  # seconds, as nbval's (pyproject.toml)
# A candidate's time limit: this many times what the solution's own run of the test cell
# took, and at least FLOOR seconds (a slow candidate cannot stall the run)
SLOWER, FLOOR = 10, 5.0
SOLUTION = Candidate(in_kernel.SOLUTION, "the solution's own function")
STUCK = Candidate(in_kernel.STUCK, "the solution, stuck on its first answer")


@dataclass(frozen=True)
class Exercise:
    """A code exercise of a notebook: its name, how many positional arguments its function
    requires, and its test cell (from the solutions: visible and hidden tests)."""

    name: str
    required: int
    test_cell: NotebookNode


@dataclass
class Findings:
    """What the run of one notebook found: ``answers`` ({exercise: [candidate names that
    answer it]}), the controls' verdicts ({exercise: why the solution failed} and the
    exercises the wrong candidate passed), and how many probes ran and how long it took."""

    answers: dict[str, list[str]] = field(default_factory=dict)
    solution_failed: dict[str, str] = field(default_factory=dict)
    stuck_passed: list[str] = field(default_factory=list)
    probes: int = 0
    seconds: float = 0.0


def code_exercises(notebook: NotebookNode) -> dict[int, Exercise]:
    """{index of its test cell: exercise} of every code exercise of ``notebook`` (a
    solution notebook): those whose answer cell defines a function of the exercise's name."""
    answers = {marks(cell)["grade_id"]: cell.source for cell in notebook.cells
               if cell.cell_type == "code" and is_answer(cell)}
    found = {}
    for index, cell in enumerate(notebook.cells):
        name = marks(cell).get("grade_id", "").removeprefix("test_")
        if is_test(cell) and name in answers:
            required = required_positional(answers[name], name)
            if required is not None:
                found[index] = Exercise(name, required, cell)
    return found


class Probe:
    """A kernel that runs a solution notebook, and test cells on candidates in it."""

    def __init__(self, path: Path):
        self.path = path
        self.notebook = nbformat.read(path, as_version=4)
        # nbclient keeps each cell it runs at its index: the probes' cells go to a last,
        # scratch, place, so the notebook's own cells stay as they are
        running = copy.deepcopy(self.notebook)
        running.cells.append(nbformat.v4.new_code_cell())
        self.scratch = len(running.cells) - 1
        manager = AsyncKernelManager(kernel_name="python3",
                                     client_class="grader.running.kernel_client.KernelClient")
        self.client = NotebookClient(running, km=manager, timeout=CELL_TIMEOUT,
                                     resources={"metadata": {"path": str(path.parent)}})

    def run(self, exercise: Exercise, candidate: Candidate, limit: float) -> NotebookNode:
        """The test cell of ``exercise`` as it ran on ``candidate``: its outputs, an error
        among them when it raised."""
        cell = copy.deepcopy(exercise.test_cell)
        cell.source = (f"__probe.run(globals(), {exercise.name!r}, {candidate.module!r}, "
                       f"{candidate.qualname!r}, {candidate.built!r}, "
                       f"{exercise.test_cell.source!r}, {limit!r}, {candidate.arguments!r})")
        try:
            self.client.execute_cell(cell, self.scratch, store_history=False)
        except CellExecutionError:
            pass  # the error is among the cell's outputs
        return cell

    def cell(self, index: int) -> None:
        """Run the notebook's cell ``index`` (it must not fail)."""
        self.client.execute_cell(self.client.nb.cells[index], index)

    def start(self) -> None:
        """Load ``in_kernel`` into the kernel as the module ``__probe``, switch the guards
        off, and have failures shown in one line (IPython's full tracebacks take longer
        than most probes)."""
        source = Path(in_kernel.__file__).read_text()
        loader = nbformat.v4.new_code_cell(
            f"__probe = __import__('types').ModuleType('__probe')\n"
            f"exec(compile({source!r}, {in_kernel.__file__!r}, 'exec'), __probe.__dict__)\n"
            "__probe.switch_guards_off()\n"
            "get_ipython().run_line_magic('xmode', 'Minimal')")
        self.client.execute_cell(loader, self.scratch, store_history=False)


def answers(probe: Probe, exercise: Exercise, candidate: Candidate, limit: float) -> str:
    """"" when ``candidate`` scores on ``exercise`` as the grader decides it (in the kernel,
    then outside it), else why not (the cell's first error)."""
    cell = probe.run(exercise, candidate, limit)
    assignment = probe.path.stem
    graded = nbformat.v4.new_notebook(cells=[cell])
    CompareOutside(answers_directory=str(REPO / "grading" / "answers")).preprocess(
        graded, {"nbgrader": {"assignment": assignment, "notebook": assignment,
                              "student": STUDENT}})
    failures = errors(cell)
    if not failures:
        return ""
    return f"{failures[0].get('ename', '')}: {failures[0].get('evalue', '')}"[:300]


def leaks_in(path: Path, candidates: list[Candidate]) -> Findings:
    """Run the solution notebook at ``path`` and every fitting candidate on each of its
    code exercises (see the module's docstring)."""
    probe = Probe(path)
    exercises = code_exercises(probe.notebook)
    findings = Findings()
    started = time.monotonic()
    with probe.client.setup_kernel(env={**os.environ, **KERNEL_ENVIRONMENT}):
        probe.start()
        for index in range(len(probe.notebook.cells)):
            probe.cell(index)
            if index in exercises:
                try_each(probe, exercises[index], candidates, findings)
    findings.seconds = time.monotonic() - started
    return findings


def try_each(probe: Probe, exercise: Exercise, candidates: list[Candidate],
             findings: Findings) -> None:
    """Run ``exercise``'s test cell on the solution, on the wrong control, on each fitting
    candidate and on the solution again, and note in ``findings`` what answered it."""
    begun = time.monotonic()
    failed = [answers(probe, exercise, SOLUTION, CELL_TIMEOUT)]
    limit = max(FLOOR, SLOWER * (time.monotonic() - begun))
    if not answers(probe, exercise, STUCK, limit):
        findings.stuck_passed.append(exercise.name)
    fitting = [c for c in candidates if c.fits(exercise.required)]
    findings.answers[exercise.name] = [
        c.name for c in fitting if not answers(probe, exercise, c, limit)]
    after = answers(probe, exercise, SOLUTION, CELL_TIMEOUT)
    failed.append(after and f"after the candidates: {after}")
    if any(failed):  # the first failure is the one to read
        findings.solution_failed[exercise.name] = next(why for why in failed if why)
    findings.probes += 3 + len(fitting)
