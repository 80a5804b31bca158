"""Test cells bind no name an answer can read.

Every cell of a notebook, the answer's too, runs in one namespace: an input a test cell
bound at its top level would be a global that any answer can read, or that overwrites one of
the student's. Each autograded test cell of solutions/ binds nothing there: its visible tests
are one-line calls (``checks.check("x", E, S)``), and where its hidden tests make inputs they
do it in a function ``_`` that the cell defines, calls and deletes at its end::

    checks.check("x", E, S)
    def _():
        ...
    _()
    del _

(a decorator from ``checks`` would do the same, but an answer cell could replace it and
skip every test; nothing outside the cell stands between ``def _`` and ``_()``).
"""

import ast
import builtins
import re
from pathlib import Path

import nbformat
import pytest

from grader.integrity.tamper.cells import autograder_tests
from grader.integrity.tamper.names import ModuleNames

SOLUTIONS = sorted(Path(__file__).resolve().parents[2].glob("solutions/*/*.ipynb"))


def _runs_its_function(tree: ast.Module) -> bool:
    """The cell ends with ``def _():`` (no parameters, no decorator), ``_()``, ``del _``."""
    if len(tree.body) < 3 or [ast.unparse(node) for node in tree.body[-2:]] != ["_()", "del _"]:
        return False
    function = tree.body[-3]
    return (isinstance(function, ast.FunctionDef) and function.name == "_"
            and not function.decorator_list and not any(vars(function.args).values()))


def names_bound(code: str) -> list[str]:
    """The names a test cell binds at the notebook's top level, each as 'name (line n)';
    the ``_`` of a cell that runs its function and deletes it is not counted."""
    tree = ast.parse(code)
    own_function = _runs_its_function(tree)
    return [f"{name} (line {node.lineno})" for name, node in ModuleNames(tree).bindings
            if not (name == "_" and own_function)]


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda path: path.stem)
def test_test_cells_bind_no_top_level_name(path):
    notebook = nbformat.read(path, as_version=4)
    tests = list(autograder_tests(notebook))
    assert tests, f"{path.name} has no autograded test cell"
    bound = {grade_id: names_bound(code) for grade_id, code in tests}
    assert not {grade_id: names for grade_id, names in bound.items() if names}, (
        "these test cells bind names an answer could read; put their code in a function "
        "_ that the cell calls and deletes"
    )


@pytest.mark.parametrize("code, expected", [
    ("checks.check_close(f(1), 2)", []),
    ("expected = 2\nchecks.check_close(f(1), expected)", ["expected (line 1)"]),
    ("for x in (1, 2):\n    checks.check_close(f(x), x)", ["x (line 1)"]),
    ("checks.check_close(f(y := 1), y)", ["y (line 1)"]),
    ("import tiktoken", ["tiktoken (line 1)"]),
    ("with open('x') as handle:\n    pass", ["handle (line 1)"]),
    ("def _():\n    expected = 2\n    checks.check_close(f(1), expected)\n_()\ndel _", []),
    ("checks.check('f', 1)\ndef _():\n    x = 2\n    checks.grade('f', x)\n_()\ndel _", []),
    ("def _():\n    pass\n_()\ndel _\nx = 1", ["x (line 5)", "_ (line 4)", "_ (line 1)"]),
    ("def _():\n    global expected\n    expected = 2\n_()\ndel _", ["expected (line 3)"]),
    ("def _():\n    expected = 2\n_()", ["_ (line 1)"]),
    ("@checks.test_cell\ndef _():\n    pass\n_()\ndel _", ["_ (line 5)", "_ (line 2)"]),
    ("def _(expected=2):\n    pass\n_()\ndel _", ["_ (line 4)", "_ (line 1)"]),
    ("def values():\n    pass\nvalues()\ndel values", ["values (line 4)", "values (line 1)"]),
])
def test_names_bound_sees_every_top_level_binding(code, expected):
    assert names_bound(code) == expected


HIDDEN = re.compile(r"^### BEGIN HIDDEN TESTS\n(.*?)^### END HIDDEN TESTS", flags=re.S | re.M)


SETUP = {"checks", "device"}  # what every notebook's first cell sets up, not an input
# course objects a notebook builds from course_utils and no answer is handed to change (the
# tests hand answers copies): 03's GPT-4 tokenizer and the reference learner's merges
COURSE_OBJECTS = {"03_bpe": {"gpt4", "textbook"}}


def hidden_problems(code: str, modules: set[str]) -> list[str]:
    """What a test cell's hidden tests do that they must not: call anything of ``checks``
    but ``grade`` (a check computes an expected value in the kernel), or read a global of
    the notebook other than its imported ``modules`` (an answer may have changed it)."""
    region = HIDDEN.search(code)
    if not region:  # a value worked by hand: its test reports the value, nothing hidden
        return []
    tree = ast.parse(region.group(1))
    problems = [f"calls checks.{node.func.attr} (line {node.lineno})" for node in ast.walk(tree)
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "checks"
                and node.func.attr != "grade"]
    bound = {name for name, _ in ModuleNames(tree).bindings}
    bound |= {node.id for node in ast.walk(tree)
              if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
    bound |= {arg.arg for node in ast.walk(tree) if isinstance(node, ast.arguments)
              for arg in node.args + node.kwonlyargs}
    bound |= {node.name for node in ast.walk(tree)
              if isinstance(node, ast.FunctionDef | ast.ClassDef)}
    read = {node.id: node.lineno for node in ast.walk(tree)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}
    problems += [f"reads the notebook's {name} (line {line})" for name, line in read.items()
                 if name not in bound | modules | SETUP and name not in dir(builtins)]
    return problems


def imported_modules(notebook) -> set[str]:
    """The names the notebook's code cells bind by import (torch, np, math, F, ...)."""
    names = set()
    for cell in notebook.cells:
        if cell.cell_type == "code":
            try:
                tree = ast.parse(cell.source)
            except SyntaxError:
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.Import | ast.ImportFrom):
                    names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    return names


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda path: path.stem)
def test_hidden_tests_only_report_on_inputs_of_their_own(path):
    notebook = nbformat.read(path, as_version=4)
    modules = imported_modules(notebook) | COURSE_OBJECTS.get(path.stem, set())
    found = {grade_id: hidden_problems(code, modules)
             for grade_id, code in autograder_tests(notebook)}
    assert not {grade_id: problems for grade_id, problems in found.items() if problems}, found


@pytest.mark.parametrize("code, expected", [
    ("def _():\n    x = torch.ones(2)\n    checks.grade('f', x)\n_()\ndel _\n", []),
    ("checks.grade('f', E)\n", ["reads the notebook's E (line 1)"]),
    ("checks.check_close(f(1), 2)\n", ["calls checks.check_close (line 1)",
                                      "reads the notebook's f (line 1)"]),
    ("for n in range(3):\n    checks.grade('f', n, k=len([n]))\n", []),
])
def test_hidden_problems_sees_expected_values_and_globals(code, expected):
    cell = f"checks.check('f', 1)\n### BEGIN HIDDEN TESTS\n{code}### END HIDDEN TESTS\n"
    assert hidden_problems(cell, {"torch"}) == expected
