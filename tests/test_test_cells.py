"""Test cells bind no name an answer can read.

Every cell of a notebook, the answer's too, runs in one namespace: an input or expected
value a test cell bound at its top level would be a global that any answer can read and
return, without being called. Each autograded test cell of solutions/ binds nothing there,
or only ``_`` through ``@checks.test_cell`` (``course_utils.checks.core.test_cell``).
"""

import ast
from pathlib import Path

import nbformat
import pytest

from course_utils import checks
from grader.tamper.cells import autograder_tests
from grader.tamper.names import ModuleNames

SOLUTIONS = sorted(Path(__file__).resolve().parents[1].glob("solutions/*/*.ipynb"))


def _is_test_cell_function(node: ast.AST) -> bool:
    """``@checks.test_cell`` over ``def _():`` (no parameters, the decorator alone)."""
    return (isinstance(node, ast.FunctionDef) and node.name == "_"
            and [ast.unparse(d) for d in node.decorator_list] == ["checks.test_cell"]
            and not any(vars(node.args).values()))


def names_bound(code: str) -> list[str]:
    """The names a test cell binds at the notebook's top level, each as 'name (line n)';
    ``_`` of a ``@checks.test_cell`` function is not counted."""
    tree = ast.parse(code)
    return [f"{name} (line {node.lineno})" for name, node in ModuleNames(tree).bindings
            if not (name == "_" and _is_test_cell_function(node))]


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda path: path.stem)
def test_test_cells_bind_no_top_level_name(path):
    notebook = nbformat.read(path, as_version=4)
    tests = list(autograder_tests(notebook))
    assert tests, f"{path.name} has no autograded test cell"
    bound = {grade_id: names_bound(code) for grade_id, code in tests}
    assert not {grade_id: names for grade_id, names in bound.items() if names}, (
        "these test cells bind names an answer could read; put their code in a "
        "@checks.test_cell function"
    )


@pytest.mark.parametrize("code, expected", [
    ("checks.check_close(f(1), 2)", []),
    ("expected = 2\nchecks.check_close(f(1), expected)", ["expected (line 1)"]),
    ("for x in (1, 2):\n    checks.check_close(f(x), x)", ["x (line 1)"]),
    ("checks.check_close(f(y := 1), y)", ["y (line 1)"]),
    ("import tiktoken", ["tiktoken (line 1)"]),
    ("with open('x') as handle:\n    pass", ["handle (line 1)"]),
    ("@checks.test_cell\ndef _():\n    expected = 2\n    checks.check_close(f(1), expected)", []),
    ("@checks.test_cell\ndef _():\n    global expected\n    expected = 2", ["expected (line 4)"]),
    ("def _():\n    expected = 2\n_()", ["_ (line 1)"]),
    ("@checks.test_cell\ndef _(expected=2):\n    pass", ["_ (line 2)"]),
    ("@checks.test_cell\ndef values():\n    pass", ["values (line 2)"]),
])
def test_names_bound_sees_every_top_level_binding(code, expected):
    assert names_bound(code) == expected


def test_test_cell_runs_its_function_at_once_and_keeps_nothing():
    ran = []

    @checks.test_cell
    def _():
        ran.append(True)

    assert ran == [True]
    assert _ is None


def test_test_cell_lets_a_failing_check_fail():
    with pytest.raises(AssertionError):
        @checks.test_cell
        def _():
            checks.check_close([1.0], [2.0])


def test_test_cell_refuses_what_is_not_a_function():
    with pytest.raises(TypeError, match="decorates a function; got int"):
        checks.test_cell(3)
