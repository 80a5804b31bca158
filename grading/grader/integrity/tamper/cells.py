"""Reading a notebook: its answer cells and test cells as nbgrader marks them, and a cell's
code as the kernel runs it."""

import ast
from collections.abc import Mapping

from IPython.core.inputtransformer2 import TransformerManager
from nbformat import NotebookNode

from grader.cells import is_answer, is_test, marks


def answer_cells(notebook: NotebookNode) -> list[tuple[str, str]]:
    """(grade id, source) of the notebook's answer cells: code cells nbgrader marks as
    solution. A cell without a grade id is named by its position, ``cell <n>``."""
    return [
        (marks(cell).get("grade_id") or f"cell {n}", cell.source)
        for n, cell in enumerate(cells_of(notebook), start=1)
        if cell.cell_type == "code" and is_answer(cell)
    ]


def autograder_tests(notebook: NotebookNode) -> list[tuple[str, str]]:
    """(grade id, source) of the notebook's test cells: code cells nbgrader grades that are
    not solution cells."""
    return [
        (marks(cell).get("grade_id") or f"cell {n}", cell.source)
        for n, cell in enumerate(cells_of(notebook), start=1)
        if is_test(cell)
    ]


def cells_of(notebook) -> list:
    if not isinstance(notebook, Mapping) or not isinstance(notebook.get("cells"), list):
        raise TypeError(
            f"expected a notebook (nbformat.NotebookNode with cells), got {type(notebook).__name__}"
        )
    return notebook["cells"]


def parse_cell(code: str) -> ast.Module | None:
    """The cell as the kernel runs it: IPython syntax turned into Python, or None if it is
    not valid Python even so. Line numbers are the cell's own."""
    try:
        return ast.parse(code)
    except (SyntaxError, ValueError, RecursionError):  # ValueError: a null byte
        pass
    # IPython drops the leading blank lines; put them back so that lines keep their numbers.
    lines = code.splitlines()
    blank = next((n for n, line in enumerate(lines) if line.strip()), len(lines))
    try:
        return ast.parse("\n" * blank + TransformerManager().transform_cell(code))
    except (SyntaxError, ValueError, RecursionError):
        return None
