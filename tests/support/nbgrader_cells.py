"""Finding cells of a course notebook by their nbgrader role, grade id or code (the grading
round trip and the browser tests)."""

import nbformat


def roles(cell) -> set[str]:
    """The nbgrader roles of a cell: 'answer' (a solution cell) and/or 'test' (graded)."""
    meta = cell.metadata.get("nbgrader", {})
    return {role for role, key in (("answer", "solution"), ("test", "grade")) if meta.get(key)}


def exercise_cells(notebook: nbformat.NotebookNode) -> set[int]:
    """The code cells that raise in a blank release: the answer and test cells."""
    return {i for i, cell in enumerate(notebook.cells)
            if cell.cell_type == "code" and roles(cell)}


def graded_cells(notebook: nbformat.NotebookNode) -> list[int]:
    """The cells that nbgrader grades (and Validate checks): tests and written answers."""
    return [i for i, cell in enumerate(notebook.cells)
            if cell.metadata.get("nbgrader", {}).get("grade")]


def by_grade_id(notebook: nbformat.NotebookNode, grade_id: str) -> int:
    """The index of the cell whose nbgrader grade id is ``grade_id``."""
    return next(i for i, cell in enumerate(notebook.cells)
                if cell.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def by_code(notebook: nbformat.NotebookNode, snippet: str) -> int:
    """The index of the first code cell whose source contains ``snippet``."""
    return next(i for i, cell in enumerate(notebook.cells)
                if cell.cell_type == "code" and snippet in cell.source)


def errors(cell) -> list[str]:
    """The errors a saved cell shows, as 'Name: message'."""
    return [f"{out.ename}: {out.evalue}" for out in cell.get("outputs", [])
            if out.output_type == "error"]


def printed(cell) -> str:
    """What a saved cell printed (its stream outputs), as one text."""
    return "".join(out.get("text", "") for out in cell.get("outputs", [])
                   if out.output_type == "stream")
