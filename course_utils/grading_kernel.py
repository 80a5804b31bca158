"""The IPython extension of the kernels nbgrader grades in: the ``%%answer_cell`` magic, the
guards' switches read from the kernel's start environment, the guards' baseline recorded
before any cell runs, and the code of test cells kept out of ``linecache``.

``grader.running.execute.Execute`` starts each grading kernel with this extension and sends every
answer cell as ``%%answer_cell <grade id>`` followed by the cell, so that the whole cell
runs under its exercise's allowlist (``course_utils/checks/guards/answer_cells.py``).

Importing this module reads the environment variables the guards obey (``SWITCHES``, in
``course_utils.switches``) once, into ``START_ENVIRONMENT``: in a grading kernel that is at
its start, before any cell runs,
so that a cell that sets ``os.environ["COURSE_ALLOWLIST"] = "off"`` changes nothing (the
guards never read ``os.environ``). Loading it imports the checks (and so torch) and seals
their baseline (``leftovers.seal_baseline``): the installed originals, before a cell of the
notebook could patch one; no cell records another.

After each cell, the code of every cell that grades (``checks.grade``: the hidden tests,
their inputs) leaves ``linecache``, where IPython's compiler keeps each cell's code for
tracebacks: no later cell reads it there.
"""

import linecache

from course_utils.switches import START_ENVIRONMENT, SWITCHES, start_switch

__all__ = ["START_ENVIRONMENT", "SWITCHES", "answer_cell", "forget_test_cells",
           "load_ipython_extension", "start_switch"]

GRADES = "checks.grade("  # what a test cell's hidden tests call


def answer_cell(line: str, cell: str) -> None:
    """Run ``cell`` as the answer to the exercise ``line`` names, under its allowlist."""
    from course_utils.checks.guards.answer_cells import answer_cell as run_under_allowlist

    run_under_allowlist(line, cell)


def forget_test_cells(*_) -> None:
    """Drop from ``linecache`` the code of every cell that calls ``checks.grade``."""
    for name, entry in list(linecache.cache.items()):
        lines = entry[2] if len(entry) == 4 else ()
        if isinstance(lines, list) and any(GRADES in line for line in lines):
            linecache.cache.pop(name, None)


def load_ipython_extension(shell) -> None:
    """Make ``%%answer_cell`` known to ``shell``, forget test cells after each cell, and seal
    the guards' baseline (IPython calls this at the kernel's start)."""
    from course_utils.checks.guards import seal_baseline

    shell.register_magic_function(answer_cell, magic_kind="cell")
    shell.events.register("post_run_cell", forget_test_cells)
    seal_baseline()
