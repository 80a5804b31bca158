"""nbval runs these notebooks as an instructor would: under a student id.

Notebook 04's by-hand checks fail without one (the demonstration's numbers would score 0),
so each notebook's kernel starts with ``COURSE_STUDENT`` set, to the id the grading's
self-check uses (grader.scoring.selfcheck) unless one is set already. Only the kernel gets it: the
other tests see the environment as it was.
"""

import os
from unittest import mock

import pytest

INSTRUCTOR = "instructor"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    """nbval starts a notebook's kernel while its first cell is set up."""
    with mock.patch.dict(os.environ, {"COURSE_STUDENT": os.environ.get("COURSE_STUDENT")
                                      or INSTRUCTOR}):
        yield
