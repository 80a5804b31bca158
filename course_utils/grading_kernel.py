"""The IPython extension of the kernels nbgrader grades in: the ``%%answer_cell`` magic, and
the guards' switches read from the kernel's start environment.

``grader.running.execute.Execute`` starts each grading kernel with this extension and sends every
answer cell as ``%%answer_cell <grade id>`` followed by the cell, so that the whole cell
runs under its exercise's allowlist (``course_utils/checks/guards/answer_cells.py``).

Importing this module reads the environment variables the guards obey (``SWITCHES``, in
``course_utils.switches``) once, into ``START_ENVIRONMENT``: in a grading kernel that is at
its start, before any cell runs,
so that a cell that sets ``os.environ["COURSE_ALLOWLIST"] = "off"`` changes nothing (the
guards never read ``os.environ``). Loading it imports nothing heavy: the checks are
imported when the notebook's first cell imports them.
"""

from course_utils.switches import START_ENVIRONMENT, SWITCHES, start_switch

__all__ = ["START_ENVIRONMENT", "SWITCHES", "answer_cell", "load_ipython_extension",
           "start_switch"]


def answer_cell(line: str, cell: str) -> None:
    """Run ``cell`` as the answer to the exercise ``line`` names, under its allowlist."""
    from course_utils.checks.guards.answer_cells import answer_cell as run_under_allowlist

    run_under_allowlist(line, cell)


def load_ipython_extension(shell) -> None:
    """Make ``%%answer_cell`` known to ``shell`` (IPython calls this at the kernel's start)."""
    shell.register_magic_function(answer_cell, magic_kind="cell")
