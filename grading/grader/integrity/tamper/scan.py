"""Scanning a notebook or one cell: the flags a TA reads."""

from dataclasses import dataclass

from nbformat import NotebookNode

from grader.integrity.tamper.cells import answer_cells, parse_cell
from grader.integrity.tamper.context import ScanContext, read_scan_context
from grader.integrity.tamper.families import FAMILIES
from grader.integrity.tamper.scanner import Scanner


@dataclass(frozen=True)
class Flag:
    """One line of an answer cell for a TA to look at."""

    cell: str  # the answer cell's grade id
    line: int  # 1-based line number inside the cell
    family: str  # one of FAMILIES
    code: str  # that line of the student's code, stripped

    def __str__(self) -> str:
        return f"cell {self.cell} line {self.line}: {self.family}: {self.code}"


def scan_notebook(submitted: NotebookNode, source: NotebookNode) -> list[Flag]:
    """Flags of every answer cell of ``submitted`` (an nbformat NotebookNode), with the test
    cells' names and the official answers' bindings read from ``source`` (the instructor
    notebook, solutions/<a>/<a>.ipynb, whose test cells are the code cells with
    nbgrader.grade == true and solution == false)."""
    context = read_scan_context(source)
    flags = []
    for grade_id, code in answer_cells(submitted):
        flags += scan_cell(code, grade_id, context)
    return flags


def scan_cell(code: str, grade_id: str, context: ScanContext) -> list[Flag]:
    """The flags of one answer cell, one per line and family, in line order."""
    if not isinstance(code, str):
        raise TypeError(f"expected the cell's source as str, got {type(code).__name__}")
    tree = parse_cell(code)
    if tree is None:
        return []
    lines = code.splitlines()
    found = set(Scanner(tree, grade_id, context).findings())
    return [
        Flag(grade_id, line, family, lines[line - 1].strip() if line <= len(lines) else "")
        for line, family in sorted(found, key=lambda f: (f[0], FAMILIES.index(f[1])))
    ]
