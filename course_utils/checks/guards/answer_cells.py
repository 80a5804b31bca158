"""An answer cell run under its exercise's allowlist: the ``%%answer_cell`` magic.

While nbgrader grades, ``grader.execute.Execute`` sends each answer cell to the kernel as

    %%answer_cell <its exercise>
    <the student's cell>

(the magic is the kernel's extension ``course_utils.grading_kernel``), and it runs the cell in
the allowlist's region (``allowlist.cell_region``), without displaying its last value (the
display machinery is IPython's, not the answer's). A cell that caught a refusal and went on is remembered: every later call of an answer by a test
fails (``refused_cell``), since what ran after the refusal ran unchecked.
"""

from .allowlist import NotAllowed, cell_region

__all__ = ["answer_cell", "refused_cell"]

_refused_cells: list[str] = []


def answer_cell(line: str, cell: str) -> None:
    """Run ``cell`` (an answer cell's code) as the answer to the exercise ``line`` names."""
    from IPython import get_ipython

    exercise = line.strip() or None
    with cell_region(exercise) as region:
        result = get_ipython().run_cell(cell, silent=True)
    if region.refused and not isinstance(result.error_in_exec, NotAllowed):
        _refused_cells.append(region.refused)


def refused_cell() -> str | None:
    """The first refusal an answer cell caught and went on after, or None."""
    return _refused_cells[0] if _refused_cells else None
