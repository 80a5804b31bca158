"""nbgrader's ``Execute``, which reads each cell's reply, not only its outputs.

nbgrader gives a test cell full marks when it has no ``error`` output (nor stderr). The
outputs are what the kernel chose to show, and an answer can make it show nothing:
silence IPython's traceback (``get_ipython().showtraceback = ...``, the same on the
``InteractiveShell`` class, or ``set_custom_exc((AssertionError,), ...)``), or have the
kernel abort every later request (``get_ipython().kernel._aborting = True``). The cell's
``execute_reply`` still tells: ``{"status": "error", "ename", "evalue", "traceback": []}``
for a failure whose traceback was hidden, ``{"status": "aborted"}`` for a cell that did
not run.

:class:`Execute` gives such a cell the ``error`` output it lacks::

    {"output_type": "error", "ename": "HiddenFailure",
     "evalue": "the cell raised AssertionError: <its message>, but its traceback was
                hidden, so it counts as failed", "traceback": [<the same line>]}

(``CellAborted`` for a cell the kernel did not run), so that nbgrader scores it 0, the
feedback says why, and :func:`grader.scoring.autograde.incidents` names the cell for the TA.
Everything else is nbgrader's: a cell over its time limit still gets ``CellTimeoutError``.
Only the wait for a cell's last outputs after its reply is longer (``iopub_timeout``,
``IOPUB_WAIT`` seconds, nbgrader's 4): on a loaded grading machine a cell that printed
while it ran had its outputs arrive later than 4 s after its reply, nbgrader raised, and the
submission went ungraded.

Each answer cell (an nbgrader ``solution`` code cell) is sent to the kernel under the
``%%answer_cell <grade id>`` magic (the kernel's extension ``course_utils.grading_kernel``,
loaded at its start), so that the whole cell, not
only the calls the tests make, runs under its exercise's allowlist
(``course_utils/checks/guards/allowlist.py``); the notebook keeps the cell as written. So is
every code cell the student added (one whose id is not among the instructor's plain cells,
``instructor_cells``, which the grading adds to each job's configuration), under the plain
allowlist. An instructor's plain cell whose code the student edited runs as the instructor
wrote it (nbgrader restores only the cells it marks): the graded notebook keeps the
instructor's code, with a ``CellRestored`` note that
:func:`grader.scoring.autograde.incidents` names for the TA.
The student edition's set-up cell for Colab (:data:`grader.cells.HOSTED_SETUP_ID`), which a
notebook handed in from the edition opens with, is not run at all.
``grading/nbgrader_config.py`` puts it in place of nbgrader's ``Execute`` in autograde's
preprocessors, so Formgrader's autograde button uses it too.
"""

from nbformat import NotebookNode
from nbgrader.preprocessors import Execute as NbgraderExecute
from traitlets import Dict, Integer, List, Unicode

from grader.cells import is_added, is_hosted_setup, is_test, marks, plain_code_cells

HIDDEN = "HiddenFailure"
ABORTED = "CellAborted"
RESTORED = "CellRestored"
IOPUB_WAIT = 30  # seconds a finished cell's outputs may lag behind its reply


class Execute(NbgraderExecute):
    """nbgrader's ``Execute``; answer cells run under their allowlist, and a failing reply
    without an ``error`` output gets one."""

    iopub_timeout = Integer(IOPUB_WAIT).tag(config=True)
    extra_arguments = List(Unicode(), default_value=[
        "--IPKernelApp.extra_extensions=course_utils.grading_kernel"]).tag(config=True)
    instructor_cells = Dict(value_trait=Unicode(), allow_none=True, default_value=None, help=(
        "{id: code} of the instructor's code cells that nbgrader does not mark: each runs "
        "as written there, whatever the submission holds; any other code cell without "
        "nbgrader metadata is one the student added, and runs under the plain allowlist "
        "like an answer cell. None: no cell is taken for added.")).tag(config=True)

    def preprocess_cell(self, cell, resources, index):
        if is_hosted_setup(cell):
            return cell, resources  # the edition's set-up for Colab: never run here
        if is_test(cell):
            # a test cell leaves its source out of IPython's history (In, _ih, _i): an
            # answer it calls could read the hidden tests there
            self._check_assign_resources(resources)
            return self.execute_cell(cell, index, store_history=False), self.resources
        known, nbgrader = self.instructor_cells, marks(cell)
        if cell.cell_type == "code" and not nbgrader and known and cell.get("id") in known:
            return self._as_the_instructor_wrote(cell, known[cell.id], resources, index)
        added = is_added(cell, known)
        answer = nbgrader.get("solution") or added
        if cell.cell_type != "code" or not answer or not cell.source.strip():
            return super().preprocess_cell(cell, resources, index)
        source = cell.source
        cell.source = f"%%answer_cell {nbgrader.get('grade_id', '')}\n{source}"
        try:
            return super().preprocess_cell(cell, resources, index)
        finally:
            cell.source = source

    def _as_the_instructor_wrote(self, cell, code: str, resources, index):
        """Run the instructor's ``code`` in ``cell``, noting in it when the student's differed."""
        edited = cell.source != code
        cell.source = code
        cell, resources = super().preprocess_cell(cell, resources, index)
        if edited:
            cell.outputs.append(failure(RESTORED, "this cell differed from the instructor's; "
                                        "it ran as the instructor wrote it"))
        return cell, resources

    def on_cell_executed(self, **kwargs) -> None:
        cell, reply = kwargs["cell"], kwargs["execute_reply"]
        content = reply["content"]
        shown = any(output.output_type == "error" for output in cell.outputs)
        # nbclient's own reply to a cell over its time has no header: nbgrader's case
        from_kernel = "header" in reply
        if content["status"] == "aborted":
            cell.outputs.append(failure(ABORTED, "the kernel aborted this cell instead of "
                                        "running it (an earlier cell told it to), so it "
                                        "counts as failed"))
        elif content["status"] == "error" and from_kernel and not shown:
            cell.outputs.append(failure(HIDDEN, f"the cell raised {content.get('ename')}: "
                                        f"{content.get('evalue')}, but its traceback was "
                                        "hidden, so it counts as failed"))
        else:
            super().on_cell_executed(**kwargs)


def failure(ename: str, evalue: str) -> NotebookNode:
    """An ``error`` output whose traceback is its one line."""
    return NotebookNode(output_type="error", ename=ename, evalue=evalue,
                        traceback=[f"{ename}: {evalue}"])


def instructor_cells_setting(source: NotebookNode) -> str:
    """The line of nbgrader configuration that tells :class:`Execute` the instructor's plain
    code cells of ``source`` (the assignment's source notebook), {id: code}; none for a
    notebook whose cells have no ids (before nbformat 4.5)."""
    cells = plain_code_cells(source)
    return "" if cells is None else f"\nc.Execute.instructor_cells = {cells!r}\n"
