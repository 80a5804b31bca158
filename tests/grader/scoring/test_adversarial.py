"""The adversarial class: every way a submission can break, cheat or attack the grading.

Each student of ``tiny`` (tests/grader/tiny_course.py) is one case. The whole class is
graded once, in parallel and sandboxed; then every expectation is asserted: the score of
each test cell, the status, the reason, the flags, and that nothing outside the
student's scratch folder changed.
"""

import hashlib
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from grader import state
from grader.scoring import grades
from grader.scoring.autograde import autograde
from tests.grader.tiny_course import (
    ASSIGNMENT,
    LIMITS,
    Listener,
    answered,
    hand_in,
    lingering,
    make_tiny_course,
    released,
    sleeping,
)

pytestmark = pytest.mark.notebook

WRONG_DOUBLE = "def double(x):\n    return x + 1"
LINGERING_SLEEP = "86399.5"  # the escape student's process, found by its argument
# raw bytes on the kernel's stderr, written when the test compares (outside the allowlist,
# which refuses os.write in the answer itself)
RAW_BYTES_OUT = ("class Loud(int):\n    def __eq__(self, other):\n        import os\n"
                 "        os.write(2, b'\\xff\\xfe')\n        return int(self) == other\n"
                 "def double(x):\n    return Loud(2 * x)")


def escape_attempts(course, port: int) -> str:
    """An answer that tries to read, write and connect where it must not, then answers."""
    targets = {
        "read the solutions": f"open({str(course.source / ASSIGNMENT / 'tiny.ipynb')!r}).read()",
        "read the gradebook": f"open({str(course.gradebook_path)!r}, 'rb').read()",
        "write the gradebook": f"open({str(course.gradebook_path)!r}, 'ab').write(b'x')",
        "change a submission": "open({!r}, 'w').write('{{}}')".format(
            str(course.notebook("submitted", "perfect", ASSIGNMENT))),
        "plant a file in the course": f"open({str(course.root / 'planted.txt')!r}, 'w')",
        "connect to the host": f"socket.create_connection(('127.0.0.1', {port}), timeout=3)",
        "reach the internet": "socket.create_connection(('pypi.org', 443), timeout=3)",
    }
    lines = ["import socket", "def attempt(what, action):", "    try:",
             "        action()", "        print(what, 'SUCCEEDED')",
             "    except Exception as error:",
             "        print(what, 'blocked:', type(error).__name__)"]
    lines += [f"attempt({what!r}, lambda: {code})" for what, code in targets.items()]
    return lingering(LINGERING_SLEEP, then=lines)


TAMPERING = {
    "double": "\n".join([
        "from course_utils import checks",
        "checks.check_close = lambda *args, **kwargs: None",
        "np.allclose = lambda *args, **kwargs: True",
        "import builtins",
        "builtins.AssertionError = Exception",
        "import sys",
        "sys.modules.pop('course_utils.checks', None)",
        "get_ipython().showtraceback = lambda *args, **kwargs: None",
        "def double(x):",
        "    return x",
    ]),
    "square": "\n".join([
        "import numpy",
        "class Anything:",
        "    allclose = staticmethod(lambda *args, **kwargs: True)",
        "    def __getattr__(self, name):",
        "        return getattr(numpy, name)",
        "np = Anything()",
        "def square(x):",
        "    return x * x",
    ]),
}
# (cell, line in the cell, family) of each flag the tampering student must get
TAMPER_FLAGS = [("double", 2, "checks"), ("double", 3, "numpy"), ("double", 4, "IPython kernel"),
                ("double", 5, "builtins"), ("double", 7, "sys.modules"), ("double", 8, "IPython"),
                ("square", 4, "answers comparisons"), ("square", 6, "np"), ("#3", 2, "builtins")]
# students whose attack on the grading is also a line for the TA: the same, by student
FLAGGED = {
    "tampering": TAMPER_FLAGS,
    "segfault": [("double", 1, "gc or ctypes"), ("double", 2, "gc or ctypes")],
    "escape": [("double", 3, "runs later"), ("double", 4, "runs later")],  # its subprocess
    "raw_bytes_out": [("double", 2, "answers comparisons")],
}


def the_class(course, port: int) -> dict[str, dict]:
    """{student: {file name: content}} of every case."""
    perfect = answered(course, {})
    not_the_tests = answered(course, {"double": WRONG_DOUBLE})
    not_the_tests.cells = [cell for cell in not_the_tests.cells
                           if cell.metadata.get("nbgrader", {}).get("grade_id") != "test_double"]
    edited = answered(course, {"double": WRONG_DOUBLE, "test_double": "pass"})
    faked = answered(course, {"double": WRONG_DOUBLE})
    for cell in faked.cells:
        if cell.cell_type == "code":
            cell.execution_count = 1
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="passed\n")]
    tampering = answered(course, TAMPERING)  # and a cell of its own, that nbgrader keeps
    tampering.cells.insert(2, nbformat.v4.new_code_cell("import builtins\nbuiltins.quit = None"))
    name = f"{ASSIGNMENT}.ipynb"
    return {
        "perfect": {name: perfect},
        "partial": {name: answered(course, {"square": "def square(x):\n    return x + x"})},
        "blank": {name: released(course)},
        "endless_loop": {name: answered(course, {"double": "while True:\n    pass"})},
        "kernel_exits": {name: answered(course, {"double": "import os\nos._exit(1)"})},
        "segfault": {name: answered(course, {"double": "import ctypes\nctypes.string_at(0)"})},
        "raw_bytes_out": {name: answered(course, {  # nbgrader's log is not UTF-8 any more
            "double": RAW_BYTES_OUT})},
        "memory_blowup": {name: answered(course, {
            "square": "blob = bytearray(8 * 1024**3)\ndef square(x):\n    return x * x"})},
        "not_json": {name: b"{ this is not a notebook"},
        "not_utf8": {name: b'\xff\xfe{"cells": []}'},
        "no_notebook": {"notes.txt": b"I forgot to attach it"},
        "saved_as_copy": {f"{ASSIGNMENT} (1).ipynb": perfect},
        "deleted_test": {name: not_the_tests},
        "edited_test": {name: edited},
        "faked_outputs": {name: faked},
        "tampering": {name: tampering},
        "escape": {name: answered(course, {"double": escape_attempts(course, port)})},
    }


# student: (status, test_double, test_square, text the reason must hold)
EXPECTED = {
    "perfect": ("needs manual grading", 2, 1, ""),
    "partial": ("needs manual grading", 2, 0, ""),
    "blank": ("graded", 0, 0, ""),  # an untouched written answer scores 0 at once
    "endless_loop": ("needs manual grading", 0, 1, "cell double timed out"),
    # os._exit and ctypes are refused in an answer cell: the kernel lives, double is undefined
    "kernel_exits": ("needs manual grading", 0, 1, ""),
    "segfault": ("needs manual grading", 0, 1, ""),
    # its bytes reach the test cell's stderr (os.write is refused in the answer itself), which
    # fails that cell when the kernel forwards them before the cell ends; on a busy machine
    # they may come after it, and the right value scores: either way its cell is flagged
    # (FLAGGED) and grading itself goes on
    "raw_bytes_out": ("needs manual grading", (0, 2), 1, ""),
    "memory_blowup": ("needs manual grading", 2, 0, "cell square ran out of memory"),
    "not_json": ("not graded", None, None, "not JSON"),
    "not_utf8": ("not graded", None, None, "not UTF-8"),
    "no_notebook": ("not graded", None, None, "no tiny.ipynb in the submission (found: notes.txt)"),
    "saved_as_copy": ("needs manual grading", 2, 1, "saved as 'tiny (1).ipynb'"),
    "deleted_test": ("needs manual grading", 0, 1, ""),
    "edited_test": ("needs manual grading", 0, 1, ""),
    "faked_outputs": ("needs manual grading", 0, 1, ""),
    # get_ipython() is refused before the traceback is hidden (the other lines are flagged)
    "tampering": ("needs manual grading", 0, 1, ""),
    # its attempts run when the test compares (outside the allowlist): the sandbox stops them
    "escape": ("needs manual grading", 2, 1, ""),
}


def tree_digest(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def graded(tmp_path_factory, sandbox):
    """The class, graded once with two workers; and what the course looked like before."""
    course = make_tiny_course(tmp_path_factory.mktemp("adversarial"))
    listener = Listener()
    try:
        for student, files in the_class(course, listener.port).items():
            hand_in(course, student, files)
        before = {"submitted": tree_digest(course.folder("submitted")),
                  "source": tree_digest(course.source)}
        summary = autograde(course, workers=2, limits=LIMITS, progress=False)
    finally:
        listener.close()
    return course, summary, before, listener.connections


def cell_scores(course, student):
    with Gradebook(course.gradebook_url) as book:
        notebook = book.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, student)
        return {grade.name: grade.score for grade in notebook.grades}


def rows_of(course):
    return {row.student_id: row for row in grades.grade_rows(course)}


@pytest.mark.parametrize("student", sorted(EXPECTED))
def test_each_submission_ends_graded_or_not_graded_with_its_reason(graded, student):
    course, summary, _, _ = graded
    status, double, square, reason = EXPECTED[student]
    row = rows_of(course)[student]
    assert row.status == status, row
    assert reason in row.reason, row
    if status == "not graded":
        assert f"{student}/{ASSIGNMENT}" in summary.not_graded
        assert row.score is None
        assert not course.folder("autograded", student, ASSIGNMENT).exists()
    else:
        scores = cell_scores(course, student)
        allowed = double if isinstance(double, tuple) else (double,)
        assert scores["test_double"] in allowed and scores["test_square"] == square, scores
        assert float(row.score) == scores["test_double"] + square
        assert float(row.max_score) == 4  # the written answer's point is still to give


def test_a_notebook_saved_under_another_name_is_reported_by_name(graded):
    _, summary, _, _ = graded
    assert any("saved_as_copy" in note and "'tiny (1).ipynb'" in note for note in summary.notes)


def test_every_tamper_family_is_flagged_with_its_line(graded):
    course, _, _, _ = graded
    rows = rows_of(course)
    for student, expected in FLAGGED.items():
        flags = rows[student].flags
        for cell, line, family in expected:
            assert any(f"cell {cell} line {line}:" in flag and family in flag for flag in flags), (
                student, cell, line, family, flags)
    honest = {s: r.flags for s, r in rows.items() if s not in FLAGGED}
    assert not any(honest.values()), honest


def test_nothing_outside_the_scratch_folder_changed(graded):
    course, _, before, connections = graded
    assert tree_digest(course.folder("submitted")) == before["submitted"]
    assert tree_digest(course.source) == before["source"]
    assert not (course.root / "planted.txt").exists()
    assert connections == 0, "a student's kernel reached a server on the host"
    printed = nbformat.read(course.notebook("autograded", "escape", ASSIGNMENT), as_version=4)
    text = "".join(output.get("text", "") for cell in printed.cells
                   for output in cell.get("outputs", []))
    assert text.count("blocked:") == 7 * 2 and "SUCCEEDED" not in text, text  # double(2), (-3)
    assert not sleeping(LINGERING_SLEEP), "a process the student started outlived grading"
    with Gradebook(course.gradebook_url) as book:  # the gradebook is whole and readable
        assert {s.id for s in book.students} >= {"perfect", "escape"}


def test_a_written_answer_graded_by_hand_makes_the_row_graded(graded):
    course, _, _, _ = graded
    with Gradebook(course.gradebook_url) as book:
        book.find_grade("written", ASSIGNMENT, ASSIGNMENT, "perfect").manual_score = 1
        book.find_grade("written", ASSIGNMENT, ASSIGNMENT, "perfect").needs_manual_grade = False
        book.db.commit()
    row = rows_of(course)["perfect"]
    assert (row.status, float(row.score), float(row.max_score)) == ("graded", 4, 4)


def test_a_rerun_grades_only_new_or_changed_submissions(graded):
    course, _, _, _ = graded
    assert autograde(course, workers=2, limits=LIMITS, progress=False).graded == []
    hand_in(course, "partial", {f"{ASSIGNMENT}.ipynb": answered(course, {})})
    again = autograde(course, workers=2, limits=LIMITS, progress=False)
    assert again.graded == [f"partial/{ASSIGNMENT}"]
    assert cell_scores(course, "partial")["test_square"] == 1
    outcomes = state.load(course)
    assert outcomes[f"perfect/{ASSIGNMENT}"].status == "graded"
