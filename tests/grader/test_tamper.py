"""Tamper flags: every family flagged on the line that does it, honest work never flagged."""

import copy
import functools
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from grader.tamper import (
    HOOKS_IPYTHON,
    PATCHES_BUILTINS,
    PATCHES_COURSE_UTILS,
    PATCHES_TEST_HELPER,
    REBINDS_TEST_NAME,
    RUNS_STRING_CODE,
    TOUCHES_INTERPRETER,
    Flag,
    read_scan_context,
    scan_cell,
    scan_notebook,
)
from tests.grading_cases import all_cases

REPO = Path(__file__).resolve().parents[2]
SOLUTIONS = sorted(REPO.glob("solutions/*/*.ipynb"))


def graded_cell(source: str, grade_id: str, solution: bool, grade: bool):
    return new_code_cell(source, metadata={"nbgrader": {
        "grade_id": grade_id, "solution": solution, "grade": grade, "locked": not solution,
        "schema_version": 3, **({"points": 1} if grade else {}),
    }})


# A small instructor notebook: the test cell reads checks, scores, Q, K, torch and print.
SETUP = "import numpy as np\nimport torch\n\nfrom course_utils import checks\n\ndevice = 'cpu'"
OFFICIAL_SCORES = (
    "def scores(q, k):\n    ### BEGIN SOLUTION\n    return q @ k.T / 2\n    ### END SOLUTION"
)
TEST_SCORES = (
    "expected = Q @ K.T / 2\n"
    "checks.check_close(checks.own_work(scores)(Q, K), expected, 'scores(Q, K)')\n"
    "print([n for n in range(3)], torch.ones(1))\n"
    "def helper(a):\n"
    "    return a\n"
)


def source_notebook():
    return new_notebook(cells=[
        new_markdown_cell("# Scores"),
        new_code_cell(SETUP),
        new_code_cell("Q = torch.ones(2, 4, device=device)\nK = torch.ones(3, 4, device=device)"),
        graded_cell(OFFICIAL_SCORES, "scores", solution=True, grade=False),
        graded_cell(TEST_SCORES, "test_scores", solution=False, grade=True),
    ])


@pytest.fixture(scope="module")
def context():
    return read_scan_context(source_notebook())


def findings(code: str, context) -> list[tuple[int, str]]:
    return [(flag.line, flag.family) for flag in scan_cell(code, "scores", context)]


# --- what the instructor notebook tells the scan -------------------------------------------

def test_context_reads_the_test_cells_free_names_and_the_official_bindings(context):
    # expected, n and a are set by the test cell itself; helper is its own function
    assert context.test_names == {"checks", "scores", "Q", "K", "torch", "print", "range"}
    assert context.answers == {"scores": {"scores"}}
    assert context.imports == {
        "np": {"numpy"}, "torch": {"torch"}, "checks": {"course_utils.checks"}
    }


# --- honest work: no flags ------------------------------------------------------------------

def test_all_eight_solution_notebooks_are_read():
    assert len(SOLUTIONS) == 8


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.parent.name)
def test_a_solution_notebook_scanned_against_itself_has_no_flags(path):
    notebook = nbformat.read(path, as_version=4)
    assert scan_notebook(notebook, notebook) == []


@functools.cache
def solution(assignment: str) -> nbformat.NotebookNode:
    return nbformat.read(REPO / "solutions" / assignment / f"{assignment}.ipynb", as_version=4)


HONEST = [
    pytest.param(assignment, answers, id=f"{assignment}-{kind}-{student}")
    for assignment, cases in sorted(all_cases().items())
    for kind in ("WRONG", "CORRECT")
    for student, answers in getattr(cases, kind).items()
]


@pytest.mark.parametrize("assignment, answers", HONEST)
def test_honest_right_and_wrong_answers_have_no_flags(assignment, answers):
    source = solution(assignment)
    submitted = copy.deepcopy(source)
    filled = set()
    for cell in submitted.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if cell.metadata.get("nbgrader", {}).get("solution") and grade_id in answers:
            cell.source = answers[grade_id]
            filled.add(grade_id)
    assert filled == set(answers), "every answer of the case went into its cell"
    assert scan_notebook(submitted, source) == []


# --- each family: a tampering line flagged, a near miss not ----------------------------------

TAMPERING = {
    # patches course_utils, however it was imported
    "checks attribute": (
        "from course_utils import checks\nchecks.check_close = lambda *args, **kwargs: None",
        [(2, PATCHES_COURSE_UTILS)]),
    "checks imported as c": (
        "import course_utils.checks as c\nc.check_close = print", [(2, PATCHES_COURSE_UTILS)]),
    "setattr of checks": (
        "setattr(checks, 'check_close', print)", [(1, PATCHES_COURSE_UTILS)]),
    "checks' __dict__": (
        "course_utils.checks.__dict__['check_close'] = print", [(1, PATCHES_COURSE_UTILS)]),
    "vars of checks updated": (
        "vars(checks).update(check_close=print)", [(1, PATCHES_COURSE_UTILS)]),
    "checks patched inside the answer": (
        "def scores(q, k):\n    checks.own_work = lambda f: f\n    return q @ k.T",
        [(2, PATCHES_COURSE_UTILS)]),
    "checks' function deleted": ("del checks.check_close", [(1, PATCHES_COURSE_UTILS)]),
    "checks by import_module": (
        "import importlib\n"
        "c = importlib.import_module('course_utils.checks')\nc.check_close = print",
        [(3, PATCHES_COURSE_UTILS)]),
    "the library the checks compare with": (
        "import course_utils.attention as attention\nattention.attention_scores = print",
        [(2, PATCHES_COURSE_UTILS)]),
    # patches a numpy/torch test helper
    "np.testing": ("np.testing.assert_allclose = print", [(1, PATCHES_TEST_HELPER)]),
    "numpy.allclose": (
        "import numpy\n\nnumpy.allclose = lambda *args, **kwargs: True",
        [(3, PATCHES_TEST_HELPER)]),
    "torch helpers": (
        "torch.testing.assert_close = print\ntorch.allclose = lambda *args, **kwargs: True",
        [(1, PATCHES_TEST_HELPER), (2, PATCHES_TEST_HELPER)]),
    "setattr of np": (
        "setattr(np, 'allclose', lambda *args, **kwargs: True)", [(1, PATCHES_TEST_HELPER)]),
    "an alias of torch.testing": (
        "t = torch.testing\nt.assert_close = print", [(2, PATCHES_TEST_HELPER)]),
    "a Tensor method": ("torch.Tensor.allclose = print", [(1, PATCHES_TEST_HELPER)]),
    "mock.patch": (
        "from unittest import mock\nmock.patch('torch.allclose', return_value=True).start()",
        [(2, PATCHES_TEST_HELPER)]),
    "patch.object as a decorator": (
        "from unittest.mock import patch\n\n"
        "@patch.object(np, 'isclose', return_value=True)\n"
        "def scores(q, k, _):\n    return q @ k.T",
        [(3, PATCHES_TEST_HELPER)]),
    # patches builtins
    "builtins module": (
        "import builtins\nbuiltins.print = lambda *args: None", [(2, PATCHES_BUILTINS)]),
    "__builtins__ item": (
        "__builtins__['isinstance'] = lambda *args: True", [(1, PATCHES_BUILTINS)]),
    "__builtins__ attribute": ("__builtins__.abs = print", [(1, PATCHES_BUILTINS)]),
    "AssertionError rebound": ("AssertionError = Exception", [(1, PATCHES_BUILTINS)]),
    "isinstance defined": (
        "def isinstance(obj, kind):\n    return True", [(1, PATCHES_BUILTINS)]),
    "two builtins on one line": ("abs = round = None", [(1, PATCHES_BUILTINS)]),
    "a builtin as a loop variable": ("for round in range(3):\n    pass", [(1, PATCHES_BUILTINS)]),
    "a builtin declared global": (
        "def scores(q, k):\n    global max\n    max = min\n    return q @ k.T",
        [(3, PATCHES_BUILTINS)]),
    # touches sys.modules or an interpreter hook
    "sys.modules item": (
        "import sys\nsys.modules['course_utils.checks'] = None", [(2, TOUCHES_INTERPRETER)]),
    "sys.modules read": (
        "import sys\n\ndef scores(q, k):\n    real = sys.modules['torch']\n    return q @ k.T",
        [(4, TOUCHES_INTERPRETER)]),
    "modules imported from sys": ("from sys import modules", [(1, TOUCHES_INTERPRETER)]),
    "excepthook": ("import sys\nsys.excepthook = print", [(2, TOUCHES_INTERPRETER)]),
    "settrace and setprofile": (
        "import sys\nsys.settrace(None)\nsys.setprofile(None)",
        [(2, TOUCHES_INTERPRETER), (3, TOUCHES_INTERPRETER)]),
    "importlib.reload": (
        "import importlib\nimportlib.reload(checks)", [(2, TOUCHES_INTERPRETER)]),
    "getattr of sys": ("hooks = getattr(sys, 'modules')", [(1, TOUCHES_INTERPRETER)]),
    # hooks IPython
    "showtraceback": (
        "get_ipython().showtraceback = lambda *args, **kwargs: None", [(1, HOOKS_IPYTHON)]),
    "events": (
        "shell = get_ipython()\nshell.events.register('post_run_cell', print)",
        [(1, HOOKS_IPYTHON)]),
    "get_ipython imported": (
        "from IPython import get_ipython\nget_ipython().set_custom_exc((AssertionError,), print)",
        [(1, HOOKS_IPYTHON), (2, HOOKS_IPYTHON)]),
    "line magics": (
        "%load_ext autoreload\n%autoreload 2", [(1, HOOKS_IPYTHON), (2, HOOKS_IPYTHON)]),
    "a cell magic hides its body": (
        "%%capture\nchecks.check_close = print", [(1, HOOKS_IPYTHON)]),
    "shell after blank lines": (
        "\n\n!pip install something\ndef scores(q, k):\n    return q @ k.T", [(3, HOOKS_IPYTHON)]),
    # rebinds a name the test cells use
    "checks rebound": ("checks = None", [(1, REBINDS_TEST_NAME)]),
    "a test input rebound": ("Q = torch.zeros(2, 4)", [(1, REBINDS_TEST_NAME)]),
    "another module as torch": ("import numpy as torch", [(1, REBINDS_TEST_NAME)]),
    "a test name deleted": ("del K", [(1, REBINDS_TEST_NAME)]),
    "a test name declared global": (
        "def scores(q, k):\n    global K\n    K = k\n    return q @ k.T",
        [(3, REBINDS_TEST_NAME)]),
    "a walrus in a comprehension": ("[(K := k) for k in range(2)]", [(1, REBINDS_TEST_NAME)]),
    "a class named like a test name": ("class checks:\n    pass", [(1, REBINDS_TEST_NAME)]),
    "star import": ("from course_utils.checks import *", [(1, REBINDS_TEST_NAME)]),
    # runs code from a string
    "exec": ("exec('checks.check_close = print')", [(1, RUNS_STRING_CODE)]),
    "eval kept for later": ("run = eval\nrun('1')", [(1, RUNS_STRING_CODE)]),
    "compile": ("code = compile('x = 1', 'cell', 'exec')", [(1, RUNS_STRING_CODE)]),
    "__import__": ("__import__('sys')", [(1, RUNS_STRING_CODE)]),
    "exec from builtins": ("import builtins\nbuiltins.exec('1')", [(2, RUNS_STRING_CODE)]),
    # several families on one line, each once
    "two families": ("sys.modules['x'] = exec", [(1, TOUCHES_INTERPRETER), (1, RUNS_STRING_CODE)]),
}

NEAR_MISSES = {
    "reads checks": (
        "def scores(q, k):\n    checks.check_shape(q @ k.T, (2, 3))\n    return q @ k.T"),
    "calls the library": (
        "from course_utils.attention import attention_scores\n\n"
        "def scores(q, k):\n    return attention_scores(q, k)"),
    "reads np.allclose and torch.allclose": (
        "def scores(q, k):\n    result = q @ k.T\n"
        "    assert torch.allclose(result, result) and np.allclose(1.0, 1.0)\n    return result"),
    "a torch setting": "torch.backends.cudnn.deterministic = True",
    "a local sum": (
        "def scores(q, k):\n    sum = 0\n    for row in q:\n        sum = sum + row\n"
        "    return q @ k.T"),
    "builtins called": "def scores(q, k):\n    return round(abs(float(q.sum())), 2) * q @ k.T",
    "a builtin's name as a class attribute": "class Settings:\n    max = 3",
    "sys.path and sys.version": "import sys\n\nsys.path.append('.')\nprint(sys.version)",
    "importlib.import_module": "import importlib\n\nmath = importlib.import_module('math')",
    "IPython's display": (
        "from IPython.display import display\n\n"
        "def scores(q, k):\n    display(q)\n    return q @ k.T"),
    "test names as locals": "def scores(q, k):\n    Q, K = q, k\n    return Q @ K.T",
    "a test name as a parameter": (
        "def scores(q, k):\n    return q @ k.T\n\n\ndef helper(Q):\n    return Q"),
    "the notebook's own imports": (
        "import torch\nimport numpy as np\nfrom course_utils import checks"),
    "compile and eval as methods": (
        "import re\n\ndef scores(q, k):\n    re.compile('x')\n    torch.nn.Linear(2, 2).eval()\n"
        "    return q @ k.T"),
    "the official answer's own name": "def scores(q, k):\n    return q @ k.T",
    "not Python: the kernel runs none of it": "def scores(q, k)\n    checks.check_close = print",
    "an attribute of an object of its own": (
        "class Box:\n    pass\n\nbox = Box()\nbox.allclose = 1\nbox.modules = {}"),
}


@pytest.mark.parametrize("code, expected", TAMPERING.values(), ids=TAMPERING.keys())
def test_tampering_is_flagged_on_its_line(code, expected, context):
    assert findings(code, context) == expected


@pytest.mark.parametrize("code", NEAR_MISSES.values(), ids=NEAR_MISSES.keys())
def test_near_misses_are_not_flagged(code, context):
    assert findings(code, context) == []


# --- the flags as the autograder gets them -----------------------------------------------

def test_scan_notebook_names_the_cell_line_and_code():
    source = source_notebook()
    submitted = copy.deepcopy(source)
    submitted.cells[3].source = (
        "def scores(q, k):\n"
        "    checks.check_close = lambda *args, **kwargs: None\n"
        "    return q @ k.T\n"
    )
    line = "checks.check_close = lambda *args, **kwargs: None"  # indented in the cell
    flag = Flag("scores", 2, PATCHES_COURSE_UTILS, line)
    assert scan_notebook(submitted, source) == [flag]
    assert str(flag) == f"cell scores line 2: patches course_utils: {line}"


def test_only_answer_code_cells_are_scanned():
    source = source_notebook()
    submitted = copy.deepcopy(source)
    submitted.cells[2].source = "checks = None"  # a code cell without nbgrader metadata
    written = new_markdown_cell("checks = None", metadata={"nbgrader": {
        "grade_id": "why", "solution": True, "grade": True, "points": 1, "locked": False,
        "schema_version": 3}})  # a written answer, graded by hand
    submitted.cells.append(written)
    assert scan_notebook(submitted, source) == []


def test_bad_input_is_refused(context):
    with pytest.raises(TypeError, match="expected a notebook"):
        scan_notebook({"not": "a notebook"}, source_notebook())
    with pytest.raises(TypeError, match="expected the cell's source as str"):
        scan_cell(["checks = None"], "scores", context)


def test_a_source_notebook_whose_test_is_not_python_is_refused():
    source = source_notebook()
    source.cells[4].source = "checks.check_close(("
    with pytest.raises(ValueError, match="test_scores"):
        read_scan_context(source)


def test_a_very_long_expression_is_scanned_not_crashed_on(context):
    chain = "checks" + ".inner" * 1200 + " = 1"  # deeper than Python's recursion limit
    assert findings(chain, context) == [(1, PATCHES_COURSE_UTILS)]
