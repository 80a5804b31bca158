"""A tiny generated assignment, and a class of students who break every rule.

The assignment ``tiny`` has two autograded exercises (``double``: 2 points, ``square``:
1 point, each with visible and hidden tests) and a written answer (1 point, graded by
hand). Its kernels start in about a second, so the adversarial class costs little: each
student is one way a submission can break, cheat or attack the grader.
"""

import shutil
import socket
import threading

import nbformat
import psutil
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from grader.course import Course
from grader.running.nbgrader_steps import release
from grader.running.sandbox import Limits
from tests.conftest import REPO

ASSIGNMENT = "tiny"
LIMITS = Limits(memory_bytes=2 * 1024**3, cell_timeout=15, notebook_timeout=90)


def _grade(kind: str, grade_id: str, points: int = 0) -> dict:
    """nbgrader's metadata of a cell: setup (locked), answer, test, or written answer."""
    metadata = {"grade_id": grade_id, "schema_version": 3, "task": False,
                "grade": kind in ("test", "written"), "solution": kind in ("answer", "written"),
                "locked": kind in ("setup", "test")}
    if metadata["grade"]:
        metadata["points"] = points
    return {"nbgrader": metadata}


PLAIN = "print('numpy', np.__version__)"  # an instructor's code cell nbgrader does not mark
SOLUTIONS = {
    "double": "def double(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION",
    "square": "def square(x):\n    ### BEGIN SOLUTION\n    return x * x\n    ### END SOLUTION",
}
TESTS = {
    "test_double": "assert double(2) == 4, 'double(2) should be 4'\n"
                   "### BEGIN HIDDEN TESTS\n"
                   "assert double(-3) == -6, 'double(-3) should be -6 (secret check)'\n"
                   "### END HIDDEN TESTS",
    "test_square": "assert square(3) == 9, 'square(3) should be 9'\n"
                   "### BEGIN HIDDEN TESTS\n"
                   "assert np.allclose(square(np.arange(3)), [0, 1, 4]), 'square of an array'\n"
                   "### END HIDDEN TESTS",
}


# Worked answers (grader.outputs.worked_answers), each under its exercise: {the cell it follows:
# its text}; tiny_source(worked=True) has them.
WORKED = {
    "test_double": "Worked answer to double: twice x is x added to itself.",
    "written": "Worked answer to why: doubling adds a number to itself.",
}


# The written answer's rubric (grader.outputs.rubrics), right under it; tiny_source(worked=True)
# has it.
RUBRIC = "### Why (`written`, 1 point)\n\nRubric of why: full credit for adding x to itself."


def worked_cell(text: str) -> nbformat.NotebookNode:
    return new_markdown_cell(text, metadata={"tags": ["worked-answer"]})


def tiny_source(worked: bool = False) -> nbformat.NotebookNode:
    cells = [
        new_markdown_cell("# A tiny assignment"),
        new_code_cell("import numpy as np", metadata=_grade("setup", "setup")),
        new_code_cell(PLAIN),
        new_code_cell(SOLUTIONS["double"], metadata=_grade("answer", "double")),
        new_code_cell(TESTS["test_double"], metadata=_grade("test", "test_double", 2)),
        new_code_cell(SOLUTIONS["square"], metadata=_grade("answer", "square")),
        new_code_cell(TESTS["test_square"], metadata=_grade("test", "test_square", 1)),
        new_markdown_cell("Why?\n\n=== BEGIN MARK SCHEME ===\nAny reason.\n"
                          "=== END MARK SCHEME ===", metadata=_grade("written", "written", 1)),
    ]
    if worked:
        for grade_id, text in WORKED.items():
            after = next(i for i, cell in enumerate(cells)
                         if cell.metadata.get("nbgrader", {}).get("grade_id") == grade_id)
            cells.insert(after + 1, worked_cell(text))
        written = next(i for i, cell in enumerate(cells)
                       if cell.metadata.get("nbgrader", {}).get("grade_id") == "written")
        cells.insert(written + 1, new_markdown_cell(RUBRIC, metadata={"tags": ["rubric"]}))
    notebook = new_notebook(cells=cells)
    notebook.metadata.kernelspec = {"name": "python3", "display_name": "Python 3",
                                    "language": "python"}
    return notebook


def make_tiny_course(root, worked: bool = False) -> Course:
    """A course in ``root`` whose one assignment is ``tiny`` (with worked answers and a
    rubric if ``worked``), released."""
    (root / "grading").mkdir(parents=True)
    shutil.copy(REPO / "grading" / "nbgrader_config.py", root / "grading")
    (root / "solutions" / ASSIGNMENT).mkdir(parents=True)
    nbformat.write(tiny_source(worked), root / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")
    (root / "notebooks").mkdir()
    course = Course(root / "grading")
    assert not release(course)
    return course


def released(course: Course) -> nbformat.NotebookNode:
    return nbformat.read(course.release / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)


def answered(course: Course, answers: dict[str, str]) -> nbformat.NotebookNode:
    """The release with ``answers`` ({grade id: code}) typed in; the others solved, and the
    written answer written (so that it waits for a TA)."""
    notebook = released(course)
    plain = {name: code.replace("    ### BEGIN SOLUTION\n", "").replace(
        "\n    ### END SOLUTION", "") for name, code in SOLUTIONS.items()}
    plain["written"] = "Because doubling is adding a number to itself."
    for cell in notebook.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in answers:
            cell.source = answers[grade_id]
        elif grade_id in plain:
            cell.source = plain[grade_id]
    return notebook


def hand_in(course: Course, student: str, files: dict[str, bytes | nbformat.NotebookNode]):
    folder = course.folder("submitted", student, ASSIGNMENT)
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        if isinstance(content, nbformat.NotebookNode):
            content = nbformat.writes(content).encode()
        (folder / name).write_bytes(content)


class Listener:
    """A TCP server on the host's loopback that counts the connections it gets."""

    def __init__(self):
        self.server = socket.create_server(("127.0.0.1", 0))
        self.server.settimeout(0.2)
        self.port = self.server.getsockname()[1]
        self.connections = 0
        self.running = True
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while self.running:
            try:
                connection, _ = self.server.accept()
            except TimeoutError:
                continue
            self.connections += 1
            connection.close()

    def close(self):
        self.running = False
        self.thread.join()
        self.server.close()


def lingering(argument: str, then: list[str] = ()) -> str:
    """An answer to ``double`` that starts ``sleep argument`` in a session of its own (a
    process that would outlive the kernel if nothing ended it), then runs the lines
    ``then``. It does so from ``==`` on what ``double`` returns, which the test cell calls:
    code an answer leaves to run later runs outside the answer's allowlist (which refuses
    ``subprocess`` in the answer itself), so the sandbox is what stands in its way."""
    return "\n".join([
        "class Lingering(int):",
        "    def __eq__(self, other):",
        "        import subprocess",
        f"        subprocess.Popen(['sleep', {argument!r}], start_new_session=True)",
        *(f"        {line}" for line in then),
        "        return int(self) == other",
        "",
        "def double(x):",
        "    return Lingering(2 * x)",
    ])


def sleeping(argument: str) -> list[psutil.Process]:
    """The processes of this machine running ``sleep argument``."""
    return [process for process in psutil.process_iter(["cmdline"])
            if process.info["cmdline"] == ["sleep", argument]]
