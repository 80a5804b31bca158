"""Fixtures of the grader tests."""

import os

import pytest

from grader.running.sandbox import unavailable


@pytest.fixture(scope="session")
def sandbox():
    """The sandbox works here; on CI (root, bubblewrap installed by the setup) it must."""
    reason = unavailable()
    if reason and os.environ.get("CI"):
        pytest.fail(reason)
    if reason:
        pytest.skip(reason)
