"""Quick sizes for heavy demos.

Under nbgrader (which sets ``NBGRADER_EXECUTION`` while it validates or
autogrades) or with ``COURSE_QUICK=1``, a notebook shrinks its heavy demos so that
grading stays fast. Every notebook asks this one helper instead of testing the
variables itself::

    epochs = quick_or_full(quick=1, full=20)
"""

import os

QUICK_ENV = "COURSE_QUICK"
NBGRADER_ENV = "NBGRADER_EXECUTION"


def is_quick() -> bool:
    """True when nbgrader runs the notebook or ``COURSE_QUICK`` is set to a true value."""
    if os.environ.get(NBGRADER_ENV):
        return True
    return os.environ.get(QUICK_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def quick_or_full(quick, full):
    """``quick`` when :func:`is_quick`, else ``full``."""
    return quick if is_quick() else full
