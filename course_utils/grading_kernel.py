"""The IPython extension of the kernels nbgrader grades in: the ``%%answer_cell`` magic, and
the guards' switches read from the kernel's start environment.

``grader.running.execute.Execute`` starts each grading kernel with this extension and sends every
answer cell as ``%%answer_cell <grade id>`` followed by the cell, so that the whole cell
runs under its exercise's allowlist (``course_utils/checks/guards/answer_cells.py``).

Importing this module reads the environment variables the guards obey (``SWITCHES``) once,
into ``START_ENVIRONMENT``: in a grading kernel that is at its start, before any cell runs,
so that a cell that sets ``os.environ["COURSE_ALLOWLIST"] = "off"`` changes nothing (the
guards never read ``os.environ``). Loading it imports nothing heavy: the checks are
imported when the notebook's first cell imports them.
"""

import os
from types import MappingProxyType

__all__ = ["START_ENVIRONMENT", "SWITCHES", "answer_cell", "load_ipython_extension",
           "start_switch"]

SWITCHES = (
    "COURSE_ALLOWLIST",  # "off": no allowlist, for measuring what it costs (make bench)
    "COURSE_ALLOWLIST_RECORD",  # a file: refusals are written there, not raised
    "NBGRADER_EXECUTION",  # "autograde" while nbgrader grades
)


def _read_once() -> MappingProxyType:
    """The switches as the process had them when this module was first imported; a reload
    keeps them."""
    kept = globals().get("START_ENVIRONMENT")
    if isinstance(kept, MappingProxyType):
        return kept
    return MappingProxyType({name: os.environ[name] for name in SWITCHES if name in os.environ})


START_ENVIRONMENT = _read_once()


def start_switch(name: str, default: str | None = None) -> str | None:
    """The value of the switch ``name`` (one of ``SWITCHES``) in the start environment."""
    return START_ENVIRONMENT.get(name, default)


def answer_cell(line: str, cell: str) -> None:
    """Run ``cell`` as the answer to the exercise ``line`` names, under its allowlist."""
    from course_utils.checks.guards.answer_cells import answer_cell as run_under_allowlist

    run_under_allowlist(line, cell)


def load_ipython_extension(shell) -> None:
    """Make ``%%answer_cell`` known to ``shell`` (IPython calls this at the kernel's start)."""
    shell.register_magic_function(answer_cell, magic_kind="cell")
