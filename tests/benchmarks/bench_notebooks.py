"""Each solution notebook run top to bottom, at full sizes and at the quick sizes grading
uses, against design.md's budgets (60 s full, 20 s quick, on 2 cores).

A row's value is the sum of the notebook's cell times (nbclient's recorded timing, from a
cell's start to its reply): the notebook's own work. The note adds the wall time with the
kernel's start. The kernel runs as the instructor (``COURSE_STUDENT=instructor``), in a
copy of the solution's folder, so nothing in the checkout changes.
"""

import datetime
import os
import shutil
import tempfile
import time
from pathlib import Path
from unittest import mock

import nbformat
from nbclient import NotebookClient

from tests.benchmarks.timing import Row
from tests.conftest import ASSIGNMENTS, REPO

BUDGET_S = {"full": 60, "quick": 20}


def _cell_seconds(cell) -> float:
    """How long one executed code cell took, from nbclient's recorded timing."""
    timing = cell.metadata.get("execution", {})
    start, end = timing.get("iopub.execute_input"), timing.get("shell.execute_reply")
    if not (start and end):
        return 0.0
    parse = datetime.datetime.fromisoformat
    return (parse(end.replace("Z", "+00:00")) - parse(start.replace("Z", "+00:00"))).total_seconds()


def timed(assignment: str, quick: bool) -> tuple[float, float]:
    """(seconds of the cells summed, wall seconds with the kernel's start) of running
    ``assignment``'s solution notebook top to bottom."""
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / assignment
        shutil.copytree(REPO / "solutions" / assignment, copy)
        notebook = nbformat.read(copy / f"{assignment}.ipynb", as_version=4)
        environment = {"COURSE_STUDENT": "instructor", "COURSE_QUICK": "1" if quick else "0"}
        with mock.patch.dict(os.environ, environment):
            start = time.perf_counter()
            NotebookClient(notebook, timeout=600, record_timing=True,
                           resources={"metadata": {"path": str(copy)}}).execute()
            wall = time.perf_counter() - start
    cells = sum(_cell_seconds(cell) for cell in notebook.cells if cell.cell_type == "code")
    return cells, wall


def run():
    for mode in ("full", "quick"):
        for assignment in ASSIGNMENTS:
            cells, wall = timed(assignment, quick=mode == "quick")
            yield Row(f"{assignment}, top to bottom", f"{mode} sizes, cells summed", cells, "s",
                      f"{wall:.1f} s with the kernel's start; budget: {BUDGET_S[mode]} s")
