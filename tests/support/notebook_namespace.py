"""A solution notebook run in this process, in quick mode, up to a cell: its globals.

The tests that prove a notebook trains the student's own model (06's GPT, 07's linear
attention, 09's BERT) run the solution's code cells (test cells left out: they grade, they
build nothing) in one namespace, then run the cells that build and train the model again
with an answer changed.
"""

import contextlib
import os

import matplotlib
import nbformat

from tests.conftest import REPO


@contextlib.contextmanager
def quick():
    """Quick mode (COURSE_QUICK=1) inside the block, as it was after it."""
    saved = os.environ.get("COURSE_QUICK")
    os.environ["COURSE_QUICK"] = "1"
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("COURSE_QUICK", None)
        else:
            os.environ["COURSE_QUICK"] = saved


def run_until(assignment: str, cells: tuple[str, ...]) -> tuple[dict, dict[str, str]]:
    """The globals of ``assignment``'s solution after its code cells up to and including the
    last of ``cells`` (cell ids), in quick mode, and the sources of ``cells`` by id.

    The namespace's ``__name__`` is "notebook", so a class the notebook defines says so.
    """
    matplotlib.use("Agg")
    source = nbformat.read(REPO / "solutions" / assignment / f"{assignment}.ipynb", as_version=4)
    ns, kept = {"__name__": "notebook"}, {}
    with quick():
        for cell in source.cells:
            if cell.cell_type != "code" or cell.metadata.get("nbgrader", {}).get("grade"):
                continue
            exec(compile(cell.source, cell.get("id", "cell"), "exec"), ns)  # noqa: S102
            if cell.get("id") in cells:
                kept[cell.get("id")] = cell.source
            if cell.get("id") == cells[-1]:
                return ns, kept
    raise AssertionError(f"{assignment} has no cell {cells[-1]!r}")
