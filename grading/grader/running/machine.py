"""What this machine gives grading: nbgrader run by this Python, and its cores.

    NBGRADER            ``[python, "-c", ...]``: the command ``nbgrader``, to which a step's
                        arguments are added (``[*NBGRADER, "autograde", "04_..."]``)
    default_workers()   how many grading jobs run side by side here: one per core

The floor of :mod:`grader.running`: ``nbgrader_steps`` and ``worker`` run nbgrader, and
``nbgrader_steps``, ``scoring`` and ``similarity`` size their pools, from here.
"""

import os
import sys

# `nbgrader ARGS`, less 2 s a run: jsonschema's optional IRI format checker builds a
# grammar when imported (2.3 s), and nbgrader validates notebooks without it.
NBGRADER = [sys.executable, "-c", "import sys; sys.modules['rfc3987_syntax'] = None; "
            "from nbgrader.apps.nbgraderapp import main; sys.exit(main())"]


def default_workers() -> int:
    """One worker per core (the cores this process may run on)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
