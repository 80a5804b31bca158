"""nbgrader's marks on a notebook's cells, and what a graded cell's outputs say: every
module of the grader reads them here.

    marks(cell)               the cell's nbgrader metadata ({} for a cell it does not mark)
    is_answer(cell)           an answer: a cell nbgrader marks ``solution``
    is_test(cell)             a test cell: a code cell nbgrader grades that is no answer
    is_restored(cell)         a cell autograde puts back from the gradebook (locked, a test)
    plain_code_ids(source)    the ids of the instructor's code cells nbgrader does not mark
    plain_code_cells(source)  {id: source} of those cells
    is_added(cell, ids)       a code cell the student added (no marks, an id not among those)
    errors(cell)              the cell's error outputs
    test_cell_results(nb)     {grade id: the message its test cell failed with, or ""}

Cells are nbformat's ``NotebookNode`` or plain dicts of a notebook's JSON alike. Reading the
metadata needs no nbgrader (importing it takes seconds): the keys are those of
``nbgrader.utils.is_solution``, ``is_grade`` and ``is_locked``.
"""

from collections.abc import Collection, Mapping

STDERR = "stderr"  # how a failure shown on stderr alone starts its message
# the error name of a test cell's output that the grader's comparison of its hidden tests'
# values failed (grader.scoring.outside adds it)
OUTSIDE = "OutsideCheck"


def marks(cell: Mapping) -> Mapping:
    """The cell's nbgrader metadata: grade, solution, locked, grade_id, points, ..."""
    return cell.get("metadata", {}).get("nbgrader", {})


def is_answer(cell: Mapping) -> bool:
    return bool(marks(cell).get("solution"))


def is_test(cell: Mapping) -> bool:
    return (cell.get("cell_type") == "code" and bool(marks(cell).get("grade"))
            and not is_answer(cell))


def is_restored(cell: Mapping) -> bool:
    """Whether nbgrader's autograde replaces the cell with the instructor's (locked cells
    and test cells): what a student wrote there never runs."""
    return bool(marks(cell).get("locked")) or is_test(cell)


def plain_code_cells(source) -> dict[str, str] | None:
    """{id: code} of the code cells of ``source`` (an assignment's source notebook) that
    nbgrader does not mark: the instructor's plain code cells. None for a notebook whose
    cells have no ids (before nbformat 4.5)."""
    if not all(isinstance(cell.get("id"), str) for cell in source["cells"]):
        return None
    return {cell["id"]: _text(cell["source"]) for cell in source["cells"]
            if cell.get("cell_type") == "code" and "nbgrader" not in cell.get("metadata", {})}


def plain_code_ids(source) -> list[str] | None:
    """The ids of :func:`plain_code_cells`, in order."""
    cells = plain_code_cells(source)
    return None if cells is None else list(cells)


def _text(source: str | list[str]) -> str:
    """A cell's source as one string (a notebook's JSON may hold it as a list of lines)."""
    return source if isinstance(source, str) else "".join(source)


# The student edition's set-up cell for hosted runtimes (tools/student_edition: it installs
# the workbook on Colab and does nothing elsewhere): the grading never runs it, whatever a
# submission holds there.
HOSTED_SETUP_ID = "colab-set-up"


def is_hosted_setup(cell: Mapping) -> bool:
    """Whether ``cell`` is the student edition's set-up cell (by its id, unmarked)."""
    return cell.get("id") == HOSTED_SETUP_ID and not marks(cell)


def is_added(cell: Mapping, plain_ids: Collection[str] | None) -> bool:
    """Whether ``cell`` of a submission is a code cell the student added: no nbgrader marks,
    and an id not among ``plain_ids`` (:func:`plain_code_ids` of the source; None: no cell
    is taken for added)."""
    return (cell.get("cell_type") == "code" and not marks(cell) and plain_ids is not None
            and cell.get("id") not in plain_ids)


def errors(cell: Mapping) -> list:
    """The error outputs of a code cell (``ename``, ``evalue``, ``traceback``)."""
    return [output for output in cell.get("outputs", []) if output.get("output_type") == "error"]


def test_cell_results(notebook) -> dict[str, str]:
    """The message of each test cell of an autograded ``notebook``, keyed by grade id.

    The message is the last line of the traceback Python prints, ``"<ExceptionName>:
    <evalue>"`` (just the name when evalue is empty, as for the ``NotImplementedError`` of a
    blank answer); "" when the cell shows no error. A cell whose only failure is output on
    stderr (nbgrader scores that 0 too) gives ``"stderr: <its first line>"``.
    """
    if not hasattr(notebook, "cells"):
        raise TypeError(f"expected an nbformat notebook, got {type(notebook).__name__}")
    return {marks(cell)["grade_id"]: failure_message(cell)
            for cell in notebook.cells if is_test(cell)}


def failure_message(cell: Mapping) -> str:
    """What a test cell failed with (see :func:`test_cell_results`), "" if it passed."""
    found = errors(cell)
    if found:
        name, value = found[-1].get("ename", "Error"), found[-1].get("evalue", "")
        return f"{name}: {value}" if value else name
    for output in cell.get("outputs", []):
        if output.get("output_type") == "stream" and output.get("name") == STDERR:
            text = output.get("text", "")
            lines = [line.strip() for line in ("".join(text) if isinstance(text, list)
                                                else text).splitlines()]
            return f"{STDERR}: " + next((line for line in lines if line), "")
    return ""
