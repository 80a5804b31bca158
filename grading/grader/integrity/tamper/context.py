"""What the test cells of an assignment rely on, read from its instructor notebook."""

import ast
from collections.abc import Mapping
from dataclasses import dataclass

from nbformat import NotebookNode

from grader.integrity.tamper.cells import answer_cells, autograder_tests, cells_of, parse_cell
from grader.integrity.tamper.names import STAR, ModuleNames


@dataclass(frozen=True)
class ScanContext:
    """What the test cells of one assignment rely on, read from its instructor notebook.

    ``test_names``: names some test cell reads without setting them itself.
    ``answers``: grade id of an answer cell -> the names its official answer binds.
    ``imports``: name -> the modules the notebook's code cells import under that name
    (``"np" -> {"numpy"}``, ``"checks" -> {"course_utils.checks"}``), and ``"*"`` -> the
    modules it imports everything from (``"course_utils.data.*"``).
    """

    test_names: frozenset[str]
    answers: Mapping[str, frozenset[str]]
    imports: Mapping[str, frozenset[str]]


def read_scan_context(source: NotebookNode) -> ScanContext:
    """The ``ScanContext`` of an instructor notebook (ValueError if a test cell is not
    Python: the tests could not run either)."""
    test_names: set[str] = set()
    for grade_id, code in autograder_tests(source):
        tree = parse_cell(code)
        if tree is None:
            raise ValueError(f"test cell {grade_id!r} of the source notebook is not valid Python")
        names = ModuleNames(tree)
        test_names |= names.reads - {name for name, _ in names.bindings}
    answers = {
        grade_id: frozenset(name for name, _ in _module_names(code).bindings)
        for grade_id, code in answer_cells(source)
    }
    imports: dict[str, set[str]] = {}
    for cell in cells_of(source):
        names = _module_names(cell.source if cell.cell_type == "code" else "")
        for name, (origins, _) in names.imports.items():
            imports.setdefault(name, set()).update(origins)
        for origin, _ in names.star_imports:
            imports.setdefault(STAR, set()).add(origin)
    return ScanContext(
        frozenset(test_names), answers, {name: frozenset(o) for name, o in imports.items()}
    )


def _module_names(code: str) -> "ModuleNames":
    """The ``ModuleNames`` of a cell; none for a cell that is not Python."""
    return ModuleNames(parse_cell(code) or ast.Module(body=[], type_ignores=[]))
