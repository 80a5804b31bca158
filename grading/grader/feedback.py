"""Feedback pages that show each test's result and message, never the hidden tests' code.

nbgrader's feedback is the autograded notebook as HTML, hidden tests included, and a
failing test's traceback quotes the line that failed. ``grading/nbgrader_config.py``
adds :class:`HideTestCode` to ``GenerateFeedback.preprocessors``, so that every
feedback page (``make feedback`` or Formgrader's button) keeps of a test cell its
visible part and, for an error, its last line (``AssertionError: <the diagnosis>``).
"""

from nbgrader.preprocessors import ClearHiddenTests

HIDDEN = "# (hidden tests ran here; their code is not shown)"


class HideTestCode(ClearHiddenTests):
    """Remove hidden test regions, and reduce tracebacks of test cells to their message."""

    def preprocess_cell(self, cell, resources, cell_index):
        grade = cell.metadata.get("nbgrader", {})
        if cell.cell_type != "code" or not grade.get("grade") or grade.get("solution"):
            return cell, resources
        if self._remove_hidden_test_region(cell):
            cell.source = cell.source.rstrip("\n") + "\n" + HIDDEN
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                output.traceback = [f"{output.ename}: {output.evalue}"]
        return cell, resources
