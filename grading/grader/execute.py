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
feedback says why, and :func:`grader.autograde.incidents` names the cell for the TA.
Everything else is nbgrader's: a cell over its time limit still gets ``CellTimeoutError``.
``grading/nbgrader_config.py`` puts it in place of nbgrader's ``Execute`` in autograde's
preprocessors, so Formgrader's autograde button uses it too.
"""

from nbformat import NotebookNode
from nbgrader.preprocessors import Execute as NbgraderExecute

HIDDEN = "HiddenFailure"
ABORTED = "CellAborted"


class Execute(NbgraderExecute):
    """nbgrader's ``Execute``; a failing reply without an ``error`` output gets one."""

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
